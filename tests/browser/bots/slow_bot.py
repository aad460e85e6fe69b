"""A random bot on stdin/stdout that thinks DELAY seconds per decision, so that a
browser can watch a run's live page while its games are played.

    python3 slow_bot.py DELAY
"""

import random
import sys
import time

from protocol.bot import run_function


def main() -> None:
    delay = float(sys.argv[1])
    rng = random.Random(0)

    def decide(observation: dict, legal: list) -> dict:
        time.sleep(delay)
        return rng.choice(legal)

    run_function(decide, name="slow", version="1.0")


if __name__ == "__main__":
    main()
