"""Children tied to this process's life: whatever way it dies, SIGKILL included, they die.

``tied_to_parent()`` is a ``preexec_fn`` for ``subprocess.Popen`` that asks Linux for a
parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``) in the child, after any change
of its user (a change of credentials clears the setting, which is why ``setpriv`` in
front of a command cannot be used for this), and kills itself at once if the parent
already died between the fork and that call. The signal comes when the *thread* that forked the
child ends, not the process: spawn from a thread that lives as long as the child should
(the main thread; not trio's thread cache, see referee/seats/spawn.py).

Not Linux: no such signal; the child is started without it (``available()`` says so).
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1


def libc_prctl() -> Any:
    """libc's ``prctl`` (errno kept), or None where there is none (not Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def available() -> bool:
    """Whether children can be tied to this process's life here."""
    return libc_prctl() is not None


def tied_to_parent(user: tuple[int, int] | None = None) -> Callable[[], None]:
    """A ``preexec_fn``: the child drops to ``user`` (uid, gid; no supplementary groups)
    if given, then gets SIGKILL when the spawning thread ends; a child whose parent is
    already gone kills itself before its program runs."""
    prctl = libc_prctl()  # looked up here: no dlopen between fork and exec
    parent = os.getpid()

    def apply() -> None:
        if user is not None:
            os.setgroups([])
            os.setgid(user[1])
            os.setuid(user[0])
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    return apply
