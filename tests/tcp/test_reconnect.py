"""Over TCP, a dropped connection pauses the game instead of forfeiting it
(``--reconnect-grace S``): the bot's clock is stopped, a reconnection within the grace gets
the game's ``game_start`` and the open request again, and after the grace the drop is the
``disconnect`` forfeit it always was.

Matches run in the test's trio loop with a ``tcp:alice`` seat on 127.0.0.1 port 0 against
a built-in; alice is an in-process client (``tcp_security_kit``). Where the length of a
pause against the move time or the grace is the point, the test runs on trio's virtual
clock (``autojump_clock``: nothing here waits on another process or a thread, so time
jumps only when every task waits); elsewhere real time with margins of seconds.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import trio
from tcp_security_kit import BotRecord, Client, legit_bot, running_arena, wait_until

from protocol import messages as m
from referee.rules import make_rules
from referee.seats.players import parse_bot_spec
from referee.table.clock import TimeControl
from referee.table.match import GameRecord, MatchConfig
from referee.table.runner import SeatOptions, run_match_async


def _port_from(events: list[str]) -> int | None:
    for e in events:
        found = re.match(r"listening on .*:(\d+) for ", e)
        if found:
            return int(found.group(1))
    return None


async def _match(client, *, grace: float, games: int, move_time: float | None = None,
                 tmp_path: Path) -> tuple[list[GameRecord], list[str]]:
    events: list[str] = []
    options = SeatOptions(listen=("127.0.0.1", 0), tokens=(("alice", "s3cret"),),
                          connect_wait=10, reconnect_grace=grace)
    config = MatchConfig(rules=make_rules("classic"), games=games, seed=11,
                         tc=TimeControl.parse(None, move_time))
    games_seen: list[GameRecord] = []

    async def run_client() -> None:
        await wait_until(lambda: _port_from(events) is not None, 10, "the gate to listen")
        await client(_port_from(events))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_client)
            await run_match_async(
                [parse_bot_spec("tcp:alice"), parse_bot_spec("builtin:greedy")], config,
                log_dir=tmp_path, options=options, on_tcp=events.append,
                on_game=lambda r, _: games_seen.append(r))
    return games_seen, events


async def test_a_bot_that_reconnects_within_the_grace_plays_on_in_the_same_game(tmp_path: Path) -> None:
    alice = BotRecord("alice")
    games, events = await _match(
        lambda port: legit_bot(port, "alice", "s3cret", alice, hang_up_at_request=3, retries=5),
        grace=10, games=3, tmp_path=tmp_path)
    assert [g.forfeit for g in games] == [None, None, None]
    assert all(g.termination != "disconnect" for g in games)
    assert alice.connections == 2 and alice.bye
    # the game in play was announced again on the new connection
    assert alice.games == [0, 0, 1, 2]
    assert "alice: connection lost at request 3; game paused for up to 10 s" in events
    assert any(e.startswith("alice reconnected from 127.0.0.1 after ") for e in events)


async def test_the_open_request_is_sent_again_with_the_same_id(tmp_path: Path) -> None:
    seen: list[tuple[str, int | None]] = []

    async def bot(port: int) -> None:
        for attempt in range(2):
            client = await Client.connect(port)
            await client.hello("alice", "s3cret")
            while (message := await client.receive(timeout=30)) is not None:
                seen.append((message["type"], message.get("id", message.get("game"))))
                if message["type"] == "request":
                    if attempt == 0:
                        break  # hang up instead of answering the first request
                    await client.send(m.action_msg(message["id"], message["legal"][0]))
                elif message["type"] == "bye":
                    break
            await client.aclose()

    games, _ = await _match(bot, grace=10, games=1, tmp_path=tmp_path)
    assert games[0].forfeit is None
    first = seen.index(("request", 1))
    again = seen.index(("request", 1), first + 1)
    assert seen[first + 1:again] == [("game_start", 0)]


async def test_the_clock_is_stopped_while_the_game_is_paused(tmp_path: Path, autojump_clock: Any) -> None:
    """Move time 1 s; alice stays away 2 s before reconnecting: no timeout. (Virtual
    time: the 1 s of move time must not be eaten by a loaded machine's stalls.)"""
    alice = BotRecord("alice")

    async def slow_return(port: int) -> None:
        client = await Client.connect(port)
        await client.hello("alice", "s3cret")
        while (message := await client.receive(timeout=30)) is not None:
            if message["type"] == "request":
                break
        await client.aclose()
        await trio.sleep(2.0)
        await legit_bot(port, "alice", "s3cret", alice)

    games, _ = await _match(slow_return, grace=10, games=1, move_time=1.0, tmp_path=tmp_path)
    assert games[0].forfeit is None and games[0].termination != "timeout"


async def test_after_the_grace_the_drop_is_a_disconnect_forfeit(tmp_path: Path) -> None:
    async def gone(port: int) -> None:
        client = await Client.connect(port)
        await client.hello("alice", "s3cret")
        while (message := await client.receive(timeout=30)) is not None:
            if message["type"] == "request":
                break  # hang up and never come back
        await client.aclose()

    games, events = await _match(gone, grace=0.5, games=1, tmp_path=tmp_path)
    [game] = games
    assert game.termination == "disconnect" and game.durak == 0
    assert game.forfeit["kind"] == "disconnect"
    assert game.forfeit["reason"].startswith("the bot closed the connection; no reconnection "
                                             "within the grace of 0.5 s (all pauses of a game "
                                             "together)")
    assert game.forfeit["evidence"]["reconnect_grace_s"] == 0.5


async def test_a_bot_that_keeps_dropping_cannot_stall_the_table(tmp_path: Path, autojump_clock: Any) -> None:
    """Every pause of a game is taken from one grace: 2 s, and the bot stays away 1.2 s
    each time, so its second drop forfeits the game (a hostile bot cannot pause forever).
    On trio's virtual clock (everything here is in this loop, over loopback): the 0.8 s
    between one pause and the grace is exact, not at the mercy of a loaded machine."""
    drops = 0

    async def dropper(port: int) -> None:
        nonlocal drops
        while True:
            try:
                client = await Client.connect(port)
            except OSError:
                return  # the match is over and the gate closed
            await client.hello("alice", "s3cret")
            message = None
            while (message := await client.receive(timeout=30)) is not None:
                if message["type"] in ("request", "bye"):
                    break
            await client.aclose()
            if message is None or message["type"] == "bye":
                return
            drops += 1
            await trio.sleep(1.2)

    games, events = await _match(dropper, grace=2.0, games=1, tmp_path=tmp_path)
    [game] = games
    assert game.termination == "disconnect" and game.forfeit["evidence"]["reconnect_grace_s"] == 2.0
    assert drops == 2
    assert sum("game paused" in e for e in events) == 2


async def test_without_a_grace_a_drop_is_a_forfeit_at_once(tmp_path: Path) -> None:
    alice = BotRecord("alice")
    games, events = await _match(
        lambda port: legit_bot(port, "alice", "s3cret", alice, hang_up_at_request=3, retries=5),
        grace=0, games=2, tmp_path=tmp_path)
    assert games[0].termination == "disconnect"
    assert "reconnect_grace_s" not in games[0].forfeit["evidence"]
    assert not any("paused" in e for e in events)


async def test_a_stranger_cannot_take_a_paused_seat(tmp_path: Path) -> None:
    """While alice's game is paused, a connection with a wrong token is refused (auth);
    alice's own reconnection then plays on."""
    alice = BotRecord("alice")
    refused: list[dict] = []

    async def bot(port: int) -> None:
        client = await Client.connect(port)
        await client.hello("alice", "s3cret")
        while (message := await client.receive(timeout=30)) is not None:
            if message["type"] == "request":
                break
        await client.aclose()
        intruder = await Client.connect(port)
        await intruder.hello("alice", "guessed")
        refused.extend(await intruder.until_closed(5))
        await intruder.aclose()
        await legit_bot(port, "alice", "s3cret", alice)

    games, _ = await _match(bot, grace=10, games=1, tmp_path=tmp_path)
    assert [(r["type"], r["code"]) for r in refused] == [("error", "auth")]
    assert games[0].forfeit is None


async def test_in_the_arena_a_reconnection_resumes_the_paused_game(tmp_path: Path) -> None:
    with trio.fail_after(60):
        async with running_arena(tmp_path, reconnect_grace=10) as run:
            alice = run.start_bot("alice", hang_up_at_request=3, retries=5)
            run.start_bot("bob")
            await run.play(3)
            run.check_legit_games(3)  # no forfeit: the paused game went on
            assert alice.connections == 2
            assert any(e.startswith("alice: connection lost at request 3; game paused") for e in run.events)
            assert any(e.startswith("alice reconnected from 127.0.0.1") for e in run.events)
