"""``builtin:ismcts`` decides from what its seat may know, and nothing else.

The strategy's only inputs are a request's observation and legal list (plus the table
rules from game_start and a seeded generator): it is never handed a ``Game``. These
tests pin that down: its view of the unseen cards is exactly the set the seat cannot
see, every determinization it plays reproduces the observation it was given, and two
games that differ only in hidden cards get the same decision.
"""

from __future__ import annotations

import inspect
import random

import pytest

from referee.bots.ismcts import (
    Determinizer,
    IsmctsParams,
    IsmctsStrategy,
    determinize,
    parse_params,
    unseen_cards,
)
from referee.rules import Game, action_to_wire, make_rules
from referee.rules.cards import iter_bits
from referee.seats.players import BotSpecError, BuiltinPlayer, parse_bot_spec

CLASSIC = make_rules("classic", ["first_bout_limit=on"])


def positions(rules, players: int, games: int, seed: int = 0):
    """(game, seat, observation, legal wire list) at every asked decision of games
    played by a seeded random policy."""
    rng = random.Random(seed)
    for i in range(games):
        g = Game.new(rules, players, seed=f"ismcts-{seed}-{i}")
        while not g.is_over:
            legal = g.legal_actions()
            forced = g.forced_action(legal)
            if forced is None:
                seat = g.seat_to_move()
                yield g, seat, g.observe(seat), [action_to_wire(a) for a in legal]
                g.apply_legal(legal[rng.randrange(len(legal))])
            else:
                g.apply_legal(forced)


def test_the_strategy_is_given_no_game_only_the_wire_view() -> None:
    assert list(inspect.signature(IsmctsStrategy.choose).parameters) == ["self", "obs", "legal", "rng"]
    assert list(inspect.signature(IsmctsStrategy.__init__).parameters) == ["self", "rules", "params"]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_unseen_cards_are_exactly_what_the_seat_cannot_see(players: int) -> None:
    for g, seat, obs, _ in positions(CLASSIC, players, 3):
        assert set(unseen_cards(obs, CLASSIC.deck)) == set(iter_bits(g.hidden_from(seat)))


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), [("classic", 2), ("classic", 3), ("perevodnoy", 3),
                                                 ("perevodnoy_trump", 4), ("deflection", 2)])
def test_every_determinization_reproduces_the_observation_and_the_legal_list(preset: str, players: int) -> None:
    rules = make_rules(preset, ["first_bout_limit=on"])
    rng = random.Random(1)
    for _, seat, obs, legal in positions(rules, players, 2):
        dealer = Determinizer(rules, obs, rng)
        for sample in (determinize(rules, obs, rng), dealer.deal(rng), dealer.deal(rng)):
            assert sample.observe(seat) == obs
            assert sample.current_seat == seat
            assert [action_to_wire(a) for a in sample.legal_actions()] == legal


def test_two_hidden_states_with_one_observation_get_the_same_decision() -> None:
    # Seat 0 sees the same in both games; seat 1's hand and the talon differ.
    a = Game.from_position(CLASSIC, ["6S 9S QD KH", "7S 8D TC JC"], trump="AH",
                           talon="9C 6D TD 7C AH", table="6C/--", attacker=1)
    b = Game.from_position(CLASSIC, ["6S 9S QD KH", "9C 6D TD 7C"], trump="AH",
                           talon="7S 8D TC JC AH", table="6C/--", attacker=1)
    assert a.hands[1] != b.hands[1] and a.talon != b.talon
    assert a.observe(0) == b.observe(0)
    legal = [action_to_wire(x) for x in a.legal_actions()]
    assert legal == [action_to_wire(x) for x in b.legal_actions()]
    search = IsmctsStrategy(CLASSIC, IsmctsParams(iterations=60))
    for seed in range(5):
        choice_a = search.choose(a.observe(0), legal, random.Random(seed))
        choice_b = search.choose(b.observe(0), legal, random.Random(seed))
        assert choice_a == choice_b
        assert any(choice_a is x for x in legal)


@pytest.mark.parametrize("spec", ["builtin:ismcts", "builtin:ismcts:iterations=20",
                                  "builtin:ismcts:ms=40", "builtin:ismcts:iterations=50,ms=40,c=1.2",
                                  "me=builtin:ismcts:ms=30"])
def test_ismcts_specs_parse(spec: str) -> None:
    parsed = parse_bot_spec(spec)
    assert parsed.kind == "builtin" and parsed.argv[0] == "ismcts"
    BuiltinPlayer(parsed.name, parsed)


def test_ms_alone_lifts_the_iteration_count() -> None:
    assert parse_params({"ms": "40"}) == IsmctsParams(iterations=None, ms=40.0)
    assert parse_params({}) == IsmctsParams()
    assert parse_params({"bias": "0"}).bias == 0.0  # no greedy hint: pure search


@pytest.mark.parametrize(("spec", "words"), [
    ("builtin:ismcts:depth=3", "unknown ismcts parameter 'depth'"),
    ("builtin:ismcts:iterations=0", "must be > 0"),
    ("builtin:ismcts:ms=nan", "must be > 0"),
    ("builtin:ismcts:ms=inf", "must be > 0"),
    ("builtin:ismcts:ms=-5", "must be > 0"),
    ("builtin:ismcts:bias=-1", "must be >= 0"),
    ("builtin:ismcts:iterations=1e99", "not a number"),
    ("builtin:ismcts:iterations", "expected KEY=VALUE"),
    ("builtin:ismcts:=3", "expected KEY=VALUE"),
    ("builtin:greedy:iterations=5", "takes no parameters"),
])
def test_bad_ismcts_parameters_are_the_users_error(spec: str, words: str) -> None:
    with pytest.raises(BotSpecError, match=words.replace("(", r"\(")):
        parse_bot_spec(spec)


@pytest.mark.process
def test_a_match_against_ismcts_is_reproducible_and_replays(tmp_path) -> None:
    """Through the real referee: ismcts learns the rules from game_start (as a remote bot
    does), its games verify, and with iterations alone the same seed plays the same
    games."""
    import json

    from tests.support import cli
    logs = []
    for run in ("a", "b"):
        result = cli("match", "builtin:ismcts:iterations=15", "builtin:greedy", "--games", "4",
                     "--rules", "perevodnoy", "--seed", "s1", "--log-dir", tmp_path / run, "--json",
                     cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["standings"][0]["forfeits"] == {}
        logs.append(next((tmp_path / run).glob("match-*.jsonl")))
    assert cli("replay", logs[0], "--verify", cwd=tmp_path).returncode == 0
    games = [[json.loads(line)["decisions"] for line in log.read_text().splitlines()[1:-1]]
             for log in logs]
    strip = [[[d[:3] for d in g] for g in run] for run in games]  # times differ
    assert strip[0] == strip[1]


@pytest.mark.process
def test_a_bad_ismcts_spec_on_the_command_line_exits_2(tmp_path) -> None:
    from tests.support import cli
    result = cli("match", "builtin:ismcts:ms=0", "builtin:greedy", "--no-log", cwd=tmp_path)
    assert result.returncode == 2
    assert "ismcts parameter ms=0" in result.stderr and "Traceback" not in result.stderr
