"""Every seat's clock as a table sees it (referee/human/clocks.py): charged for public
moves only, running for the person on move, stopped while they are away; a declined
trump exchange shows on no clock (it would tell who holds the deck's lowest trump)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from referee.human.clocks import PublicClocks
from referee.rules import Game, make_rules
from referee.rules.deal import deal_deck
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.clock import TimeControl
from referee.table.match import FORFEITS, MatchConfig, play_game
from referee.web.seat import BrowserSeat


def event(kind: str, seat: int, **fields: Any) -> dict[str, Any]:
    return {"type": "event", "game": 0, "event": {"type": kind, "seat": seat, **fields}}


def remaining(clocks: PublicClocks, now: float) -> list[int | None]:
    return [c["remaining_ms"] for c in clocks.view(now)]


def test_a_bot_is_charged_from_the_tables_previous_step_and_credited_the_increment() -> None:
    clocks = PublicClocks(2, 60.0, 2.0, 10.0, people={0}, now=100.0)
    clocks.follow(event("attack", 1, card="7C"), 100.5)  # the bot took 0.5 s
    assert remaining(clocks, 100.5) == [60000, 61500]
    clocks.follow({"type": "event", "game": 0, "event": {"type": "bout_end", "result": "beaten",
                                                          "defender": 0}}, 100.5)
    assert remaining(clocks, 100.5) == [60000, 61500]  # a bout's end is no one's decision


def test_the_person_on_move_runs_stops_while_away_and_is_charged_what_the_referee_charged() -> None:
    clocks = PublicClocks(2, 60.0, 2.0, 10.0, people={0}, now=0.0)
    changes: list[int] = []
    clocks.on_change = lambda: changes.append(1)
    clocks.asked(0, 1.0)
    assert clocks.view(4.0)[0] == {"remaining_ms": 57000, "move_ms": 7000, "running": True,
                                   "paused": False}
    assert clocks.view(4.0)[1] == {"remaining_ms": 60000, "move_ms": None, "running": False,
                                   "paused": False}
    clocks.paused(4.0)
    assert clocks.view(30.0)[0] == {"remaining_ms": 57000, "move_ms": 7000, "running": False,
                                    "paused": True}
    clocks.resumed(30.0)
    assert clocks.view(31.0)[0]["remaining_ms"] == 56000
    clocks.answered(0, 4.0, True, 31.0)
    clocks.follow(event("attack", 0, card="7C"), 31.0)  # the person's move: charged once
    assert remaining(clocks, 31.0) == [58000, 60000]
    assert not any(c["running"] or c["paused"] for c in clocks.view(31.0))
    assert len(changes) == 4  # asked, paused, resumed, answered: the others' pages are told


def test_a_game_without_a_game_clock_shows_the_moves_limit_only() -> None:
    clocks = PublicClocks(3, None, 0.0, 60.0, people={1}, now=0.0)
    clocks.asked(1, 0.0)
    assert [(c["remaining_ms"], c["move_ms"]) for c in clocks.view(20.0)] == \
        [(None, None), (None, 40000), (None, None)]


def test_a_declined_exchange_shows_on_no_clock() -> None:
    clocks = PublicClocks(2, 60.0, 2.0, None, people={0}, now=0.0)
    clocks.answered(0, 9.0, False, 9.0)  # the person declined, after 9 s
    clocks.follow(event("attack", 1, card="7C"), 9.25)  # the bot: charged from the decline
    assert remaining(clocks, 9.25) == [60000, 61750]


def _exchange_deal(rules: Any, config: MatchConfig) -> str:
    """A deal of the 2-seat game below where seat 0 (the person) is offered the exchange."""
    for n in range(400):
        deck = deal_deck(config.seed, f"x:{n}", rules.deck)
        if Game.new(rules, 2, deck=deck, dealer=1).exchange_seat == 0:
            return f"x:{n}"
    pytest.fail("no deal offers seat 0 the exchange")


def test_at_a_real_table_the_person_offered_an_exchange_is_not_shown_on_move() -> None:
    rules = make_rules("classic", ["trump_exchange=on"])
    config = MatchConfig(rules=rules, seed="clocks-exchange", tc=TimeControl.parse("60+2", 30))
    deal = _exchange_deal(rules, config)

    async def main() -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
        seat = BrowserSeat("Ann", grace=5)
        seat.clocks = clocks = PublicClocks(2, 60.0, 2.0, 30.0, {0}, trio.current_time())
        seen: list[list[dict[str, Any]]] = []

        async def watch(message: dict[str, Any]) -> None:
            clocks.follow(message, trio.current_time())

        async def person() -> None:
            client = seat.attach()
            assert client is not None
            while await client.take() is not None:
                request = seat.table.request if seat.table else None
                if request is None or seat._choice is not None:
                    continue
                if not seen:  # the offer: the person thinks 5 s (on the virtual clock)
                    seen.append(clocks.view(trio.current_time()))
                    await trio.sleep(5)
                    seen.append(clocks.view(trio.current_time()))
                legal = request["legal"]
                offer = request["observation"]["phase"] == "exchange"
                choice = next(i for i, a in enumerate(legal) if a["type"] == "pass") if offer else 0
                seat.submit(request["id"], choice)

        greedy = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), config.seed)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(person)
            await trio.testing.wait_all_tasks_blocked()
            record = await play_game([seat, greedy], config, index=0, seed=deal, dealer=1,
                                     watch=watch)
            nursery.cancel_scope.cancel()
        return record.as_dict(), seen

    record, seen = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.01))
    assert record["decisions"][0][1] == "pass", record["decisions"][0]  # declined
    assert record["termination"] not in FORFEITS, record["reason"]
    before, after = seen[0], seen[1]
    assert before == after, "the clocks moved while the exchange was offered"
    assert not any(c["running"] for c in after)
    assert [c["remaining_ms"] for c in after] == [60000, 60000]
