"""``durak-ref stats``: per-game facts and the quoted table, from logs or a stored run."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from referee.league.stats import REFERENCE, SeatFact, compare_reference, export_text, summarize, wilson
from tests.support import cli


@pytest.fixture(scope="module")
def two_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A 2-player and a 3-player match log of gentle bots under the reference rules."""
    d = tmp_path_factory.mktemp("stats")
    for bots in (["builtin:gentle", "builtin:greedy"], ["builtin:gentle"] * 3):
        r = cli("match", *bots, "--games", "30", "--set", "first_bout_limit=on", "--seed", "st",
                "--log-dir", d, cwd=d)
        assert r.returncode == 0, r.stderr
    return sorted(d.glob("match-*.jsonl"))


def stats_json(*args: str | Path, cwd: Path) -> dict:
    r = cli("stats", *args, "--json", cwd=cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.process
def test_the_table_per_player_count_adds_up(two_logs: list[Path], tmp_path: Path) -> None:
    data = stats_json(*two_logs, cwd=tmp_path)
    assert data["games"] == 60 and data["forfeited"] == 0
    assert [b["players"] for b in data["by_players"]] == [2, 3]
    for block in data["by_players"]:
        n, games = block["players"], block["games"]
        assert games == 30
        # every seat of every game has 0..6 opening trumps; one opener per game
        assert sum(row["n"] for row in block["durak_by_trumps"]) == n * games
        assert sum(row["n"] for row in block["opener_durak_by_trumps"]) == games
        assert [row["n"] for row in block["durak_by_position"]] == [games] * n
        durak_games = sum(row["hits"] for row in block["durak_by_trumps"])
        assert durak_games + block["draw_rate"]["hits"] == games
        b = block["bouts"]
        assert b["low"] < b["mean"] < b["high"]
        for rate in [block["draw_rate"], block["opener_durak"], *block["durak_by_trumps"]]:
            if rate["n"]:
                assert 0 <= rate["low"] <= rate["rate"] <= rate["high"] <= 1


@pytest.mark.process
def test_export_has_one_row_per_seat_of_each_game(two_logs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "facts.csv"
    data = stats_json(*two_logs, "--export", out, cwd=tmp_path)
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert len(rows) == 30 * 2 + 30 * 3
    assert data["export"] == str(out)
    game0 = [r for r in rows if r["game"] == "0" and r["players"] == "2"]
    assert sorted(r["result"] for r in game0) in (["durak", "safe"], ["draw", "draw"])
    assert sum(r["opener"] == "true" for r in game0) == 1
    assert {r["opener_seat"] for r in game0} == {str(s) for s, r in enumerate(game0) if r["opener"] == "true"}
    jl = cli("stats", *two_logs, "--export", "-", "--format", "jsonl", cwd=tmp_path)
    lines = [json.loads(x) for x in jl.stdout.splitlines()]
    assert len(lines) == len(rows) and lines[0]["opening_trumps"] == int(rows[0]["opening_trumps"])


@pytest.mark.process
def test_the_opener_holds_the_lowest_trump(two_logs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "facts.jsonl"
    stats_json(two_logs[0], "--export", out, cwd=tmp_path)
    facts = [json.loads(x) for x in out.read_text().splitlines()]
    for f in facts:
        if f["opener"]:
            others = [g for g in facts if g["game"] == f["game"] and not g["opener"]]
            # the lowest-trump opener holds a trump whenever anybody does
            assert f["opening_trumps"] > 0 or all(g["opening_trumps"] == 0 for g in others)


@pytest.mark.process
def test_stats_of_a_stored_tournament(tmp_path: Path) -> None:
    db = tmp_path / "st.sqlite"
    r = cli("tournament", "--bot", "a=builtin:gentle", "--bot", "b=builtin:random", "--games", "6",
            "--seed", "t", "--db", db, "--log-dir", tmp_path, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tid = json.loads(r.stdout)["tournament"]
    data = stats_json("--tournament", tid, "--db", db, cwd=tmp_path)
    assert data["games"] + data["forfeited"] == 6


def test_a_hostile_bot_name_stays_text_in_a_spreadsheet() -> None:
    """A bot names itself in its hello; a name like a formula must not run in the
    spreadsheet that opens the CSV."""
    fact = SeatFact(source="x.jsonl", game=0, players=2, seat=0, bot='=HYPERLINK("http://x")',
                    dealer=1, position=1, trump="6S", opening_trumps=1, opener=True,
                    opener_seat=0, bouts=3, termination="normal", result="safe")
    row = next(csv.DictReader(export_text([fact], "csv").splitlines()))
    assert row["bot"] == "'=HYPERLINK(\"http://x\")"
    assert json.loads(export_text([fact], "jsonl"))["bot"] == '=HYPERLINK("http://x")'


@pytest.mark.process
@pytest.mark.parametrize(("args", "words"), [
    ((), "give LOG files or --tournament ID"),
    (("nosuch.jsonl",), "nosuch.jsonl: cannot open"),
    (("--tournament", "t1", "--db", "nostore.sqlite"), "no store at nostore.sqlite"),
])
def test_unusable_input_is_a_clear_exit_2(args: tuple[str, ...], words: str, tmp_path: Path) -> None:
    r = cli("stats", *args, cwd=tmp_path)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr


@pytest.mark.process
def test_a_damaged_log_is_named_with_its_line(two_logs: list[Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = two_logs[0].read_text().splitlines(keepends=True)
    bad.write_text("".join(lines[:3]) + '{"type": "game", "game": 2\n')
    r = cli("stats", bad, cwd=tmp_path)
    assert r.returncode == 2 and f"{bad}:4" in r.stderr
    r = cli("stats", two_logs[0], "--export", tmp_path / "facts.xlsx", cwd=tmp_path)
    assert r.returncode == 2 and "name it .csv or .jsonl" in r.stderr
    r = cli("stats", two_logs[0], "--export", tmp_path / "no" / "facts.csv", cwd=tmp_path)
    assert r.returncode == 2 and "cannot write" in r.stderr and "Traceback" not in r.stderr


def test_wilson_interval_matches_the_textbook() -> None:
    # 45 of 100: Wilson 95% interval 35.6% .. 54.8%
    r = wilson(45, 100)
    assert round(r["low"], 3) == 0.356 and round(r["high"], 3) == 0.548
    assert wilson(0, 0)["rate"] is None
    assert summarize([]) == []


def facts_of(players: int, games: list[tuple[list[int], int | None, int]]) -> list[SeatFact]:
    """Facts of hand-made games: per game the opening trumps by seat (seat 0 opens), the
    durak seat (None: a draw) and the bouts."""
    out = []
    for i, (trumps, durak, bouts) in enumerate(games):
        for seat, k in enumerate(trumps):
            result = "draw" if durak is None else "durak" if durak == seat else "safe"
            out.append(SeatFact(source="x", game=i, players=players, seat=seat, bot="b", dealer=0,
                                position=1, trump="6S", opening_trumps=k, opener=seat == 0,
                                opener_seat=0, bouts=bouts, termination="normal", result=result))
    return out


def test_the_reference_side_by_side_differences_tolerances_and_directions() -> None:
    # 2 players: four games; seat 0 (3 trumps) loses one, seat 1 (0 trumps) two, one draw
    two = facts_of(2, [([3, 0], 1, 30), ([3, 0], 1, 30), ([3, 0], 0, 40), ([3, 0], None, 40)])
    # 4 players: two games of 50 bouts, no draws
    four = facts_of(4, [([3, 0, 1, 2], 1, 50), ([3, 0, 1, 2], 2, 50)])
    comparison = compare_reference(summarize(two + four))
    rows = {(r["statistic"], r["players"]): r for r in comparison["rows"]}
    assert [(r["statistic"], r["players"]) for r in comparison["rows"]] == [
        (s, p) for s, p, _ in REFERENCE]
    bouts2 = rows["bouts", 2]
    assert bouts2["ours"]["value"] == 35 and bouts2["difference"] == 5 and bouts2["within"] is True
    assert rows["bouts", 4]["ours"]["value"] == 50 and rows["bouts", 4]["within"] is True  # +19%
    assert rows["bouts", 3]["ours"] == {"value": None, "low": None, "high": None, "n": 0}
    assert rows["bouts", 3]["within"] is None and rows["bouts", 3]["difference"] is None
    t0 = rows["trumps:0", 2]
    assert t0["ours"]["value"] == 0.5 and t0["ours"]["n"] == 4 and t0["within"] is True
    assert rows["trumps:3", 2]["ours"]["value"] == 0.25 and rows["trumps:3", 2]["within"] is False
    assert rows["opener_durak", 2]["ours"]["value"] == 0.25
    draws2 = rows["draw_rate", 2]
    assert draws2["ours"]["value"] == 0.25 and draws2["tolerance"] == "1 point"
    assert draws2["within"] is False and rows["draw_rate", 4]["within"] is True  # 0% vs 1%
    effects = {e["effect"]: e for e in comparison["effects"]}
    assert effects["2 players: 3 opening trumps lose less often than 0"]["holds"] is True
    assert effects["2 players: 3 opening trumps lose less often than 0"]["ours"] == "25.0% vs 50.0%"
    assert effects["3 players: 3 opening trumps lose less often than 0"]["holds"] is None
    assert effects["4 players: 3 opening trumps lose less often than 0"]["holds"] is True  # 0% vs 50%
    assert effects["2 players: the opener loses under half the time"]["holds"] is True
    assert effects["draws: rarer with 4 players than with 2"]["holds"] is True
    assert effects["bouts: more with 3 players than with 2"]["holds"] is None
    assert effects["bouts: more with 4 players than with 3"]["holds"] is None


@pytest.mark.process
def test_stats_prints_and_reports_the_reference_beside_ours(two_logs: list[Path], tmp_path: Path) -> None:
    data = stats_json(*two_logs, cwd=tmp_path)
    assert data["rules"] == ["classic first_bout_limit=on"]
    assert data["reference"] == compare_reference(data["by_players"])
    r = cli("stats", *two_logs, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Beside the published reference" in r.stdout and "warning" not in r.stdout
    assert "bouts: more with 4 players than with 3" in r.stdout


@pytest.mark.process
def test_stats_warns_when_the_logs_rules_are_not_the_references(tmp_path: Path) -> None:
    r = cli("match", "builtin:gentle", "builtin:gentle", "--games", "4", "--seed", "w",
            "--log-dir", tmp_path, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = cli("stats", *tmp_path.glob("match-*.jsonl"), cwd=tmp_path)
    assert r.returncode == 0 and "warning: the reference's rules are classic first_bout_limit=on; " \
        "these logs were played under classic, so the comparison is not like for like" in r.stdout
