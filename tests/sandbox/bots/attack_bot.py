#!/usr/bin/env python3
"""A bot that plays legal random moves and tries one attack on the referee's machine.

    python3 attack_bot.py MODE [ARG...]

It reports what it managed as lines ``ATTACK {json}`` on its stderr (the referee keeps
them in the bot's stderr log), so a test can read exactly what the bot saw. Modes:

- ``scan SECRET``: look through every other /proc/PID/cmdline it can see for SECRET
  (the seed on the referee's command line); report the other pids it could see.
- ``dir PATH``: list PATH and create a file in it (the log dir).
- ``store PATH``: open the SQLite store at PATH, read its games, delete them.
- ``peek DIR``: on every decision, read every ``*.stderr.log`` under DIR (another bot's
  stderr log, while the match runs).
- ``chat SECRET``: on every decision, write SECRET to stderr (the chatty opponent).
- ``connect PORT``: open a TCP connection to 127.0.0.1:PORT.
- ``write``: try to create a file in its cwd, its own directory, /, /var/tmp and
  $HOME; report which worked.
- ``daemon TAG``: leave a ``setsid()`` + double-fork daemon whose command line holds TAG.
- ``memo``: report whether $HOME/memo exists (left by an earlier process), then write it.
- ``read at=PATH``: read the file at PATH.
- ``sleep SECONDS``: sleep that long before its first answer (the long-run test).
- ``kernel TAG DIR``: open kernel settings under /proc/sys (and other writable-looking
  /proc entries) for writing, without writing a byte; report its uid, capabilities and
  which opens worked; then wait (at most 60 s) until DIR/go exists, so that the test can
  look at its process from outside (found by TAG in its command line).
- ``unix at=PATH ...``: connect to each unix socket PATH.
- ``env at=PATH ...``: report its whole environment and read each file PATH.
- ``list at=PATH``: list the directory PATH.
"""

import glob
import json
import os
import random
import socket
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402


def report(**data):  # type: ignore[no-untyped-def]
    sys.stderr.write("ATTACK " + json.dumps(data) + "\n")
    sys.stderr.flush()


def attempt(what, fn):  # type: ignore[no-untyped-def]
    """(True, result) if fn() worked, (False, error text) if it raised."""
    try:
        return True, fn()
    except Exception as exc:  # noqa: BLE001 (any failure is the answer)
        return False, f"{type(exc).__name__}: {exc}"


def scan(secret: str) -> None:
    seen, found = [], []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():  # its own argv holds SECRET too
            seen.append(int(entry))
            ok, text = attempt("cmdline", lambda entry=entry: open(f"/proc/{entry}/cmdline", "rb").read())
            if ok and secret.encode() in text:
                found.append(int(entry))
    report(mode="scan", others=sorted(seen), found=found, me=os.getpid())


def listdir_and_write(path: str) -> None:
    listed = attempt("list", lambda: sorted(os.listdir(path)))
    wrote = attempt("write", lambda: Path(path, "planted.txt").write_text("x") and "written")
    report(mode="dir", listed=listed, wrote=wrote)


