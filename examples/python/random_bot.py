#!/usr/bin/env python3
"""A bot that plays a uniformly random legal action, using the Python SDK.

    durak-ref match "python3 examples/python/random_bot.py 42" builtin:greedy

The seed is the first argument, else $DURAK_SEED, else fresh randomness. The same seed
and the same requests give the same answers.
"""

import os
import random
import sys
from pathlib import Path

try:
    from protocol.bot import run_function
except ImportError:  # run from a checkout without installing durak-ref
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.bot import run_function


def main() -> None:
    seed = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DURAK_SEED")
    rng = random.Random(int(seed) if seed and seed.isdigit() else seed)
    run_function(lambda observation, legal: rng.choice(legal), name="random", version="1.0")


if __name__ == "__main__":
    main()
