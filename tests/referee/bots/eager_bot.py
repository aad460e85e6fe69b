#!/usr/bin/env python3
"""Bots that speak out of turn, for tests/referee/test_early_frames.py.

    python eager_bot.py MODE

Stdlib + msgpack and referee/bots/benchbots/botkit.py only. Each mode plays the first legal action otherwise. Modes:

    early    writes an action for request 1 together with its hello, before any request
    ahead    answers each request and, in the same write, guesses the next one (id + 1)
    twice    answers every request twice, in one write
    mute     says hello, then reads everything and never answers
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the directory that holds referee/
from referee.bots.benchbots.botkit import frame, read_message  # noqa: E402


def main():
    mode = sys.argv[1]
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    while True:
        message = read_message(inp)
        if message is None:
            return
        kind = message.get("type")
        data = b""
        if kind == "hello":
            data = frame({"type": "hello", "protocol": 1, "name": f"eager-{mode}"})
            if mode == "early":
                data += frame({"type": "action", "id": 1, "action": {"type": "pass"}})
        elif kind == "request" and mode != "mute":
            answer = frame({"type": "action", "id": message["id"], "action": message["legal"][0]})
            data = answer
            if mode == "twice":
                data += answer
            elif mode == "ahead":
                data += frame({"type": "action", "id": message["id"] + 1, "action": {"type": "take"}})
        elif kind == "bye":
            return
        if data:
            out.write(data)  # one write: the extra frame is there when the answer is
            out.flush()


if __name__ == "__main__":
    main()
