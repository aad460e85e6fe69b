"""``durak-ref sprt`` and ``durak-ref ratings``, run as the user runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.league.standings import standings
from referee.records.store import Store

pytestmark = pytest.mark.process

DURAK_REF = Path(sys.executable).parent / "durak-ref"
STATUS_KEYS = {"elo0", "elo1", "alpha", "beta", "lower", "upper", "model", "counts", "n", "llr",
               "state", "decided_after", "elo", "elo_error95", "los", "pairs", "games", "forfeits",
               "seed", "reproduce", "sandbox", "duplicates", "standings", "warnings", "a", "b", "opponents",
               "tournament", "log", "resumed_pairs", "command", "version"}


def cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return subprocess.run([str(DURAK_REF), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=60)


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines()
             # The run's banner, the duplicate deals' warning and the line saying how bots
             # are confined may precede.
             if line.strip() and not line.startswith(("sprt ", "durak-ref: bots confined:",
                                                      "durak-ref: warning: duplicate deals"))]
    assert len(lines) == 1 and lines[0].startswith("durak-ref: error:"), lines
    return lines[0]


# -- sprt -------------------------------------------------------------------------------


def test_sprt_random_vs_greedy_accepts_h1(tmp_path: Path) -> None:
    proc = cli("sprt", "builtin:random", "builtin:greedy", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    st = json.loads(proc.stdout)
    assert set(st) == STATUS_KEYS
    assert st["state"] == "accept_h1" and st["model"] == "pentanomial"
    assert st["llr"] >= st["upper"] > 0 > st["lower"]
    assert len(st["counts"]) == 5 and sum(st["counts"]) == st["n"] == st["pairs"] == st["decided_after"]
    assert st["games"] == 2 * st["pairs"] and st["pairs"] < 1000  # quickly
    assert st["elo"] > 0 and st["los"] > 0.99 and st["forfeits"] == {}


def test_sprt_text_verdict(tmp_path: Path) -> None:
    proc = cli("sprt", "builtin:random", "builtin:greedy", "--concurrency", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"H1 accepted: B-greedy is stronger than A-random after \d+ pairs", proc.stdout)
    assert "pentanomial counts" in proc.stdout


def test_sprt_equal_bots_do_not_accept_h1(tmp_path: Path) -> None:
    proc = cli("sprt", "builtin:greedy", "builtin:greedy", "--max-pairs", "200", "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    st = json.loads(proc.stdout)
    assert st["state"] in ("accept_h0", "continue") and st["pairs"] <= 200
    assert st["games"] == 2 * st["pairs"]


def test_sprt_with_opponents(tmp_path: Path) -> None:
    proc = cli("sprt", "builtin:random", "builtin:greedy", "--opponent", "builtin:random",
               "--opponent", "builtin:greedy", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    st = json.loads(proc.stdout)
    assert set(st) == STATUS_KEYS and st["state"] == "accept_h1"
    assert sum(st["counts"]) == st["pairs"] and st["games"] == 2 * st["pairs"]


def test_sprt_errors_exit_2(tmp_path: Path) -> None:
    line = one_error(cli("sprt", "builtin:random", str(tmp_path / "no-such-bot"), cwd=tmp_path))
    assert "no-such-bot" in line
    line = one_error(cli("sprt", "builtin:random", "builtin:nobody", cwd=tmp_path))
    assert "nobody" in line


# -- ratings ----------------------------------------------------------------------------

GAMES = [
    {"players": ["ann", "bob"], "durak": "bob"},
    {"players": ["ann", "bob"], "durak": None, "last_two": ["ann", "bob"]},
    {"players": ["bob", "cid"], "durak": "cid"},
    {"players": ["ann", "bob", "cid"], "durak": "cid"},
    {"players": ["ann", "cid", "bob"], "durak": None, "last_two": ["cid", "bob"]},
    {"players": ["cid", "ann"], "durak": "ann"},
]


def test_ratings_from_jsonl_with_draws(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text("\n".join(json.dumps(g) for g in GAMES[:3]) + "\n\n"
                    + "\n".join(json.dumps(g) for g in GAMES[3:]) + "\n")
    proc = cli("ratings", "--from", path, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {"command", "version", "games", "standings", "los"} and data["games"] == 6
    table = data["standings"]
    assert {b["name"]: b["games"] for b in table} == {"ann": 5, "bob": 5, "cid": 4}
    ratings = [b["elo"] for b in table]
    assert ratings == sorted(ratings, reverse=True) and abs(sum(ratings)) < 0.1
    assert [b["rank"] for b in table] == [1, 2, 3]
    assert all(b["elo_error95"] > 0 for b in table) and table[-1]["los_next"] is None
    text = cli("ratings", "--from", path, cwd=tmp_path)
    assert text.returncode == 0 and "rating ± 95%" in text.stdout and "LOS next" in text.stdout


@pytest.mark.parametrize(("bad", "what"), [
    ("{not json", "not valid JSON"),
    ('["ann", "bob"]', "players"),
    ('{"players": ["ann", "bob"], "durak": "zed"}', "zed"),
    ('{"players": ["ann", "bob"], "durak": null}', "last two"),
    ('{"players": ["ann", "bob"], "durak": null, "last_two": 5}', "last_two"),
])
def test_ratings_bad_line_names_the_line(tmp_path: Path, bad: str, what: str) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(GAMES[0]) + "\n\n" + bad + "\n" + json.dumps(GAMES[1]) + "\n")
    line = one_error(cli("ratings", "--from", path, cwd=tmp_path))
    assert "games.jsonl:3:" in line and what in line


def test_ratings_of_a_tournament(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite"
    proc = cli("tournament", "--bot", "r=builtin:random", "--bot", "g=builtin:greedy", "--bot",
               "q=builtin:random", "--games", "4", "--db", db, "--log-dir", tmp_path / "logs",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    tid = re.search(r"--resume (\S+)", proc.stderr).group(1)  # type: ignore[union-attr]
    proc = cli("ratings", "--tournament", tid, "--db", db, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["games"] == 12
    with Store(db) as store:
        table = {b["bot"]: b for b in standings(store, tid)["table"]}
    for b in data["standings"]:
        assert b["games"] == table[b["name"]]["games"] == 8
        assert b["elo"] == pytest.approx(table[b["name"]]["rating"], abs=0.06)
    line = one_error(cli("ratings", "--tournament", "t-none", "--db", db, cwd=tmp_path))
    assert "t-none" in line and tid in line
