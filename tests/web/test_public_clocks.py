"""Every seat's clock as a table sees it: the referee's one clock (referee/table/clock.py)
less what hidden decisions did to it, carried by the spectator messages; on a person's
page (referee/human/clocks.py) it runs for the person on move and stops while they are
away. A declined trump exchange shows on no clock any other seat or spectator sees (it
would tell who holds the deck's lowest trump)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import trio
import trio.testing

from referee.human.clocks import TableClocks
from referee.league import tables
from referee.records.store import open_store
from referee.rules import Game, make_rules
from referee.rules.deal import deal_deck
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.clock import Clock, TimeControl
from referee.table.match import FORFEITS, MatchConfig, play_game
from referee.web.lobby import LobbyTable, TableSeat
from referee.web.seat import BrowserSeat

THINK_S = 5.0  #: the person's time on the exchange offer they decline (virtual clock)


def event(kind: str, seat: int, clocks: list[int | None]) -> dict[str, Any]:
    return {"type": "event", "game": 0, "event": {"type": kind, "seat": seat, "card": "7C"},
            "clocks": clocks}


def test_a_hidden_decision_is_taken_back_out_of_the_public_clock_only() -> None:
    clock = Clock(TimeControl.parse("60+2"))
    clock.charge(5.0)  # a declined exchange after 5 s, in time: 57 s left
    clock.hide(5.0, 1)
    clock.charge(1.0)  # a public move: 58 s left
    assert (clock.remaining, clock.public_remaining_ms()) == (58.0, 61000)
    assert clock.wire()["remaining_ms"] == 58000  # the seat itself is told its real clock
    clock.charge(0.25)  # another hidden decision: an illegal answer, asked again,
    clock.charge(0.25)  # then its answer: two increments credited, 61.5 s left
    clock.hide(0.5, 2)  # both increments are taken back out too
    assert (clock.remaining, clock.public_remaining_ms()) == (61.5, 61000)
    untimed = Clock(TimeControl.parse(None, 10))
    untimed.hide(3.0, 1)
    assert untimed.public_remaining_ms() is None


def test_the_shown_clocks_are_the_messages_running_for_the_person_on_move_only() -> None:
    clocks = TableClocks(2, 60.0, 10.0)
    changes: list[int] = []
    clocks.on_change = lambda: changes.append(1)
    assert [c["remaining_ms"] for c in clocks.view(0.0)] == [60000, 60000]
    clocks.follow(event("attack", 1, [60000, 61500]))  # a bot's move, as the referee charged it
    clocks.asked(0, 1.0)
    assert clocks.view(4.0) == [
        {"remaining_ms": 57000, "move_ms": 7000, "running": True, "paused": False},
        {"remaining_ms": 61500, "move_ms": None, "running": False, "paused": False}]
    clocks.paused(4.0)
    assert clocks.view(30.0)[0] == {"remaining_ms": 57000, "move_ms": 7000, "running": False,
                                    "paused": True}
    clocks.resumed(30.0)
    assert clocks.view(31.0)[0]["remaining_ms"] == 56000
    clocks.answered()
    clocks.follow(event("cover", 0, [58000, 61500]))
    assert [c["remaining_ms"] for c in clocks.view(40.0)] == [58000, 61500]
    assert not any(c["running"] or c["paused"] for c in clocks.view(40.0))
    clocks.follow(event("take", 1, [58000, 61500]))  # nothing changed: no page is sent again
    assert len(changes) == 6  # follow, asked, paused, resumed, answered, follow


def test_a_game_without_a_game_clock_shows_the_moves_limit_only() -> None:
    clocks = TableClocks(3, None, 60.0)
    clocks.asked(1, 0.0)
    assert [(c["remaining_ms"], c["move_ms"]) for c in clocks.view(20.0)] == \
        [(None, None), (None, 40000), (None, None)]


def _exchange_deal(rules: Any, seed: str, prefix: str) -> str:
    """A deal id (``prefix`` + a number) of a 2-seat game dealt by seat 1 where seat 0 is
    offered the exchange."""
    for n in range(400):
        deal = f"{prefix}{n}"
        if Game.new(rules, 2, deck=deal_deck(seed, deal, rules.deck), dealer=1).exchange_seat == 0:
            return deal
    pytest.fail("no deal offers seat 0 the exchange")


async def _person(seat: BrowserSeat, seen: list[list[dict[str, Any]]]) -> None:
    """Seat 0's person: thinks THINK_S on the exchange offer and declines it (keeping every
    seat's clocks as their page showed them before and after), then plays the first
    legal action at once."""
    client = seat.attach()
    assert client is not None
    while await client.take() is not None:
        request = seat.table.request if seat.table else None
        if request is None or seat._choice is not None:
            continue
        offer = request["observation"]["phase"] == "exchange"
        if offer:
            seen.append(seat.state()["clocks"])
            await trio.sleep(THINK_S)
            seen.append(seat.state()["clocks"])
        legal = request["legal"]
        seat.submit(request["id"], next(i for i, a in enumerate(legal) if a["type"] == "pass")
                    if offer else 0)


def _hidden_everywhere(record: dict[str, Any], messages: list[dict[str, Any]],
                       others: list[list[list[dict[str, Any]]]]) -> None:
    """The person declined after THINK_S, charged so by the referee; no clock a spectator
    or another page saw moved by it: the first public move, the person's own, taken at
    once, shows 60 s - 0 s + 2 s, not the real 59 s."""
    assert record["decisions"][0][1] == "pass" and record["decisions"][0][3] == THINK_S * 1000
    assert record["termination"] not in FORFEITS, record["reason"]
    first = next(m for m in messages if m["type"] == "event" and m["event"].get("seat") == 0
                 and m["event"]["type"] in ("attack", "show_trump", "transfer"))
    assert first["clocks"][0] == 62000
    decided = [d for d in record["decisions"] if not d[2]]
    # Every later public clock of the person: 62 s, less the rest of their (instant) moves,
    # plus their increments: never below what the hidden decision would have left it.
    assert all(m["clocks"][0] >= 62000 - 1 for m in messages if "clocks" in m), decided
    for views in others:
        assert all(v[0]["remaining_ms"] >= 60000 for v in views)


def test_at_a_real_table_a_declined_exchange_shows_on_no_clock() -> None:
    rules = make_rules("classic", ["trump_exchange=on"])
    config = MatchConfig(rules=rules, seed="clocks-exchange", tc=TimeControl.parse("60+2", 30))
    deal = _exchange_deal(rules, config.seed, "x:")

    async def main() -> tuple[dict[str, Any], list[dict[str, Any]], list[list[dict[str, Any]]]]:
        seat = BrowserSeat("Ann", grace=5)
        seat.clocks = clocks = TableClocks(2, 60.0, 30.0)
        seen: list[list[dict[str, Any]]] = []
        messages: list[dict[str, Any]] = []

        async def watch(message: dict[str, Any]) -> None:
            messages.append(message)
            clocks.follow(message)

        greedy = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), config.seed)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_person, seat, seen)
            await trio.testing.wait_all_tasks_blocked()
            record = await play_game([seat, greedy], config, index=0, seed=deal, dealer=1,
                                     watch=watch)
            nursery.cancel_scope.cancel()
        return record.as_dict(), messages, seen

    record, messages, seen = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.01))
    before, after = seen
    assert before == after, "the clocks moved while the exchange was offered"
    assert not any(c["running"] for c in after)
    assert [c["remaining_ms"] for c in after] == [60000, 60000]
    _hidden_everywhere(record, messages, [])


class LivePage:
    """The arena's live page, as a spectator: keeps every message it is shown."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def watch(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    def finished(self, header: dict[str, Any], record: dict[str, Any]) -> None:
        pass

    def deal_over(self, deal: str) -> None:
        pass


