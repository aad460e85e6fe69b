"""Benchmarks (``durak-ref bench ...``). Speed is measured here, never asserted in tests.

Each benchmark returns a JSON-ready map with the figures and what was measured, so a
report can quote medians and ratios from one run.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import time
from typing import Any

from .rules import Game, make_rules
from .rules.game import OVER


def _machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "cpus": os.cpu_count(), "affinity": sorted(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity") else None}


def bench_engine(games: int = 2000, repeats: int = 5, seed: int = 1, players: int = 2,
                 preset: str = "classic") -> dict[str, Any]:
    """Random games in-process: deal, legal actions, apply, to the end of the game.

    Runs ``repeats`` rounds of ``games`` games (a uniform random legal action each
    decision, via the unchecked ``apply_legal`` fast path a trusted in-process bot
    uses) and reports the median round. One core: this process only.
    """
    rules = make_rules(preset)
    rounds = []
    actions_total = 0
    for r in range(repeats):
        rng = random.Random(seed + r)
        actions = 0
        t0 = time.perf_counter()
        for i in range(games):
            g = Game.new(rules, players, seed=f"{seed}:{r}:{i}")
            legal_actions, apply_legal, rand = g.legal_actions, g.apply_legal, rng.random
            while g.phase != OVER:
                legal = legal_actions()
                apply_legal(legal[int(rand() * len(legal))])
            actions += g.action_count
        rounds.append(time.perf_counter() - t0)
        actions_total += actions
    median = statistics.median(rounds)
    actions_per_game = actions_total / (games * repeats)
    return {
        "benchmark": "engine",
        "preset": preset, "players": players, "deck": rules.deck,
        "games_per_round": games, "rounds": repeats,
        "round_seconds": [round(x, 4) for x in rounds],
        "games_per_s": round(games / median, 1),
        "actions_per_s": round(games * actions_per_game / median, 1),
        "actions_per_game": round(actions_per_game, 2),
        "us_per_action": round(1e6 * median / (games * actions_per_game), 3),
        "machine": _machine(),
    }
