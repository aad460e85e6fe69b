"""A live progress bar on stderr for long jobs (only when stderr is a terminal)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn


@contextmanager
def progress_for(total: int, label: str, enabled: bool = True) -> Iterator[Callable[[Any], None]]:
    """Yields ``advance(result)``: call it once per finished game. The bar shows games
    done, the ETA and the current leader (the bot that was durak least often)."""
    if not enabled or not sys.stderr.isatty() or total < 2:
        yield lambda result: None
        return
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeRemainingColumn(), TextColumn("{task.fields[leader]}"),
                        console=Console(stderr=True), transient=True)
    task = progress.add_task(label, total=total, leader="")

    def advance(result: Any) -> None:
        leader = ""
        if getattr(result, "bots", None):
            best = min(result.bots, key=lambda b: b.durak)
            leader = f"leader: {best.name} (durak {best.durak})"
        progress.update(task, advance=1, leader=leader)

    with progress:
        yield advance
