#!/usr/bin/env python3
"""Misbehaving bots for tests/referee/test_hostile_bots.py: one misbehaviour per mode.

    python hostile_bot.py MODE PIDFILE [ARG]

Every process appends "bot PID" to PIDFILE first thing (a forked child appends "child
PID"; with PIDFILE "-" nothing is written), so the test can check afterwards that none
of them is left. Errors the referee
sends are printed to stderr. Stdlib + msgpack and referee/bots/benchbots/botkit.py only. Modes:

    play [DELAY]     a well-behaved bot (cheapest card first), DELAY s per decision
    die_early        prints to stderr and exits 3 before the handshake
    die_mid [N]      answers N requests, then prints to stderr and exits 7
    mute             never answers the handshake
    mute_mid [N]     answers N requests, then stops answering (reads on, says nothing)
    late [S]         sleeps S s before every answer, then answers correctly
    garbage HEX      answers the first request with the raw bytes HEX (no framing)
    huge_header      answers with a frame header announcing 0xffffffff bytes
    bad_msgpack      answers with a 3-byte frame that is not msgpack
    wrong_shape      answers with a map that is not an action message
    illegal          attacks/throws in/covers with a card it does not hold
    illegal_once     every decision: first an illegal action, after the error a legal one
    stale            every decision: first an action with the previous request's id,
                     then the right answer
    stale_only       answers every request with the previous request's id only
    flood [MB]       writes MB (default 100) MiB to stderr before the hello, then plays
    close_stdout     closes its stdout after the hello and keeps running
    fork [N]         answers N requests; then forks a child that sleeps holding the
                     pipes, waits until the child has noted its pid, and exits 0
    ignore_term      ignores SIGTERM, answers the hello, then hangs
    pong_flood       plays, while a second thread streams valid pongs (no ping asked
                     for them) as fast as the referee takes them
"""

import os
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the directory that holds referee/
from referee.bots.benchbots.botkit import (  # noqa: E402
    RANKS,
    SUITS,
    cheapest,
    frame,
    note_pid,
    read_message,
    write_message,
    write_raw,
)

HANG = 60.0  # seconds; long enough to outlive any match here, short enough not to linger


def illegal_action(request):
    """A well-formed action with a card this seat does not hold."""
    obs = request["observation"]
    seen = set(obs["hand"]) | {c for pair in obs["table"] for c in pair if c}
    card = next(r + s for r in reversed(RANKS) for s in SUITS if r + s not in seen)
    legal_types = {a["type"] for a in request["legal"]}
    if "cover" in legal_types:
        slot = next(a["slot"] for a in request["legal"] if a["type"] == "cover")
        return {"type": "cover", "slot": slot, "card": card}
    kind = "attack" if "attack" in legal_types else "throw_in"
    return {"type": kind, "card": card}


WRITE_LOCK = threading.Lock()  #: one frame at a time: the pong thread writes too


def answer(request, action, request_id=None):
    with WRITE_LOCK:
        write_message({"type": "action", "id": request["id"] if request_id is None else request_id,
                       "action": action})


def flood_pongs(lock):
    """Write pongs (ids 0, 1, 2, ...) for ever, 256 at a time; stop when the referee
    closes the pipe."""
    ids = 0
    try:
        while True:
            batch = b"".join(frame({"type": "pong", "id": ids + i}) for i in range(256))
            ids += 256
            with lock:
                write_raw(batch)
    except (BrokenPipeError, OSError):
        os._exit(0)


def hang():
    time.sleep(HANG)
    sys.exit(0)


def main():
    mode, pidfile = sys.argv[1], sys.argv[2]
    arg = sys.argv[3] if len(sys.argv) > 3 else None
    if pidfile != "-":  # ("-": no pid bookkeeping, for a bot run inside the sandbox)
        note_pid(pidfile)
    stdin = sys.stdin.buffer

    if mode == "die_early":
        print("hostile: dying before the handshake", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "flood":
        chunk = (b"x" * 1023 + b"\n") * 1024  # 1 MiB
        for _ in range(int(arg or 100)):
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()

    if read_message(stdin) is None:  # the referee's hello
        return
    if mode == "mute":
        hang()
    write_message({"type": "hello", "protocol": 1, "name": f"hostile-{mode}", "version": "1"})
    if mode == "close_stdout":
        sys.stdout.flush()
        os.close(1)
        hang()
    if mode == "ignore_term":
        hang()
    if mode == "pong_flood":
        threading.Thread(target=flood_pongs, args=(WRITE_LOCK,), daemon=True).start()

    answered = 0
    previous_id = None
    last_error = None
    while (message := read_message(stdin)) is not None:
        kind = message["type"]
        if kind == "bye":
            return
        if kind == "error":
            print(f"referee says: {message['code']}: {message['message']}", file=sys.stderr, flush=True)
            last_error = message
            continue
        if kind != "request":
            continue
        limit = int(arg) if arg is not None and arg.isdigit() else 0
        if mode in ("die_mid", "mute_mid", "fork") and answered >= limit:
            if mode == "die_mid":
                print(f"hostile: crashing after {answered} answers", file=sys.stderr, flush=True)
                sys.exit(7)
            if mode == "mute_mid":
                while read_message(stdin) is not None:
                    pass
                return
            ready_r, ready_w = os.pipe()
            if os.fork() == 0:  # the child keeps stdin/stdout/stderr open and sleeps
                note_pid(pidfile, "child")
                os.close(ready_w)  # tells the parent the pid is noted
                hang()
            os.close(ready_w)
            os.read(ready_r, 1)  # returns at end of file: the child closed its copy
            os._exit(0)
        if mode == "late":
            time.sleep(float(arg))
        elif mode == "garbage":
            write_raw(bytes.fromhex(arg))
            hang()
        elif mode == "huge_header":
            write_raw(b"\xff\xff\xff\xff" + b"\x00" * 16)
            hang()
        elif mode == "bad_msgpack":
            write_raw(b"\x00\x00\x00\x03\xc1\xc1\xc1")
            hang()
        elif mode == "wrong_shape":
            write_message({"type": "action", "id": message["id"], "move": "6S"})
            hang()
        elif mode == "illegal":
            answer(message, illegal_action(message))
            continue
        elif mode == "illegal_once":
            if last_error is None or last_error["code"] != "illegal":
                answer(message, illegal_action(message))
                last_error = None
                continue
            last_error = None
        elif mode in ("stale", "stale_only") and previous_id is not None:
            answer(message, cheapest(message), previous_id)
            if mode == "stale_only":
                previous_id = message["id"]
                continue
        elif mode == "play" and arg:
            time.sleep(float(arg))
        answer(message, cheapest(message))
        previous_id = message["id"]
        answered += 1


if __name__ == "__main__":
    main()
