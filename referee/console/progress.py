"""Progress of long jobs on stderr: a live bar or line on a terminal, plain lines elsewhere.

On a terminal rich redraws one bar (or one status line) in place. When stderr is not a
terminal (nohup, CI, a pipe) nothing can be redrawn, so a plain line is printed at most
every ``interval`` seconds instead (default 10 s; the environment variable
``DURAK_REF_PROGRESS_INTERVAL`` sets it, 0 prints a line per update): a long run never
looks hung, and a log of it stays short. The clock is monotonic and injectable.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from .printable import TerminalConsole, printable

#: Seconds between two plain progress lines when stderr is not a terminal.
DEFAULT_INTERVAL = 10.0
INTERVAL_ENV = "DURAK_REF_PROGRESS_INTERVAL"


def plain_interval() -> float:
    """The seconds between plain lines: ``$DURAK_REF_PROGRESS_INTERVAL`` if it is a number
    >= 0, else DEFAULT_INTERVAL."""
    try:
        value = float(os.environ.get(INTERVAL_ENV, ""))
    except ValueError:
        return DEFAULT_INTERVAL
    return value if value >= 0 else DEFAULT_INTERVAL


class PlainLines:
    """Writes ``label: text`` to ``stream`` when at least ``interval`` seconds (by
    ``clock``) have passed since the last line (or the start); interval 0: every call."""

    def __init__(self, label: str, stream: IO[str], interval: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.stream, self.interval, self.clock = label, stream, interval, clock
        self.started = self.last = clock()

    def elapsed(self) -> str:
        s = int(self.clock() - self.started)
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"

    def __call__(self, text: str) -> None:
        now = self.clock()
        if now - self.last < self.interval:
            return
        self.last = now
        try:
            self.stream.write(printable(f"{self.label}: {text} [{self.elapsed()}]") + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed or full stderr must not stop the run


def _is_terminal(console: Console | None) -> bool:
    return console.is_terminal if console is not None else sys.stderr.isatty()


@contextmanager
def progress_for(total: int, label: str, enabled: bool = True, *, console: Console | None = None,
                 interval: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> Iterator[Callable[[str], None]]:
    """Yields ``advance(text)``: call it once per finished game with a short text on the
    standing so far (the leader, a running score). On a terminal the bar shows games
    done, the ETA and the text; elsewhere a plain line ``label: DONE/TOTAL games, TEXT``
    is printed every ``interval`` seconds (default: ``plain_interval()``)."""
    if not enabled or total < 2:
        yield lambda leader: None
        return
    if not _is_terminal(console):
        lines = PlainLines(label, sys.stderr if console is None else console.file,
                           plain_interval() if interval is None else interval, clock)
        done = [0]

        def plain(text: str) -> None:
            done[0] += 1
            lines(f"{done[0]}/{total} games" + (f", {text}" if text else ""))
        yield plain
        return
    # markup=False: the label and the leader's name come from outside (a tournament id,
    # a bot's hello name such as "[/]") and are shown as they are, never parsed as markup.
    progress = Progress(TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
                        MofNCompleteColumn(), TimeRemainingColumn(),
                        TextColumn("{task.fields[leader]}", markup=False),
                        console=console or TerminalConsole(stderr=True), transient=True)
    task = progress.add_task(label, total=total, leader="")

    def advance(text: str) -> None:
        progress.update(task, advance=1, leader=text)

    with progress:
        yield advance


@contextmanager
def status_line(label: str, enabled: bool = True, *, console: Console | None = None,
                interval: float | None = None,
                clock: Callable[[], float] = time.monotonic) -> Iterator[Callable[[str], None]]:
    """Yields ``update(text)`` for a job without a known total (an SPRT): on a terminal
    one line, redrawn in place (spinner, ``label``, the text, the time elapsed; the text
    is printed literally, never as markup); elsewhere a plain line every ``interval``
    seconds, as ``progress_for``."""
    if not enabled:
        yield lambda text: None
        return
    if not _is_terminal(console):
        yield PlainLines(label, sys.stderr if console is None else console.file,
                         plain_interval() if interval is None else interval, clock)
        return
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False),
                        TextColumn("{task.fields[text]}", markup=False), TimeElapsedColumn(),
                        console=console or TerminalConsole(stderr=True), transient=True)
    task = progress.add_task(label, total=None, text="")

    def update(text: str) -> None:
        progress.update(task, text=text)

    with progress:
        yield update
