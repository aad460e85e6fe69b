#!/usr/bin/env python3
"""An ordinary opponent whose source holds a secret (OPPONENT-SECRET-7741): the attack
bot next to it, in the same directory, must not be able to read this file."""

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402

rng = random.Random(3)
run_function(lambda observation, legal: rng.choice(legal), name="opponent", version="1.0")
