"""A damaged result store is the user's input, never our bug: ``ratings``, ``tournament
--resume`` and ``verify`` end with exit 2 and a message naming the store and the table
and row at fault (or SQLite's integrity check), never with an internal error (exit 3)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from support import cli

pytestmark = pytest.mark.process

CASES: list[tuple[str, str, str]] = [
    # (name, SQL that damages the store, what the message must name)
    ("bad JSON in games.rules", "UPDATE games SET rules = '{oops' WHERE game_index = 1", "table games"),
    ("games.rules a list", "UPDATE games SET rules = '[1]' WHERE game_index = 1", "table games"),
    ("seats table dropped", "DROP TABLE seats", "table seats is missing"),
    ("games table dropped", "DROP TABLE games", "table games is missing"),
    ("text in time_used", "UPDATE seats SET time_used = 'slow' WHERE game_index = 2", "table seats"),
    ("text in decisions", "UPDATE seats SET decisions = 'many' WHERE game_index = 2", "table seats"),
    ("negative time_used", "UPDATE seats SET time_used = -5 WHERE game_index = 2", "table seats"),
    ("unknown result", "UPDATE seats SET result = 'maybe' WHERE game_index = 0", "table seats"),
    ("seat number text", "UPDATE seats SET seat = 'x' WHERE game_index = 3 AND seat = 1", "table seats"),
    ("a missing seat", "DELETE FROM seats WHERE game_index = 3 AND seat = 0", "table seats"),
    ("durak not a player", "UPDATE games SET durak = 'nobody' WHERE game_index = 0", "table games"),
    ("durak a number", "UPDATE games SET durak = 7 WHERE game_index = 0", "table games"),
    ("settings not JSON", "UPDATE tournaments SET settings = 'nope'", "table tournaments"),
    ("settings without bots", "UPDATE tournaments SET settings = '{\"games\": 2}'", "table tournaments"),
    ("settings of wrong types",
     "UPDATE tournaments SET settings = json_set(settings, '$.players', 'two')", "table tournaments"),
    ("schema version text", "UPDATE schema_version SET version = 'one'", "schema version"),
    ("a column dropped", "ALTER TABLE seats DROP COLUMN forfeit", "lacks column"),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A real store with one finished 2-bot tournament (and its log): (path, id)."""
    d = tmp_path_factory.mktemp("store")
    r = cli("tournament", "--bot", "a=builtin:greedy", "--bot", "b=builtin:random", "--games", "40",
            "--db", d / "s.sqlite", "--log-dir", d / "logs", "--seed", "st", "--json", cwd=d)
    assert r.returncode == 0, r.stderr
    return d / "s.sqlite", json.loads(r.stdout)["tournament"]


def _copy(store: tuple[Path, str], tmp_path: Path) -> Path:
    db = tmp_path / "s.sqlite"
    shutil.copy(store[0], db)
    shutil.copytree(store[0].parent / "logs", tmp_path / "logs")
    return db


def _commands(db: Path, tid: str) -> list[tuple[str, ...]]:
    return [("ratings", "--db", str(db)), ("ratings", "--db", str(db), "--tournament", tid),
            ("tournament", "--resume", tid, "--db", str(db), "--log-dir", str(db.parent / "logs")),
            ("verify", "--db", str(db)), ("replay", "--verify", "--db", str(db)),
            ("report", "--tournament", tid, "--db", str(db), "--html", str(db.parent / "r.html"))]


@pytest.mark.parametrize(("sql", "named"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_damaged_store_is_exit_2_naming_table_and_row(
        store: tuple[Path, str], tmp_path: Path, sql: str, named: str) -> None:
    db = _copy(store, tmp_path)
    with sqlite3.connect(db) as con:
        con.execute(sql)
    con.close()
    for args in _commands(db, store[1]):
        if named == "table tournaments" and args[0] == "ratings":
            continue  # rating the stored games does not use a tournament's settings
        r = cli(*args, cwd=tmp_path)
        assert "Traceback" not in r.stderr, args
        if args[0] == "report" and ("json_set" in sql or '{"games"' in sql):
            # The settings are still a JSON map: the report does not read their fields.
            assert r.returncode == 0, r.stderr
            continue
        if named == "table tournaments" and args[0] in ("verify", "replay") and r.returncode == 1:
            # verify compares well-formed but wrong settings with the logs: differences
            assert "settings" in r.stdout, r.stdout
            continue
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert str(db) in r.stderr and named in r.stderr, (args, r.stderr)


def test_a_scribbled_page_is_caught_before_the_store_is_trusted(
        store: tuple[Path, str], tmp_path: Path) -> None:
    db = _copy(store, tmp_path)
    size = db.stat().st_size
    assert size >= 8 * 4096
    with open(db, "r+b") as f:  # garbage over a whole page in the middle of the file
        f.seek((size // 2) // 4096 * 4096)
        f.write(b"\xde\xad\xbe\xef" * 1024)
    for args in _commands(db, store[1]):
        r = cli(*args, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr, args
        assert f"{db}: damaged store" in r.stderr, (args, r.stderr)


def test_the_undamaged_store_passes_the_same_commands(store: tuple[Path, str], tmp_path: Path) -> None:
    db = _copy(store, tmp_path)
    for args in _commands(db, store[1]):
        r = cli(*args, cwd=tmp_path)
        assert r.returncode == 0, (args, r.stdout, r.stderr)


def test_a_damaged_ladder_row_is_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    assert cli("ladder", "add", "alpha", "builtin:greedy", "--db", db, cwd=tmp_path).returncode == 0
    with sqlite3.connect(db) as con:
        con.execute("UPDATE ladder SET rating = 'high'")
    con.close()
    for args in (("ladder", "show", "--db", db), ("ladder", "show", "--json", "--db", db),
                 ("ladder", "history", "alpha", "--db", db)):
        r = cli(*args, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stderr)
        assert "table ladder" in r.stderr and "Traceback" not in r.stderr
