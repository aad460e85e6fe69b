#!/usr/bin/env python3
"""A bot that plays legal random moves and attacks the machine's shared resources.

    python3 resource_bot.py MODE [ARG...]

It reports what it managed as lines ``ATTACK {json}`` on its stderr (kept in the bot's
stderr log). Modes:

- ``spin N [NICE]``: fork N children that each ``setsid()``, take niceness NICE
  (default 19) and spin forever, noting in a shared record each millisecond (of
  CLOCK_MONOTONIC) in which one of them ran; at each of its decisions, report those
  milliseconds since its previous report (as ranges).
- ``think MS``: at each decision do a fixed amount of CPU work (MS milliseconds of CPU,
  calibrated once at start from this process's own CPU clock) and report when it
  started and ended (milliseconds of CLOCK_MONOTONIC) and the wall and CPU seconds.
- ``forkbomb TAG``: at start, fork children that sleep (their argv holds TAG) until a
  fork fails; report how many it made and the error. Then play normally.
- ``memory MB``: at its first decision, fill /dev/shm and /tmp until they refuse (reporting the MB
  each took), then fork 4 children that each touch MB MB of memory and wait.
"""

import json
import mmap
import os
import random
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402


def report(**data):  # type: ignore[no-untyped-def]
    sys.stderr.write("ATTACK " + json.dumps(data) + "\n")
    sys.stderr.flush()


SLOTS = 1 << 16  #: milliseconds remembered by the spinners' shared record


def spinners(n, nice=19):  # type: ignore[no-untyped-def]
    """Fork ``n`` setsid spinners at niceness ``nice``; returns (pids, record): in the shared ``record``, slot
    ``ms % SLOTS`` holds ``ms`` once some spinner ran during that millisecond of
    CLOCK_MONOTONIC (the clock every process on the machine shares)."""
    record = mmap.mmap(-1, SLOTS * 8)
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os.setsid()
            # Niced (by default): within the bot's own share of the CPU its main process
            # answers quickly (nice does not lower what the children take from others).
            os.nice(nice)
            last = 0
            while True:
                ms = int(time.monotonic() * 1000)
                if ms != last:
                    struct.pack_into("q", record, (ms % SLOTS) * 8, ms)
                    last = ms
        pids.append(pid)
    return pids, record


def ran_since(record, start_ms, end_ms):  # type: ignore[no-untyped-def]
    """The milliseconds in [start_ms, end_ms) during which a spinner ran, as ranges."""
    ranges = []
    for ms in range(max(start_ms, end_ms - SLOTS + 1), end_ms):
        if struct.unpack_from("q", record, (ms % SLOTS) * 8)[0] == ms:
            if ranges and ranges[-1][1] == ms:
                ranges[-1][1] = ms + 1
            else:
                ranges.append([ms, ms + 1])
    return ranges


def calibrate(ms):  # type: ignore[no-untyped-def]
    """Loop iterations that take ``ms`` milliseconds of this process's CPU."""
    n, t0 = 200000, time.process_time()
    work(n)
    per = (time.process_time() - t0) / n
    return max(1, int(ms / 1000 / per))


def work(n):  # type: ignore[no-untyped-def]
    x = 0
    for i in range(n):
        x += i * i
    return x


def forkbomb(tag):  # type: ignore[no-untyped-def]
    made, error = 0, None
    while made < 2000:
        try:
            pid = os.fork()
        except OSError as exc:
            error = f"{type(exc).__name__}: errno {exc.errno}"
            break
        if pid == 0:
            os.execv("/bin/sleep", [tag, "600"])  # (argv[0]: found by pgrep -f)
        made += 1
    report(mode="forkbomb", made=made, error=error)


def fill(path):  # type: ignore[no-untyped-def]
    chunk, mb = b"x" * (1 << 20), 0
    try:
        with open(os.path.join(path, "fill"), "wb") as f:
            while mb < 1024:
                f.write(chunk)
                f.flush()
                mb += 1
    except OSError as exc:
        return mb, f"{type(exc).__name__}: errno {exc.errno}"
    return mb, None


def memory(mb):  # type: ignore[no-untyped-def]
    for where in ("/dev/shm", "/tmp"):
        wrote, error = fill(where)
        report(mode="fill", path=where, mb=wrote, error=error)
    for _ in range(4):
        if os.fork() == 0:
            held = bytearray(mb << 20)
            for i in range(0, len(held), 4096):
                held[i] = 1
            report(mode="held", mb=mb)
            time.sleep(600)
            os._exit(0)
    while True:  # the parent waits for its children to finish (they never do)
        try:
            os.wait()
        except ChildProcessError:
            break


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    rng = random.Random(7)
    state = {"children": [], "last": 0.0, "iterations": 0, "record": None, "since": 0}
    if mode == "spin":
        state["children"], state["record"] = spinners(int(args[0]), *map(int, args[1:2]))
        state["since"] = int(time.monotonic() * 1000)
    elif mode == "think":
        state["iterations"] = calibrate(float(args[0]))
    elif mode == "forkbomb":
        forkbomb(args[0])

    def decide(observation, legal):  # type: ignore[no-untyped-def]
        if mode == "spin":
            now_ms = int(time.monotonic() * 1000)
            report(mode="spin", ran_ms=ran_since(state["record"], state["since"], now_ms))
            state["since"] = now_ms
        elif mode == "memory" and not state["last"]:
            state["last"] = 1.0
            memory(int(args[0]))
        elif mode == "think":
            w0, c0 = time.monotonic(), time.process_time()
            work(state["iterations"])
            w1 = time.monotonic()
            report(mode="think", start_ms=int(w0 * 1000), end_ms=int(w1 * 1000),
                   wall_s=round(w1 - w0, 4), cpu_s=round(time.process_time() - c0, 4))
        return rng.choice(legal)

    run_function(decide, name=f"resource-{mode}")


if __name__ == "__main__":
    main()
