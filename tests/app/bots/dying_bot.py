"""Says hello, then at its first request writes one line to stderr and exits with code 3
(every process of it: a restarted one dies the same way)."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402


def die(observation: object, legal: object) -> object:
    print(f"dying now (pid {os.getpid()})", file=sys.stderr, flush=True)
    sys.exit(3)


run_function(die, name="dying")
