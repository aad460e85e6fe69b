"""What every command shares: the two consoles, the one way to stop with an error, and
the checks of option values typer cannot make itself."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

from ..console.printable import TerminalConsole
from ..errors import UserError
from ..records.storedb import PgUrl, parse_target

# Progress bars draw on ``err`` too, so that a line printed while one is live (a note,
# the Ctrl-C message) goes above the bar instead of onto the bar's line.
out = TerminalConsole(soft_wrap=True)
err = TerminalConsole(stderr=True, soft_wrap=True)


def print_error(line: str) -> None:
    """The one ``durak-ref: error:`` line on stderr (printed literally, however it reads)."""
    err.print(f"durak-ref: error: {line}", highlight=False, markup=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Stop the command with one error line: a UserError (exit 2: the user's input was
    unusable; referee/cli.py reports it), or, for another ``code`` (1: the job ran but
    failed; 3: it broke), the line printed here and that exit."""
    if code == UserError.exit_code:
        raise UserError(message)
    print_error(message)
    raise typer.Exit(code)


def store_target(text: str) -> Path | PgUrl:
    """A --db value as a store location; TargetError for a malformed URL."""
    return parse_target(text)


def open_store_at(db: str) -> Any:
    """The store of a --db value, opened (StoreError if it cannot be)."""
    from ..records.store import open_store
    return open_store(store_target(db))


def check_range(value: float | None, option: str, low: float, high: float, *, low_open: bool = False) -> None:
    """Exit 2 unless ``value`` (if given) is a finite number in [low, high] ((low, high]
    with ``low_open``): typer's min/max let nan and inf through."""
    if value is None:
        return
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        fail(f"{option} {value:g}: must be a number {'>' if low_open else '>='} {low:g} and "
             f"<= {high:g}")


def name_value_pairs(items: list[str], option: str, form: str) -> list[tuple[str, str]]:
    """``NAME=VALUE`` items of a repeated option; exits 2 naming a malformed one."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value:
            fail(f"{option} {item!r}: expected {form}")
        out.append((name.strip(), value))
    return out


def run_seed(value: str | None) -> str:
    """The run's seed: the user's --seed, checked (SeedError naming --seed if unusable),
    or a secret one."""
    from ..table.seeds import SeedError, seed_or_new
    try:
        return seed_or_new(value)
    except SeedError as exc:
        raise SeedError(f"--seed: {exc}") from None


def reproduce_fields(seed: str, resumed: str | None = None) -> dict[str, str | None]:
    """This command's ``seed`` and ``reproduce`` --json entries (table.seeds.seed_fields)."""
    from ..table.seeds import seed_fields
    return seed_fields(seed, sys.argv[1:], resumed)


def print_seed(seed: str, resumed: str | None = None) -> None:
    """This command's last text lines: the seed and how to play the same deals again."""
    from ..table.seeds import seed_lines
    out.print(seed_lines(seed, sys.argv[1:], resumed), markup=False, highlight=False)


def bot_limits(max_memory: int | None, max_procs: int, cpus: float, ponder: bool) -> Any:
    """The resource walls of each bot (referee/seats/cgroups.py) from the options, made
    the run's default."""
    from ..seats.cgroups import MEMORY_MB, Limits, set_default_limits

    limits = Limits(max_memory or MEMORY_MB, max_procs, cpus, ponder)
    set_default_limits(limits)  # every sandbox policy this run makes
    return limits


def sandbox_options(mode: str, bind: list[Path] | None) -> tuple[str, tuple[str, ...]]:
    """--sandbox and --bind checked (SandboxError if unusable): (mode, absolute bind paths)."""
    from ..seats.sandbox import Sandbox

    binds = tuple(str(p.resolve()) for p in bind or [])
    Sandbox(mode, binds).check()
    return mode, binds


def http_address(text: str | None) -> tuple[str, int] | None:
    """The --http address, checked (LiveError if unusable), with the non-loopback warning."""
    from ..web.live import bind_warning, parse_http

    if text is None:
        return None
    host, port = parse_http(text)
    warning = bind_warning(host)
    if warning is not None:
        err.print(warning, markup=False, highlight=False)
    return host, port


def note(text: str) -> None:
    """A worker's note on a distributed run, on stderr (names and errors printed literally)."""
    err.print(f"durak-ref: {text}", markup=False, highlight=False)
