"""``durak-ref bench tournament --json`` reports the speed-up of concurrency 2 over 1 for
built-in bots and for program bots, measured in one run. Speed is never
asserted here: only that the figures are there, well-formed and from whole tournaments."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from support import cli

pytestmark = pytest.mark.process


def test_bench_tournament_reports_builtin_and_program_speedups(tmp_path: Path) -> None:
    run = cli("bench", "tournament", "--games", "2", "--builtin-games", "2", "--rounds", "2",
              "--json", cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout)
    for kind in ("builtin", "program"):
        assert math.isfinite(r[f"{kind}_speedup"]) and r[f"{kind}_speedup"] > 0
        runs = r[kind]["runs"]
        assert set(runs) == {"1", "2"}
        for level in runs.values():
            assert level["games"] == 6  # 3 pairings x 2 games, every game played
            assert len(level["games_per_s"]) == 2
            assert level["games_per_s_median"] > 0
            assert level["parent_cpu_ms_per_game"] > 0 and level["children_cpu_ms_per_game"] >= 0
        # At concurrency 2 workers play: the children's CPU is theirs.
        assert runs["2"]["children_cpu_ms_per_game"] > 0
        assert r[f"{kind}_speedup"] == r[kind]["speedup"]["2"]
    assert r["pinned_cpus"] is None and r["rounds"] == 2
    text = cli("bench", "tournament", "--games", "2", "--builtin-games", "2", "--rounds", "1",
               cwd=tmp_path, timeout=300)
    assert text.returncode == 0, text.stderr
    assert "builtin concurrency 2" in text.stdout and "program concurrency 2" in text.stdout


def test_bench_tournament_refuses_a_bad_count(tmp_path: Path) -> None:
    run = cli("bench", "tournament", "--rounds", "0", cwd=tmp_path)
    assert run.returncode == 2
    assert "--rounds" in run.stderr
