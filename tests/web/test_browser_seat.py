"""The browser seat (referee/web/seat.py) at a real table, driven as a person's page
drives it: from the seat's own view only, answering by the index of a legal move."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from livekit import CARD, hidden_to_seat_at_end
from referee.human.seatview import choose_answer
from referee.rules import make_rules
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.clock import TimeControl
from referee.table.match import FORFEITS, MatchConfig, play_game
from referee.web.seat import HINT_SECONDS, BrowserSeat, new_seat_token, token_key


async def person(seat: BrowserSeat, states: list[str], *, choice: int = 0) -> None:
    """A page: follows the seat's stream and clicks a legal move whenever asked; first a
    bad click (an index off the list), which is refused and changes nothing."""
    client = seat.attach()
    assert client is not None
    while True:
        chunk = await client.take()
        if chunk is None:
            return
        for block in chunk.decode().split("\n\n"):
            if not block.startswith("event: seat"):
                continue
            states.append(block)
            data = json.loads(block.split("data: ", 1)[1])
            table = data.get("table")
            if table and table["request"]:
                request = table["request"]
                assert seat.submit(request["id"], len(request["legal"])) is not None
                assert seat.submit(request["id"] + 1, 0) is not None
                seat.submit(request["id"], min(choice, len(request["legal"]) - 1))
            if table and table["end"]:
                return


def test_a_person_plays_whole_games_and_is_sent_no_card_hidden_from_their_seat() -> None:
    rules = make_rules("classic", [])
    config = MatchConfig(rules=rules, seed="browser-seat", tc=TimeControl.parse(None, 30))
    checked = 0
    for game in range(8):  # seeded games: a 3-seat table, the person playing its first moves
        states: list[str] = []

        async def main(game: int, states: list[str]) -> dict:
            seat = BrowserSeat("Ann <b>", grace=5)
            bots = [BuiltinPlayer(n, parse_bot_spec("builtin:greedy"), config.seed) for n in ("g1", "g2")]
            async with trio.open_nursery() as nursery:
                nursery.start_soon(person, seat, states)
                await trio.testing.wait_all_tasks_blocked()
                record = await play_game([seat, *bots], config, index=game, seed=f"g:{game}", dealer=2)
            return record.as_dict()

        record = trio.run(main, game, states)
        assert record["termination"] not in FORFEITS, record["reason"]
        hidden = hidden_to_seat_at_end(record, rules, 0)
        checked += len(hidden)
        for state in states:
            assert not set(CARD.findall(state)) & hidden, state
        assert '"Ann <b>"' in states[0]  # the name is data; the page sets it as text
    assert checked > 0, "no game ended with a card hidden: nothing was checked"


def test_a_person_away_mid_decision_pauses_the_clock_within_the_grace() -> None:
    rules = make_rules("classic", [])
    config = MatchConfig(rules=rules, seed="browser-pause", tc=TimeControl.parse(None, 4))

    async def main() -> dict:
        seat = BrowserSeat("Ann", grace=60)
        greedy = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), config.seed)
        async with trio.open_nursery() as nursery:
            async def away_then_back() -> None:
                # The first page leaves at the first request; 10 s later (past the
                # 4 s move time) a reloaded page comes back and plays on.
                client = seat.attach()
                assert client is not None
                while seat.table is None or seat.table.request is None:
                    await client.take()
                seat.detach(client)
                await trio.sleep(10)
                await person(seat, [])

            nursery.start_soon(away_then_back)
            record = await play_game([seat, greedy], config, index=0, seed="g:1", dealer=1)
        assert seat.reconnects == 1
        return record.as_dict()

    record = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.01))
    assert record["termination"] not in FORFEITS, record["reason"]
    first = next(d for d in record["decisions"] if d[0] == 0)
    assert first[3] < 4000, first  # milliseconds charged: the pause is not


def test_past_the_grace_the_game_is_the_persons_disconnect() -> None:
    config = MatchConfig(rules=make_rules("classic", []), seed="browser-gone",
                         tc=TimeControl.parse(None, 600))

    async def main() -> dict:
        seat = BrowserSeat("Ann", grace=3)
        greedy = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), config.seed)
        return (await play_game([seat, greedy], config, index=0, seed="g:2", dealer=1)).as_dict()

    record = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.01))
    assert record["termination"] == "disconnect" and record["durak"] == 0, record


def test_an_answer_is_an_index_or_an_element_of_the_legal_list_and_nothing_else() -> None:
    request = {"id": 3, "legal": [{"type": "take"}, {"type": "cover", "slot": 0, "card": "7D"}]}
    assert choose_answer(request, 3, 1) == (1, "")
    assert choose_answer(request, 3, {"type": "take"}) == (0, "")
    for bad_id, bad in ((3, 2), (3, -1), (3, True), (3, "1"), (3, None), (3, {"type": "pass"}),
                        (2, 0), ("3", 0), (3, [0])):
        index, why = choose_answer(request, bad_id, bad)
        assert index is None and why, (bad_id, bad)


def test_seat_tokens_are_long_random_and_filed_by_hash() -> None:
    tokens = {new_seat_token() for _ in range(200)}
    assert len(tokens) == 200 and all(len(t) >= 32 for t in tokens)
    token = next(iter(tokens))
    assert token not in token_key(token) and len(token_key(token)) == 64


@pytest.mark.process
def test_a_learning_games_hint_is_searched_in_a_process_of_its_own(
        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An ismcts hint costs milliseconds of CPU: searched on the event loop, or in a thread
    of the server's process (which holds the interpreter's lock while it searches), it
    would stall every other table's bots, whose clocks run meanwhile. It is searched in
    a process of its own: this process never computes one, and the page gets them."""
    from referee.human import hints

    def not_here(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a hint was searched in the server's process")

    monkeypatch.setattr(hints, "hint", not_here)
    states = _hinted_game(monkeypatch, HINT_SECONDS)
    assert any('"why"' in s for s in states)  # the page got the hints


@pytest.mark.process
def test_a_hint_that_takes_too_long_is_dropped_and_the_game_goes_on(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A hint is bounded in time: past it, its process is killed and the move is shown
    without one; the person plays on."""
    states = _hinted_game(monkeypatch, 0.001)
    assert states and not any('"why"' in s for s in states)


def _hinted_game(monkeypatch, seconds: float) -> list[str]:  # type: ignore[no-untyped-def]
    """The page states of a person (answering at once) playing greedy with ismcts hints
    bounded by ``seconds``; the game must end without a forfeit."""
    from referee.web import seat as seat_module

    monkeypatch.setattr(seat_module, "HINT_SECONDS", seconds)
    rules = make_rules("classic", [])
    config = MatchConfig(rules=rules, seed="browser-hint", tc=TimeControl.parse(None, 30))
    states: list[str] = []

    async def main() -> dict:
        seat = BrowserSeat("Ann", grace=5, hint_bot="ismcts")
        greedy = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), config.seed)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(person, seat, states)
            await trio.testing.wait_all_tasks_blocked()
            record = await play_game([seat, greedy], config, index=0, seed="hint", dealer=1)
        return record.as_dict()

    record = trio.run(main)
    assert record["termination"] not in FORFEITS, record["reason"]
    return states


def test_a_person_keeps_a_bot_of_the_arena_waiting_at_most_wait_s_then_it_is_their_timeout() -> None:
    """At a table with a registered bot (``wait_s``), one decision of the person's ends at
    ``wait_s`` however long their clock or grace: with the page open and idle, and with
    the page away (a pause, which would otherwise wait out the whole grace)."""
    rules = make_rules("classic", [])
    config = MatchConfig(rules=rules, seed="browser-held", tc=TimeControl.parse(None, 3600))
    for page_open in (True, False):
        async def main(page_open: bool) -> tuple[dict, float]:
            seat = BrowserSeat("Ann", grace=3600, wait_s=20)
            if page_open:
                assert seat.attach() is not None  # a page that never clicks
            greedy = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), config.seed)
            record = await play_game([seat, greedy], config, index=0, seed="held", dealer=1)
            return record.as_dict(), trio.current_time()

        record, ended = trio.run(main, page_open, clock=trio.testing.MockClock(autojump_threshold=0))
        assert record["termination"] == "timeout" and record["forfeit"]["seat"] == 0, record
        assert "kept a bot of the arena waiting 20 s" in record["reason"], record["reason"]
        assert 20 <= ended < 60, ended  # virtual time: not the hour of the clock or grace
