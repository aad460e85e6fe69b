"""A forfeit's evidence is what the failing process said, not what the processes before
it said: each restart starts an empty stderr tail."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from support import cli

pytestmark = pytest.mark.process

DYING_BOT = Path(__file__).resolve().parent / "bots" / "dying_bot.py"


def test_each_games_evidence_holds_only_its_own_process_stderr(tmp_path: Path) -> None:
    proc = cli("match", f"{sys.executable} {DYING_BOT}", "builtin:greedy", "--games", "4", "--log-dir",
               tmp_path / "logs", "--sandbox", "none", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (log,) = (tmp_path / "logs").glob("match-*.jsonl")
    games = [r for r in map(json.loads, log.read_text().splitlines()) if r["type"] == "game"]
    tails = [g["forfeit"]["evidence"]["stderr_tail"] for g in games]
    assert [len(t) for t in tails] == [1, 1, 1, 1], tails
    assert len({t[0] for t in tails}) == 4  # four processes, each its own line
    assert all(t[0].startswith("dying now (pid ") for t in tails)
    # The bot's stderr log holds every process's line once, with the restarts marked.
    (stderr_log,) = (tmp_path / "logs").glob("match-*dying*")
    assert stderr_log.read_text().count("dying now") == 4
