"""``durak-ref bench soak``: a short run really plays honest and hostile bots and
reports sane figures. The long run is the point of the bench, not of this test, so
nothing here is timed: only that games were played, the hostile bots forfeited, no
internal error happened and no process was left behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import LONG_TIMEOUT_S, cli

pytestmark = pytest.mark.process


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_a_short_soak_plays_hostile_bots_and_leaves_nothing_behind(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    result = cli("bench", "soak", "--minutes", "0.2", "--json", "--json-file", out, cwd=tmp_path,
                 timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert json.loads(out.read_text()) == report
    assert (report["command"], report["version"]) == ("bench soak", 1)  # docs/JSON.md
    assert report["benchmark"] == "soak" and report["concurrency"] == 2
    assert report["games"] > 0 and report["games"] == sum(report["terminations"].values())
    assert {"crasher", "hanger", "garbage", "flooder", "greedy"} <= set(report["bots"])
    assert set(report["forfeits"]) <= {"timeout", "crash", "protocol", "illegal", "disconnect"}
    assert report["internal_errors"] == 0 and report["errors"] == []
    assert report["leftover_tracking"] is True and report["leftover_processes"] == []
    assert not report["interrupted"]
    for sample in (report["start"], report["warm"], report["end"], report["after"]):
        if sample is not None:  # a loaded machine may take no sample in so short a run
            assert sample["parent_rss_kib"] > 0 and sample["parent_fds"] > 0
    figures = {"parent_rss", "parent_fds", "workers_rss", "workers_fds"}
    if report["start"] is not None and report["warm"] is not None:
        assert report["start"]["at_s"] <= report["warm"]["at_s"]  # the start comes first
        assert report["warm"]["at_s"] >= report["warmup_s"]  # warm: after the warm-up
    if report["warm"] is not None and report["end"] is not None:
        assert set(report["growth_pct"]) == figures  # judged: from warm to end
    if report["start"] is not None and report["end"] is not None:
        assert set(report["growth_from_start_pct"]) == figures
    assert report["target_growth_pct"] == 5.0


def test_soak_help_explains_the_options(tmp_path: Path) -> None:
    result = cli("bench", "soak", "--help", cwd=tmp_path)
    assert result.returncode == 0
    for option in ("--minutes", "--move-time", "--games-memory", "--json-file", "--sandbox"):
        assert option in result.stdout
