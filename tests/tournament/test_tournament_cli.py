"""``durak-ref tournament`` from the outside: TOML configs, unusable input
(exit 2 with one clear line, nothing half-written), and the standings table and JSON."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.league.standings import standings
from referee.league.tournament import TournamentSettings, schedule
from referee.records.store import Store
from support import cli

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
BOTS = ["--bot", "a=builtin:random", "--bot", "b=builtin:greedy"]


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The single ``durak-ref: error:`` line (the tournament banner, the duplicate deals'
    warning and the line saying how bots are confined may precede it)."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("durak-ref: error:")]
    assert len(errors) == 1, proc.stderr
    other = [line for line in proc.stderr.splitlines()
             if line.strip() and not line.startswith(("durak-ref: error:", "tournament ",
                                                      "durak-ref: warning: duplicate deals",
                                                      "durak-ref: bots confined:"))]
    assert other == [], proc.stderr
    return errors[0]


def tid_of(proc: subprocess.CompletedProcess[str]) -> str:
    m = re.search(r"--resume (\S+)", proc.stderr)
    assert m, proc.stderr
    return m.group(1)


BOTS_TOML = f"""
[[bots]]
name = "rnd"
command = "builtin:random"

[[bots]]
name = "greedy"
command = "builtin:greedy"

