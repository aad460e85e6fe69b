#!/usr/bin/env python3
"""A bot that plays the greedy strategy of ``protocol.strategies``, using the Python SDK.

    durak-ref match "python3 examples/python/greedy_bot.py" "python3 examples/python/random_bot.py"
    python3 examples/python/greedy_bot.py --connect 127.0.0.1:7724 --token SECRET --name greedy

The strategy is the same function the referee's ``builtin:greedy`` uses, so this bot and
the builtin play identically; only the process boundary differs. With ``--connect
HOST:PORT --token TOKEN [--name NAME]`` it plays over TCP instead of stdin/stdout.
"""

import socket
import sys
from pathlib import Path

try:
    from protocol.bot import CONNECT_USAGE, SocketTransport, run_function, split_connect_args
except ImportError:  # run from a checkout without installing durak-ref
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.bot import CONNECT_USAGE, SocketTransport, run_function, split_connect_args

from protocol.strategies import greedy_choose


def main() -> None:
    try:
        tcp, args = split_connect_args(sys.argv[1:])
        if args:
            raise ValueError(f"unexpected argument {args[0]!r}")
    except ValueError as exc:
        print(f"greedy_bot.py: {exc}\nusage: greedy_bot.py [{CONNECT_USAGE}]", file=sys.stderr)
        sys.exit(2)
    transport = None
    if tcp is not None:
        try:
            transport = SocketTransport(socket.create_connection((tcp.host, tcp.port)))
        except OSError as exc:
            sys.exit(f"greedy_bot.py: cannot connect to {tcp.host}:{tcp.port}: {exc}")
    run_function(greedy_choose, name=(tcp and tcp.name) or "greedy", version="1.0",
                 token=tcp and tcp.token, transport=transport)


if __name__ == "__main__":
    main()
