"""The store on both back ends: the same specifications run against an SQLite
file and a real PostgreSQL server (tests/pgserver.py); --db takes either, or DURAK_DB;
a bad URL, an unreachable server or a refused password is the user's error (exit 2)
naming the URL without its password."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from pgserver import PASSWORD, PASSWORD_USER, PgServer
from referee.records.store import _SCHEMA, SCHEMA_VERSION, GameRow, SeatRow, Store, StoreError
from referee.records.storedb import PgUrl, parse_target, redact
from support import DURAK_REF

BOTS = ["--bot", "a=builtin:random", "--bot", "b=builtin:greedy"]


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a fresh store goes: a file path, or an empty database's URL."""
    if request.param == "sqlite":
        return str(tmp_path / "durak.sqlite")
    return str(request.getfixturevalue("pg_url"))


def game(tid: str, index: int, bots: tuple[str, str] = ("a", "b")) -> GameRow:
    return GameRow(tid, index, f"T1:d{index}", 0, {"deck": 36}, None, None, "normal", bots[1],
                   "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:01+00:00",
                   [SeatRow(0, bots[0], "safe", None, 3, 0.25), SeatRow(1, bots[1], "durak", None, 4, 0.5)])


def with_bots(store: Store) -> None:
    with store.transaction():
        store.ensure_bot("a", "builtin:random")
        store.ensure_bot("b", "builtin:greedy")


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os
    full = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    full.pop("DURAK_DB", None)
    full.update(env or {})
    return subprocess.run([str(DURAK_REF), *args], capture_output=True, text=True, cwd=cwd, env=full,
                          timeout=120)


@pytest.mark.process
def test_a_new_store_has_the_current_schema(target: str) -> None:
    with Store(target) as store:
        assert store.tournaments() == []
        assert store.db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        assert {"schema_version", "bots", "tournaments", "games", "seats", "queue",
                "game_records", "worker_notes"} <= store.backend.tables()


@pytest.mark.process
def test_reopening_keeps_every_row_with_its_types(target: str) -> None:
    with Store(target) as store:
        with_bots(store)
        store.create_tournament("t1", "tournament", {"seed": "3", "x": [1, 2.5]})
        store.add_game(game("t1", 0))
        store.set_ladder("a", 1512.5, 4)
        store.add_history("a", "t1", 0, 1500.0, 1512.5)
        before = store.games("t1")
    for _ in range(2):
        with Store(target) as store:
            assert store.tournament("t1") == ("tournament", {"seed": "3", "x": [1, 2.5]}, "running")
            assert store.games("t1") == before
            assert isinstance(store.games("t1")[0].seats[0].time_used, float)
            assert store.bot_command("b") == "builtin:greedy"
            assert store.ladder() == [("a", 1512.5, 4)]
            assert [h[:4] for h in store.history("a")] == [("t1", 0, 1500.0, 1512.5)]
            assert store.db.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 1


@pytest.mark.process
def test_a_game_is_stored_whole_or_not_at_all_and_never_twice(target: str) -> None:
    with Store(target) as store:
        with_bots(store)
        store.create_tournament("t1", "tournament", {})
        store.add_game(game("t1", 0))
        with pytest.raises(store.errors.IntegrityError):  # the primary key: never twice
            store.add_game(game("t1", 0))
        with pytest.raises(store.errors.IntegrityError):  # an unknown bot: no game row either
            store.add_game(game("t1", 1, ("a", "nobody")))
        assert store.finished_indices("t1") == {0}
        assert store.db.execute("SELECT count(*) FROM seats").fetchone()[0] == 2


@pytest.mark.process
def test_games_are_read_by_index_range_on_either_store(target: str) -> None:
    """``games(tid, from_index, below)``: what a live page's catching-up update reads."""
    with Store(target) as store:
        with_bots(store)
        store.create_tournament("t1", "tournament", {})
        for index in (0, 1, 2, 4, 5):
            store.add_game(game("t1", index))
        assert [g.game_index for g in store.games("t1", from_index=1, below=5)] == [1, 2, 4]
        assert [g.game_index for g in store.games("t1", from_index=2)] == [2, 4, 5]
        assert store.games("t1", from_index=3, below=4) == []


