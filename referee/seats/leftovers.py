"""Processes a bot leaves behind: find them, name them, kill them, reap them (Linux).

A bot may fork. Its children in the bot's own process group die with it when the
referee ends the group, but a child can leave the group: ``setsid()`` after a double
fork makes a daemon in a session of its own, re-parented away from the bot. To see
such processes at all, the checking process makes itself a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``, ``subreaper()``): every orphan of its descendants
is then re-parented to it instead of to PID 1, so "everything the bot started" is
exactly "every descendant of ours that was not there before" (``Watch``), found by
walking ``/proc`` by parent pid.

Only processes we know to be leftovers are ever reaped, each by its own pid: trio
reaps the bot processes it started itself, and a ``waitpid(-1)`` here would steal them.
"""

from __future__ import annotations

import ctypes
import os
import shlex
import signal
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from ..console.lifetime import libc_prctl
from .watchdog import watchdog_pid

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
CMDLINE_MAX = 300


@dataclass(frozen=True)
class ProcInfo:
    """One process as /proc shows it."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str  #: the state letter; ``Z`` is a zombie (dead, not yet reaped)
    start: int  #: start time in clock ticks since boot: tells a reused pid apart
    cmdline: str

    @property
    def zombie(self) -> bool:
        return self.state in ("Z", "X")

    def as_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "ppid": self.ppid, "pgid": self.pgid, "sid": self.sid,
                "state": self.state, "cmdline": self.cmdline}


def _stat(pid: int) -> tuple[str, list[str]] | None:
    """(name, the fields after it) of /proc/PID/stat; None if the process is gone."""
    try:
        # open(), not Path: pathlib interns every path part (a pid each), which grows
        # the interpreter's interned-strings table in a long watch (bench soak).
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.find("(") + 1:stat.rfind(")")], stat.rsplit(")", 1)[1].split()


def _info(pid: int, name: str, fields: list[str]) -> ProcInfo:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        raw = b""
    argv = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    text = shlex.join(argv) if argv else f"[{name}]"
    if len(text) > CMDLINE_MAX:
        text = text[:CMDLINE_MAX] + " ..."
    return ProcInfo(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0],
                    int(fields[19]), text)


def read_proc(pid: int) -> ProcInfo | None:
    """The process ``pid``, or None if it is gone (or /proc does not show it)."""
    stat = _stat(pid)
    return None if stat is None else _info(pid, *stat)


def descendants(root: int | None = None) -> dict[int, ProcInfo]:
    """Every process below ``root`` (default: this process) in the parent-pid tree,
    zombies included."""
    root = os.getpid() if root is None else root
    children: dict[int, list[tuple[int, str, list[str]]]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    for entry in entries:
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                children.setdefault(int(stat[1][1]), []).append((int(entry), *stat))
    found: dict[int, ProcInfo] = {}
    todo = [root]
    while todo:
        for pid, name, fields in children.get(todo.pop(), ()):
            if pid not in found and pid != root:
                found[pid] = _info(pid, name, fields)
                todo.append(pid)
    return found


@contextmanager
def subreaper() -> Iterator[bool]:
    """While inside, this process is a child subreaper (see the module docstring); on
    leaving, it is what it was before. Yields False where that is impossible (not
    Linux, no /proc): leftovers cannot be tracked there."""
    prctl = libc_prctl()
    if prctl is None or not Path("/proc/self/stat").exists():
        yield False
        return
    was = ctypes.c_int(0)
    if prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(was), 0, 0, 0) != 0:
        yield False
        return
    if prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        yield False
        return
    try:
        yield True
    finally:
        prctl(PR_SET_CHILD_SUBREAPER, was.value, 0, 0, 0)


class Watch:
    """The processes that appear below this process after the watch is made, except
    the ones we start and reap ourselves (``ignore``). Under ``subreaper()`` that is
    everything a bot started since, wherever it went."""

    def __init__(self) -> None:
        self.baseline = {(p.pid, p.start) for p in descendants().values()}
        self.ignored: set[int] = set()

    def ignore(self, pid: int | None) -> None:
        if pid is not None:
            self.ignored.add(pid)

    def new(self) -> dict[int, ProcInfo]:
        """The new descendants now, zombies included (not the referee's own watchdog,
        referee/seats/watchdog.py, which may have been started after the watch)."""
        ours = watchdog_pid()
        return {pid: p for pid, p in descendants().items()
                if (pid, p.start) not in self.baseline and pid not in self.ignored and pid != ours}

    async def wait_gone(self, seconds: float, poll: float = 0.01) -> dict[int, ProcInfo]:
        """Wait up to ``seconds`` for every new descendant to exit (reaping those that
        end up as our children); what still runs then."""
        deadline = trio.current_time() + seconds
        while True:
            found = self.new()
            _reap(p for p in found.values() if p.ppid == os.getpid())
            left = {pid: p for pid, p in found.items() if not p.zombie}
            if not left or trio.current_time() >= deadline:
                return left
            await trio.sleep(min(poll, max(0.0, deadline - trio.current_time())))

    async def kill_all(self, seconds: float = 5.0, poll: float = 0.01) -> list[ProcInfo]:
        """SIGKILL every new descendant, again and again (one may fork while we look),
        and reap those that end up as our children; until none is left or ``seconds``
        pass. Returns what was killed."""
        killed: dict[int, ProcInfo] = {}
        deadline = trio.current_time() + seconds
        while True:
            found = self.new()
            for p in found.values():
                if not p.zombie:
                    _kill(p)
                    killed.setdefault(p.pid, p)
            _reap(p for p in found.values() if p.ppid == os.getpid())
            if not found or trio.current_time() >= deadline:
                return list(killed.values())
            await trio.sleep(poll)


def _kill(p: ProcInfo) -> None:
    now = read_proc(p.pid)
    if now is None or now.start != p.start:  # gone, or the pid is someone else's now
        return
    try:
        os.kill(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(children: Iterable[ProcInfo]) -> None:
    for p in children:
        if p.zombie:
            try:
                os.waitpid(p.pid, os.WNOHANG)
            except ChildProcessError:
                pass
