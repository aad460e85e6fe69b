"""What every hand-written bot program here needs, for the soak's hostile bots and the
tests' misbehaving bots (tests/referee/bots/): the blocking frame reader and writers
(4-byte big-endian length + msgpack map, as docs/PROTOCOL.md says) and the cheapest legal
action. Stdlib + msgpack only, and no other referee import: these bots run as separate
programs, sandboxed or not, and must start fast.

The bots import it as ``referee.bots.benchbots.botkit`` after putting the directory
that holds ``referee`` on ``sys.path`` (they are run by path).
"""

import os
import struct
import sys

import msgpack

RANKS = "23456789TJQKA"
SUITS = "CDHS"


def read_message(stream):
    """The next message on ``stream`` (a binary file), or None at its end (a cut-off
    frame counts as the end)."""
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    body = stream.read(size)
    return msgpack.unpackb(body, raw=False) if len(body) == size else None


def frame(message):
    """``message`` encoded as one frame."""
    body = msgpack.packb(message, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


def write_raw(data):
    """Write ``data`` to stdout as it is, at once."""
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def write_message(message):
    write_raw(frame(message))


def cheapest(request):
    """The cheapest legal action of ``request``: a trump exchange first, then the lowest
    card (non-trumps before trumps), and a card-less action (take, pass) last."""
    trump = request["observation"]["trump_suit"]

    def cost(action):
        if action["type"] == "exchange":
            return -1
        if "card" not in action:
            return 100
        return RANKS.index(action["card"][0]) + (20 if action["card"][1] == trump else 0)

    return min(request["legal"], key=cost)


def note_pid(pidfile, role="bot"):
    """Append "ROLE PID" to ``pidfile``: a test checks afterwards that none is left."""
    with open(pidfile, "a") as f:
        f.write(f"{role} {os.getpid()}\n")
