#!/usr/bin/env python3
"""A bot that holds memory and a child, for the test that kills its referee with SIGKILL.

    python3 orphan_bot.py hold TAG MB   fill MB MB of memory, fork a child that fills MB MB
                                        more and sleeps forever, then play legal moves
    python3 orphan_bot.py slow TAG S    at its first decision, sleep S seconds (the other
                                        seat is frozen meanwhile), then play legal moves

TAG is only a marker: it is in the command line of the bot and of its child (a fork
keeps it), so the test finds every process of the bot in /proc.
"""

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402

mode, _tag, amount = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(5)
held = []
if mode == "hold":
    held.append(bytearray(b"x" * (amount << 20)))
    if os.fork() == 0:
        held.append(bytearray(b"y" * (amount << 20)))
        while True:
            time.sleep(60)
slept = [False]


def decide(observation, legal):  # type: ignore[no-untyped-def]
    if mode == "slow" and not slept[0]:
        slept[0] = True
        time.sleep(amount)
    return rng.choice(legal)


run_function(decide, name=f"orphan-{mode}", version="1.0")
