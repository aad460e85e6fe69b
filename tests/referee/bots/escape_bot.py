#!/usr/bin/env python3
"""A bot that writes terminal escape sequences wherever a bot's text reaches the referee.

    python3 escape_bot.py MODE

Every mode writes ``ESCAPES`` (a clipboard write, a title set, screen clears, 8-bit CSI,
a bidi override, a DCS string) to its stderr at start, and its hello's version and author
carry them too. Modes:

- ``play``: plays legal random moves, writing the escapes to stderr on every decision.
- ``crash``: the same, then exits with code 5 at its third decision (its stderr tail is
  the evidence of a forfeit, printed in the match summary).
- ``die``: exits with code 3 before its hello (a start-up failure quoting its stderr).
- ``garble``: at its second decision writes a raw frame whose ``type`` is the escapes
  (a protocol error whose message quotes the bot's bytes).
"""

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402
from protocol.codec import encode  # noqa: E402

ESCAPES = ("\x1b]52;c;cHduZWQ=\x07"      # OSC 52: write the clipboard
           "\x1b]0;owned-title\x07"      # OSC 0: set the window title
           "\x1b[2J\x1b[31mRED"          # CSI: clear the screen, red text
           "\x9b1m"                      # 8-bit CSI
           "\u202eevil"                  # RIGHT-TO-LEFT OVERRIDE
           "\x1bP+q\x1b\\"               # DCS string, ST-terminated
           "\x08\r")                     # backspace, carriage return


def main() -> None:
    mode = sys.argv[1]
    sys.stderr.write(f"start {ESCAPES}\n")
    sys.stderr.flush()
    if mode == "die":
        sys.exit(3)
    frames_out = os.dup(1)  # before the SDK points fd 1 at stderr
    rng = random.Random(1)
    decisions = [0]

    def choose(observation, legal):  # type: ignore[no-untyped-def]
        decisions[0] += 1
        sys.stderr.write(f"decision {decisions[0]} {ESCAPES}\n")
        sys.stderr.flush()
        if mode == "crash" and decisions[0] == 3:
            os._exit(5)
        if mode == "garble" and decisions[0] == 2:
            frame = encode({"type": ESCAPES, "id": 1})
            os.write(frames_out, frame)
            time.sleep(5)  # the referee ends the game on the frame first
        return rng.choice(legal)

    run_function(choose, name="esc", version="v" + ESCAPES, author="a" + ESCAPES)


if __name__ == "__main__":
    main()
