#!/usr/bin/env python3
"""A hostile bot for the distributed tests: ``store_thief_bot.py HOST PORT SECRETFILE``
tries to reach the store's PostgreSQL server and to read a password file, and reports
on stderr (its stderr log) what it got; then plays random legal moves."""

import random
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402


def main() -> None:
    host, port, secret = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    try:
        s = socket.socket()  # refused outright under the seccomp filter (EPERM)
        s.settimeout(3)
        s.connect((host, port))
        print("THIEF: server reached", file=sys.stderr)
    except OSError as exc:
        print(f"THIEF: server unreachable ({exc})", file=sys.stderr)
    try:
        print(f"THIEF: secret file says {Path(secret).read_text()!r}", file=sys.stderr)
    except OSError as exc:
        print(f"THIEF: secret file unreadable ({exc})", file=sys.stderr)
    sys.stderr.flush()
    rng = random.Random(1)
    run_function(lambda observation, legal: rng.choice(legal), name="thief", version="1.0")


if __name__ == "__main__":
    main()
