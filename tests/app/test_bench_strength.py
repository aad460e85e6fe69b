"""``bench strength`` as a user runs it: the built-in ladder (here a tiny part of it, at
tiny budgets) and an author's bot on one rating scale, greedy = 0, with CPU per
decision; clear errors for bad choices. (Ratings are measured, never asserted: only
their presence, the anchor and the counts.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.bench.strength import LADDER
from support import cli

REPO = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {REPO / 'examples' / 'python' / 'greedy_bot.py'}"


@pytest.mark.process
def test_bench_strength_rates_ladder_bots_and_an_authors_bot_on_duplicate_deals(tmp_path: Path) -> None:
    run = cli("bench", "strength", "--only", "random,greedy,ismcts30", "--games", "3",
              "--bot", f"mine={BOT}", "--bot", "tiny=builtin:expert:iterations=8",
              "--seed", "strength-test", "--sandbox", "none", "--json", cwd=tmp_path, timeout=240)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["anchor"] == "greedy" and result["players"] == 2
    # 5 bots: 10 tables; 3 games round up to 2 deals of 2 rotations each.
    assert (result["tables"], result["deals_per_table"], result["games_per_table"]) == (10, 2, 4)
    assert result["games"] == 40
    assert result["command"] == "bench strength"
    bots = {b["name"]: b for b in result["standings"]}
    assert set(bots) == {"random", "greedy", "ismcts30", "mine", "tiny"}
    assert [b["rank"] for b in result["standings"]] == [1, 2, 3, 4, 5]
    assert bots["greedy"]["elo"] == 0.0 and bots["greedy"]["elo_error95"] == 0.0
    for b in bots.values():
        assert b["games"] == 16 and b["decisions"] > 0
        assert b["elo"] is not None and b["mean_decision_ms"] is not None
        assert b["cpu_ms_per_decision"] is not None  # one program bot: its processes' CPU
    assert result["specs"]["tiny"] == "builtin:expert:iterations=8"
    assert result["specs"]["mine"] == BOT
    assert result["seed"] == "strength-test" and "--seed strength-test" in result["reproduce"]


@pytest.mark.process
def test_bench_strength_prints_a_table_at_three_players(tmp_path: Path) -> None:
    run = cli("bench", "strength", "--only", "random,gentle,greedy", "--players", "3",
              "--games", "3", "--seed", "s3", cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].split()[:3] == ["bot", "rating", "±95%"]
    assert {line.split()[0] for line in lines[1:4]} == {"random", "gentle", "greedy"}
    assert "greedy = 0" in run.stdout and "1 tables of 3, 1 duplicate deals each" in run.stdout


def test_the_ladder_is_the_documented_one() -> None:
    assert [n for n, _ in LADDER] == ["random", "gentle", "greedy", "ismcts30", "ismcts150",
                                      "ismcts600", "expert"]


@pytest.mark.process
def test_bench_strength_refuses_bad_choices_as_the_users_error(tmp_path: Path) -> None:
    cases = [
        (["--only", "greedy,nobody"], "--only: nobody not in the ladder; its bots: random, gentle"),
        (["--bot", "builtin:greedy"], "name it, NAME=CMD"),
        (["--bot", "greedy=builtin:random"], "the name 'greedy' is taken"),
        (["--bot", "x=builtin:expert:depth=2"], "unknown expert parameter 'depth'"),
        (["--only", "greedy", "--players", "2"], "2 players per table need at least 2 bots; got 1"),
        (["--only", "random,greedy", "--players", "7"], "less than or equal to 6"),
    ]
    for args, message in cases:
        run = cli("bench", "strength", *args, cwd=tmp_path)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert message in run.stderr and "Traceback" not in run.stderr, (args, run.stderr)
