#!/usr/bin/env python3
"""Bots that fail at start-up, or later, for tests/failfast: one failure per mode.

    python broken_bot.py MODE

Every mode first prints one line to stderr naming itself (the test looks for it in the
referee's message). Stdlib + msgpack only. Modes:

    exit1        exits 1 at once (before the handshake)
    garbage      answers the referee's hello with a frame that is not msgpack
    version      answers with a hello for protocol 99
    version_says_why [S]  the same, then reads the referee's error, takes S seconds (0),
                 says so on stderr in two lines and exits 1 (what SPEC section 4 asks of
                 a bot that fails the handshake)
    mute         never answers the hello
    crash_at N   plays (cheapest legal action) and exits 5 at the first request of its
                 N-th game (counted per process: a restarted bot plays N-1 games again)
"""

import sys

if __name__ == "__main__":
    # The line naming the mode comes first, before the imports (msgpack's takes a while
    # on a loaded machine): the referee's start-up limit must find it written.
    print(f"broken-bot {sys.argv[1]}: starting", file=sys.stderr, flush=True)

import struct  # noqa: E402
import time  # noqa: E402

import msgpack  # noqa: E402


def read_message():
    header = sys.stdin.buffer.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return msgpack.unpackb(sys.stdin.buffer.read(size), raw=False)


def write_frame(body):
    sys.stdout.buffer.write(struct.pack(">I", len(body)) + body)
    sys.stdout.buffer.flush()


def write_message(message):
    write_frame(msgpack.packb(message, use_bin_type=True))


def main():
    mode = sys.argv[1]
    if mode == "exit1":
        print("broken-bot: cannot load weights.bin", file=sys.stderr, flush=True)
        sys.exit(1)
    read_message()  # the referee's hello
    if mode == "garbage":
        write_frame(b"\xc1\xc1\xc1\xc1")  # 0xc1 is never valid msgpack
        time.sleep(30)
        return
    if mode == "version_says_why":
        write_message({"type": "hello", "protocol": 99, "name": "future", "version": "9"})
        error = read_message()
        time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
        print(f"broken-bot: the referee refused me: {error and error.get('message')}",
              file=sys.stderr, flush=True)
        print("broken-bot: exiting", file=sys.stderr, flush=True)
        sys.exit(1)
    if mode == "version":
        write_message({"type": "hello", "protocol": 99, "name": "future", "version": "9"})
        time.sleep(30)
        return
    if mode == "mute":
        time.sleep(60)
        return
    crash_at = int(sys.argv[2])
    write_message({"type": "hello", "protocol": 1, "name": "crasher", "version": "1"})
    games = 0
    while (message := read_message()) is not None:
        kind = message["type"]
        if kind == "game_start":
            games += 1
        elif kind == "request":
            if games >= crash_at:
                print(f"broken-bot: crashing in game {games}", file=sys.stderr, flush=True)
                sys.exit(5)
            action = message["legal"][0]
            write_message({"type": "action", "id": message["id"], "action": action})
        elif kind == "ping":
            write_message({"type": "pong", "id": message["id"]})
        elif kind == "bye":
            break


if __name__ == "__main__":
    main()
