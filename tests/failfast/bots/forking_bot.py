#!/usr/bin/env python3
"""A hostile bot for tests/failfast: it fails its first start-up while a child it forked
keeps its stderr (and stdout) open, so the referee's read of its last words never sees
EOF on its own.

    python forking_bot.py MODE MARKER

It prints one line to stderr naming itself and forks a child that keeps every inherited
pipe open and sleeps for 10 minutes with ``MARKER`` on its command line (so a test can
find it in /proc, in or out of a sandbox); then the parent fails:

    garbage       answers the referee's hello with a frame that is not msgpack, then
                  sleeps
    exit1         exits 1 at once, before the handshake
    escape_exit1  as exit1, but the child first calls setsid() (a new session and
                  process group: only a sandbox's PID namespace still holds it)

Stdlib only.
"""

import os
import struct
import sys
import time


def main():
    mode, marker = sys.argv[1], sys.argv[2]
    print(f"forking-bot {mode}: starting", file=sys.stderr, flush=True)
    if os.fork() == 0:
        # The child: holds stdin, stdout and stderr; findable by its marker. In mode
        # ``escape`` it first leaves the bot's session and process group.
        if mode.startswith("escape"):
            os.setsid()
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker])
    if mode in ("exit1", "escape_exit1"):
        print("forking-bot: cannot load weights.bin", file=sys.stderr, flush=True)
        sys.exit(1)
    sys.stdin.buffer.read(4)  # the start of the referee's hello
    print("forking-bot: answering with garbage", file=sys.stderr, flush=True)
    sys.stdout.buffer.write(struct.pack(">I", 4) + b"\xc1\xc1\xc1\xc1")  # never valid msgpack
    sys.stdout.buffer.flush()
    time.sleep(600)


if __name__ == "__main__":
    main()
