"""``durak-ref bench env``: steps per second of the PettingZoo AEC env (referee.env).

A step is what a learner's loop does per decision: ``observe`` the agent to act (its
observation tensor and action mask, both built afresh), pick a uniform random index
among the mask's legal ones, ``step`` it. Three loops play the same seeded games in
alternating rounds: the unwrapped env (``raw_env``), the env with PettingZoo's guards
(``env()``), and the bare engine (``legal_actions`` + ``apply_legal``, no tensors) as the
floor they are compared with. Needs the ``env`` extra.
"""

from __future__ import annotations

import functools
import random
import statistics
import time
from typing import Any

from ..errors import UserError
from ..rules.deal import deal_deck, deal_id
from ..rules.game import OVER, Game
from .bench import machine_info, pin_to_cpu

KINDS = ("raw_env", "env", "engine")


class BenchEnvError(UserError, RuntimeError):
    """The env extra is not installed: the message says what to install."""

    hint = "install the env extra: pip install 'durak-ref[env]'"


def _env_round(make: Any, games: int, seed: str) -> tuple[float, int]:
    """Seconds and steps for ``games`` games of env ``make()`` with random masked actions."""
    import numpy as np

    env = make()
    rng = random.Random(seed)
    rand = rng.random
    bool_ = np.bool_
    steps = 0
    t0 = time.perf_counter()
    env.reset(seed=seed)
    for _ in range(games):
        while True:
            agent = env.agent_selection
            if env.terminations[agent]:
                break
            # A mask read as bool is searched about 6x faster than as int8.
            legal = env.observe(agent)["action_mask"].view(bool_).nonzero()[0]
            env.step(int(legal[int(rand() * len(legal))]))
            steps += 1
        env.reset()
    return time.perf_counter() - t0, steps


def _engine_round(rules: Any, players: int, games: int, seed: str) -> tuple[float, int]:
    """The same deals played on the bare engine: the floor under the env's figures."""
    rng = random.Random(seed)
    rand = rng.random
    steps = 0
    t0 = time.perf_counter()
    for k in range(games):
        g = Game.new(rules, players, deck=deal_deck(seed, deal_id("env", k), rules.deck))
        while g.phase != OVER:
            legal = g.legal_actions()
            g.apply_legal(legal[int(rand() * len(legal))])
        steps += g.action_count
    return time.perf_counter() - t0, steps


def bench_env(games: int = 300, rounds: int = 5, players: int = 2, preset: str = "classic",
              cpu: int | None = 0) -> dict[str, Any]:
    """``rounds`` rounds of ``games`` random games for each of ``KINDS``, alternating;
    per kind each round's steps/s and the median, µs per step, and the env's speed as a
    share of the bare engine's. ``cpu``: pin this process to that CPU (None: unpinned).
    Raises BenchEnvError without the env extra."""
    try:
        from ..env import durak_v0
    except ImportError as exc:
        raise BenchEnvError(f"bench env needs the env extra ({exc}): pip install -e '.[env]'") from None
    from ..rules.options import make_rules

    rules = make_rules(preset)
    rules.check_table(players)
    pinned = pin_to_cpu(cpu)
    runs: dict[str, list[float]] = {k: [] for k in KINDS}
    steps_of: dict[str, int] = {}
    for r in range(rounds):
        seed = f"bench-env:{r}"
        for kind in KINDS:
            if kind == "engine":
                seconds, steps = _engine_round(rules, players, games, seed)
            else:
                make = functools.partial(getattr(durak_v0, kind), players=players, rules=rules)
                seconds, steps = _env_round(make, games, seed)
            runs[kind].append(steps / seconds)
            steps_of[kind] = steps_of.get(kind, 0) + steps
    medians = {k: statistics.median(v) for k, v in runs.items()}
    return {
        "benchmark": "env",
        "preset": preset, "players": players, "deck": rules.deck,
        "games_per_round": games, "rounds": rounds,
        "steps_per_game": round(steps_of["raw_env"] / (games * rounds), 2),
        **{kind: {"steps_per_s": [round(x) for x in runs[kind]],
                  "steps_per_s_median": round(medians[kind]),
                  "us_per_step": round(1e6 / medians[kind], 3)} for kind in KINDS},
        "raw_env_share_of_engine": round(medians["raw_env"] / medians["engine"], 3),
        "env_share_of_engine": round(medians["env"] / medians["engine"], 3),
        "pinned": pinned,
        "machine": machine_info(),
    }
