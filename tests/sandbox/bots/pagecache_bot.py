#!/usr/bin/env python3
"""A cheating bot: it passes its duplicate twin the opponent's hand through the page cache.

    python3 pagecache_bot.py FILE PROBE

FILE is a big read-only file every game's process can see (a library under /usr/lib
would do; the tests use a cold file of their own, bound in with ``--bind``). Every page
slot of FILE stands for (trump card, card): at each game start the bot first reads the
slots of its game's trump back, then marks its own hand there by reading those pages
(and the slot of the trump itself: the trump is in no hand, its slot says "marked").
A deal's two seat rotations share the trump, and in the second rotation the bot holds
the hand the opponent held in the first: the marks left by its first-rotation self are
the opponent's hand now. Fresh processes (``--fresh-bots``) do not stop this; what does
is a probe that fails. PROBE is how it reads the marks:

- ``mincore``: map FILE and ask the kernel which pages are cached (refused by seccomp);
- ``majflt``: touch each page of a mapping and count major faults (``getrusage``): a page
  that was not cached must be read from disk. No refusable call: seccomp cannot close it.

It reports, per game, ``ATTACK {"mode": "pagecache", "probe", "game", "hand", "trump",
"named", "error"}`` on stderr: ``named`` is the set of cards found marked (not its own,
not the trump), ``error`` what the probe raised. It plays random legal moves.
"""

import ctypes
import json
import mmap
import os
import random
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import Bot, run  # noqa: E402

RANKS = "6789TJQKA"
SUITS = "CDHS"
CARDS = [r + s for s in SUITS for r in RANKS]  # the 36-card deck
STRIDE = 4  # pages between slots: no slot is read ahead with another
PAGE = mmap.PAGESIZE
SLOTS = len(CARDS) * len(CARDS)
FILE_SIZE = SLOTS * STRIDE * PAGE

libc = ctypes.CDLL(None, use_errno=True)
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def slot(trump: str, card: str) -> int:
    """The byte offset of (trump, card)'s page."""
    return (CARDS.index(trump) * len(CARDS) + CARDS.index(card)) * STRIDE * PAGE


class Cheat(Bot):
    name = "pagecache"

    def __init__(self, path: str, probe: str) -> None:
        self.path, self.probe = path, probe
        self.rng = random.Random(3)

    def on_game_start(self, message):  # type: ignore[no-untyped-def]
        hand, trump = message["hand"], message["trump"]
        named, error = [], None
        try:
            marked = self.read_marks(trump)
            named = sorted(c for c in marked if c not in hand and c != trump)
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc}"
        self.mark(trump, hand)
        sys.stderr.write("ATTACK " + json.dumps({
            "mode": "pagecache", "probe": self.probe, "game": message.get("game"), "hand": hand,
            "trump": trump, "named": named, "error": error}) + "\n")
        sys.stderr.flush()

    def mark(self, trump, hand):  # type: ignore[no-untyped-def]
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # exactly the page, no readahead
            for card in [*hand, trump]:  # (trump, trump): the sentinel, "marks are here"
                os.pread(fd, 1, slot(trump, card))
        finally:
            os.close(fd)

    def read_marks(self, trump):  # type: ignore[no-untyped-def]
        fd = os.open(self.path, os.O_RDONLY)
        try:
            if self.probe == "mincore":
                return self.by_mincore(fd, trump)
            with mmap.mmap(fd, FILE_SIZE, prot=mmap.PROT_READ) as mm:
                mm.madvise(mmap.MADV_RANDOM)  # a fault reads its page alone
                return self.by_faults(mm, trump)
        finally:
            os.close(fd)

    @staticmethod
    def by_mincore(fd, trump):  # type: ignore[no-untyped-def]
        base = libc.mmap(None, FILE_SIZE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        try:
            vec = ctypes.create_string_buffer(FILE_SIZE // PAGE)
            if libc.mincore(ctypes.c_void_p(base), FILE_SIZE, vec) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err))
            return [c for c in CARDS if vec.raw[slot(trump, c) // PAGE] & 1]
        finally:
            libc.munmap(ctypes.c_void_p(base), FILE_SIZE)

    def by_faults(self, mm, trump):  # type: ignore[no-untyped-def]
        """Touching a page caches it: the sentinel first, so that a first rotation (no
        marks yet) does not fill its twin's slots."""
        if not self.cached(mm, slot(trump, trump)):
            return []
        return [card for card in CARDS if self.cached(mm, slot(trump, card))]

    @staticmethod
    def cached(mm, offset):  # type: ignore[no-untyped-def]
        before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
        mm[offset]  # touch: a major fault iff the page was not cached
        return resource.getrusage(resource.RUSAGE_SELF).ru_majflt == before

    def choose(self, observation, legal):  # type: ignore[no-untyped-def]
        return self.rng.choice(legal)


if __name__ == "__main__":
    run(Cheat(sys.argv[1], sys.argv[2]))
