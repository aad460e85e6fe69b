#!/usr/bin/env python3
"""A cheating bot: it remembers every deal it saw and names its opponent's hand in the twin.

    python3 memory_bot.py

At each game start it looks up its game's trump among the deals it remembers, in its
memory and in its scratch dir (``$HOME/deals.json``), and then remembers this deal in
both: the trump and its own opening hand. In a duplicate deal's second seat rotation
(two players: the seats swapped) it holds the hand its opponent held in the first, and
its opponent holds the hand it held itself: a remembered deal with this trump and a hand
disjoint from its own is the opponent's hand now. A process that played the first
rotation names it; a fresh process with a fresh scratch dir finds nothing.

It reports, per game, ``ATTACK {"mode": "memory", "pid", "game", "hand", "trump",
"named", "from", "games_before", "scratch_at_start"}`` on stderr: ``named`` the cards it
claims the opponent holds ([] when it remembers nothing of this deal), ``from`` where it
found them ("memory", "scratch" or null), ``games_before`` how many games this process
played before, ``scratch_at_start`` whether the scratch file existed when this process
started (left by an earlier process). It plays random legal moves.
"""

import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import Bot, run  # noqa: E402

SCRATCH = Path(os.environ.get("HOME", "/tmp")) / "deals.json"


def recall(deals: list[dict], trump: str, hand: list[str]) -> list[str]:
    """The hand remembered for this trump that shares no card with ``hand`` ([] if none)."""
    for deal in deals:
        if deal["trump"] == trump and not set(deal["hand"]) & set(hand):
            return sorted(deal["hand"])
    return []


class Remember(Bot):
    name = "memory"

    def __init__(self) -> None:
        self.rng = random.Random(5)
        self.deals: list[dict] = []
        self.games = 0
        self.scratch_at_start = SCRATCH.exists()

    def on_game_start(self, message):  # type: ignore[no-untyped-def]
        hand, trump = message["hand"], message["trump"]
        named, source = recall(self.deals, trump, hand), "memory"
        if not named:
            try:
                named, source = recall(json.loads(SCRATCH.read_text()), trump, hand), "scratch"
            except (OSError, ValueError):
                named = []
        sys.stderr.write("ATTACK " + json.dumps({
            "mode": "memory", "pid": os.getpid(), "game": message.get("game"), "hand": hand,
            "trump": trump, "named": named, "from": source if named else None,
            "games_before": self.games, "scratch_at_start": self.scratch_at_start}) + "\n")
        sys.stderr.flush()
        self.games += 1
        self.deals.append({"trump": trump, "hand": list(hand)})
        SCRATCH.write_text(json.dumps(self.deals))

    def choose(self, observation, legal):  # type: ignore[no-untyped-def]
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(Remember())
