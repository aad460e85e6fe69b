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
    # markup=False: the label and the leader's name come from outside (a tournament id,
    # a bot's hello name such as "[/]") and are shown as they are, never parsed as markup.
    progress = Progress(TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
                        MofNCompleteColumn(), TimeRemainingColumn(),
                        TextColumn("{task.fields[leader]}", markup=False),
                        console=Console(stderr=True), transient=True)
    task = progress.add_task(label, total=total, leader="")

    def advance(leader: str) -> None:
        progress.update(task, advance=1, leader=f"leader: {leader}" if leader else "")

    with progress:
        yield advance
