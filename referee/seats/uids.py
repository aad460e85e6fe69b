"""A uid of its own for every running sandboxed bot (when the referee runs as root).

Why. The kernel keeps some pools per user, whatever the namespaces: inotify instances
(``fs.inotify.max_user_instances``, 128 here), pending signals and POSIX timers
(``RLIMIT_SIGPENDING``, 96,367 here), POSIX message queue bytes (``RLIMIT_MSGQUEUE``),
processes (``RLIMIT_NPROC``). Bots that share a uid share these: one bot that takes them
all leaves its opponent without (issue 35: ``inotify_init1`` failed 22 of 22 times).
A user namespace per bot does not part them: on this kernel (6.18) the counters are
charged at every level up to the initial namespace, to the uid that made each namespace,
so namespaces made by one uid still share (measured: two ``unshare -U`` by root share
root's 128 inotify instances; by two different uids they do not). Two different uids do.

How. Each bot process leases a uid from a range (``--bot-uids FIRST-LAST`` on every
command that runs program bots, or ``DURAK_SANDBOX_UIDS``; default ``DEFAULT_UIDS``: 65,536 uids far above people's and systems' own) for as long as it
lives: the lease is an exclusive ``flock`` on ``RUNTIME_DIR/<uid>.lock``, a directory only
root may write, so two bots never hold one uid at once, in one referee or in any number
of referees on the machine. The lock is held by the referee and, through a duplicate
handed to it, by the referee's watchdog (referee/seats/watchdog.py): if the referee dies,
the uid stays leased until the watchdog has killed the bot, and is free once it exits.
The lease ends (``UidLease.release``) after the bot's processes are gone and its control
group removed; a group that could not be removed keeps its uid until the referee exits.

Not root: bwrap makes an unprivileged user namespace, and the bot's uid outside is the
referee's own; no uid can be leased (the pools stay shared between the bots, and with
the referee's user), which the unprivileged start-up line says.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import pwd
import random
import stat
from dataclasses import dataclass

from ..errors import UserError
from .watchdog import watchdog

RUNTIME_DIR = "/run/durak-ref/uids"
#: Not DURAK_BOT_*: those every bot inherits (sandbox_view.BOT_ENVIRONMENT).
ENV = "DURAK_SANDBOX_UIDS"
OPTION = "--bot-uids"  #: the command-line form of ``ENV`` (referee/commands/options.py)
DEFAULT_UIDS = (1_900_000_000, 1_900_065_535)  #: first and last uid, inclusive
LOWEST = 1000  #: below: system and people's uids, never a bot's
HIGHEST = 2**31 - 2  #: above: tools that keep a uid in a signed int go wrong


class UidRangeError(UserError, ValueError):
    """``--bot-uids``/``DURAK_SANDBOX_UIDS`` is malformed, out of bounds or holds an account's
    uid (the user's to fix). Exit code 2."""

    hint = (f"give {OPTION} FIRST-LAST (or set {ENV}), uids from {LOWEST} to {HIGHEST} "
            f"that no account has; or neither, for the default")


class NoUidError(OSError):
    """Every uid of the range is leased to a running bot: the bot cannot start (a start
    error, as any other OSError of starting it)."""


_chosen: list[tuple[int, int]] = []  #: the range ``choose`` set for this process


def choose(text: str | None) -> None:
    """Make ``text`` (``--bot-uids`` or ``$DURAK_SANDBOX_UIDS``, FIRST-LAST) this process's
    bot uid range (each command sets it as it parses its options); None: back to
    ``$DURAK_SANDBOX_UIDS`` if set, else the default.
    Raises UidRangeError naming the option."""
    _chosen[:] = [] if text is None else [_parse(text, f"{OPTION}/{ENV} {text!r}")]


def uid_range(text: str | None = None) -> tuple[int, int]:
    """The bot uid range (first, last): from ``text``, else the one ``choose`` set, else
    ``$DURAK_SANDBOX_UIDS``, else the default. Raises UidRangeError for bad text."""
    if text is None and _chosen:
        return _chosen[0]
    text = os.environ.get(ENV) if text is None else text
    if not text:
        return DEFAULT_UIDS
    return _parse(text, f"{ENV}={text!r}")


def _parse(text: str, where: str) -> tuple[int, int]:
    """``text`` as (first, last), checked; ``where`` names it in the error."""
    first, sep, last = text.strip().partition("-")
    if not sep or not first.strip().isdigit() or not last.strip().isdigit():
        raise UidRangeError(f"{where}: expected FIRST-LAST, two uids (e.g. "
                            f"{DEFAULT_UIDS[0]}-{DEFAULT_UIDS[1]})")
    low, high = int(first), int(last)
    if not LOWEST <= low <= high <= HIGHEST:
        raise UidRangeError(f"{where}: needs {LOWEST} <= FIRST <= LAST <= {HIGHEST} "
                            f"(bots never get a system or person's uid)")
    if low <= 65534 <= high:
        raise UidRangeError(f"{where}: the range holds 65534 (nobody), which other "
                            f"programs use; choose a range without it")
    taken = _accounts_in(low, high)
    if taken:
        raise UidRangeError(f"{where}: the range holds the uid of {taken} (/etc/passwd): "
                            f"a bot would own that account's files; choose a range without it")
    return low, high


@functools.lru_cache(maxsize=8)
def _accounts_in(low: int, high: int) -> str | None:
    """The first account of the system's user database whose uid is in the range."""
    try:
        users = pwd.getpwall()
    except OSError:
        return None
    return next((f"{u.pw_name} ({u.pw_uid})" for u in users if low <= u.pw_uid <= high), None)


def _private_dir(path: str) -> None:
    """Make ``path`` (and /run/durak-ref) root's own, mode 0700, or raise PermissionError
    naming what is wrong with one that exists: a lease in a directory anyone else may
    write would be no lease."""
    for d in (os.path.dirname(path), path):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(d)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
            raise PermissionError(13, f"{d} must be a directory owned by root that no one else "
                                      f"may write (it holds the bot uid leases); remove it")


@dataclass
class UidLease:
    """One uid, leased to one bot process until ``release``."""

    uid: int
    fd: int | None

    def release(self) -> None:
        """End the lease (the bot's processes are gone). Idempotent."""
        if self.fd is None:
            return
        watchdog().drop(self.uid)
        os.close(self.fd)
        self.fd = None


_next: list[int] = []  #: where this process looks next, as an offset into the range


def lease(where: str = RUNTIME_DIR) -> UidLease:
    """A uid of the range no other bot holds now (see the module docstring). A few
    microseconds per uid tried. Raises NoUidError when all are taken, UidRangeError for
    a bad ``$DURAK_SANDBOX_UIDS``, PermissionError for an unsafe ``where`` (both OSErrors
    but the first: the bot's start fails, naming why)."""
    low, high = uid_range()
    size = high - low + 1
    _private_dir(where)
    if not _next:
        _next.append(random.randrange(size))  # referees started together start apart
    for step in range(size):
        uid = low + (_next[0] + step) % size
        fd = os.open(os.path.join(where, f"{uid}.lock"),
                     os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _next[0] = (_next[0] + step + 1) % size
        watchdog().hold(uid, fd)
        return UidLease(uid, fd)
    raise NoUidError(errno.EAGAIN, f"all {size} bot uids ({low}-{high}) are leased to running "
                                   f"bots (give a larger range with {OPTION} FIRST-LAST or {ENV})")
