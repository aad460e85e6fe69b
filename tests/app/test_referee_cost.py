"""The referee reports its own cost per decision: measured CPU and wall not charged to
any bot, in the match summary, --json, the tournament summary and its JSON.

Real processes (the CLI, a Python example bot, worker processes): the figures are
measured, so the tests check that they are there and positive, never how large."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from support import LONG_TIMEOUT_S, cli

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'examples/python/random_bot.py'} 3"
KEYS = ("referee_cpu_us_per_decision", "referee_wall_us_per_decision")


def test_a_match_reports_referee_cpu_and_wall_per_decision(tmp_path: Path) -> None:
    run = cli("match", f"py={BOT}", "builtin:greedy", "--games", "3", "--no-log", "--json",
              "--sandbox", "none", cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["decisions"] > 0
    for key in KEYS:
        assert summary[key] > 0, key
    text = cli("match", f"py={BOT}", "builtin:greedy", "--games", "2", "--no-log",
               "--sandbox", "none", cwd=tmp_path, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "referee per decision:" in text.stdout and "µs CPU" in text.stdout


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_a_concurrent_tournament_reports_referee_cost_with_its_workers(tmp_path: Path) -> None:
    args = ["tournament", "--bot", f"py={BOT}", "--bot", "g=builtin:greedy", "--bot", "r=builtin:random",
            "--games", "2", "--concurrency", "2", "--db", tmp_path / "t.sqlite",
            "--log-dir", tmp_path / "logs", "--sandbox", "none"]
    run = cli(*args, "--json", cwd=tmp_path, timeout=180)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["decisions_this_run"] > 0
    for key in KEYS:
        assert data[key] > 0, key
    text = cli(*args, cwd=tmp_path, timeout=180)
    assert text.returncode == 0, text.stderr
    assert "referee per decision:" in text.stdout and "µs CPU" in text.stdout
