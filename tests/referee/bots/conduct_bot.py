#!/usr/bin/env python3
"""Bots that play legally but break the rules of conduct check-bot probes for
(tests/referee/test_checkbot_conduct.py): one misbehaviour per mode.

    python conduct_bot.py MODE PIDFILE

Every process appends "ROLE PID" to PIDFILE first thing ("bot", "child", "daemon"), so
the test can check afterwards that none of them is left. Stdlib + msgpack and referee/bots/benchbots/botkit.py only. Modes:

    play      a well-behaved bot (cheapest card first)
    helper    well-behaved too: at its first request, forks a helper child that exits
              as soon as the bot is gone (it waits for the end of a pipe only the bot
              holds), so it outlives the bot by a moment, as real helpers do
    daemon    at its first request, double-forks; the grandchild calls setsid() (a
              session and process group of its own, re-parented away from the bot),
              closes the pipes and sleeps 60 s. The bot plays on and exits 0 on bye.
    crash     at its first request, leaves a daemon as above, then exits 5 (a crash)
    fork      at its first request, forks a child that stays in the bot's process
              group, closes the pipes and sleeps 60 s. The bot exits 0 on bye.
    double    answers every request twice: both frames in one write, so the second is
              there when the first is read
    early     right after every game_start, writes an action guessing the next request
              id (the last one seen + 1, or 1); then answers every request correctly
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the directory that holds referee/
from referee.bots.benchbots.botkit import cheapest, frame, note_pid, read_message, write_raw  # noqa: E402

HANG = 60.0  # seconds: far longer than any check here; short enough not to linger


def detach():
    """In a forked process: let go of the bot's pipes, then sleep."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    time.sleep(HANG)
    os._exit(0)


def spawn(pidfile, daemon):
    """Start the leftover; return once it has noted its pid."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        if daemon:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)  # the grandchild is re-parented away from the bot
        note_pid(pidfile, "daemon" if daemon else "child")
        os.close(ready_w)  # tells the bot the pid is noted
        detach()
    os.close(ready_w)
    os.read(ready_r, 1)  # returns at end of file: the leftover closed its copy
    os.close(ready_r)
    if daemon:
        os.waitpid(pid, 0)


def spawn_helper(pidfile):
    """A child that lives exactly as long as the bot (plus the moment it takes to notice)."""
    alive_r, alive_w = os.pipe()
    if os.fork() == 0:
        os.close(alive_w)
        note_pid(pidfile, "child")
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.read(alive_r, 1)  # end of file: the bot has exited
        time.sleep(0.05)
        os._exit(0)
    os.close(alive_r)
    return alive_w  # held open, never written: closed when the bot exits


def main():
    mode, pidfile = sys.argv[1], sys.argv[2]
    note_pid(pidfile, "bot")
    stdin = sys.stdin.buffer
    if read_message(stdin) is None:  # the referee's hello
        return
    write_raw(frame({"type": "hello", "protocol": 1, "name": f"conduct-{mode}", "version": "1",
                 "author": "tests"}))
    spawned = False
    last_id = 0
    while (message := read_message(stdin)) is not None:
        kind = message["type"]
        if kind == "bye":
            return
        if kind == "game_start" and mode == "early":
            write_raw(frame({"type": "action", "id": last_id + 1, "action": {"type": "pass"}}))
        if kind != "request":
            continue
        if mode in ("daemon", "fork", "crash") and not spawned:
            spawn(pidfile, daemon=mode != "fork")
            spawned = True
            if mode == "crash":
                sys.exit(5)
        if mode == "helper" and not spawned:
            spawned = spawn_helper(pidfile)
        last_id = message["id"]
        answer = frame({"type": "action", "id": message["id"], "action": cheapest(message)})
        write_raw(answer * (2 if mode == "double" else 1))


if __name__ == "__main__":
    main()
