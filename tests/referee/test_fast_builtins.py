"""The built-ins' fast path (``attempt``, on the engine) makes the choices the request path
makes: the same action at every decision of many seeded games under every preset and
many option sets, and the same match logs as seats that read the requests.

The request path is the reference: ``greedy_choose`` / ``random_choose`` reading the
observation and legal maps a remote bot would get. The fast path reads the engine.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from protocol.strategies import greedy_choose, random_choose
from referee.bots.fastchoice import greedy_action, random_action
from referee.rules import PASS, PRESETS, TAKE, Game, IllegalAction, MalformedAction, make_rules
from referee.rules.actions import action_to_wire
from referee.rules.cards import iter_bits
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.clock import TimeControl
from referee.table.match import BotStats, MatchConfig, MatchResult, play_match
from tests.rules.rules_testkit import random_rules

TABLES = [(deck, n) for deck in (24, 36, 52) for n in range(2, 7) if n * 6 <= deck]


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_greedy_on_the_engine_chooses_what_greedy_on_the_request_chooses(preset: str) -> None:
    """Every decision of seeded games (a mix of greedy and random play, so that greedy
    meets positions it would not reach against itself): the same action both ways."""
    compared = 0
    for deck, players in TABLES:
        for seed in range(12):
            rng = random.Random(f"{preset}:{deck}:{players}:{seed}")
            rules = random_rules(rng, preset, deck, players)
            g = Game.new(rules, players, seed=seed, dealer=rng.randrange(players))
            while not g.is_over:
                seat, legal = g.seat_to_move(), g.legal_actions()
                wire = [action_to_wire(a) for a in legal]
                slow = legal[wire.index(greedy_choose(g.observe(seat), wire))]
                assert greedy_action(g, seat, legal) == slow, (g, legal)
                compared += 1
                g.apply(slow if rng.random() < 0.6 else rng.choice(legal))
    assert compared > 10_000


def test_random_on_the_engine_draws_what_random_on_the_request_draws() -> None:
    rules = make_rules("perevodnoy")
    g = Game.new(rules, 3, seed=5)
    fast, slow = random.Random("r"), random.Random("r")
    while not g.is_over:
        legal = g.legal_actions()
        wire = [action_to_wire(a) for a in legal]
        a = random_action(legal, fast)
        assert wire[legal.index(a)] == random_choose(g.observe(g.seat_to_move()), wire, slow)
        g.apply(a)


class RequestReader(BuiltinPlayer):
    """random or greedy as a remote bot plays them: from the request map, awaited (the
    reference the engine path is compared with)."""

    def attempt(self, ask: Any) -> Any:
        return None

    async def finish(self, ask: Any) -> Any:
        request = ask.message()
        obs, legal = request["observation"], request["legal"]
        if self.spec.argv[0] == "random":
            return random_choose(obs, legal, self._game_rng(ask.index))
        if self.spec.argv[0] == "greedy":
            return greedy_choose(obs, legal)
        return await super().finish(ask)


def _match_log(tmp_path: Path, specs: list[str], preset: str, fast: bool) -> list[dict]:
    kind = BuiltinPlayer if fast else RequestReader
    players = [kind(f"{s.split(':')[1]}{i}", parse_bot_spec(s), seed="x")
               for i, s in enumerate(specs)]
    config = MatchConfig(rules=make_rules(preset), games=30, seed="fast-path")
    records: list[dict] = []

    async def main() -> None:
        await play_match(players, config, on_game=lambda r, _: records.append(r.as_dict()))

    trio.run(main)
    for r in records:  # measured times are not part of the choices
        r["decisions"] = [d[:3] for d in r["decisions"]]
        del r["wall_ms"]
    return records


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["classic", "perevodnoy"])
@pytest.mark.parametrize("third", ["greedy", "gentle"], ids=["all_decide_now", "one_asked"])
def test_a_match_of_built_ins_logs_the_same_games_on_either_path(tmp_path: Path, preset: str,
                                                                 third: str) -> None:
    """All three decide at once: the whole game in one synchronous run of the loop. With
    gentle (which decides from the request, awaited) at the table, the loop returns to
    the awaited side at each of its decisions."""
    specs = ["builtin:greedy", "builtin:random", f"builtin:{third}"]
    slow = _match_log(tmp_path, specs, preset, fast=False)
    fast = _match_log(tmp_path, specs, preset, fast=True)
    assert json.dumps(fast) == json.dumps(slow)
    assert len(fast) == 30


def test_a_match_of_built_ins_yields_once_per_game_so_it_can_be_stopped() -> None:
    """The fast path plays a whole game without waiting for anything; a cancel (as
    Ctrl-C and SIGTERM are delivered: at a checkpoint) asked for after game 3 still stops
    the match before game 4 is played."""
    players = [BuiltinPlayer(name, parse_bot_spec(f"builtin:{name}"), seed="x")
               for name in ("greedy", "random")]
    config = MatchConfig(rules=make_rules(), games=50, seed="stop")
    result = MatchResult(config, [BotStats(p.name) for p in players])

    async def main() -> None:
        with trio.CancelScope() as scope:
            await play_match(players, config, result=result,
                             on_game=lambda _, res: scope.cancel() if res.played == 3 else None)

    trio.run(main)
    assert result.played == 3


class BuggyGreedy(BuiltinPlayer):
    """A built-in with a bug: at its 3rd decision it answers ``wrong(legal)``."""

    def __init__(self, wrong) -> None:
        super().__init__("buggy", parse_bot_spec("builtin:greedy"))
        self.wrong, self.decisions = wrong, 0

    def attempt(self, ask):
        self.decisions += 1
        if self.decisions == 3:
            return self.wrong(ask.legal)
        return super().attempt(ask)


@pytest.mark.parametrize("wrong,error", [
    (lambda legal: TAKE if TAKE not in legal else PASS, IllegalAction),  # a real action, not legal now
    (lambda legal: float(legal[0]), MalformedAction),  # equal to a legal one, but no action
    (lambda legal: -1, MalformedAction),
], ids=["illegal", "float_equal_to_a_legal_action", "negative"])
@pytest.mark.parametrize("opponent", ["random", "gentle"], ids=["whole_game_now", "asked_now"])
def test_a_built_in_whose_answer_is_not_legal_is_a_referee_bug_caught_before_it_is_applied(
        wrong, error, opponent: str) -> None:
    """The fast path applies a built-in's answer checked: our own bug stops the run with
    the engine's error, never a game played on from a corrupt state."""
    players = [BuggyGreedy(wrong), BuiltinPlayer(opponent, parse_bot_spec(f"builtin:{opponent}"))]
    config = MatchConfig(rules=make_rules(), games=1, seed="bug")

    async def main() -> None:
        await play_match(players, config)

    with pytest.raises(error):
        trio.run(main)


