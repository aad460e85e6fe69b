#!/usr/bin/env python3
"""A bot that plays legal random moves and takes, or probes, the kernel's per-user pools.

    python3 pool_bot.py hog     at its first decision, create inotify instances, POSIX
                                timers (each holds a pending-signal slot of the uid),
                                POSIX message queues (their bytes count against the
                                uid's RLIMIT_MSGQUEUE) and child processes (RLIMIT_NPROC
                                counts the uid's processes) until the kernel refuses
                                each, and keep them all
    python3 pool_bot.py probe   at every decision, try 22 inotify_init1, 22
                                timer_create, 22 mq_open and 22 fork (and free them again)

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


class MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long),
                ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]


#: Queue shapes the hog takes, largest first, down to the smallest the kernel makes: what
#: is left of the uid's RLIMIT_MSGQUEUE bytes then holds no queue at all.
MQ_SHAPES = ((10, 8192), (10, 512), (1, 512), (1, 32), (1, 1))


def new_queue(name, maxmsg, msgsize):  # type: ignore[no-untyped-def]
    """A POSIX message queue descriptor (unlinked at once: it lives while open), or -1."""
    attr = MqAttr(0, maxmsg, msgsize, 0)
    fd = libc.mq_open(name.encode(), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, ctypes.byref(attr))
    err = ctypes.get_errno()
    if fd >= 0:
        libc.mq_unlink(name.encode())
    return fd, err


def take_queues():  # type: ignore[no-untyped-def]
    kept, err = [], 0
    for maxmsg, msgsize in MQ_SHAPES:
        while len(kept) < 1000:
            fd, err = new_queue(f"/hog{len(kept)}", maxmsg, msgsize)
            if fd < 0:
                break
            kept.append(fd)
    return kept, err


def take_processes():  # type: ignore[no-untyped-def]
    """Children that sleep, forked until the kernel refuses: (how many, errno)."""
    children = 0
    while children < 10_000:
        try:
            pid = os.fork()
        except OSError as exc:
            return children, exc.errno
        if pid == 0:
            while True:
                time.sleep(60)
        children += 1
    return children, 0


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
    queues, queue_errno = take_queues()
    processes, fork_errno = take_processes()
    report(mode="hog", inotify=inotify, inotify_errno=inotify_errno, timers=timers,
           timer_errno=err, queues=len(queues), queue_errno=queue_errno, processes=processes,
           fork_errno=fork_errno, done_ms=int(time.monotonic() * 1000))
    return kept + queues


def probe():  # type: ignore[no-untyped-def]
    at = int(time.monotonic() * 1000)
    inotify = timers = queues = forks = 0
    for i in range(22):
        fd = libc.inotify_init1(0)
        if fd >= 0:
            inotify += 1
            os.close(fd)
        timer, _ = new_timer()
        if timer is not None:
            timers += 1
            libc.timer_delete(timer)
        fd, _ = new_queue(f"/probe{i}", 10, 8192)
        if fd >= 0:
            queues += 1
            libc.mq_close(fd)
        try:
            pid = os.fork()
        except OSError:
            continue
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        forks += 1
    report(mode="probe", inotify=inotify, timers=timers, queues=queues, forks=forks, at_ms=at)


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
