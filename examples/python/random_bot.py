#!/usr/bin/env python3
"""A bot that plays a uniformly random legal action, using the Python SDK.

    durak-ref match "python3 examples/python/random_bot.py 42" builtin:greedy
    python3 examples/python/random_bot.py 42 --connect 127.0.0.1:7724 --token SECRET

The seed is the first argument, else $DURAK_SEED, else fresh randomness. The same seed
and the same requests give the same answers. With ``--connect HOST:PORT --token TOKEN
[--name NAME]`` the bot connects to a referee over TCP instead of using stdin/stdout.
"""

import os
import random
import socket
import sys
from pathlib import Path

try:
    from protocol.bot import CONNECT_USAGE, SocketTransport, run_function, split_connect_args
except ImportError:  # run from a checkout without installing durak-ref
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.bot import CONNECT_USAGE, SocketTransport, run_function, split_connect_args


def main() -> None:
    try:
        tcp, args = split_connect_args(sys.argv[1:])
    except ValueError as exc:
        print(f"random_bot.py: {exc}\nusage: random_bot.py [SEED] [{CONNECT_USAGE}]", file=sys.stderr)
        sys.exit(2)
    seed = args[0] if args else os.environ.get("DURAK_SEED")
    rng = random.Random(int(seed) if seed and seed.isdigit() else seed)
    transport = None
    if tcp is not None:
        try:
            transport = SocketTransport(socket.create_connection((tcp.host, tcp.port)))
        except OSError as exc:
            sys.exit(f"random_bot.py: cannot connect to {tcp.host}:{tcp.port}: {exc}")
    run_function(lambda observation, legal: rng.choice(legal), name=(tcp and tcp.name) or "random",
                 version="1.0", token=tcp and tcp.token, transport=transport)


if __name__ == "__main__":
    main()
