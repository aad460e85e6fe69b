"""One visitor cannot make rated bots lose on time (issue 35, item 1): a searching
built-in never decides on the server's event loop.

A real ``serve --http --move-time 0.5``: two registered TCP bots that answer at once
play in the arena while one visitor keeps its three lobby tables of "you + 3 x
builtin:expert" in play, clicking along (``referee.bench.bench_loop.Visitor``, what
``durak-ref bench loop`` uses). Before, the experts searched on the server's loop and
the bots' instant answers were charged seconds (9 timeout forfeits in 15 s, one answer
charged 5.134 s); now each expert is a confined process and the arena's games go on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from referee.bench.bench_loop import EXPERT_TABLE, Visitor, start_serve, stop_serve
from support import cli

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
MOVE_TIME = 0.5
LOBBY_FULL_S = 12.0


def _records(logs: Path, prefix: str) -> list[dict[str, Any]]:
    out = []
    for path in sorted(logs.glob(f"{prefix}-*.jsonl")):
        for line in path.read_text().splitlines():
            out.append(json.loads(line))
    return out


def _tcp_bot(arena: str, name: str, token: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(ROOT / "examples/python/greedy_bot.py"),
                             "--connect", arena, "--name", name, "--token", token],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_a_lobby_full_of_experts_costs_the_arenas_bots_no_time(tmp_path: Path) -> None:
    tokens = {}
    for name in ("alpha", "beta"):
        done = cli("register", name, "--db", tmp_path / "arena.sqlite", "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        tokens[name] = json.loads(done.stdout)["token"]
    serve, base, arena = start_serve(tmp_path, "--move-time", str(MOVE_TIME))
    bots = [_tcp_bot(arena, name, token) for name, token in tokens.items()]
    visitor = Visitor(base, EXPERT_TABLE, tables=3)
    try:
        visitor.start()
        # In play once the visitor has moved (nine experts started: seconds on a busy
        # host); then the lobby stays full for LOBBY_FULL_S.
        deadline = time.monotonic() + 120
        while visitor.moves == 0 and not visitor.errors and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(LOBBY_FULL_S)
        expert_processes = _processes_running("referee.seats.builtinbot")
    finally:
        visitor.stop()
        stop_serve(serve)
        for bot in bots:
            bot.kill()
            bot.wait()
    assert not visitor.errors, visitor.errors
    assert visitor.moves > 0  # the tables were in play
    games = [r for r in _records(tmp_path / "logs", "arena") if r["type"] == "game"]
    assert len(games) >= 4, f"only {len(games)} arena games in {LOBBY_FULL_S:g} s"
    forfeits = [g["forfeit"] for g in games if g["forfeit"]]
    assert forfeits == [], forfeits
    worst_ms = max(d[3] for g in games for d in g["decisions"])
    assert worst_ms < 1000 * MOVE_TIME  # (no forfeit: every answer was charged within it)
    # The experts were processes of their own (3 tables x 3), not searches on the loop.
    assert expert_processes >= 3, expert_processes
    headers = [r for r in _records(tmp_path / "logs", "table") if r["type"] == "header"]
    assert headers and all(
        "referee.seats.builtinbot" in bot["argv"] for h in headers for bot in h["bots"]
        if bot["spec"] == "builtin:expert")


def _processes_running(word: str) -> int:
    """How many processes now have ``word`` in their command line."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if word.encode() in f.read():
                    count += 1
        except OSError:
            continue
    return count
