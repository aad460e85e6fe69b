#!/usr/bin/env python3
"""A deterministic bot that records every byte the referee writes to it.

    record_bot.py RECORD_FILE SEED

It appends its whole stdin, as received, to RECORD_FILE and answers each request with
a legal action drawn from ``random.Random(SEED)``: the same referee and the same match
seed give the same recording, byte for byte (tests/referee/test_exact_output.py).
"""

import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol import messages as msg  # noqa: E402
from protocol.codec import FrameDecoder, encode  # noqa: E402


def main() -> None:
    record = open(sys.argv[1], "ab")
    rng = random.Random(sys.argv[2])
    decoder = FrameDecoder()
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            return
        record.write(chunk)
        record.flush()
        decoder.feed(chunk)
        for message in decoder.messages():
            if message["type"] == "hello":
                os.write(1, encode(msg.bot_hello_msg("record", version="1")))
            elif message["type"] == "request":
                os.write(1, encode(msg.action_msg(message["id"], rng.choice(message["legal"]))))
            elif message["type"] == "bye":
                return


main()
