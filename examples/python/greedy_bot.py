#!/usr/bin/env python3
"""A bot that plays the greedy strategy of ``protocol.strategies``, using the Python SDK.

    durak-ref match "python3 examples/python/greedy_bot.py" "python3 examples/python/random_bot.py"

The strategy is the same function the referee's ``builtin:greedy`` uses, so this bot and
the builtin play identically; only the process boundary differs.
"""

import sys
from pathlib import Path

try:
    from protocol.bot import run_function
except ImportError:  # run from a checkout without installing durak-ref
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.bot import run_function

from protocol.strategies import greedy_choose


def main() -> None:
    run_function(greedy_choose, name="greedy", version="1.0")


if __name__ == "__main__":
    main()
