"""A live progress bar on stderr for long jobs (only when stderr is a terminal)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


@contextmanager
def progress_for(total: int, label: str, enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """Yields ``advance(leader)``: call it once per finished game with a short text
    naming the current leader. The bar shows games done, the ETA and the leader."""
    if not enabled or not sys.stderr.isatty() or total < 2:
        yield lambda leader: None
        return
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeRemainingColumn(), TextColumn("{task.fields[leader]}"),
                        console=Console(stderr=True), transient=True)
    task = progress.add_task(label, total=total, leader="")

    def advance(leader: str) -> None:
        progress.update(task, advance=1, leader=f"leader: {leader}" if leader else "")

    with progress:
        yield advance