@pytest.mark.process
def test_a_missing_tournament_is_named_with_the_known_ones(target: str) -> None:
    with Store(target) as store:
        store.create_tournament("t1", "tournament", {})
        with pytest.raises(StoreError, match="no tournament 'nope'; recent ones: t1"):
            store.tournament("nope")


@pytest.mark.process
def test_a_version_1_store_is_migrated_in_place_keeping_its_games(target: str) -> None:
    with Store(target) as store:  # made current; now rebuilt as a version-1 store by hand
        for table in ("lobby_bots", "worker_notes", "game_records", "queue", "ladder_history", "ladder",
                      "seats", "games", "tournaments", "bots", "schema_version"):
            store.db.execute(f"DROP TABLE {table}")
        for stmt in _SCHEMA:
            if not stmt.startswith("CREATE INDEX"):
                store.db.execute(stmt)
        store.db.execute("INSERT INTO schema_version (version) VALUES (1)")
        with_bots(store)
        store.create_tournament("old", "tournament", {"seed": "1"})
        store.add_game(game("old", 0))
    with Store(target) as store:
        assert store.db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        assert [g.game_index for g in store.games("old")] == [0]
        assert {"queue", "lobby_bots"} <= store.backend.tables()


@pytest.mark.process
def test_a_store_from_a_newer_durak_ref_is_refused(target: str) -> None:
    with Store(target) as store:
        store.db.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match="schema version 99 is newer"):
        Store(target)


@pytest.mark.process
def test_two_processes_creating_one_fresh_store_make_it_once(target: str) -> None:
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            Store(target).close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store(target) as store:
        assert store.db.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 1


@pytest.mark.process
def test_a_token_registered_elsewhere_changes_the_data_version(target: str) -> None:
    with Store(target) as serving, Store(target) as registering:
        with_bots(registering)
        before = serving.data_version()
        registering.set_token_hash("a", "h1")
        assert serving.data_version() != before
        assert serving.token_hashes() == {"a": "h1"}


