"""A random bot on stdin/stdout that thinks DELAY seconds per decision (default 0.05), so
that a run lasts long enough to be interrupted while a game is in play."""

import random
import sys
import time

from protocol.bot import run_function


def main() -> None:
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
    rng = random.Random(1)

    def decide(observation: dict, legal: list) -> dict:
        time.sleep(delay)
        return rng.choice(legal)

    run_function(decide, name="slow", version="1.0")


if __name__ == "__main__":
    main()
