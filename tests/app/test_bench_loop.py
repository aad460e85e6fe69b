"""``bench loop`` as a user runs it: a real serve's event-loop lateness, idle and with one
visitor's lobby table of experts, side by side, as text and as --json. (The figures are
measured, never asserted: only their presence and shape.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import cli

pytestmark = pytest.mark.process

FIGURES = {"window_s", "interval_ms", "samples", "p50_ms", "p99_ms", "max_ms"}


def test_bench_loop_reports_the_probe_idle_and_with_the_lobby_full(tmp_path: Path) -> None:
    run = cli("bench", "loop", "--seconds", "3", "--tables", "1", "--json", cwd=tmp_path,
              timeout=180)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["command"] == "bench loop"
    for stretch in ("idle", "lobby_full"):
        assert set(result[stretch]) == FIGURES
        assert result[stretch]["samples"] > 0 and result[stretch]["p99_ms"] is not None
    assert result["tables"] == 1 and result["table_seats"].count("builtin:expert") == 3
    assert result["visitor_errors"] == []


def test_bench_loop_refuses_bounds_as_the_users_error(tmp_path: Path) -> None:
    for args, what in ((["--seconds", "1"], "--seconds"), (["--seconds", "31"], "--seconds"),
                       (["--tables", "4"], "--tables")):
        run = cli("bench", "loop", *args, cwd=tmp_path)
        assert run.returncode == 2 and what in run.stderr, run.stderr
