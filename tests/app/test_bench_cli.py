"""The speed benchmarks as a user runs them: the pairs of bots ``bench match --bots``
names, checked and unchecked apply side by side, and clear errors for bad choices.
(Figures are measured, never asserted: only their presence and consistency.)"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from support import cli

pytestmark = pytest.mark.process

REPO = Path(__file__).resolve().parents[2]


def test_bench_match_builtin_reports_games_and_the_referee_cost(tmp_path: Path) -> None:
    run = cli("bench", "match", "--bots", "builtin", "--games", "3", "--cpu", "-1", "--json",
              cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["bots"] == ["builtin:greedy", "builtin:random"]
    assert result["games"] == 3 and result["bot_processes_started"] == 0
    assert result["referee_cpu_us_per_decision_measured"] is not None
    assert result["bots_cpu_us_per_decision"] is not None


def test_bench_match_refuses_an_unknown_pair_and_a_mix_of_bots_and_bot(tmp_path: Path) -> None:
    unknown = cli("bench", "match", "--bots", "cobol", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "--bots 'cobol': expected one of python, c, builtin" in unknown.stderr
    both = cli("bench", "match", "--bots", "builtin", "--bot", "a", "--bot", "b", cwd=tmp_path)
    assert both.returncode == 2 and "not both" in both.stderr


def test_bench_protocol_names_a_missing_bot_program(tmp_path: Path) -> None:
    run = cli("bench", "protocol", "--bot", str(tmp_path / "no-such-bot"), cwd=tmp_path)
    assert run.returncode == 2
    assert "cannot find the program" in run.stderr and "Traceback" not in run.stderr


def test_bench_engine_puts_checked_and_unchecked_apply_side_by_side(tmp_path: Path) -> None:
    run = cli("bench", "engine", "--games", "5", "--rounds", "1", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    for label in ("checked", "unchecked"):
        assert result[label]["games_per_s"] > 0
    assert result["ratio_checked_vs_unchecked"] > 0
    assert result["games_per_s"] == result["unchecked"]["games_per_s"]


def test_bench_protocol_names_the_programs_behind_each_figure(tmp_path: Path) -> None:
    """The floor is a Python echo child whatever --bot is; the other two figures use the
    bot. A reader must see which, and how far the bot itself is from the floor."""
    bot = f"{sys.executable} {REPO / 'examples' / 'python' / 'random_bot.py'} 1"
    run = cli("bench", "protocol", "--bot", bot, "--codec-n", "100", "--round-trips", "10",
              "--cpu", "-1", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    programs = result["programs"]
    assert "echo" in programs["floor"]["child"]
    assert programs["blocking_sdk"]["child"] == programs["referee"]["child"] == shlex.split(bot)
    assert result["bot"] == shlex.split(bot)
    rt = result["round_trip_us_median"]
    # (from the unrounded medians: within rounding of the rounded ones)
    assert abs(result["bot_us_over_floor"] - (rt["blocking_sdk"] - rt["floor"])) <= 0.11
    text = cli("bench", "protocol", "--bot", bot, "--codec-n", "100", "--round-trips", "10",
               "--cpu", "-1", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert f"bot: {shlex.join(shlex.split(bot))}" in text.stdout
    assert "Python echo child" in text.stdout


def test_bench_match_counts_every_bot_process_it_started(tmp_path: Path) -> None:
    """Two program bots, no restart, no cold starts: two processes (counted where
    seats.process starts them, not by patching it)."""
    run = cli("bench", "match", "--bots", "python", "--games", "2", "--starts", "0", "--sandbox", "none",
              "--cpu", "-1", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["games"] == 2 and result["bot_processes_started"] == 2