class FirstAsk:
    """The first decision of a fresh game, as a table asks it (``players.Ask``)."""

    def __init__(self) -> None:
        self.game = Game.new(make_rules(), 2, seed=1)
        self.seat, self.index, self.id = self.game.seat_to_move(), 0, 1
        self.legal = self.game.legal_actions()
        self.cpu_budget = None  #: the wall clock


def test_only_the_built_ins_with_an_engine_twin_answer_at_once() -> None:
    """gentle and ismcts decide from the request (ismcts with the table's rules too)."""
    answered = {name: BuiltinPlayer(name, parse_bot_spec(f"builtin:{name}")).attempt(FirstAsk())
                is not None for name in ("random", "greedy", "gentle", "ismcts")}
    assert answered == {"random": True, "greedy": True, "gentle": False, "ismcts": False}


class SlowGreedy(BuiltinPlayer):
    """greedy that spends 3 virtual seconds on its 5th decision, on either path: at once
    (``now``) or awaited."""

    def __init__(self, clock: trio.testing.MockClock, now: bool = True) -> None:
        super().__init__("slow", parse_bot_spec("builtin:greedy"))
        self.clock, self.decisions, self.now = clock, 0, now

    def _think(self) -> None:
        self.decisions += 1
        if self.decisions == 5:
            self.clock.jump(3.0)

    def attempt(self, ask):
        if not self.now:
            return None
        self._think()
        return super().attempt(ask)

    async def finish(self, ask):
        self._think()
        return super().attempt(ask)


@pytest.mark.parametrize("fast,opponent", [(True, "random"), (True, "gentle"), (False, "random")],
                         ids=["whole_game_now", "asked_now", "request"])
def test_a_built_in_over_its_budget_forfeits_on_either_path(fast: bool, opponent: str) -> None:
    clock = trio.testing.MockClock()
    slow = SlowGreedy(clock, now=fast)
    other = BuiltinPlayer(opponent, parse_bot_spec(f"builtin:{opponent}"))
    config = MatchConfig(rules=make_rules(), games=1, seed="late", tc=TimeControl(move=2.0))
    records = []

    async def main() -> None:
        await play_match([slow, other], config, on_game=lambda r, _: records.append(r))

    trio.run(main, clock=clock)
    (record,) = records
    assert record.termination == "timeout" and record.durak == 0
    assert record.forfeit["reason"] == ("answered request 5 after 3.000 s, over its budget of "
                                        "2.000 s")
    assert record.forfeit["evidence"]["used_s"] == 3.0
    assert record.forfeit["evidence"]["budget_s"] == 2.0
    assert record.forfeit["evidence"]["received"]["type"] in ("attack", "cover", "throw_in",
                                                               "transfer", "take", "pass")


def _hidden_cards_dealt_afresh(g: Game, seat: int, rng: random.Random) -> Game:
    """A copy of ``g`` with the cards ``seat`` cannot see (other hands' unknown cards, the
    talon below the face-up trump) dealt again among the same places."""
    h = g.copy()
    places, cards = [], []
    for s in range(h.players):
        if s != seat:
            for c in iter_bits(h.hands[s] & ~h.known[s]):
                places.append(s)
                cards.append(c)
            h.hands[s] &= h.known[s]
    for i in range(1, len(h.talon)):
        places.append(-i)
        cards.append(h.talon[i])
    rng.shuffle(cards)
    for where, c in zip(places, cards, strict=True):
        if where >= 0:
            h.hands[where] |= 1 << c
        else:
            h.talon[-where] = c
    assert h.hidden_from(seat) == g.hidden_from(seat) and h.observe(seat) == g.observe(seat)
    return h


@pytest.mark.slow
def test_greedy_on_the_engine_does_not_peek_at_hidden_cards() -> None:
    """The fast path gets the whole game object; its choice must not depend on what the
    seat cannot see: the same choice with the hidden cards dealt afresh."""
    checked = 0
    for preset in sorted(PRESETS):
        for seed in range(8):
            rng = random.Random(f"peek:{preset}:{seed}")
            g = Game.new(make_rules(preset), 2 + seed % 3, seed=seed)
            while not g.is_over:
                seat, legal = g.seat_to_move(), g.legal_actions()
                other = _hidden_cards_dealt_afresh(g, seat, rng)
                assert greedy_action(other, seat, legal) == greedy_action(g, seat, legal)
                checked += 1
                g.apply(rng.choice(legal))
    assert checked > 500
