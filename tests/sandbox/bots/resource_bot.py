#!/usr/bin/env python3
"""A bot that plays legal random moves and attacks the machine's shared resources.

    python3 resource_bot.py MODE [ARG...]

It reports what it managed as lines ``ATTACK {json}`` on its stderr (kept in the bot's
stderr log). Modes:

- ``spin N``: fork N children that each ``setsid()`` and spin forever; at each of its
  decisions, report how much CPU (seconds) the children used from the end of its
  previous decision (read from /proc/PID/schedstat), i.e. while the opponent was deciding.
- ``think MS``: at each decision do a fixed amount of CPU work (MS milliseconds of CPU,
  calibrated once at start from this process's own CPU clock) and report the wall and
  CPU seconds it took.
- ``forkbomb TAG``: at start, fork children that sleep (their argv holds TAG) until a
  fork fails; report how many it made and the error. Then play normally.
- ``memory MB``: at its first decision, fill /dev/shm and /tmp until they refuse (reporting the MB
  each took), then fork 4 children that each touch MB MB of memory and wait.
"""

import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def report(**data):  # type: ignore[no-untyped-def]
    sys.stderr.write("ATTACK " + json.dumps(data) + "\n")
    sys.stderr.flush()


def cpu_of(pids):  # type: ignore[no-untyped-def]
    """CPU seconds the processes ran: /proc/PID/schedstat's run time (nanoseconds, not
    rounded to clock ticks as /proc/PID/stat's utime is), else utime + stime."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                total += int(f.read().split()[0]) / 1e9
            continue
        except OSError:
            pass
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICK
        except OSError:
            pass
    return total


def spinners(n):  # type: ignore[no-untyped-def]
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os.setsid()
            # Niced: within the bot's own share of the CPU its main process answers
            # quickly (nice does not lower what the children take from others).
            os.nice(19)
            while True:
                pass
        pids.append(pid)
    return pids


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
    while made < 5000:
        try:
            pid = os.fork()
        except OSError as exc:
            error = f"{type(exc).__name__}: errno {exc.errno}"
            break
        if pid == 0:
            os.execv("/bin/sleep", ["/bin/sleep", "600", tag])
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
    state = {"children": [], "last": 0.0, "iterations": 0}
    if mode == "spin":
        state["children"] = spinners(int(args[0]))
    elif mode == "think":
        state["iterations"] = calibrate(float(args[0]))
    elif mode == "forkbomb":
        forkbomb(args[0])

    def decide(observation, legal):  # type: ignore[no-untyped-def]
        if mode == "spin":
            # From the end of its previous decision to the start of this one: the time
            # the opponent decided.
            used = cpu_of(state["children"])
            report(mode="spin", children_cpu_s=round(used - state["last"], 3))
            choice = rng.choice(legal)
            state["last"] = cpu_of(state["children"])
            return choice
        elif mode == "memory" and not state["last"]:
            state["last"] = 1.0
            memory(int(args[0]))
        elif mode == "think":
            w0, c0 = time.perf_counter(), time.process_time()
            work(state["iterations"])
            report(mode="think", wall_s=round(time.perf_counter() - w0, 4),
                   cpu_s=round(time.process_time() - c0, 4))
        return rng.choice(legal)

    run_function(decide, name=f"resource-{mode}")


if __name__ == "__main__":
    main()
