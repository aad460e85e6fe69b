"""One run per tournament: an exclusive lock on a small file beside the store.

``hold_tournament(db, tid)`` takes ``DB.locks/<hash of tid>.lock`` with ``flock``; a
second process asking for the same tournament (two ``--resume ID`` at once) is refused
with who holds it (pid, host, since when) instead of both writing the same games. The
same holds for an SPRT run and for the ladder (``ladder run``: id ``ladder``). The
kernel drops the lock when its holder exits however it ends (kill -9 included), so a
lock is never stale; the file itself stays, harmless. ``flock`` is local to one machine:
runs on several machines sharing one store over a network file system are not covered.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import socket
from pathlib import Path

from ..errors import UserError
from .matchlog import utc_now
from .private import PRIVATE_FILE, private_mkdir


class LockedError(UserError, RuntimeError):
    """Another live process is playing this tournament now (the user's error: two runs)."""

    hint = "wait until the other run ends (or stop it), then run this again"


def lock_path(db: Path, tid: str) -> Path:
    digest = hashlib.sha256(tid.encode()).hexdigest()[:24]
    return db.with_name(db.name + ".locks") / f"{digest}.lock"


class TournamentLock:
    """The held lock of one tournament; ``release()`` (or leaving ``with``) lets it go."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the file releases the flock
            self._fd = None

    def __enter__(self) -> TournamentLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def hold_tournament(db: Path, tid: str, what: str | None = None,
                    then: str = "then resume it") -> TournamentLock:
    """Take tournament ``tid`` of store ``db`` for this process. Raises LockedError if
    another process holds it (its message: ``what``, default ``tournament TID``, is being
    played by whom; wait ..., ``then``), OSError if the lock file cannot be made."""
    path = lock_path(db, tid)
    private_mkdir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 300, 0).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        raise LockedError(f"{what or f'tournament {tid}'} is being played right now by {holder}; "
                          f"wait for that run to end (or stop it), {then}") from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {utc_now()}\n".encode(), 0)
    return TournamentLock(fd)
