"""The watchdog: no bot outlives its referee, however the referee dies (SIGKILL included).

Why. The referee removes its bots' control groups when it exits (``cgroups.Backend.
remove_all`` at exit), but a SIGKILLed referee runs no code; a bot frozen at that moment
(off-move freezing) cannot act on any signal either, not even the parent-death signal
bwrap asked for: it stays frozen, with its children and its memory, for good.

How. One small process per referee process (not per bot), started the first time the
referee makes its bots' groups (``watch``). It is this file run as a script by the
referee's own interpreter (``-I -S``: nothing of the project, nothing of site-packages),
in a session of its own (terminal and process-group signals meant for the referee do not
reach it), outside every bot group (it is the referee's child: it is in the referee's
groups). It holds the other end of a socket pair and blocks reading it. The referee
tells it, one datagram each:

- ``base PATH``: a ``durak-ref.<pid>`` subtree of bot groups (v1: one per controller);
- ``hold UID`` with a file descriptor: a bot's uid lease (referee/seats/uids.py), kept
  open here too, so that the uid stays leased until the bot's processes are gone;
- ``drop UID``: that bot has ended; close the lease.

When every copy of the referee's end is closed (the referee exited, normally or not:
the kernel closes its fds), the read returns end-of-file and the watchdog does what the
dead referee cannot (``remove_trees``): thaw every group (v1 ``freezer.state`` THAWED,
v2 ``cgroup.freeze`` 0), kill every process in them (v2 ``cgroup.kill``; and SIGKILL,
then SIGCONT, of every pid in each ``cgroup.procs``, again until all are empty: a bot
may fork while we kill), rmdir them deepest first, and exit, which releases the leases it
held. At a normal exit the referee removes its subtrees itself, then closes its end and
reaps the watchdog (``Watchdog.close``), which finds nothing left and exits at once.

This module holds only the standard library: the referee imports its client half
(``Watchdog``), and ``remove_trees``, which its own exit path uses as well.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import time

GIVE_UP_S = 10.0  #: how long the sweep keeps killing and removing before it gives up
_MESSAGE_MAX = 4096
SEND_BUFFER = 4 << 20  #: bytes the referee's end may queue (the kernel caps it at wmem_max)


def _write(path: str, value: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(value)
    except OSError:
        pass


def _group_dirs(bases: list[str]) -> list[str]:
    """Every group directory under ``bases``, deepest first."""
    found: list[str] = []
    for base in bases:
        if os.path.isdir(base):
            found += [d for d, _, _ in os.walk(base, topdown=False)]
    return found


def on_cgroupfs(path: str) -> bool:
    """Whether ``path`` lies on a mounted cgroup (v1) or cgroup2 filesystem: only such
    directories are handed to the watchdog (its sweep kills the pids their
    ``cgroup.procs`` name)."""
    real = os.path.realpath(path)
    try:
        with open("/proc/self/mounts") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return False
    points = [m[1] for m in mounts if len(m) > 2 and m[2] in ("cgroup", "cgroup2")]
    return any(real == p or real.startswith(p.rstrip("/") + "/") for p in points)


def _procs(directory: str) -> list[int]:
    try:
        with open(os.path.join(directory, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def _signal(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def remove_trees(bases: list[str], seconds: float = GIVE_UP_S) -> bool:
    """Thaw, kill and remove every control group under ``bases`` (see the module
    docstring); True when none is left. Gives up after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        dirs = _group_dirs(bases)
        pids: set[int] = set()
        for d in dirs:
            _write(os.path.join(d, "freezer.state"), "THAWED")  # v1 (only in the freezer tree)
            _write(os.path.join(d, "cgroup.freeze"), "0")  # v2
            if os.path.exists(os.path.join(d, "cgroup.kill")):
                _write(os.path.join(d, "cgroup.kill"), "1")
            pids.update(_procs(d))
        # SIGKILL first, then SIGCONT: a process stopped without a freezer dies only
        # once continued; a frozen one once thawed (above, and again next round).
        _signal(sorted(pids), signal.SIGKILL)
        _signal(sorted(pids), signal.SIGCONT)
        if not pids:
            for d in dirs:  # deepest first; a member still exiting keeps its group: retry
                try:
                    os.rmdir(d)
                except OSError:
                    pass
            if not _group_dirs(bases):
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def serve(channel: socket.socket) -> None:
    """The watchdog's life: keep what the referee says until it is gone, then sweep."""
    bases: list[str] = []
    held: dict[str, int] = {}
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(channel, _MESSAGE_MAX, 4)
        except InterruptedError:
            continue
        except OSError:
            break
        if not data and not fds:
            break  # end-of-file: the referee is gone
        word, _, arg = data.decode("utf-8", "replace").partition(" ")
        if word == "base":
            bases.append(arg)
        elif word == "hold" and fds:
            if arg in held:
                os.close(held[arg])
            held[arg] = fds.pop(0)
        elif word == "drop" and arg in held:
            os.close(held.pop(arg))
        for fd in fds:
            os.close(fd)
    if not remove_trees(bases):
        left = ", ".join(_group_dirs(bases))
        print(f"durak-ref watchdog: could not remove {left} in {GIVE_UP_S:g} s", file=sys.stderr)


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)  # the referee's terminal is not ours to obey
    serve(socket.socket(fileno=int(sys.argv[1])))


