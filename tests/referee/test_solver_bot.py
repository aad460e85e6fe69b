"""``builtin:solver``: the endgame solver as a bot.

It never loses an endgame the solver proves won (or drawn) for its seat, whoever the
opponent; it reads nothing its seat could not work out from its observation; its spec
takes its budget, its fallback and the fallback's own parameters, and refuses the rest.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from referee.bots.fastchoice import greedy_action, random_action
from referee.bots.ismcts import IsmctsParams, IsmctsStrategy, unseen_cards
from referee.bots.solver import LOSS, Solver, SolverLimit, solvable, terminal_value
from referee.bots.solverbot import SolverBotParams, SolverChooser, parse_params
from referee.rules import Game, action_from_wire, make_rules
from referee.rules.actions import shared_wire
from referee.rules.cards import parse_card
from referee.seats.players import BotSpecError, BuiltinPlayer, parse_bot_spec
from tests.support import cli

CLASSIC = make_rules("classic")


def endgames(rules, count: int, seed: int, players: int = 2, max_nodes: int | None = 20_000) -> list[Game]:
    """Seeded games played at random to their first position the solver takes, among
    those it proves within ``max_nodes`` positions (so the property below is exact and
    quick; None: any)."""
    rng = random.Random(seed)
    out: list[Game] = []
    while len(out) < count:
        g = Game.new(rules, players, seed=rng.randrange(1 << 30))
        while not g.is_over and not solvable(g):
            legal = g.legal_actions()
            g.apply_legal(legal[rng.randrange(len(legal))])
        if not solvable(g):
            continue
        try:
            if max_nodes is not None:
                Solver(max_nodes=max_nodes).value(g)
        except SolverLimit:
            continue
        out.append(g)
    return out


def opponent_move(kind: str, game: Game, seat: int, rng: random.Random) -> int:
    legal = game.legal_actions()
    if kind == "random":
        return random_action(legal, rng)
    if kind == "greedy":
        return greedy_action(game, seat, legal)
    strategy = IsmctsStrategy(game.rules, IsmctsParams(iterations=30))
    return action_from_wire(strategy.choose(game.observe(seat), [dict(shared_wire(a)) for a in legal], rng))


@pytest.mark.slow
@pytest.mark.parametrize("opponent", ["random", "greedy", "ismcts"])
def test_a_bot_playing_the_solvers_moves_never_loses_a_solved_endgame(opponent: str) -> None:
    games = endgames(CLASSIC, 20, seed=["random", "greedy", "ismcts"].index(opponent))
    rng = random.Random(5)
    played = 0
    for start in games:
        for me in (s for s in range(start.players) if not start.out[s]):
            value = Solver().value(start, me)
            if value == LOSS:
                continue
            chooser = SolverChooser(SolverBotParams(solve_ms=None, solve_nodes=10_000_000))
            g = start.copy()
            while not g.is_over:
                seat = g.seat_to_move()
                if seat == me:
                    action = chooser.choose(g, 0, None)
                    assert action is not None
                else:
                    action = opponent_move(opponent, g, seat, rng)
                g.apply_legal(action)
            assert terminal_value(g, me) >= value, (start, me)
            played += 1
    assert played >= 15


@pytest.mark.parametrize("players", [2, 3, 4])
def test_in_a_solved_endgame_the_seats_observation_names_the_other_hand(players: int) -> None:
    # What the solver reads from the engine is what the seat can count: every card it
    # has not seen is in the other hand.
    for g in endgames(CLASSIC, 25, seed=players, players=players, max_nodes=None):
        a, b = (s for s in range(players) if not g.out[s])
        for me, other in ((a, b), (b, a)):
            obs = g.observe(me)
            counted = set(unseen_cards(obs, CLASSIC.deck)) | {parse_card(c) for c in obs["known"][other]}
            assert counted == {c for c in range(64) if g.hands[other] >> c & 1}


def test_outside_a_solved_endgame_the_chooser_passes_to_the_fallback() -> None:
    chooser = SolverChooser(parse_params({}))
    assert chooser.choose(Game.new(CLASSIC, 2, seed=1), 0, None) is None  # the talon is full
    # A budget far too small to prove a big endgame: not proved, so not chosen.
    def big(g: Game) -> bool:
        try:
            Solver(max_nodes=5000).value(g)
        except SolverLimit:
            return True
        return False

    big_one = next(g for g in endgames(CLASSIC, 40, seed=9, max_nodes=None) if big(g))
    tiny = SolverChooser(SolverBotParams(solve_ms=None, solve_nodes=1))
    assert tiny.choose(big_one, 0, None) is None


@pytest.mark.parametrize(("text", "params"), [
    ("builtin:solver", SolverBotParams()),
    ("builtin:solver:solve_ms=20", SolverBotParams(solve_ms=20.0)),
    ("builtin:solver:solve_nodes=5000", SolverBotParams(solve_ms=None, solve_nodes=5000)),
    ("builtin:solver:fallback=random", SolverBotParams(fallback="random")),
    ("builtin:solver:fallback=ismcts,iterations=40,c=0.5",
     SolverBotParams(fallback="ismcts", fallback_items=("iterations=40", "c=0.5"))),
])
def test_the_spec_takes_a_budget_a_fallback_and_the_fallbacks_own_parameters(
        text: str, params: SolverBotParams) -> None:
    spec = parse_bot_spec(text)
    assert spec.kind == "builtin" and spec.argv[0] == "solver"
    assert parse_params(dict(i.split("=") for i in spec.argv[1:])) == params
    BuiltinPlayer("s", spec)  # builds its chooser and its fallback


@pytest.mark.parametrize(("text", "message"), [
    ("builtin:solver:fallback=expert", "fallback='expert': one of random, greedy, gentle, ismcts"),
    ("builtin:solver:solve_ms=0", "solve_ms=0: must be > 0"),
    ("builtin:solver:solve_nodes=lots", "solve_nodes='lots' is not a number"),
    ("builtin:solver:iterations=40", "unknown solver parameter(s) iterations=40"),
    ("builtin:solver:fallback=ismcts,iterations=-3", "ismcts parameter iterations=-3"),
    ("builtin:solver:fallback=ismcts,depth=3", "unknown ismcts parameter 'depth'"),
])
def test_a_bad_solver_spec_is_refused_when_read(text: str, message: str) -> None:
    with pytest.raises(BotSpecError) as info:
        parse_bot_spec(text)
    assert message in str(info.value) and repr(text) in str(info.value)


@pytest.mark.process
def test_the_solver_bot_plays_whole_matches_through_the_cli(tmp_path: Path) -> None:
    res = cli("match", "builtin:solver:solve_ms=50,fallback=ismcts,iterations=20", "builtin:greedy",
              "-n", "4", "--seed", "3", "--log-dir", tmp_path / "logs", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert [b["name"] for b in summary["standings"]] == ["solver", "greedy"]
    verified = cli("replay", summary["log"], "--verify", cwd=tmp_path)
    assert verified.returncode == 0 and "4 of 4 games verified" in verified.stdout
