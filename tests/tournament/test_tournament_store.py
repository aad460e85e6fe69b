"""The result store: schema and version, reopening, refusing files that are
not ours or are from a newer durak-ref (left byte for byte unchanged), atomic games,
and the CLI's exit 2 with one line for each unusable --db / --resume."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from referee.records.store import SCHEMA_VERSION, GameRow, SeatRow, Store, StoreError
from support import cli

BOTS = ["--bot", "a=builtin:random", "--bot", "b=builtin:greedy"]


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.strip()]


def newer_store(path: Path) -> bytes:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    db.execute("INSERT INTO schema_version (version) VALUES (99)")
    db.execute("CREATE TABLE games (x INTEGER)")
    db.commit()
    db.close()
    return path.read_bytes()


def game(tid: str, index: int, bots: tuple[str, str] = ("a", "b")) -> GameRow:
    return GameRow(tid, index, f"T1:d{index}", 0, {"deck": 36}, None, None, "normal", bots[1],
                   "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:01+00:00",
                   [SeatRow(0, bots[0], "safe", None, 3, 0.25), SeatRow(1, bots[1], "durak", None, 4, 0.5)])


def test_new_store_has_the_schema_and_its_version(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "durak.sqlite"
    with Store(path) as store:
        assert store.tournaments() == []
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"schema_version", "bots", "tournaments", "games", "seats"} <= names
    db.close()


def test_reopening_keeps_everything_and_one_version_row(tmp_path: Path) -> None:
    path = tmp_path / "durak.sqlite"
    with Store(path) as store:
        with store.transaction():
            store.ensure_bot("a", "builtin:random")
            store.ensure_bot("b", "builtin:greedy")
        store.create_tournament("t1", "tournament", {"seed": 3})
        store.add_game(game("t1", 0))
        before = store.games("t1")
    for _ in range(2):
        with Store(path) as store:
            assert store.tournament("t1") == ("tournament", {"seed": 3}, "running")
            assert store.games("t1") == before
            assert store.bot_command("b") == "builtin:greedy"
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    db.close()


def test_a_game_is_stored_whole_or_not_at_all(tmp_path: Path) -> None:
    with Store(tmp_path / "durak.sqlite") as store:
        with store.transaction():
            store.ensure_bot("a", "builtin:random")
            store.ensure_bot("b", "builtin:greedy")
        store.create_tournament("t1", "tournament", {})
        store.add_game(game("t1", 0))
        with pytest.raises(sqlite3.IntegrityError):  # the primary key: never twice
            store.add_game(game("t1", 0))
        with pytest.raises(sqlite3.IntegrityError):  # a seat's bot is unknown: no game row either
            store.add_game(game("t1", 1, ("a", "nobody")))
        assert store.finished_indices("t1") == {0}
        assert [len(g.seats) for g in store.games("t1")] == [2]
        n_seats = store.db.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
        assert n_seats == 2


def test_unknown_tournament_names_the_known_ones(tmp_path: Path) -> None:
    with Store(tmp_path / "durak.sqlite") as store:
        with pytest.raises(StoreError, match="the store has none"):
            store.tournament("nope")
        store.create_tournament("t-one", "tournament", {})
        store.create_tournament("t-two", "tournament", {})
        with pytest.raises(StoreError, match="no tournament 'nope'.*t-one") as info:
            store.tournament("nope")
        assert "t-two" in str(info.value)


def test_newer_schema_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    before = newer_store(path)
    with pytest.raises(StoreError) as info:
        Store(path)
    message = str(info.value)
    assert str(path) in message and "99" in message and "newer" in message and "upgrade" in message
    assert path.read_bytes() == before


@pytest.mark.parametrize("content", [b"hello, not a database\n" * 10, bytes(range(256)) * 8])
def test_non_database_file_is_refused_and_left_unchanged(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a usable durak-ref store"):
        Store(path)
    assert path.read_bytes() == content


def test_foreign_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (id INTEGER)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a durak-ref store"):
        Store(path)
    assert path.read_bytes() == before


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Store(tmp_path)


# -- through the command line ---------------------------------------------------------


@pytest.mark.process
def test_cli_newer_store_exits_2_with_one_line_and_file_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    before = newer_store(path)
    proc = cli("tournament", *BOTS, "--games", "2", "--db", path, "--log-dir", tmp_path / "logs",
               cwd=tmp_path)
    assert proc.returncode == 2
    lines = error_lines(proc)
    assert len(lines) == 1, lines
    assert lines[0].startswith("durak-ref: error:") and "newer" in lines[0] and "future.sqlite" in lines[0]
    assert path.read_bytes() == before
    assert not (tmp_path / "logs").exists()


@pytest.mark.process
def test_cli_non_database_exits_2_and_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "results.txt"
    path.write_text("my precious notes\n" * 50)
    before = path.read_bytes()
    proc = cli("tournament", *BOTS, "--db", path, "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert proc.returncode == 2
    lines = error_lines(proc)
    assert len(lines) == 1 and "results.txt" in lines[0] and "not a usable" in lines[0], lines
    assert path.read_bytes() == before


@pytest.mark.process
def test_cli_resume_unknown_id_exits_2_listing_known_ids(tmp_path: Path) -> None:
    path = tmp_path / "durak.sqlite"
    with Store(path) as store:
        store.create_tournament("t-alpha", "tournament", {})
        store.create_tournament("t-beta", "tournament", {})
    proc = cli("tournament", "--resume", "t-gamma", "--db", path, cwd=tmp_path)
    assert proc.returncode == 2
    lines = error_lines(proc)
    assert len(lines) == 1, lines
    assert "t-gamma" in lines[0] and "t-alpha" in lines[0] and "t-beta" in lines[0]


def test_an_open_store_caps_sqlites_page_cache_so_a_long_run_stays_flat(tmp_path: Path) -> None:
    """SQLite's page cache grows with the file up to its cap (2 MiB by default), which a
    days-long tournament shows as growing memory (bench soak saw +6.4% RSS in 30 min)."""
    from referee.records.store import PAGE_CACHE_KIB

    assert PAGE_CACHE_KIB <= 512
    with Store(tmp_path / "s.sqlite") as store:
        assert store.db.execute("PRAGMA cache_size").fetchone()[0] == -PAGE_CACHE_KIB
