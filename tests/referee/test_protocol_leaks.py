"""What a seat receives is what a player at a real table sees: the hidden-information
contract for every message the referee sends and for ``replay --seat``.

Spy players sit at every seat, take events and record every message as it is handed to
them; at that moment the test looks at the referee's true game (captured from
``Game.new``) and checks that no card hidden from that seat appears anywhere in the
message. Many seeded matches, 2..6 players, several rule sets, with bots that sometimes
play illegal actions (so ``error`` and forfeit ``game_end`` messages are covered too).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
import trio

from protocol.codec import decode, pack
from protocol.strategies import greedy_choose, random_choose
from referee.replay.replay import game_steps
from referee.rules import Game, make_rules
from referee.rules.actions import parse_action
from referee.rules.cards import card_str, parse_card
from referee.seats.players import Ask, BotSpec, Player
from referee.table.match import GameRecord, MatchConfig, forfeit_reason, play_match
from support import scaled

CARD = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][CDHS])(?![A-Za-z0-9])")
ALL_CARDS = [r + s for r in "23456789TJQKA" for s in "CDHS"]


def cards_in(value: Any) -> set[str]:
    """Every card name anywhere in a message (keys, values, free text)."""
    if isinstance(value, str):
        return set(CARD.findall(value))
    if isinstance(value, dict):
        return set().union(*(cards_in(k) | cards_in(v) for k, v in value.items())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


class Table:
    """The referee's current true game, captured as it is dealt."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.game: Game | None = None
        real_new = Game.new

        def new(*args: Any, **kwargs: Any) -> Game:
            self.game = real_new(*args, **kwargs)
            return self.game

        monkeypatch.setattr(Game, "new", new)

    def hidden_from(self, seat: int) -> set[str]:
        assert self.game is not None
        mask = self.game.hidden_from(seat)
        return {c for c in ALL_CARDS if mask >> _CARD_BITS[c] & 1}


_CARD_BITS = {c: parse_card(c) for c in ALL_CARDS}


class Spy(Player):
    """Takes events; records every message; answers like greedy or random, and now and
    then with a well-formed action that is probably illegal."""

    def __init__(self, name: str, table: Table, rng: random.Random, illegal: float) -> None:
        super().__init__(name, BotSpec("command", name, ("spy",), name, named=True))
        self.table, self.rng, self.illegal = table, rng, illegal
        self.seat = -1
        self.received: list[dict[str, Any]] = []
        self.named: set[str] = set()  # cards this bot itself named in its answers this game

    def _got(self, message: dict[str, Any]) -> None:
        if message["type"] == "game_start":
            self.seat, self.named = message["seat"], set()
        self.received.append(message)
        leaked = (cards_in(message) - self.named) & self.table.hidden_from(self.seat)
        assert not leaked, f"seat {self.seat} was sent hidden {sorted(leaked)} in {message}"

    def hear(self, frame: bytes) -> None:
        self._got(decode(frame))

    async def finish(self, ask: Ask) -> Any:
        return self._answer(ask.message())

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """Note what ``request`` shows, then answer it: now and then an illegal card,
        else a greedy or a random choice; the cards an answer names are noted too."""
        self._got(request)
        if self.rng.random() < self.illegal:
            answer = {"type": "attack", "card": self.rng.choice(ALL_CARDS[16:])}
        elif self.rng.random() < 0.5:
            answer = greedy_choose(request["observation"], request["legal"])
        else:
            answer = random_choose(request["observation"], request["legal"], self.rng)
        self.named |= cards_in(answer)
        return answer


class FrameSpy(Spy):
    """A Spy that reads its requests as frames, as program bots over pipes do: the
    referee's request frames joined from packed parts. Half its answers come at once
    (``attempt``), mapped as the ask's ``answers`` map them; the others, and an answer
    those do not map, through the awaited ``finish``."""

    _pending: dict[str, Any] | None = None

    def attempt(self, ask: Ask) -> Any:
        if self.rng.random() < 0.5:
            return None  # "slow": the table awaits finish
        now = trio.current_time()
        ask.timing = (now, now)
        answer = self._answer(decode(ask.frame()))
        known = ask.answers.get(pack(answer))
        if known is None:  # not a known action's bytes: finish hands the map over
            self._pending = answer
        return known

    async def finish(self, ask: Ask) -> Any:
        pending, self._pending = self._pending, None
        return pending if pending is not None else self._answer(decode(ask.frame()))


