#!/usr/bin/env python3
"""Train policy.py's linear policy by self-play in the PettingZoo env, then save it.

    .venv/bin/python examples/learning/train.py --minutes 3 --out model.npz

Every seat plays the same policy (sampling from its softmax); after each game every
decision is pushed toward the actions of the seats that were not the durak and away
from the durak's (REINFORCE: the gradient of log pi times the reward, minus a running
baseline). Every ``--eval-every`` games the greedy policy plays ``--eval-games`` games
against uniform random play (seat alternating) and the durak rate of each is printed.
One CPU core, numpy only.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy import FEATURE_NAMES, FEATURES, best, features, probabilities  # noqa: E402

from referee.env import durak_v0  # noqa: E402


def legal_of(obs: dict) -> np.ndarray:
    return obs["action_mask"].view(np.bool_).nonzero()[0]


def self_play_game(env, theta: np.ndarray, rng: np.random.Generator) -> dict[str, list]:
    """One game; per agent, its (rows, chosen row) decisions, and the final rewards."""
    env.reset()
    steps: dict[str, list] = {a: [] for a in env.agents}
    while True:
        agent = env.agent_selection
        if env.terminations[agent]:
            return {"steps": steps, "rewards": dict(env._cumulative_rewards)}
        obs = env.observe(agent)
        legal = legal_of(obs)
        rows = features(obs["observation"], legal)
        p = probabilities(theta, rows)
        choice = rng.choice(len(legal), p=p)
        steps[agent].append((rows, p, choice))
        env.step(int(legal[choice]))


def evaluate(theta: np.ndarray, games: int, seed: int) -> float:
    """The durak rate of uniform random play against the policy playing its best (higher:
    better; the untrained policy, all weights 0, plays uniformly at random too)."""
    env = durak_v0.raw_env(players=2)
    env.reset(seed=f"eval:{seed}")
    rng = random.Random(seed)
    random_lost = 0
    for g in range(games):
        policy_seat = g % 2
        while True:
            agent = env.agent_selection
            if env.terminations[agent]:
                break
            obs = env.observe(agent)
            legal = legal_of(obs)
            if agent == f"player_{policy_seat}":
                pick = legal[best(theta, features(obs["observation"], legal), rng)]
            else:
                pick = legal[rng.randrange(len(legal))]
            env.step(int(pick))
        random_lost += env.game.outcome.durak == 1 - policy_seat
        env.reset()
    return random_lost / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=3.0, help="training time (default 3)")
    parser.add_argument("--out", default="model.npz", help="where to write the weights (default model.npz)")
    parser.add_argument("--lr", type=float, default=0.02, help="learning rate (default 0.02)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the deals and the sampling")
    parser.add_argument("--eval-every", type=int, default=2000, help="games between evaluations")
    parser.add_argument("--eval-games", type=int, default=200, help="games per evaluation")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    theta = np.zeros(FEATURES)
    env = durak_v0.raw_env(players=2)
    env.reset(seed=f"train:{args.seed}")
    baseline, games, t0 = 0.0, 0, time.monotonic()
    deadline = t0 + 60 * args.minutes
    print(f"before training: random play is the durak in {evaluate(theta, args.eval_games, 0):.0%} "
          f"of games against this policy", flush=True)
    while time.monotonic() < deadline:
        game = self_play_game(env, theta, rng)
        grad = np.zeros(FEATURES)
        for agent, decisions in game["steps"].items():
            advantage = game["rewards"][agent] - baseline
            for rows, p, choice in decisions:
                grad += advantage * (rows[choice] - p @ rows)
        baseline += 0.01 * (np.mean(list(game["rewards"].values())) - baseline)
        theta += args.lr * grad / max(1, sum(len(d) for d in game["steps"].values())) * 10
        games += 1
        if games % args.eval_every == 0:
            rate = evaluate(theta, args.eval_games, games)
            print(f"{games} games, {time.monotonic() - t0:.0f} s: random play is the durak in "
                  f"{rate:.0%} of games against this policy", flush=True)
    np.savez(args.out, theta=theta, features=np.array(FEATURE_NAMES))
    print(f"trained on {games} self-play games in {time.monotonic() - t0:.0f} s; weights in {args.out}")
    for name, w in sorted(zip(FEATURE_NAMES, theta), key=lambda x: -abs(x[1])):
        print(f"  {name:>20} {w:+.3f}")


if __name__ == "__main__":
    main()
