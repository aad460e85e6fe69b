#!/usr/bin/env python3
"""A bot that writes down every message the referee sends it, one JSON line each, to
OUTFILE, and misbehaves once in the way MODE says (for tests/referee/test_spec_conformance.py):

    python told_bot.py MODE OUTFILE

    wrong_shape   answers its first request with a map that is not an action message
    mute          reads every message and never answers a request
    illegal       answers every request with an action that is not legal
    fold          answers its first request with an action of the unknown type "fold"
    stale         answers every request twice: first with a wrong id, then rightly
    play          answers every request with its first legal action

Whatever it did, it keeps reading until the end of its input, so it sees everything the
referee writes before closing the pipe. Stdlib + msgpack only.
"""

import json
import struct
import sys

import msgpack


def read_message(stream):
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return msgpack.unpackb(stream.read(size), raw=False)


def write_message(message):
    body = msgpack.packb(message, use_bin_type=True)
    sys.stdout.buffer.write(struct.pack(">I", len(body)) + body)
    sys.stdout.buffer.flush()


def illegal(request):
    legal = request["legal"]
    for candidate in ({"type": "take"}, {"type": "pass"}, {"type": "attack", "card": "AS"}):
        if candidate not in legal:
            return candidate
    return {"type": "exchange"}


def main():
    mode, outfile = sys.argv[1], sys.argv[2]
    stdin = sys.stdin.buffer
    with open(outfile, "a") as out:
        hello = read_message(stdin)
        out.write(json.dumps(hello) + "\n")
        write_message({"type": "hello", "protocol": 1, "name": "told"})
        while (message := read_message(stdin)) is not None:
            out.write(json.dumps(message) + "\n")
            out.flush()
            if message["type"] == "ping":
                write_message({"type": "pong", "id": message["id"]})
            if message["type"] != "request" or mode == "mute":
                continue
            if mode == "wrong_shape":
                write_message({"type": "action", "id": message["id"], "move": "6S"})
                mode = "mute"
            elif mode == "fold":
                write_message({"type": "action", "id": message["id"], "action": {"type": "fold"}})
                mode = "mute"
            elif mode == "stale":
                write_message({"type": "action", "id": message["id"] + 1000,
                               "action": message["legal"][0]})
                write_message({"type": "action", "id": message["id"], "action": message["legal"][0]})
            elif mode == "illegal":
                write_message({"type": "action", "id": message["id"], "action": illegal(message)})
            else:
                write_message({"type": "action", "id": message["id"], "action": message["legal"][0]})


if __name__ == "__main__":
    main()