RULE_SETS = [("classic", ()), ("classic", ("trump_exchange=on",)),
             ("perevodnoy", ("trump_exchange=on", "ask_forced=on")),
             ("perevodnoy_trump", ()), ("deflection", ("trump_exchange=on",))]


async def spy_match(monkeypatch: pytest.MonkeyPatch, seed: int, players: int, preset: str,
                    sets: tuple[str, ...], *, games: int = 2, illegal: float = 0.02,
                    retries: int = 0, frames: bool = False
                    ) -> tuple[Table, list[Spy], Any, list[GameRecord]]:
    table = Table(monkeypatch)
    rng = random.Random(seed)
    kind = FrameSpy if frames else Spy
    spies = [kind(f"spy{i}", table, random.Random(f"{seed}:{i}"), illegal) for i in range(players)]
    rules = make_rules(preset, sets)
    config = MatchConfig(rules=rules, games=games, seed=rng.randrange(1 << 30),
                         illegal_retries=retries)
    records: list[GameRecord] = []  # the result keeps counts only; the records are kept here
    result = await play_match(spies, config, on_game=lambda r, _: records.append(r))
    return table, spies, result, records


def by_game(spy: Spy, kind: str) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for m in spy.received:
        if m["type"] == kind:
            out.setdefault(m["game"], []).append(m)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("frames", [False, True], ids=["maps", "frames"])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
async def test_no_message_to_any_seat_names_a_card_hidden_from_it(
        monkeypatch: pytest.MonkeyPatch, players: int, frames: bool) -> None:
    kinds: set[str] = set()
    for seed in range(scaled(12)):  # fewer matches in mutation runs only (support.scaled)
        preset, sets = RULE_SETS[seed % len(RULE_SETS)]
        _, spies, result, records = await spy_match(monkeypatch, seed * 7 + players, players, preset,
                                           sets, illegal=0.03, retries=seed % 2, frames=frames)
        for spy in spies:
            kinds |= {m["type"] for m in spy.received}
        # (every message was checked as it was sent; here: the other contracts)
        for record in records:
            for seat, spy in enumerate(spies):
                [end] = [m for m in by_game(spy, "game_end")[record.index]]
                if record.forfeit is not None and seat != record.durak:
                    assert end["reason"] == forfeit_reason(record.players[record.durak],
                                                           record.termination)
                else:
                    assert end["reason"] == record.reason
    assert {"game_start", "event", "request", "game_end", "error"} <= kinds


@pytest.mark.slow
@pytest.mark.parametrize("frames", [False, True], ids=["maps", "frames"])
@pytest.mark.parametrize("players", [2, 3, 4, 6])
async def test_request_ids_count_one_two_three_per_seat_per_game(
        monkeypatch: pytest.MonkeyPatch, players: int, frames: bool) -> None:
    _, spies, result, records = await spy_match(monkeypatch, players, players, "perevodnoy", (),
                                       games=3, illegal=0.05, retries=2, frames=frames)
    for spy in spies:
        for game, requests in by_game(spy, "request").items():
            assert [r["id"] for r in requests] == list(range(1, len(requests) + 1)), (spy.name, game)
    assert any(r.retries for r in records)  # retried requests take the next id too


