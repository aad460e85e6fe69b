"""Strict JSON everywhere: every ``--json`` output, match log line and
store cell parses with a parser that refuses NaN and Infinity, as JSON.parse, jq, Go and
Rust do. Non-finite figures (an SPRT Elo of -inf after a bot lost every pair) are null."""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from pathlib import Path

import pytest

from referee.console.jsonout import dumps, finite, strict_loads
from tests.support import cli

BROKEN = f"{sys.executable} {Path(__file__).parent / 'bots' / 'broken_bot.py'} exit1"


def test_non_finite_floats_become_null_at_any_depth() -> None:
    data = {"elo": -math.inf, "rows": [{"x": math.nan, "y": (1.5, math.inf)}], "ok": 2.0, "s": "inf"}
    assert finite(data) == {"elo": None, "rows": [{"x": None, "y": [1.5, None]}], "ok": 2.0, "s": "inf"}
    text = dumps(data)
    assert "Infinity" not in text and "NaN" not in text
    assert strict_loads(text)["elo"] is None


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_the_strict_parser_refuses_what_python_json_would_accept(constant: str) -> None:
    assert json.loads(f'{{"x": {constant}}}')  # Python's own parser takes it...
    with pytest.raises(ValueError):
        strict_loads(f'{{"x": {constant}}}')  # ...no other parser does


def _json(tmp_path: Path, *args: str | Path, ok: tuple[int, ...] = (0,)) -> object:
    r = cli(*args, "--json", cwd=tmp_path, timeout=300)
    assert r.returncode in ok, (args, r.stderr)
    return strict_loads(r.stdout)


@pytest.mark.process
def test_every_commands_json_logs_and_store_are_strict(tmp_path: Path) -> None:
    logs, db = tmp_path / "logs", tmp_path / "t.sqlite"
    # A bot that forfeits everything makes the figures extreme (durak 100%, Elo -inf).
    match = _json(tmp_path, "match", "builtin:greedy", f"x={BROKEN}", "-n", "2", "--recover",
                  "--log-dir", logs)
    assert isinstance(match, dict)
    log = match["log"]
    _json(tmp_path, "replay", log)
    _json(tmp_path, "replay", log, "--verify")
    t = _json(tmp_path, "tournament", "--bot", "a=builtin:greedy", "--bot", f"b={BROKEN}",
              "--bot", "c=builtin:random", "--games", "2", "--recover", "--db", db, "--log-dir", logs)
    assert isinstance(t, dict)
    _json(tmp_path, "ratings", "--tournament", t["tournament"], "--db", db)
    _json(tmp_path, "verify", "--db", db, ok=(0, 1))
    sprt = _json(tmp_path, "sprt", "builtin:greedy", f"x={BROKEN}", "--recover", "--max-pairs", "300",
                 ok=(1,))
    assert isinstance(sprt, dict) and sprt["elo"] is None  # was -Infinity
    assert sprt["a"]["name"] and sprt["b"]["name"]
    sprt_opp = _json(tmp_path, "sprt", "builtin:greedy", "builtin:random", "--opponent", "builtin:greedy",
                     "--max-pairs", "3", ok=(0, 1))
    assert isinstance(sprt_opp, dict) and [o["name"] for o in sprt_opp["opponents"]] == ["greedy"]
    ldb = tmp_path / "l.sqlite"
    assert cli("ladder", "add", "--db", ldb, "g", "builtin:greedy", cwd=tmp_path).returncode == 0
    assert cli("ladder", "add", "--db", ldb, "x", BROKEN, cwd=tmp_path).returncode == 0
    _json(tmp_path, "ladder", "run", "--db", ldb, "--games", "2", "--recover", "--log-dir", logs)
    _json(tmp_path, "ladder", "show", "--db", ldb)
    _json(tmp_path, "rules")
    _json(tmp_path, "version")
    _json(tmp_path, "bench", "engine", "--games", "5", "--rounds", "1")

    lines = 0
    for path in logs.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            strict_loads(line)
            lines += 1
    assert lines > 5
    for store in (db, ldb):
        with sqlite3.connect(store) as con:
            for (text,) in con.execute("select settings from tournaments"):
                strict_loads(text)
            for (text,) in con.execute("select rules from games"):
                strict_loads(text)
