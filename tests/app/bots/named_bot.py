"""A bot that says hello with the name given as its first argument, then plays the first
legal action (for tests of how names are shown)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402

run_function(lambda observation, legal: legal[0], name=sys.argv[1])