async def test_forced_is_told_only_to_the_seat_whose_move_was_forced(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # (ask_forced=off: by default no move is forced, every one is asked)
    _, spies, result, records = await spy_match(monkeypatch, 5, 3, "classic", ("ask_forced=off",),
                                                games=3, illegal=0.0)
    for seat, spy in enumerate(spies):
        events = [m["event"] for m in spy.received if m["type"] == "event"]
        forced = [e for e in events if e.get("forced")]
        assert all(e["seat"] == seat for e in forced)
        # ... and it is told every one of its own forced moves (the log has them all)
        logged = sum(1 for g in records for d in g.decisions if d.seat == seat and d.forced)
        assert len(forced) == logged
    assert any(d.forced and d.seat != s for g in records for d in g.decisions for s in range(3))


@pytest.mark.slow
async def test_a_declined_exchange_is_seen_only_by_the_seat_that_declined(
        monkeypatch: pytest.MonkeyPatch) -> None:
    declines = 0
    for seed in range(400):  # until three games open with a declined exchange
        if declines >= 3:
            break
        _, spies, result, records = await spy_match(monkeypatch, seed, 3, "classic", ("trump_exchange=on",),
                                           games=1, illegal=0.0)
        for record in records:
            first = record.decisions[0]
            dealt = Game.new(make_rules("classic", ("trump_exchange=on",)), 3,
                             deck=record.deck, dealer=record.dealer)
            if dealt.observe(0)["phase"] != "exchange" or first.action != parse_action("pass"):
                continue
            declines += 1
            for seat, spy in enumerate(spies):
                got = [m["event"] for m in spy.received
                       if m["type"] == "event" and m["event"]["type"] == "decline"]
                assert got == ([{"type": "decline", "seat": first.seat}] if seat == first.seat else [])
    assert declines >= 3


async def test_each_seat_sees_its_own_drawn_cards_and_only_the_counts_of_others(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three listening bots: every draw event each received, against the omniscient log
    (the record's deck and decisions replayed with events)."""
    _, spies, result, records = await spy_match(monkeypatch, 11, 3, "classic", (), games=4, illegal=0.0)
    for record in records:
        game = Game.new(make_rules("classic"), 3, deck=record.deck, dealer=record.dealer,
                        record_events=True)
        for d in record.decisions:
            game.apply(d.action)
        assert game.events is not None
        draws = [ev for ev in game.events if ev[0] == "draw"]
        assert draws
        for seat, spy in enumerate(spies):
            got = [m["event"] for m in spy.received if m["type"] == "event"
                   and m["game"] == record.index and m["event"]["type"] == "draw"]
            want = []
            for _, s, cards in draws:
                ev: dict[str, Any] = {"type": "draw", "seat": s, "count": len(cards)}
                if s == seat:
                    ev["cards"] = [game_card(c) for c in cards]
                want.append(ev)
            assert got == want


def game_card(card: int) -> str:
    return card_str(card)


# --------------------------------------------------------------------------- replay --seat

def seat_view(monkeypatch: pytest.MonkeyPatch, table: Table, header: dict[str, Any],
              record: dict[str, Any], seat: int) -> Iterator[tuple[str, set[str]]]:
    """``replay --seat`` lines, each with the cards hidden from ``seat`` when it was printed."""
    for line in game_steps(header, record, seat):
        yield line, table.hidden_from(seat)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
async def test_replay_seat_view_shows_no_hidden_card_no_others_forced_or_decline(
        monkeypatch: pytest.MonkeyPatch, players: int) -> None:
    for seed in range(scaled(6)):  # fewer matches in mutation runs only (support.scaled)
        preset, sets = RULE_SETS[(seed + players) % len(RULE_SETS)]
        table, spies, result, records = await spy_match(monkeypatch, 100 + seed, players, preset, sets,
                                               illegal=0.03)
        header = {"rules": result.config.rules.as_dict(), "preset": preset}
        for rec in records:
            record = rec.as_dict()
            for seat in range(players):
                own_named = set()  # the forfeiting seat's own view names its own illegal card
                if rec.forfeit is not None and rec.durak == seat:
                    own_named = cards_in(rec.forfeit["evidence"].get("received"))
                for line, hidden in seat_view(monkeypatch, table, header, record, seat):
                    leaked = (cards_in(line) - own_named) & hidden
                    assert not leaked, f"seat {seat} view: {line!r} shows hidden {sorted(leaked)}"
                    if "(forced)" in line:
                        assert f"seat {seat} " in line
                lines = list(game_steps(header, record, seat))
                if rec.forfeit is not None and rec.durak != seat:
                    assert lines[-1].endswith(forfeit_reason(rec.players[rec.durak], rec.termination))
                if not rec.decisions:
                    continue  # forfeited at its first request (an illegal first action)
                first = rec.decisions[0]
                dealt = Game.new(result.config.rules, players, deck=rec.deck, dealer=rec.dealer)
                if dealt.observe(0)["phase"] == "exchange" and first.seat != seat \
                        and first.action == parse_action("pass"):
                    assert not any(line.startswith("     0  ") for line in lines)


async def test_the_spy_would_catch_a_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself can fail: a referee that shows every hand in game_end is caught."""
    import referee.table.match as match_module
    real = match_module.game_end_frame

    def leaky(index: int, durak: int | None, termination: str, reason: str) -> bytes:
        game = table.game
        assert game is not None
        return real(index, durak, termination, repr(game))

    table = Table(monkeypatch)
    monkeypatch.setattr(match_module, "game_end_frame", leaky)
    spies = [Spy(f"spy{i}", table, random.Random(i), 0.5) for i in range(3)]
    with pytest.raises(AssertionError, match="hidden"):
        await play_match(spies, MatchConfig(rules=make_rules(), games=1, seed=3))
