"""`durak-ref report --tournament ID`: one report of a stored run, as text, strict JSON
and a self-contained page; and `match`'s Elo difference of two bots."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from referee.printing.report import elo_line
from referee.scoring.ratings import elo_from_wdl
from referee.table.match import BotStats, head_to_head
from report_kit import hand_made, played_tournament
from support import cli

HOSTILE = '<script>alert("x")</script>'


@pytest.mark.process
def test_a_two_player_tournament_report_has_standings_wld_crosstable_history_and_forfeits(tmp_path: Path) -> None:
    db, tid = played_tournament(tmp_path, "--games", "4")
    done = cli("report", "--tournament", tid, "--db", db, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["games"] == 12 and data["players_per_table"] == [2]
    ct = data["crosstable"]
    assert ct["two_player"] and ct["bots"] == [b["name"] for b in data["standings"]]
    for a in ct["bots"]:
        for b in ct["bots"]:
            if a != b:
                ab, ba = ct["cells"][a][b], ct["cells"][b][a]
                assert ab["wins"] + ab["losses"] + ab["draws"] == ab["games"] == 4
                assert (ab["wins"], ab["losses"], ab["draws"]) == (ba["losses"], ba["wins"], ba["draws"])
    series = data["history"]["series"]
    assert sorted(series) == ["g", "g2", "r"] and all(len(p) == 8 for p in series.values())
    assert [p[0] for p in series["g"]] == sorted(p[0] for p in series["g"])  # game numbers in order
    text = cli("report", "--tournament", tid, "--db", db, cwd=tmp_path)
    assert text.returncode == 0 and "crosstable: row bot's wins-losses-draws" in text.stdout
    assert "rating history (incremental Elo" in text.stdout


@pytest.mark.process
def test_bigger_tables_get_durak_shares_and_forfeits_are_counted_by_kind(tmp_path: Path) -> None:
    games = [(["a", "b", "c"], "a", None), (["b", "c", "a"], "b", "timeout"),
             (["c", "a", "b"], "a", "illegal"), (["a", "b", "c"], None, None)]
    db = hand_made(tmp_path, games)
    data = json.loads(cli("report", "--tournament", "t-hand", "--db", db, "--json", cwd=tmp_path).stdout)
    ct = data["crosstable"]
    assert not ct["two_player"]
    assert ct["cells"]["a"]["b"] == {"games": 4, "durak": 2, "opponent_durak": 1, "durak_share": 0.6667}
    assert ct["cells"]["c"]["a"]["durak_share"] == 0.0
    assert {b["name"]: b["forfeits"] for b in data["standings"]} == {
        "a": {"illegal": 1}, "b": {"timeout": 1}, "c": {}}


@pytest.mark.process
def test_names_from_the_store_are_escaped_in_the_page(tmp_path: Path) -> None:
    db = hand_made(tmp_path, [([HOSTILE, "b&b"], "b&b", None), (["b&b", HOSTILE], HOSTILE, "crash")])
    page = tmp_path / "r.html"
    done = cli("report", "--tournament", "t-hand", "--db", db, "--html", page, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert HOSTILE not in html and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert html.count("<script") == 1  # only the JSON data element, which cannot be closed early
    assert 'type="application/json"' in html and "http://" not in html and "https://" not in html


@pytest.mark.process
def test_unusable_input_is_exit_2_with_a_message_naming_it(tmp_path: Path) -> None:
    db = hand_made(tmp_path, [(["a", "b"], "a", None)])
    missing = cli("report", "--tournament", "t-hand", "--db", tmp_path / "nope.sqlite", cwd=tmp_path)
    assert missing.returncode == 2 and "no store at" in missing.stderr
    assert not (tmp_path / "nope.sqlite").exists()
    unknown = cli("report", "--tournament", "t-other", "--db", db, cwd=tmp_path)
    assert unknown.returncode == 2 and "no tournament 't-other'; recent ones: t-hand" in unknown.stderr
    unwritable = cli("report", "--tournament", "t-hand", "--db", db, "--html", tmp_path / "no" / "r.html",
                     cwd=tmp_path)
    assert unwritable.returncode == 2 and "cannot write the page" in unwritable.stderr
    assert "Traceback" not in missing.stderr + unknown.stderr + unwritable.stderr


@pytest.mark.process
def test_the_ladder_report_plots_the_ratings_the_ladder_stored(tmp_path: Path) -> None:
    db = tmp_path / "ladder.sqlite"
    for name, spec in (("g", "builtin:greedy"), ("r", "builtin:random")):
        assert cli("ladder", "add", name, spec, "--db", db, cwd=tmp_path).returncode == 0
    run = cli("ladder", "run", "--games", "6", "--db", db, "--log-dir", tmp_path / "logs", "--seed", "l",
              cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    data = json.loads(cli("report", "--tournament", "ladder", "--db", db, "--json", cwd=tmp_path).stdout)
    assert data["history"]["source"] == "the ladder's stored ratings"
    shown = json.loads(cli("ladder", "show", "--db", db, "--json", cwd=tmp_path).stdout)
    final = {row["name"]: row["elo"] for row in shown["standings"]}
    for bot, points in data["history"]["series"].items():
        assert round(final[bot], 1) == points[-1][1]


@pytest.mark.process
def test_match_of_two_bots_prints_the_elo_difference_and_los_like_cutechess(tmp_path: Path) -> None:
    text = cli("match", "builtin:greedy", "builtin:random", "-n", "20", "--seed", "elo", "--no-log",
               cwd=tmp_path)
    line = re.search(r"Elo difference \(greedy over random\): (.*?)(?:, LOS: (\S+) %)?  "
                     r"\(W/L/D (\d+)/(\d+)/(\d+)\)", text.stdout)
    assert line, text.stdout
    data = json.loads(cli("match", "builtin:greedy", "builtin:random", "-n", "20", "--seed", "elo",
                          "--no-log", "--json", cwd=tmp_path).stdout)
    elo = data["elo"]
    assert (elo["wins"], elo["losses"], elo["draws"]) == tuple(int(line.group(i)) for i in (3, 4, 5))
    assert line.group(2) is None or f"{100 * elo['los']:.1f}" == line.group(2)
    perfect = cli("match", "builtin:greedy", "builtin:random", "-n", "3", "--seed", "5", "--no-log", "--json",
                  cwd=tmp_path)

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")
    elo = json.loads(perfect.stdout, parse_constant=refuse)["elo"]
    assert elo["losses"] == 0 and elo["elo"] is None and elo["elo_error95"] is None  # +inf: null
    assert ("Elo difference (greedy over random): not finite: every game went one way; > -94 at 95%"
            in cli("match", "builtin:greedy", "builtin:random", "-n", "3", "--seed", "5", "--no-log",
                   cwd=tmp_path).stdout)
    three = json.loads(cli("match", "builtin:greedy", "builtin:random", "builtin:greedy", "-n", "2",
                           "--no-log", "--json", cwd=tmp_path).stdout)
    assert three["elo"] is None


def test_the_elo_figures_are_those_of_the_ratings_module() -> None:
    a, b = BotStats("a", durak=30), BotStats("b", durak=45)
    est = elo_from_wdl(45, 30, 25)
    h = head_to_head([a, b], 100)
    assert (h["wins"], h["losses"], h["draws"]) == (45, 30, 25)
    assert (h["elo"], h["error95"], h["los"]) == (round(est.elo, 1), round(est.error95, 1), round(est.los, 4))
    assert head_to_head([BotStats("a"), BotStats("b", durak=3)], 3)["elo"] == float("inf")


@pytest.mark.process
def test_a_run_without_games_yet_says_so(tmp_path: Path) -> None:
    from referee.records.store import open_store

    db = tmp_path / "empty.sqlite"
    with open_store(db) as store:
        store.create_tournament("t-new", "tournament", {})
    text = cli("report", "--tournament", "t-new", "--db", db, "--html", tmp_path / "r.html", cwd=tmp_path)
    assert text.returncode == 0 and "tournament t-new: no games stored yet (running)" in text.stdout
    assert "no games" in (tmp_path / "r.html").read_text()


@pytest.mark.process
def test_a_lopsided_or_one_way_match_prints_a_finite_elo_bound_never_plus_minus_inf(tmp_path: Path) -> None:
    one_way = cli("match", "builtin:greedy", "builtin:random", "-n", "8", "--seed", "1", "--no-log",
                  cwd=tmp_path).stdout
    assert "W/L/D 8/0/0" in one_way, one_way
    assert "not finite: every game went one way; > +137 at 95%" in one_way  # 0.05 ** (1/8): score bound
    assert "inf" not in one_way
    a, b = BotStats("a"), BotStats("b")
    b.durak, a.durak = 98, 2  # 98 wins, 2 losses: the normal interval passes a score of 1
    line = elo_line(head_to_head([a, b], 100))
    assert line.startswith("Elo difference (a over b): +676.1, 95% interval unbounded: > +521 at 95%"), line
    assert "inf" not in line
