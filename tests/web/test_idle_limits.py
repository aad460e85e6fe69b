"""A person who thinks longer than every idle limit beneath their page stays seated.

The limits a person's table meets while nobody moves: the seat stream's heartbeat
(``live.HEARTBEAT_S``: a comment keeps the idle stream open through proxies), the time a
client may take to accept one message (``live.SEND_TIMEOUT_S``), the lobby's time for
an open table (``lobby.OPEN_FOR_S``, for tables not yet filled), the lobby's own resend
period, and hypercorn's keep-alive timeout for a connection between requests
(``live.IDLE_TIMEOUT_S``). Here the lobby is driven over ASGI, as hypercorn drives it,
on trio's virtual clock: the person waits 20 minutes at each of their first moves, the
seat's one stream stays open with heartbeats, and the game goes on to its end.
(tests/browser/test_play_page.py waits past hypercorn's keep-alive timeout in Chromium.)
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
import trio.testing
from test_lobby import JSON, answer, request

from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.match import FORFEITS, play_game
from referee.web.live import HEARTBEAT_S, IDLE_TIMEOUT_S, SEND_TIMEOUT_S
from referee.web.lobby import MAX_MOVE_TIME, OPEN_FOR_S, Lobby, LobbyTable

THINK_S = 20 * 60.0  #: the person's time at each of their first moves
#: (a move may take MAX_MOVE_TIME: the person thinks past every idle limit, within it)
assert max(HEARTBEAT_S, SEND_TIMEOUT_S, OPEN_FOR_S, IDLE_TIMEOUT_S) < THINK_S < MAX_MOVE_TIME


@pytest.mark.slow
def test_a_person_thinking_past_every_idle_limit_stays_seated_and_the_game_goes_on() -> None:
    records: list[dict[str, Any]] = []

    async def play(table: LobbyTable) -> None:
        person = table.seats[0].person
        assert person is not None
        greedy = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), "idle")
        record = await play_game([person, greedy], table.config, index=1, seed="idle", dealer=1)
        records.append(record.as_dict())
        table.result = {"durak": record.durak, "termination": record.termination}

    room = Lobby(play, lambda: ["builtin:greedy"])

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(room.run)
            await trio.testing.wait_all_tasks_blocked()
            status, body = await answer(room, request("POST", "/api/tables", headers=JSON, body=json.dumps(
                {"name": "Ann", "seats": ["you", "builtin:greedy"], "move_time": MAX_MOVE_TIME,
                 "clock": ""}).encode()))
            assert status == 200, body
            token = json.loads(body)["token"]
            sent: list[bytes] = []
            left = trio.Event()

            async def receive() -> dict[str, Any]:
                await trio.sleep_forever()  # the browser never leaves
                raise AssertionError

            async def send(message: dict[str, Any]) -> None:
                sent.append(message.get("body", b""))
                if message.get("more_body") is False:
                    left.set()

            async def stream() -> None:
                await room.handle(request("GET", "/seat/events", query=f"token={token}".encode()),
                                  receive, send)
                left.set()

            nursery.start_soon(stream)
            moves = 0
            while not records:
                await trio.testing.wait_all_tasks_blocked()
                views = [json.loads(block.split(b"data: ", 1)[1]) for chunk in sent
                         for block in chunk.split(b"\n\n") if block.startswith(b"event: seat")]
                table = views[-1].get("table") if views else None
                if table and table["end"]:
                    break
                if not table or table["request"] is None:
                    await trio.sleep(1)
                    continue
                if moves < 3:
                    beats = sum(c.count(b": still here") for c in sent)
                    await trio.sleep(THINK_S)
                    assert sum(c.count(b": still here") for c in sent) - beats >= THINK_S // HEARTBEAT_S - 1
                    assert not left.is_set(), "the seat's stream was closed while the person thought"
                status, body = await answer(room, request("POST", "/api/act", headers=JSON, body=json.dumps(
                    {"token": token, "request": table["request"]["id"], "choice": 0}).encode()))
                assert status == 200, body
                moves += 1
                await trio.sleep(0.01)
            while not records:
                await trio.sleep(1)
            assert not left.is_set()  # one stream, open from the first view to the end
            nursery.cancel_scope.cancel()
        assert moves >= 3

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.001))
    (record,) = records
    assert record["termination"] not in FORFEITS, record["reason"]
    thought = [d for d in record["decisions"] if d[0] == 0][:3]
    assert all(d[3] >= THINK_S * 1000 for d in thought), thought  # charged, not cut off