@pytest.mark.process
def test_the_cli_plays_rates_and_verifies_on_either_store(target: str, tmp_path: Path) -> None:
    played = run("tournament", *BOTS, "--games", "4", "--seed", "5", "--db", target, "--json", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    rated = run("ratings", "--json", cwd=tmp_path, env={"DURAK_DB": target})  # the environment's store
    assert rated.returncode == 0, rated.stderr
    assert '"a"' in rated.stdout and '"b"' in rated.stdout
    checked = run("verify", "--db", target, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "store and logs agree" in checked.stdout


# -- URLs: the user's input


def test_urls_and_paths_are_told_apart_and_passwords_never_shown() -> None:
    assert parse_target("logs/durak.sqlite") == Path("logs/durak.sqlite")
    url = parse_target("postgresql://ann:s3cret@db.example:5433/durak")
    assert isinstance(url, PgUrl) and url.url.endswith("s3cret@db.example:5433/durak")
    assert str(url) == "postgresql://ann:***@db.example:5433/durak"
    assert redact("postgres://db.example/durak") == "postgres://db.example/durak"


@pytest.mark.process
@pytest.mark.parametrize("url, says", [
    ("postgresql://ann:s3cret@/durak", "needs a host and a database"),
    ("postgresql://ann:s3cret@host:notaport/durak", "not a PostgreSQL URL"),
    ("mysql://ann:s3cret@host/durak", "unknown store URL scheme 'mysql'"),
])
def test_a_malformed_url_is_exit_2_without_the_password(url: str, says: str, tmp_path: Path) -> None:
    proc = run("ratings", "--db", url, cwd=tmp_path)
    assert proc.returncode == 2
    assert says in proc.stderr and "s3cret" not in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.process
def test_an_unreachable_server_is_exit_2_naming_the_url(tmp_path: Path) -> None:
    from pgserver import free_port
    url = f"postgresql://ann:s3cret@127.0.0.1:{free_port()}/durak"
    proc = run("tournament", *BOTS, "--games", "2", "--db", url, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "cannot connect to the store postgresql://ann:***@127.0.0.1:" in proc.stderr
    assert "s3cret" not in proc.stderr + proc.stdout and "Traceback" not in proc.stderr


def test_a_wrong_password_is_exit_2_without_the_password(pg_server: PgServer, tmp_path: Path) -> None:
    url = f"postgresql://{PASSWORD_USER}:hunter22@{pg_server.host}:{pg_server.port}/postgres"
    proc = run("ladder", "show", "--db", url, cwd=tmp_path)
    assert proc.returncode == 2
    assert "cannot connect to the store" in proc.stderr and "password authentication failed" in proc.stderr
    assert "hunter22" not in proc.stderr + proc.stdout and "Traceback" not in proc.stderr
    good = f"postgresql://{PASSWORD_USER}:{PASSWORD}@{pg_server.host}:{pg_server.port}/{PASSWORD_USER}"
    assert run("ladder", "show", "--db", good, cwd=tmp_path).returncode == 0


def test_a_database_the_user_may_not_write_is_exit_2(pg_server: PgServer, tmp_path: Path) -> None:
    url = f"postgresql://{PASSWORD_USER}:{PASSWORD}@{pg_server.host}:{pg_server.port}/postgres"
    proc = run("ladder", "show", "--db", url, cwd=tmp_path)
    assert proc.returncode == 2
    assert "permission denied" in proc.stderr and PASSWORD not in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_unknown_database_is_exit_2(pg_server: PgServer, tmp_path: Path) -> None:
    proc = run("ladder", "show", "--db", pg_server.url("no_such_db"), cwd=tmp_path)
    assert proc.returncode == 2
    assert 'database "no_such_db" does not exist' in proc.stderr and "Traceback" not in proc.stderr


def test_a_database_of_other_tables_is_not_taken_for_a_store(pg_url: str, tmp_path: Path) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    proc = run("ladder", "show", "--db", pg_url, cwd=tmp_path)
    assert proc.returncode == 2
    assert "it is not a durak-ref store" in proc.stderr


def test_no_output_shows_the_urls_password(pg_url: str, tmp_path: Path) -> None:
    """The test server's URLs carry its superuser's password; it may not be printed: not
    in the resume command, the same-deals-again command, nor the JSON."""
    url, secret = pg_url, urlsplit(pg_url).password
    assert secret
    runs = [run("ladder", "add", "r", "builtin:random", "--db", url, cwd=tmp_path),
            run("ladder", "add", "g", "builtin:greedy", "--db", url, cwd=tmp_path),
            run("ladder", "run", "--games", "2", "--db", url, cwd=tmp_path),
            run("ladder", "run", "--games", "2", "--json", cwd=tmp_path, env={"DURAK_DB": url}),
            run("tournament", *BOTS, "--games", "2", "--db", url, cwd=tmp_path),
            run("tournament", *BOTS, "--games", "2", "--db", url, "--json", cwd=tmp_path)]
    assert [p.returncode for p in runs] == [0] * len(runs), [p.stderr for p in runs]
    text = "".join(p.stdout + p.stderr for p in runs)
    assert "durak:***@" in text and secret not in text


@pytest.mark.process
def test_a_bot_name_longer_than_the_store_keeps_is_exit_2_on_either_store(target: str, tmp_path: Path) -> None:
    """PostgreSQL enforces VARCHAR(64), SQLite does not: the store checks, so both agree."""
    long = "x" * 80
    for args in (["tournament", "--bot", f"{long}=builtin:random", "--bot", "b=builtin:greedy",
                  "--games", "2"], ["ladder", "add", long, "builtin:random"]):
        proc = run(*args, "--db", target, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "the store keeps names of at most 64" in proc.stderr and "Traceback" not in proc.stderr
