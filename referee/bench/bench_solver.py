"""``bench solver``: how fast the endgame solver is, and how many two-seat games it decides
at the moment the talon runs out.

Seeded two-seat games are played (both seats greedy, or both random) up to their first
position the solver takes (``solvable``: the talon empty, two seats in). There, a fresh
solver gets the budget once (value and line, what adjudication needs): decided or not,
its positions and its seconds. The same game is then played on with a fresh
``Adjudicator`` of the same budget getting its slice after every decision, as in a match
with ``--adjudicate``: the share it decides is what a run adjudicates.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from ..bots.fastchoice import greedy_action, random_action
from ..bots.solver import Solver, SolverLimit, solvable
from ..rules import Game, make_rules
from ..table.adjudicator import Adjudicator, Budget
from .bench import machine_info

PLAYS = ("greedy", "random")


def _mover(play: str, rng: random.Random) -> Callable[[Game], int]:
    if play == "greedy":
        return lambda g: greedy_action(g, g.seat_to_move(), g.legal_actions())
    return lambda g: random_action(g.legal_actions(), rng)


def bench_solver(games: int = 100, budget_ms: float = 100.0, seed: int = 1, play: str = "greedy",
                 preset: str = "classic", on_game: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Solve ``games`` seeded endgames (see the module docstring) within ``budget_ms``
    each; returns the figures (JSON-ready). ``on_game``: called with the number done."""
    rules = make_rules(preset)
    rng = random.Random(seed)
    move = _mover(play, rng)
    budget = Budget(f"{budget_ms:g}ms", seconds=budget_ms / 1000)
    decided_ms: list[float] = []
    cards: list[int] = []
    nodes = 0
    seconds = 0.0
    at_once = adjudicated = reached = 0
    for i in range(games):
        g = Game.new(rules, 2, seed=f"{seed}:{i}")
        while not g.is_over and not solvable(g):
            g.apply_legal(move(g))
        if on_game is not None:
            on_game(i + 1)
        if not solvable(g):
            continue
        reached += 1
        cards.append(sum(h.bit_count() for h in g.hands) + g.table_mask().bit_count())
        solver = Solver(seconds=budget.seconds)
        started = time.perf_counter()
        try:
            solver.line(g)
            decided = True
        except SolverLimit:
            decided = False
        took = time.perf_counter() - started
        nodes += solver.nodes
        seconds += took
        if decided:
            at_once += 1
            decided_ms.append(took * 1000)
        judge = Adjudicator(budget, ["a", "b"])
        while not g.is_over and not judge.settles(g):
            g.apply_legal(move(g))
        adjudicated += judge.result is not None

    def share(n: int) -> float | None:
        return round(n / reached, 4) if reached else None

    return {
        "benchmark": "solver", "preset": preset, "play": play, "games": games, "seed": seed,
        "budget_ms": budget_ms, "endgames": reached,
        "cards_in_play_median": statistics.median(cards) if cards else None,
        "positions_per_s": round(nodes / seconds) if seconds else None,
        "decided_at_talon_empty": at_once, "share_decided_at_talon_empty": share(at_once),
        "decided_ms_median": round(statistics.median(decided_ms), 3) if decided_ms else None,
        "decided_ms_max": round(max(decided_ms), 3) if decided_ms else None,
        "adjudicated": adjudicated, "share_adjudicated": share(adjudicated),
        "machine": machine_info(),
    }
