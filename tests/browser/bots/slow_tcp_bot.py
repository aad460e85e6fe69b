"""A random bot that connects over TCP and thinks DELAY seconds per decision, so that a
test's browser can watch its games while they run.

    python3 slow_tcp_bot.py DELAY --connect HOST:PORT --token TOKEN --name NAME
"""

import random
import socket
import sys
import time

from protocol.bot import SocketTransport, run_function, split_connect_args


def main() -> None:
    tcp, args = split_connect_args(sys.argv[1:])
    assert tcp is not None, "usage: slow_tcp_bot.py DELAY --connect HOST:PORT --token T --name N"
    delay = float(args[0])
    rng = random.Random(tcp.name)

    def decide(observation: dict, legal: list) -> dict:
        time.sleep(delay)
        return rng.choice(legal)

    run_function(decide, name=tcp.name or "slow", version="1.0", token=tcp.token,
                 transport=SocketTransport(socket.create_connection((tcp.host, tcp.port))))


if __name__ == "__main__":
    main()