class Watchdog:
    """The referee's end of its watchdog (see the module docstring). Every method is one
    small datagram (microseconds). If the watchdog is gone (someone killed it), the
    referee plays on; the first failed send prints one line saying what is lost."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), str(theirs.fileno())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=(theirs.fileno(),),
            start_new_session=True)
        theirs.close()
        ours.setblocking(False)
        # Room for thousands of messages (about 280 at the default size) while it starts
        # or is slow to read: a tournament may start many bots at once.
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        self._channel: socket.socket | None = ours
        self.pid = self.process.pid
        self.owner = os.getpid()  #: the referee process it watches
        # A forked copy of the referee (a worker) must not keep the watchdog waiting.
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def _send(self, text: str, fds: tuple[int, ...] = ()) -> None:
        if self._channel is None:
            return
        try:
            socket.send_fds(self._channel, [text.encode()], list(fds))
        except BlockingIOError:
            # Never wait on it (the referee's loop is shared): a watchdog that does not
            # read (stopped by someone) loses this message, and says so once.
            _say_once(f"warning: the watchdog (pid {self.pid}) is not reading: a message was "
                      f"lost ({text.split()[0]})")
        except OSError as exc:
            self._forget()
            _say_once(f"warning: the watchdog (pid {self.pid}) is gone ({exc.strerror or exc}): "
                      f"bots would outlive a referee killed with SIGKILL")

    def close(self, wait_s: float = 5.0) -> None:
        """End the watchdog at a normal exit: close our end (it sweeps whatever is left,
        nothing after ``Backend.remove_all``, and exits) and reap it, so that not even
        the watchdog outlives the referee. Waits at most ``wait_s``."""
        self._forget()
        try:
            self.process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            pass  # still sweeping: it ends by itself (GIVE_UP_S); we do not wait longer

    def watch_base(self, path: str) -> None:
        """Remove ``path`` (a subtree of bot groups) and end its processes if we die."""
        self._send(f"base {path}")

    def hold(self, uid: int, fd: int) -> None:
        """Keep the lease ``fd`` of ``uid`` open until ``drop`` or until after the sweep."""
        self._send(f"hold {uid}", (fd,))

    def drop(self, uid: int) -> None:
        self._send(f"drop {uid}")


_said: set[str] = set()


def _say_once(text: str) -> None:
    if text not in _said:
        _said.add(text)
        print(f"durak-ref: {text}", file=sys.stderr, flush=True)


_started: list[Watchdog] = []


def watchdog() -> Watchdog:
    """This process's watchdog, started on first use (one per referee process)."""
    if not _started or _started[0].owner != os.getpid():
        _started[:] = [Watchdog()]
    return _started[0]


def watchdog_pid() -> int | None:
    """The pid of this process's watchdog (None: none started): it is ours, not a bot's
    leftover (referee/seats/leftovers.py)."""
    return _started[0].pid if _started and _started[0].owner == os.getpid() else None


def _end_at_exit() -> None:
    if _started and _started[0].owner == os.getpid():
        _started[0].close()


# Registered when this module is first imported, before any backend registers its
# remove_all (cgroups.Backend.guard): exit handlers run last-registered first, so the
# referee removes its groups itself first, then ends its watchdog.
atexit.register(_end_at_exit)


if __name__ == "__main__":
    main()
