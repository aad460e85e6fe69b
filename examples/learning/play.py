#!/usr/bin/env python3
"""The policy trained by train.py, as a protocol bot: it can enter any referee run.

    durak-ref match ".venv/bin/python examples/learning/play.py model.npz" builtin:random --games 400

It reads each request as the PettingZoo env showed the game while training: the same
observation tensor (``Encoder.view_observation`` of the request's observation) and the
same action indices (``wire_indices`` of its legal list), and answers with the legal
action it prefers most (ties broken at random, seeded by ``--seed``).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    from protocol.bot import Bot, run
except ImportError:  # run from a checkout without installing durak-ref
    sys.path.insert(0, str(HERE.parents[1]))
    from protocol.bot import Bot, run
from policy import FEATURE_NAMES, best, features  # noqa: E402

from referee.env.encoding import Encoder, view_cards, wire_indices  # noqa: E402
from referee.rules.options import rules_from_dict  # noqa: E402


class LearnedBot(Bot):
    name = "learned"
    author = "examples/learning"

    def __init__(self, theta: np.ndarray, seed: int) -> None:
        self.theta = theta
        self.rng = random.Random(seed)
        self.encoder: Encoder | None = None

    def on_game_start(self, message: dict[str, Any]) -> None:
        self.encoder = Encoder(rules_from_dict(message["rules"]), message["players"])

    def choose(self, observation: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.encoder is not None, "a request before game_start"
        indices = np.array(wire_indices(legal, view_cards(observation)[0]))
        rows = features(self.encoder.view_observation(observation), indices)
        return legal[best(self.theta, rows, self.rng)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="the weights train.py wrote (model.npz)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tie breaks")
    args = parser.parse_args()
    with np.load(args.model) as data:
        if tuple(data["features"]) != FEATURE_NAMES:
            sys.exit(f"{args.model}: trained on other features than policy.py's; train again")
        theta = data["theta"]
    run(LearnedBot(theta, args.seed))


if __name__ == "__main__":
    main()