@pytest.mark.process
def test_through_the_lobby_the_other_person_and_the_live_page_never_see_a_declined_exchange(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = make_rules("classic", ["trump_exchange=on"])
    config = MatchConfig(rules=rules, games=1, tc=TimeControl.parse("60+2", 30))
    deal = _exchange_deal(rules, config.seed, "L")
    # The lobby deals a fresh random deal (``L`` + random hex): this one offers Ann the exchange.
    monkeypatch.setattr(tables, "secrets", SimpleNamespace(token_hex=lambda n: deal[1:]))
    ann, bob = BrowserSeat("Ann", grace=5), BrowserSeat("Bob", grace=5)
    table = LobbyTable(1, config, "classic", ["trump_exchange=on"], "60+2", None,
                       [TableSeat(person=ann), TableSeat(person=bob)], "Ann", 0.0)
    records: list[dict[str, Any]] = []
    played = tables.play_game

    async def play_game_kept(*args: Any, **kwargs: Any) -> Any:
        record = await played(*args, **kwargs)
        records.append(record.as_dict())
        return record

    monkeypatch.setattr(tables, "play_game", play_game_kept)
    live = LivePage()
    arena = SimpleNamespace(store=open_store(tmp_path / "lobby.sqlite"), log_dir=None, live=live,
                            played=0, next_index=lambda: 1, say=lambda text: None,
                            take_idle=lambda name: None)
    bob_views: list[list[dict[str, Any]]] = []

    async def bob_plays() -> None:
        client = bob.attach()
        assert client is not None
        while await client.take() is not None:
            state = bob.state()
            if state.get("clocks") is not None:
                bob_views.append(state["clocks"])
            request = bob.table.request if bob.table else None
            if request is not None and bob._choice is None:
                bob.submit(request["id"], 0)

    async def main() -> None:
        seen: list[list[dict[str, Any]]] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_person, ann, seen)
            nursery.start_soon(bob_plays)
            await trio.testing.wait_all_tasks_blocked()
            await tables.play_table(arena, table)
            nursery.cancel_scope.cancel()
        before, after = seen
        assert before == after

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.01))
    assert table.result is not None and "error" not in table.result, table.result
    (record,) = records
    _hidden_everywhere(record, live.messages, [bob_views])
