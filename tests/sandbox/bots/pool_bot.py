#!/usr/bin/env python3
"""A bot that plays legal random moves and takes, or probes, the kernel's per-user pools.

    python3 pool_bot.py hog     at its first decision, create inotify instances and POSIX
                                timers until the kernel refuses (each timer holds a
                                pending-signal slot of the uid), and keep them
    python3 pool_bot.py probe   at every decision, try 22 inotify_init1 and 22
                                timer_create (and free them again)

Each reports, as ``ATTACK {json}`` lines on its stderr: its uid and gid, its
RLIMIT_SIGPENDING and RLIMIT_NPROC, what it got, and when (``done_ms``/``at_ms``:
milliseconds of CLOCK_MONOTONIC, which every process on the machine shares).
"""

import ctypes
import json
import os
import random
import resource
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402

libc = ctypes.CDLL(None, use_errno=True)
CLOCK_MONOTONIC = 1
LIMIT = 200_000  #: the hog stops here at the latest (the pool was 96,367 where measured)


class SigEvent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_long), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_byte * 48)]


def report(**data):  # type: ignore[no-untyped-def]
    data.update(uid=os.getuid(), gid=os.getgid(),
                sigpending=resource.getrlimit(resource.RLIMIT_SIGPENDING)[0],
                nproc=resource.getrlimit(resource.RLIMIT_NPROC)[0])
    sys.stderr.write("ATTACK " + json.dumps(data) + "\n")
    sys.stderr.flush()


def new_timer():  # type: ignore[no-untyped-def]
    """A POSIX timer id, or None (and the errno) when the kernel refuses."""
    timer = ctypes.c_void_p()
    event = SigEvent(0, signal.SIGRTMIN, 0)  # SIGEV_SIGNAL: one queued signal preallocated
    if libc.timer_create(CLOCK_MONOTONIC, ctypes.byref(event), ctypes.byref(timer)) != 0:
        return None, ctypes.get_errno()
    return timer, 0


def hog():  # type: ignore[no-untyped-def]
    kept = []
    while len(kept) < LIMIT:
        fd = libc.inotify_init1(0)
        if fd < 0:
            break
        kept.append(fd)
    inotify, inotify_errno = len(kept), ctypes.get_errno()
    timers = 0
    while timers < LIMIT:
        timer, err = new_timer()
        if timer is None:
            break
        timers += 1
    report(mode="hog", inotify=inotify, inotify_errno=inotify_errno, timers=timers,
           timer_errno=err, done_ms=int(time.monotonic() * 1000))
    return kept


def probe():  # type: ignore[no-untyped-def]
    at = int(time.monotonic() * 1000)
    inotify = timers = 0
    for _ in range(22):
        fd = libc.inotify_init1(0)
        if fd >= 0:
            inotify += 1
            os.close(fd)
        timer, _ = new_timer()
        if timer is not None:
            timers += 1
            libc.timer_delete(timer)
    report(mode="probe", inotify=inotify, timers=timers, at_ms=at)


mode = sys.argv[1]
rng = random.Random(9)
held = []


def decide(observation, legal):  # type: ignore[no-untyped-def]
    if mode == "hog" and not held:
        held.append(hog())
    elif mode == "probe":
        probe()
    return rng.choice(legal)


run_function(decide, name=f"pool-{mode}", version="1.0")
