#!/usr/bin/env python3
"""A bot that says hello with the name it is given and plays its first legal action.

    python3 named_bot.py NAME
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402

if __name__ == "__main__":
    run_function(lambda observation, legal: legal[0], name=sys.argv[1], version="1.0")
