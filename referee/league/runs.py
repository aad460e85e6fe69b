"""The life cycle of a stored run, written once for `tournament`, `sprt` and the ladder.

A stored run is played in a result store under an id, so that it can be stopped and
finished later. Its command parses the options and registers the run (or reads a
resumed one back); then, in this order:

1. ``run_target``: a ``--distributed`` run needs a PostgreSQL store the workers reach;
2. ``hold_run``: a run queued for workers is not played here too (its games would race
   theirs); the run's log directory is found (a resumed run's, beside its stored games);
   the command that resumes it is made; and the run is locked against a second process
   playing it at the same time (a file beside an SQLite store, a lock on a server);
3. ``stopping`` around the play, here or by workers: what stops a run tells the user
   what was kept and what to do next. A UserError gets that as its ``then`` (the resume
   command); Ctrl-C or SIGTERM becomes ``Interrupted``, which says the same.

The command prints what this module returns; nothing here prints or exits.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..console.usererror import lifted
from ..errors import Interrupted, UserError
from ..records.store import Store
from ..records.storedb import PgUrl, parse_target
from .tournament import DEFAULT_LOG_DIR, run_log_dir


class RunError(UserError, ValueError):
    """A stored run cannot be played as asked: ``--distributed`` with a file store, a run
    queued for workers played here, a lock that cannot be made. The message says which."""

    hint = "give --distributed a postgresql:// --db, or resume the run the way it was started"


def run_target(db: str, distributed: bool) -> Path | PgUrl:
    """The store location of a ``--db`` value (TargetError if malformed); RunError for a
    ``--distributed`` run on a file, which workers on other machines cannot share."""
    target = parse_target(db)
    if distributed and not isinstance(target, PgUrl):
        raise RunError(f"--distributed needs a PostgreSQL store every worker can reach (--db "
                       f"postgresql://USER@HOST:PORT/DB), not the file {target}")
    return target


@dataclass(frozen=True)
class HeldRun:
    """A run this process holds: ``kind`` is its command (``tournament``, ``sprt``);
    ``resumed``: it was started before (by ``--resume``)."""

    kind: str
    tid: str
    target: Path | PgUrl
    log_dir: Path
    distributed: bool
    resumed: bool

    @property
    def resume_command(self) -> str:
        """The command that finishes the run: its store, and its log dir unless that is
        the default (a resume finds it in the store anyway, but the printed command should
        not depend on that)."""
        words = ["durak-ref", self.kind, "--resume", self.tid, "--db", str(self.target)]
        if self.log_dir != DEFAULT_LOG_DIR:
            words += ["--log-dir", str(self.log_dir)]
        return shlex.join(words) + (" --distributed" if self.distributed else "")

    def banner(self) -> str:
        """The first line of the run: its id and how to resume it."""
        return f"{self.kind} {self.tid}; if interrupted, resume with: {self.resume_command}"

    def workers_line(self) -> str:
        """What to start on each machine for a distributed run."""
        return (f"queued for workers; start one per machine with: durak-ref worker "
                f"--db {self.target} --tournament {self.tid}")


@contextmanager
def hold_run(kind: str, store: Store, target: Path | PgUrl, tid: str, *, resumed: bool,
             log_dir: Path | None, distributed: bool) -> Iterator[HeldRun]:
    """Hold run ``tid`` of ``store`` (at ``target``) while inside: steps 2 of the module
    docstring. RunError if it is queued for workers but would be played here; LockedError
    if another process plays it."""
    if not distributed and store.path is None:
        from .distributed import is_queued
        if is_queued(store, tid):
            raise RunError(f"{kind} {tid} was queued for workers: resume it with --resume {tid} "
                           f"--distributed (played here, its games would race theirs)")
    run = HeldRun(kind, tid, target, run_log_dir(log_dir, store, tid if resumed else None), distributed,
                  resumed)
    with lock_run(target, store, tid, what=f"{kind} run {tid}" if kind != "tournament" else None):
        yield run


def lock_run(target: Path | PgUrl, store: Store, tid: str, what: str | None = None,
             then: str = "then resume it") -> Any:
    """The lock on run ``tid`` (a tournament, an sprt run, the ladder), taken: see
    referee/records/storelock.py (``what`` and ``then`` word its message); a PostgreSQL
    store's lock is on the server. LockedError if another process holds it, RunError if
    the lock file cannot be made."""
    from ..records.storelock import hold_tournament
    if isinstance(target, PgUrl):
        from .distributed import hold_tournament_on_server
        return hold_tournament_on_server(store, tid)
    try:
        return hold_tournament(target, tid, what, then)
    except OSError as exc:
        raise RunError(f"cannot lock {what or f'tournament {tid}'} beside {target}: "
                       f"{exc.strerror or exc}") from None


@contextmanager
def stopping(kept: str, resume: str | None = None) -> Iterator[None]:
    """Around a run's play: a UserError raised inside (or the first one of a group the
    run's tasks raised) gets ``kept`` (what the store holds) and the ``resume`` command
    as what to do next; Ctrl-C or SIGTERM (KeyboardInterrupt, referee/console/interrupt.py)
    becomes Interrupted saying the same."""
    try:
        with lifted(UserError):
            yield
    except UserError as exc:
        if exc.then is None:
            exc.then = kept if resume is None else f"{kept}; resume with {resume} once it is fixed"
        raise
    except KeyboardInterrupt:
        raise Interrupted(kept if resume is None else f"{kept}. Resume with: {resume}") from None
