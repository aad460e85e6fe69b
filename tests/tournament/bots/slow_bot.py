#!/usr/bin/env python3
"""A random bot that stalls after a budget of decisions, for the tournament kill tests.

    python3 slow_bot.py TAG

Plays a random legal action. With $DURAK_BOT_STALL_AFTER=N, the process answers its
first N decisions and then never answers again: it reads stdin until EOF (the referee
closing it, or dying) and exits. The few bot processes of a tournament thus give only
so many decisions in all, and a long tournament stalls with some games stored and
never finishes on its own: the kill tests need no race against the clock. TAG is
ignored: it marks the command line so a test finds every process it started in /proc.
With $DURAK_BOT_DELAY=S, it sleeps S seconds before each answer: a lower bound on how
long a run takes, for the test that needs a run to outlast trio's thread idle timeout.
The budget comes from the environment (a DURAK_BOT_* name: bots inherit those), not the
command line, because the command is part of the stored tournament settings: a resume
runs the very same command, freely.
"""

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402


def main() -> None:
    budget = int(os.environ.get("DURAK_BOT_STALL_AFTER", "0")) or None
    delay = float(os.environ.get("DURAK_BOT_DELAY", "0"))
    rng = random.Random(1)
    asked = 0

    def choose(observation, legal):  # type: ignore[no-untyped-def]
        nonlocal asked
        asked += 1
        if budget is not None and asked > budget:
            while os.read(0, 65536):  # stall: never answer; leave at EOF
                pass
            os._exit(0)
        if delay:
            time.sleep(delay)
        return rng.choice(legal)

    run_function(choose, name="slow", version="1.0")


if __name__ == "__main__":
    main()
