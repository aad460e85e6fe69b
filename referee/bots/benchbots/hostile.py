#!/usr/bin/env python3
"""A bot for ``durak-ref bench soak`` that misbehaves now and then, on purpose.

    python -m referee.bots.benchbots.hostile MODE [P]

It plays the cheapest legal card; before each answer, with probability P (default
0.02), it does what MODE says instead. Stdlib + msgpack and the bot kit (botkit.py) only, so it runs
wherever the referee's Python does (a sandbox included). Modes:

    play     never misbehaves (an honest bot)
    crash    writes a line to stderr and exits 7 (a crash forfeit; the referee restarts it)
    hang     stops answering and sleeps an hour (a timeout; the referee must kill it)
    garbage  writes raw bytes that are no frame (a protocol forfeit)
    flood    writes 64 KiB to stderr before every answer and plays on (P is ignored)
"""

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the directory that holds referee/
from referee.bots.benchbots.botkit import cheapest, read_message, write_message, write_raw  # noqa: E402


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "play"
    p = float(sys.argv[2]) if len(sys.argv) > 2 else 0.02
    rng = random.Random(os.getpid() ^ int(time.time() * 1000))
    stdin = sys.stdin.buffer
    if read_message(stdin) is None:  # the referee's hello
        return
    write_message({"type": "hello", "protocol": 1, "name": f"soak-{mode}", "version": "1"})
    flood = (b"x" * 1023 + b"\n") * 64
    while (message := read_message(stdin)) is not None:
        kind = message["type"]
        if kind == "bye":
            return
        if kind != "request":
            continue
        if mode == "flood":
            sys.stderr.buffer.write(flood)
            sys.stderr.buffer.flush()
        elif mode != "play" and rng.random() < p:
            if mode == "crash":
                print("soak-crash: crashing on purpose", file=sys.stderr, flush=True)
                sys.exit(7)
            if mode == "hang":
                time.sleep(3600)
                return
            if mode == "garbage":
                write_raw(bytes(rng.randrange(256) for _ in range(16)))
                continue
        write_message({"type": "action", "id": message["id"], "action": cheapest(message)})


if __name__ == "__main__":
    main()
