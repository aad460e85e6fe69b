#!/usr/bin/env python3
"""The shortest complete durak-ref bot: Python stdlib + msgpack, no SDK. Port this one.

    durak-ref match "python3 examples/python/minimal_bot.py" builtin:random
    python3 examples/python/minimal_bot.py --connect 127.0.0.1:7724 --token SECRET

Protocol (protocol/SPEC.md): frames of a 4-byte big-endian length + one msgpack map, on
stdin/stdout, or over TCP with --connect HOST:PORT --token TOKEN [--name NAME]. Answer
the referee's hello with ours, every ping with a pong, and every request with one element
of its "legal" list. Strategy: take the exchange when offered, otherwise play the
cheapest card (non-trumps before trumps, low before high); pass or take only when no card
can be played. Anything on stderr is just logged by the referee.
"""

import argparse
import os
import socket
import struct
import sys

import msgpack

RANKS = "23456789TJQKA"


def read_message(stream):
    header = stream.read(4)  # a buffered read(n) blocks until n bytes or end of stream
    if len(header) < 4:
        return None  # the referee closed the pipe: we are done
    (size,) = struct.unpack(">I", header)
    body = stream.read(size)
    return msgpack.unpackb(body, raw=False) if len(body) == size else None


def write_message(stream, message):
    body = msgpack.packb(message, use_bin_type=True)
    stream.write(struct.pack(">I", len(body)) + body)
    stream.flush()  # the referee is waiting for this frame


def cost(action, trump_suit):
    if action["type"] == "exchange":
        return -1
    if "card" not in action:  # take, pass: only when nothing else is legal
        return 100
    rank, suit = action["card"][0], action["card"][1]
    return RANKS.index(rank) + (20 if suit == trump_suit else 0)


def main():
    parser = argparse.ArgumentParser(description="durak-ref minimal bot")
    parser.add_argument("--connect", metavar="HOST:PORT", help="play over TCP, not stdin/stdout")
    parser.add_argument("--token", help="the seat's secret (needed with --connect)")
    parser.add_argument("--name", default="minimal")
    options = parser.parse_args()
    hello = {"type": "hello", "protocol": 1, "name": options.name, "version": "1.0"}
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    if options.connect or options.token:
        host, _, port = (options.connect or "").rpartition(":")  # IPv6 in brackets: [::1]:7724
        token = options.token or os.environ.get("DURAK_TOKEN")  # the env keeps it out of ps
        if not (host and port.isdigit() and 0 < int(port) < 65536 and token):
            parser.error("use --connect HOST:PORT --token TOKEN (or set DURAK_TOKEN)")
        sock = socket.create_connection((host.strip("[]"), int(port)))
        stdin = stdout = sock.makefile("rwb")
        hello["token"] = token
    first = read_message(stdin)  # the referee's hello; it offers protocol 1, which we speak
    if first is None:
        return
    if first["type"] != "hello":  # an error: the referee refuses the connection
        sys.exit(f"referee says: {first.get('message')}")
    write_message(stdout, hello)
    while (message := read_message(stdin)) is not None:
        if message["type"] == "request":
            trump_suit = message["observation"]["trump_suit"]
            action = min(message["legal"], key=lambda a: cost(a, trump_suit))
            write_message(stdout, {"type": "action", "id": message["id"], "action": action})
        elif message["type"] == "ping":
            write_message(stdout, {"type": "pong", "id": message["id"]})
        elif message["type"] == "error":
            print("referee says:", message["message"], file=sys.stderr, flush=True)
            if message["code"] in ("version", "auth", "busy", "limit"):
                sys.exit(1)  # the referee refused us and closes the connection
        elif message["type"] == "bye":
            break

if __name__ == "__main__":
    main()