[[bots]]
name = "sdk"
command = "{sys.executable} random_bot.py"
cwd = "{ROOT / 'examples' / 'python'}"
env = {{ DURAK_SEED = "7" }}
"""


def test_valid_toml_config_runs(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('format = "gauntlet"\ngames = 2\nseed = 4\nconcurrency = 2\n'
                      '[rules]\npreset = "perevodnoy"\ntrump_exchange = true\n'
                      '[time_control]\nmove_time = 5.0\n' + BOTS_TOML)
    db = tmp_path / "d.sqlite"
    proc = cli("tournament", "--config", config, "--db", db, "--log-dir", tmp_path / "logs",
               "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["games"] == 4 and {b["name"] for b in data["standings"]} == {"rnd", "greedy", "sdk"}
    assert all(not b["forfeits"] for b in data["standings"]), data["standings"]
    with Store(db) as store:
        _, saved, status = store.tournament(data["tournament"])
        assert status == "finished"
        s = TournamentSettings.from_dict(saved)
        assert (s.format, s.games, s.seed, s.preset, s.move_time) == ("gauntlet", 2, "4", "perevodnoy", 5.0)
        assert s.rules == {"trump_exchange": "true"}
        assert s.bots[2].cwd and s.bots[2].env == {"DURAK_SEED": "7"}
        rows = store.games(data["tournament"])
        assert len(rows) == len(schedule(s)) == 4
        assert all("rnd" in r.players for r in rows)
        assert rows[0].rules["transfer"] != "off" and rows[0].rules["trump_exchange"] is True


@pytest.mark.parametrize(("toml", "named"), [
    ("gmaes = 4\n" + BOTS_TOML, "gmaes"),
    ("[time_control]\nmove_tme = 1.0\n" + BOTS_TOML, "move_tme"),
    ('[[bots]]\nname = "x"\ncomand = "builtin:random"\n', "comand"),
])
def test_toml_typo_names_file_and_key(tmp_path: Path, toml: str, named: str) -> None:
    config = tmp_path / "typo.toml"
    config.write_text(toml)
    db = tmp_path / "d.sqlite"
    line = one_error(cli("tournament", "--config", config, "--db", db, cwd=tmp_path))
    assert "typo.toml" in line and named in line
    with Store(db) as store:
        assert store.tournaments() == []


def test_bad_toml_and_missing_file_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('games = [1, 2\nformat = "round-robin"\n')
    line = one_error(cli("tournament", "--config", config, "--db", tmp_path / "d.sqlite", cwd=tmp_path))
    assert "bad.toml" in line and "TOML" in line
    line = one_error(cli("tournament", "--config", tmp_path / "none.toml", "--db",
                         tmp_path / "d.sqlite", cwd=tmp_path))
    assert "none.toml" in line


def test_toml_wrong_value_type_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "types.toml"
    config.write_text('players = "three"\n' + BOTS_TOML)
    line = one_error(cli("tournament", "--config", config, "--db", tmp_path / "d.sqlite", cwd=tmp_path))
    assert "types.toml" in line and "players" in line


def test_unknown_format_exits_2(tmp_path: Path) -> None:
    line = one_error(cli("tournament", *BOTS, "--format", "swiss", "--db", tmp_path / "d.sqlite",
                         cwd=tmp_path))
    assert "swiss" in line and "round-robin" in line and "gauntlet" in line


def test_missing_bot_program_exits_2_and_stores_no_games(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite"
    missing = tmp_path / "no-such-bot"
    proc = cli("tournament", "--bot", "a=builtin:random", "--bot", f"ghost={missing} --fast",
               "--db", db, "--log-dir", tmp_path / "logs", cwd=tmp_path)
    line = one_error(proc)
    assert "ghost" in line and "no-such-bot" in line and "--resume" in line
    with Store(db) as store:
        tids = [t[0] for t in store.tournaments()]
        assert tids == [tid_of(proc)]  # the tournament row may exist (resumable) ...
        assert store.games() == []      # ... but not a single game
        assert store.tournament(tids[0])[2] == "running"


def test_standings_table_and_json(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite"
    three = [*BOTS, "--bot", "c=builtin:random"]
    proc = cli("tournament", *three, "--games", "6", "--db", db, "--log-dir", tmp_path / "logs",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if "rank" in line)
    cols = [c.strip() for c in re.split(r"[┃│|]", header) if c.strip()]
    assert cols[:2] == ["rank", "bot"]
    assert cols.index("rating ± 95%") + 1 == cols.index("LOS next")
    rows = [line for line in lines if re.match(r"^\s*[│|]\s*\d+\s*[│|]", line)]
    assert len(rows) == 3
    for i, row in enumerate(rows, 1):
        cells = [c.strip() for c in re.split(r"[│|]", row) if c.strip()]
        assert cells[0] == str(i)
        assert re.fullmatch(r"[+-]\d+\.\d ± \d+\.\d", cells[cols.index("rating ± 95%")]), cells
        los = cells[cols.index("LOS next")]
        assert (los == "-") if i == 3 else re.fullmatch(r"\d+\.\d%", los), cells

    tid = tid_of(proc)
    with Store(db) as store:
        expected = standings(store, tid)
    # --resume of a finished tournament plays nothing and prints the same standings.
    proc = cli("tournament", "--resume", tid, "--db", db, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    # The standings, the seed (resumed: no command to reproduce), how the bots ran (the
    # sandbox and whether duplicates were sound), this run's stderr logs and the referee's
    # cost of this run's games: none were played, so no figure.
    run_keys = ("decisions_this_run", "referee_cpu_us_per_decision", "referee_wall_us_per_decision")
    assert [data[k] for k in run_keys] == [0, None, None]
    assert {k: v for k, v in data.items()
            if k not in ("command", "version", "standings", "sandbox", "duplicates", *run_keys)} == dict(
        {k: v for k, v in expected.items() if k != "table"}, seed=data["seed"], reproduce=None)
    # The stored rows under docs/JSON.md's names, and where this run's stderr went (nowhere).
    renamed = {"bot": "name", "rating": "elo", "error95": "elo_error95"}
    assert [{k: v for k, v in b.items() if k != "stderr_logs"} for b in data["standings"]] == [
        {renamed.get(k, k): v for k, v in b.items()} for b in expected["table"]]
    assert all(b["stderr_logs"] == [] for b in data["standings"])
    assert set(data) == {"command", "version", "tournament", "games", "standings", "rating_error", "los",
                         "seed", "reproduce", "sandbox", "duplicates", "warnings", *run_keys}
    assert data["tournament"] == tid and data["games"] == 18 and data["rating_error"] is None
    table = data["standings"]
    assert [b["rank"] for b in table] == [1, 2, 3]
    for b in table:
        assert {"name", "rank", "games", "durak", "draws", "durak_rate", "elo", "elo_error95",
                "los_next", "forfeits", "decisions", "mean_decision_ms"} <= set(b)
        assert b["games"] == 12 and b["elo_error95"] > 0
    ratings = [b["elo"] for b in table]
    assert ratings == sorted(ratings, reverse=True)
    assert abs(sum(ratings)) < 0.5
    assert [b["los_next"] for b in table[:-1]] == [
        data["los"][x["name"]][y["name"]] for x, y in itertools.pairwise(table)]
    assert table[-1]["los_next"] is None
    for x in data["los"]:
        for y, p in data["los"][x].items():
            assert 0 <= p <= 1 and abs(p + data["los"][y][x] - 1) < 1e-3
