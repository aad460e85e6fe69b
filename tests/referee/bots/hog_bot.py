"""A bot that answers the handshake, then at its first request either allocates memory
without end ("memory") or spins the CPU ("cpu")."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from protocol.bot import run_function  # noqa: E402

MODE = sys.argv[1]


def choose(observation, legal):
    if MODE == "memory":
        hoard = []
        while True:
            hoard.append(bytearray(10 << 20))
    while True:
        pass


run_function(choose, name="hog")
