"""Helpers shared by test folders: running the real CLI, and looking at processes."""

from __future__ import annotations

import ctypes
import fcntl
import json
import math
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

DURAK_REF = Path(sys.executable).parent / "durak-ref"
ROOT = Path(__file__).resolve().parents[1]
C_EXAMPLE_DIR = ROOT / "examples" / "c"
JS_EXAMPLE_DIR = ROOT / "examples" / "javascript"
#: pytest-timeout for the few tests that run several long subprocesses (the default,
#: ``timeout`` in pyproject.toml, is for everything else): ``@pytest.mark.timeout(LONG_TIMEOUT_S)``.
LONG_TIMEOUT_S = 900
PR_SET_CHILD_SUBREAPER = 36
#: Mutation runs only (docs/TESTING.md, "Mutation testing"): the engine's seeded-game loops
#: and hypothesis examples are multiplied by this fraction, so that each surviving mutant
#: costs seconds instead of a minute. Unset (the suite, CI): the full counts.
MUTATION_SCALE_ENV = "DURAK_MUTATION_SCALE"


def scaled(count: int) -> int:
    """``count`` (seeded games, hypothesis examples) times ``$DURAK_MUTATION_SCALE``, a
    fraction in (0, 1] (default 1: the full count), rounded up, at least 1. A smaller run
    can only find fewer bugs, so a mutation score measured with it is a lower bound.
    Raises ValueError naming the variable when its value is not such a fraction."""
    text = os.environ.get(MUTATION_SCALE_ENV, "").strip()
    if not text:
        return count
    try:
        scale = float(text)
    except ValueError:
        scale = math.nan
    if not 0 < scale <= 1:
        raise ValueError(f"{MUTATION_SCALE_ENV}={text!r}: expected a fraction in (0, 1], e.g. 0.1")
    return max(1, math.ceil(count * scale))


def default_signals(ignore_sigint: bool = False) -> Callable[[], None]:
    """A ``preexec_fn`` for a child the test will signal: it starts with SIGINT and SIGTERM
    as a terminal gives them (or SIGINT ignored, if asked), not as inherited from however
    pytest itself was started (a background job of a non-interactive shell, ``nohup``, has
    SIGINT ignored, and a child would then never see a Ctrl-C)."""
    def preexec() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_sigint else signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return preexec


def cli(*args: str | Path, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``durak-ref ARGS`` as a user would (wide, uncoloured output)."""
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return subprocess.run([str(DURAK_REF), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


async def ask(player: Any, request: dict[str, Any], budget: float | None,
              answers: dict[bytes, Any] | None = None) -> Any:
    """One decision of ``player`` asked as the table asks every seat: ``attempt``, then,
    when that leaves the request open, the awaited ``finish``. ``request`` is a request
    map, its frame ``encode``'s; ``answers`` maps canonical action bytes to what the seat
    returns for them (None: none known, so every answer comes back as the map the bot
    sent, decoded and checked)."""
    from protocol.codec import encode
    from referee.seats.pipelane import Request

    asked = Request(request["id"], budget, {} if answers is None else answers, encode(request))
    got = player.attempt(asked)
    if got is None:
        got = await player.finish(asked)
    return got


def standing(result: dict[str, Any], name: str, rows: str = "standings") -> dict[str, Any]:
    """Bot ``name``'s row in a --json result's ``standings`` (or its list ``rows``: the
    ``this_run`` of ``ladder run``), as docs/JSON.md describes them."""
    found = [row for row in result[rows] if row["name"] == name]
    assert len(found) == 1, f"{name!r} has {len(found)} rows in {rows}: {result[rows]}"
    return found[0]


def proc_stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, ppid, pgrp, session) of a process, zombies included; None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1]), int(fields[2]), int(fields[3])


@contextmanager
def exclusive(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` against every other test process (the
    pytest-xdist workers run at once): flock on the directory itself, so no lock file is
    left in the checkout."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def c_example_bot() -> list[str]:
    """The command of the C example bot, built with ``make`` first (under the lock: a
    worker must never run a binary another worker is still writing). Skips, with the
    reason, without make or a C compiler."""
    make = shutil.which("make")
    cc = shutil.which("cc") or shutil.which("gcc")
    if make is None:
        pytest.skip("C example bot not tested: `make` not found on PATH")
    if cc is None:
        pytest.skip("C example bot not tested: no C compiler (`cc`/`gcc`) on PATH")
    args = [make, "-s", "-C", str(C_EXAMPLE_DIR)]
    if shutil.which("cc") is None:
        args.append(f"CC={cc}")
    with exclusive(C_EXAMPLE_DIR):
        res = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"building the C bot failed:\n{res.stdout}\n{res.stderr}"
    bot = C_EXAMPLE_DIR / "bot"
    assert bot.is_file()
    return [str(bot)]


def js_example_bot() -> list[str]:
    """The command of the JavaScript example bot, its one dependency installed with
    ``npm ci`` if missing (under the lock: ``npm ci`` empties node_modules first, which
    would break a bot another worker is starting). Skips, with the reason, without node
    (or without npm where node_modules is missing)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("JavaScript example bot not tested: `node` not found on PATH")
    with exclusive(JS_EXAMPLE_DIR):
        if not (JS_EXAMPLE_DIR / "node_modules" / "@msgpack" / "msgpack").is_dir():
            npm = shutil.which("npm")
            if npm is None:
                pytest.skip("JavaScript example bot not tested: node_modules missing and no `npm`")
            res = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=JS_EXAMPLE_DIR,
                                 capture_output=True, text=True, timeout=600)
            assert res.returncode == 0, f"npm ci failed:\n{res.stdout}\n{res.stderr}"
    return [node, str(JS_EXAMPLE_DIR / "bot.js")]


@contextmanager
def child_subreaper() -> Iterator[None]:
    """While inside, orphans of our descendants are re-parented to this process, not to a
    PID 1 that (in some sandboxes) never reaps them: the test can see and reap them."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:  # pragma: no cover
        pytest.skip("cannot become a child subreaper")
    try:
        yield
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


#: A seat's view as the referee sends it: seat 0 leads the first bout holding HAND.
#: Shared by the tests that script a referee for the example bots; test_support_fixture
#: (tests/app/test_support.py) keeps it in step with what Game.observe really sends.
HAND = ["6S", "7H", "9C", "JD", "QS", "AS"]
ATTACK_OBSERVATION = {
    "seat": 0, "players": 2, "dealer": 1, "hand": HAND, "trump": "TH", "trump_suit": "H",
    "trump_holder": None, "talon": 24, "table": [], "discard": [], "hand_sizes": [6, 6],
    "out": [False, False], "attacker": 0, "defender": 1, "phase": "attack", "taking": False,
    "bout": 1, "transfers": 0, "attack_limit": 6, "known": [[], []], "shown": [],
}


def attack_reports(logs: Path) -> list[dict[str, Any]]:
    """Every ``ATTACK {json}`` line a hostile test bot wrote to its stderr, read from the
    stderr logs under ``logs`` (tests/sandbox/bots: what each attack got)."""
    out = []
    for path in sorted(logs.glob("*.stderr.log")):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("ATTACK "):
                out.append(json.loads(line[len("ATTACK "):]))
    return out
