"""``durak-ref bench env`` as a user runs it (figures are measured, never asserted: only
their presence and consistency)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import cli

pytestmark = pytest.mark.process


def test_bench_env_reports_each_loop_on_the_same_deals(tmp_path: Path) -> None:
    run = cli("bench", "env", "--games", "3", "--rounds", "2", "--players", "3", "--rules",
              "perevodnoy", "--cpu", "-1", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert (result["players"], result["preset"], result["rounds"]) == (3, "perevodnoy", 2)
    for kind in ("raw_env", "env", "engine"):
        assert len(result[kind]["steps_per_s"]) == 2 and result[kind]["steps_per_s_median"] > 0
    assert result["raw_env_share_of_engine"] > 0 and result["pinned"] is None
    assert result["machine"]["compiled"] is not None


def test_bench_env_prints_a_line_per_loop_and_refuses_unknown_rules(tmp_path: Path) -> None:
    run = cli("bench", "env", "--games", "2", "--rounds", "1", "--cpu", "-1", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert [line.split(":")[0].strip() for line in run.stdout.splitlines()[:3]] == ["raw_env", "env", "engine"]
    worse = cli("bench", "env", "--rules", "nosuch", cwd=tmp_path)
    assert worse.returncode == 2 and "unknown rules preset 'nosuch'" in worse.stderr