def store(path: str) -> None:
    def read():  # type: ignore[no-untyped-def]
        db = sqlite3.connect(path, timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            db.close()

    def delete():  # type: ignore[no-untyped-def]
        db = sqlite3.connect(path, timeout=1)
        try:
            db.execute("DELETE FROM games")
            db.commit()
            return "deleted"
        finally:
            db.close()
    raw = attempt("raw", lambda: open(path, "rb").read(16).decode("latin-1"))
    report(mode="store", raw=raw, read=attempt("read", read), delete=attempt("delete", delete))


def write_everywhere() -> None:
    here = Path(__file__).resolve().parent
    targets = {"cwd": Path.cwd(), "own_dir": here, "root": Path("/"), "var_tmp": Path("/var/tmp"),
               "home": Path(os.environ.get("HOME", "/nonexistent"))}
    results = {}
    for key, d in targets.items():
        name = d / f"planted-{os.getpid()}.txt"
        results[key] = attempt(key, lambda name=name: name.write_text("x") and str(name))[0]
    report(mode="write", results=results, home=os.environ.get("HOME"),
           tmpdir=os.environ.get("TMPDIR"))


def daemon(tag: str) -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sh", ["/bin/sh", "-c", "exec sleep 300", tag])
        os._exit(0)
    os.wait()
    report(mode="daemon", started=True)


def memo() -> None:
    path = Path(os.environ["HOME"]) / "memo"
    report(mode="memo", found=path.exists(), home=str(path))
    path.write_text("remember the deal")


#: Opened for writing only, never written (kernel.core_pattern is never touched).
KERNEL_FILES = ("/proc/sys/vm/overcommit_ratio", "/proc/sys/kernel/printk_ratelimit",
                "/proc/sysrq-trigger", "/proc/sys/fs/binfmt_misc/register")


def kernel(tag: str, go: str) -> None:
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines()
                  if ":" in line)
    opened = {}
    for path in KERNEL_FILES:
        def open_for_write(path: str = path) -> str:
            fd = os.open(path, os.O_WRONLY)
            os.close(fd)
            return "opened"
        opened[path] = attempt(path, open_for_write)[0]
    report(mode="kernel", tag=tag, uid=os.getuid(), euid=os.geteuid(),
           cap_eff=status["CapEff"].strip(), cap_bnd=status["CapBnd"].strip(),
           cap_prm=status["CapPrm"].strip(), no_new_privs=status["NoNewPrivs"].strip(),
           opened=opened)
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(go, "go")) and time.monotonic() < deadline:
        time.sleep(0.05)


def unix(paths: list[str]) -> None:
    results = {}
    for path in paths:
        def connect(path: str = path) -> str:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(2)
                s.connect(path)
                return "connected"
        results[path] = attempt(path, connect)
    report(mode="unix", results=results)


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    rng = random.Random(7)
    pause = [0.0]
    if mode == "scan":
        scan(args[0])
    elif mode == "dir":
        listdir_and_write(args[0])
    elif mode == "store":
        store(args[0])
    elif mode == "connect":
        report(mode="connect", result=attempt("connect", lambda: socket.create_connection(
            ("127.0.0.1", int(args[0])), timeout=2).getsockname()))
    elif mode == "write":
        write_everywhere()
    elif mode == "daemon":
        daemon(args[0])
    elif mode == "memo":
        memo()
    elif mode == "read":
        path = args[0].removeprefix("at=")  # not a path word: the sandbox would bind those
        report(mode="read", result=attempt("read", lambda: Path(path).read_text()))
    elif mode == "kernel":
        kernel(args[0], args[1])
    elif mode == "unix":
        unix([a.removeprefix("at=") for a in args])
    elif mode == "env":
        mark = next((a.removeprefix("mark=") for a in args if a.startswith("mark=")), "\0")
        read = {a.removeprefix("at="): attempt("read", lambda a=a: Path(a.removeprefix("at=")).read_text())
                for a in args if a.startswith("at=")}
        leaked = [k for k, v in os.environ.items() if mark in v] + [p for p, (ok, text) in read.items()
                                                                   if ok and mark in text]
        report(mode="env", env=dict(os.environ), read=read, leaked=leaked)
        name = "attack-env-leaked" if leaked else "attack-env-clean"  # check-bot keeps no stderr
    elif mode == "list":
        report(mode="list", result=attempt("list", lambda: sorted(os.listdir(args[0].removeprefix("at=")))))
    elif mode == "sleep":
        pause[0] = float(args[0])

    def choose(observation, legal):  # type: ignore[no-untyped-def]
        if pause[0]:
            time.sleep(pause[0])
            report(mode="sleep", slept=pause[0], pid=os.getpid())
            pause[0] = 0.0
        if mode == "chat":
            sys.stderr.write(f"my hand is {args[0]}\n")
            sys.stderr.flush()
        elif mode == "peek":
            texts = []
            for name in glob.glob(os.path.join(args[0], "*.stderr.log")):
                ok, text = attempt("peek", lambda name=name: Path(name).read_text())
                if ok:
                    texts.append(text)
            if texts:
                report(mode="peek", read=texts)
        return rng.choice(legal)

    run_function(choose, name=name if mode == "env" else f"attack-{mode}", version="1.0")


if __name__ == "__main__":
    main()
