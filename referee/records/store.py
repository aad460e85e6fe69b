"""The result store: every tournament and ladder game in one SQL database.

SQLite by default (``logs/durak.sqlite``), or a PostgreSQL server (``--db
postgresql://USER@HOST:PORT/DB``) that several machines share (referee/records/storedb.py
holds the two back ends). The SQL is plain and portable on purpose (no AUTOINCREMENT,
no SQLite-only functions or upserts, natural composite keys, times as ISO-8601 text,
JSON settings as text) so one schema and one migration path serve both. Every portable
statement lives in this module; the dialects' few differences (listing tables, the
integrity check, the migration lock) in storedb.py, and the PostgreSQL-only claiming of
queued games (``FOR UPDATE SKIP LOCKED``) in referee/league/distributed.py.

Schema version 3 (version 1 and migrations; see ``_MIGRATIONS``)::

    schema_version(version)
    bots(name PK, command, first_seen, token_hash)
    tournaments(id PK, created, kind, settings, status)
    games(tournament_id, game_index, deal_seed, rotation, rules, log_file, log_line,
          termination, durak, started, ended)               PK (tournament_id, game_index)
    seats(tournament_id, game_index, seat, bot, result, forfeit, decisions, time_used)
                                                            PK (tournament_id, game_index, seat)
    ladder(bot PK, rating, games, updated)
    ladder_history(bot, tournament_id, game_index, rating_before, rating_after, at)
    queue(tournament_id, game_index, deal, rotation, seats, deal_id, state, worker,
          lease_until, attempts)                            PK (tournament_id, game_index)
    game_records(tournament_id, game_index, worker, record)  PK (tournament_id, game_index)
    worker_notes(tournament_id, worker, at, note)           PK (tournament_id, worker)
    lobby_bots(name PK, since)

A game is written with its seats in one transaction, so a game is either wholly in
the store or not at all: that is what makes resuming safe.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..console import jsonout
from ..errors import UserError
from ..rules.options import SEATS_TEXT, seat_count_error
from .matchlog import utc_now
from .private import PRIVATE_FILE, private_mkdir, private_open
from .storedb import Backend, ConnectError, PgUrl, TargetError, connect, parse_target

SCHEMA_VERSION = 3
MAX_NAME = 64  #: the longest bot name or tournament id the store keeps (VARCHAR(64))

#: The cap of SQLite's page cache per open store, in KiB (see Store.__init__).
PAGE_CACHE_KIB = 256
#: Opening an SQLite store can meet SQLITE_BUSY without SQLite's busy handler waiting at
#: all: while the last connection to close holds its brief exclusive lock to clean up the
#: WAL, or while a WAL is being recovered (sqlite.org/wal.html, "Sometimes queries return
#: SQLITE_BUSY in WAL mode"). Such an open is tried again, this many times, each after
#: OPEN_BUSY_WAIT_S more than the last (about 5 s in all), before it is an error.
OPEN_BUSY_RETRIES = 30
OPEN_BUSY_WAIT_S = 0.01


class _Busy(Exception):
    """Opening the SQLite store met SQLITE_BUSY (OPEN_BUSY_RETRIES): try again."""

_SCHEMA = [
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE bots (
        name VARCHAR(64) PRIMARY KEY,
        command TEXT NOT NULL,
        first_seen VARCHAR(40) NOT NULL,
        token_hash TEXT)""",
    """CREATE TABLE tournaments (
        id VARCHAR(64) PRIMARY KEY,
        created VARCHAR(40) NOT NULL,
        kind VARCHAR(20) NOT NULL,
        settings TEXT NOT NULL,
        status VARCHAR(20) NOT NULL)""",
    """CREATE TABLE games (
        tournament_id VARCHAR(64) NOT NULL REFERENCES tournaments(id),
        game_index INTEGER NOT NULL,
        deal_seed TEXT NOT NULL,
        rotation INTEGER NOT NULL,
        rules TEXT NOT NULL,
        log_file TEXT,
        log_line INTEGER,
        termination VARCHAR(20) NOT NULL,
        durak VARCHAR(64),
        started VARCHAR(40) NOT NULL,
        ended VARCHAR(40) NOT NULL,
        PRIMARY KEY (tournament_id, game_index))""",
    """CREATE TABLE seats (
        tournament_id VARCHAR(64) NOT NULL,
        game_index INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        bot VARCHAR(64) NOT NULL REFERENCES bots(name),
        result VARCHAR(10) NOT NULL,
        forfeit VARCHAR(20),
        decisions INTEGER NOT NULL,
        time_used DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (tournament_id, game_index, seat),
        FOREIGN KEY (tournament_id, game_index) REFERENCES games(tournament_id, game_index))""",
    """CREATE TABLE ladder (
        bot VARCHAR(64) PRIMARY KEY REFERENCES bots(name),
        rating DOUBLE PRECISION NOT NULL,
        games INTEGER NOT NULL,
        updated VARCHAR(40) NOT NULL)""",
    """CREATE TABLE ladder_history (
        bot VARCHAR(64) NOT NULL REFERENCES bots(name),
        tournament_id VARCHAR(64) NOT NULL,
        game_index INTEGER NOT NULL,
        rating_before DOUBLE PRECISION NOT NULL,
        rating_after DOUBLE PRECISION NOT NULL,
        at VARCHAR(40) NOT NULL)""",
    "CREATE INDEX seats_by_bot ON seats (bot)",
    "CREATE INDEX history_by_bot ON ladder_history (bot)",
]

#: Each later version's statements, in order: a fresh store runs ``_SCHEMA`` (version 1)
#: and then every migration, an older store the migrations past its version; both back
#: ends take the same path.
_MIGRATIONS: list[tuple[int, list[str]]] = [
    # 2: distributed runs (referee/league/distributed.py). ``queue``: one row per scheduled game
    # (what to play, and who holds it until when: ``lease_until`` in seconds since the
    # epoch by the database server's clock); ``game_records``: each game's log record,
    # stored in the game's transaction by whichever worker played it; ``worker_notes``: a
    # worker's one report per run that it cannot play it (a bot that does not start there).
    (2, ["""CREATE TABLE queue (
        tournament_id VARCHAR(64) NOT NULL REFERENCES tournaments(id),
        game_index INTEGER NOT NULL,
        deal INTEGER NOT NULL,
        rotation INTEGER NOT NULL,
        seats TEXT NOT NULL,
        deal_id TEXT NOT NULL,
        state VARCHAR(10) NOT NULL,
        worker VARCHAR(200),
        lease_until DOUBLE PRECISION,
        attempts INTEGER NOT NULL,
        PRIMARY KEY (tournament_id, game_index))""",
         "CREATE INDEX queue_by_state ON queue (state, tournament_id, game_index)",
         """CREATE TABLE game_records (
        tournament_id VARCHAR(64) NOT NULL,
        game_index INTEGER NOT NULL,
        worker VARCHAR(200) NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (tournament_id, game_index),
        FOREIGN KEY (tournament_id, game_index) REFERENCES games(tournament_id, game_index))""",
         """CREATE TABLE worker_notes (
        tournament_id VARCHAR(64) NOT NULL REFERENCES tournaments(id),
        worker VARCHAR(200) NOT NULL,
        at VARCHAR(40) NOT NULL,
        note TEXT NOT NULL,
        PRIMARY KEY (tournament_id, worker))"""]),
    # 3: the arena bots whose owners allow people to seat them in the lobby
    # (``register --lobby on``; referee/league/arena.py): a row is a yes, since ``since``.
    (3, ["""CREATE TABLE lobby_bots (
        name VARCHAR(64) PRIMARY KEY REFERENCES bots(name),
        since VARCHAR(40) NOT NULL)"""]),
]


#: The columns of each table, as the schema above makes them (checked on open).
_COLUMNS = {
    "bots": ("name", "command", "first_seen", "token_hash"),
    "tournaments": ("id", "created", "kind", "settings", "status"),
    "games": ("tournament_id", "game_index", "deal_seed", "rotation", "rules", "log_file",
              "log_line", "termination", "durak", "started", "ended"),
    "seats": ("tournament_id", "game_index", "seat", "bot", "result", "forfeit", "decisions",
              "time_used"),
    "ladder": ("bot", "rating", "games", "updated"),
    "ladder_history": ("bot", "tournament_id", "game_index", "rating_before", "rating_after", "at"),
    "queue": ("tournament_id", "game_index", "deal", "rotation", "seats", "deal_id", "state", "worker",
              "lease_until", "attempts"),
    "game_records": ("tournament_id", "game_index", "worker", "record"),
    "worker_notes": ("tournament_id", "worker", "at", "note"),
    "lobby_bots": ("name", "since"),
}
#: The schema version that added a table (the others are version 1's).
_SINCE = {"queue": 2, "game_records": 2, "worker_notes": 2, "lobby_bots": 3}


class StoreError(UserError, RuntimeError):
    """The store cannot be used: not a database, from a newer durak-ref, unwritable,
    or a tournament that does not exist. The message names the file and what to do."""

    hint = "give the --db a durak-ref run wrote, writable; restore a damaged one from a backup"


@dataclass
class SeatRow:
    seat: int
    bot: str
    result: str  # durak, safe or draw
    forfeit: str | None
    decisions: int
    time_used: float


@dataclass
class GameRow:
    tournament_id: str
    game_index: int
    deal_seed: str
    rotation: int
    rules: dict[str, Any]
    log_file: str | None
    log_line: int | None
    termination: str
    durak: str | None
    started: str
    ended: str
    seats: list[SeatRow]

    @property
    def players(self) -> list[str]:
        return [s.bot for s in sorted(self.seats, key=lambda s: s.seat)]

    @property
    def drawn(self) -> list[str]:
        return [s.bot for s in self.seats if s.result == "draw"]


class Store:
    """An open result store. Use as a context manager, or call ``close()``."""

    def __init__(self, target: Path | PgUrl | str) -> None:
        """Open the store at ``target``: an SQLite file path, or a PostgreSQL URL (a
        ``PgUrl`` or its text; see referee/records/storedb.py). Raises StoreError."""
        try:
            target = parse_target(target)
        except TargetError as exc:
            raise StoreError(str(exc)) from None
        for attempt in range(OPEN_BUSY_RETRIES + 1):
            try:
                self._open(target, retry=attempt < OPEN_BUSY_RETRIES)
                return
            except _Busy:
                time.sleep(OPEN_BUSY_WAIT_S * (attempt + 1))

    def _open(self, target: Path | PgUrl, retry: bool) -> None:
        """``__init__``'s opening of ``target``; raises _Busy (only with ``retry``) where
        SQLite answered SQLITE_BUSY without waiting, else StoreError."""
        if isinstance(target, PgUrl):
            try:
                self.backend: Backend = connect(target)
            except ConnectError as exc:
                raise StoreError(str(exc)) from None
        else:
            self.backend = self._open_sqlite(target)
        self.path, self.name = self.backend.path, self.backend.name
        self.db, self.errors = self.backend.db, self.backend.errors
        try:
            if self.path is not None:
                self.db.execute("PRAGMA foreign_keys = ON")
            # Check the schema before anything writes to the file: a store we refuse
            # (not ours, or from a newer durak-ref) must be left byte for byte as it was.
            tables = self._check_schema()
            if self.path is not None:
                # Readers (sqlite3 logs/durak.sqlite) never block the writer; one fsync per
                # checkpoint rather than per game. Pragmas, not schema: portable SQL stays so.
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = NORMAL")
                # SQLite's page cache grows with the file up to its cap (2 MiB by default): in a
                # days-long run that reads as growing memory. The referee appends games and
                # reads them back in sequential scans, which a cache smaller than the file does
                # not speed up; a small cap keeps the referee's memory flat after warm-up.
                self.db.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
                for suffix in ("-wal", "-shm", "-journal"):  # left by an older durak-ref
                    _make_private(self.path.with_name(self.path.name + suffix))
            self._migrate(tables)
        except self.errors.DatabaseError as exc:
            self.backend.close()
            if retry and self.path is not None and _busy(exc):
                raise _Busy from None
            denied = None if self.path is None else _not_writable(self.path)
            if denied is not None and isinstance(exc, self.errors.OperationalError):
                raise StoreError(f"cannot write to the store {self.path}: {denied} ({_one_line(exc)}); "
                                 f"nothing in it was changed: make it writable, or give another "
                                 f"--db path") from None
            raise StoreError(f"{self.name}: not a usable durak-ref store ({_one_line(exc)}); give "
                             f"another --db or move the file away") from None
        except BaseException:
            self.backend.close()
            raise

    @staticmethod
    def _open_sqlite(path: Path) -> Backend:
        """The SQLite file at ``path``, made private (0600) when new. Raises StoreError."""
        if path.exists() and path.is_dir():
            raise StoreError(f"{path} is a directory, not a database file")
        try:
            # 0600 before SQLite opens it: SQLite gives its -wal, -shm and -journal files
            # the database file's mode, so those are private too.
            private_mkdir(path.parent)
            if not path.exists():
                private_open(path, "ab").close()
            _make_private(path)
        except OSError as exc:
            raise StoreError(f"cannot create the store {path}: {exc.strerror or exc}; "
                             f"give another --db path") from None
        try:
            return connect(path)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a usable durak-ref store ({exc}); give another --db "
                             f"path or move the file away") from None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.backend.close()

    # -- schema

    def _check_schema(self) -> set[str]:
        """Read-only checks: the store's tables; StoreError if it is not a store we can use."""
        tables = self.backend.tables()
        if "schema_version" not in tables:
            if tables:
                raise StoreError(f"{self.name}: holds tables {sorted(tables)} but no durak-ref "
                                 f"schema version; it is not a durak-ref store")
            return tables
        version = self._version()
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.name}: schema version {version} is newer than this durak-ref "
                             f"understands ({SCHEMA_VERSION}); upgrade durak-ref to use this store")
        for table, columns in _COLUMNS.items():
            if _SINCE.get(table, 1) > version:
                continue  # a migration below adds it
            have = self.backend.columns(table)
            if not have:
                raise StoreError(f"{self.name}: damaged store: table {table} is missing; restore "
                                 f"the store from a backup or give another --db path")
            lacking = [c for c in columns if c not in have]
            if lacking:
                raise StoreError(f"{self.name}: damaged store: table {table} lacks column(s) "
                                 f"{', '.join(lacking)}; restore it from a backup")
        return tables

    def _version(self) -> int:
        row = self.db.execute("SELECT version FROM schema_version").fetchone()
        version = row[0] if row else None
        if version is None or not isinstance(version, int) or isinstance(version, bool):
            raise StoreError(f"{self.name}: the schema version is missing or unreadable")
        return version

    def check_integrity(self) -> None:
        """The database's own consistency check (SQLite: ``PRAGMA quick_check``, reading
        the whole file once; a server keeps its own): StoreError naming the first
        problems if a page is damaged (a scribbled or truncated file)."""
        rows = self.backend.integrity_problems()
        if rows:
            raise StoreError(f"{self.name}: damaged store (SQLite integrity check: "
                             f"{'; '.join(' '.join(str(r).split()) for r in rows)}); restore it from a backup, or move it "
                             f"away and start a new one")

    def _migrate(self, tables: set[str]) -> None:
        """Create the schema in an empty store, or bring an older one up to date, in one
        transaction under the back end's migration lock: two runs opening one store at
        once do it once (the second, waiting for the lock, then finds it done)."""
        if "schema_version" in tables and self._version() == SCHEMA_VERSION:
            return
        self.backend.begin_migration()
        try:
            tables = self._check_schema()
            if "schema_version" not in tables:
                for stmt in _SCHEMA:
                    self.db.execute(stmt)
                self.db.execute("INSERT INTO schema_version (version) VALUES (?)", (1,))
            version = self._version()
            for target, statements in _MIGRATIONS:
                if target > version:
                    for stmt in statements:
                        self.db.execute(stmt)
                    self.db.execute("UPDATE schema_version SET version = ?", (target,))
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- transactions

    class _Tx:
        """A write transaction. The database's I/O errors (disk full, file size limit,
        read-only file, a server gone) and damage met inside it (SQLite's "database disk
        image is malformed") become StoreError: the user's environment, not our bug;
        nothing of the transaction is kept and everything committed before is intact."""

        def __init__(self, store: Store) -> None:
            self.db, self.name, self.errors = store.db, store.name, store.errors
            self.begin = store.backend.begin_write

        def __enter__(self) -> None:
            try:
                self.db.execute(self.begin)
            except self.errors.OperationalError as exc:
                raise _write_error(self.name, exc) from None

        def __exit__(self, kind: object, exc: object, tb: object) -> None:
            if kind is None:
                try:
                    self.db.execute("COMMIT")
                    return
                except self.errors.OperationalError as commit_exc:
                    exc = commit_exc
            try:
                self.db.execute("ROLLBACK")
            except self.errors.Error:  # already rolled back (a disk I/O error does)
                pass
            if isinstance(exc, self.errors.OperationalError):
                raise _write_error(self.name, exc) from None
            if isinstance(exc, self.errors.DataError):  # a value the column cannot hold
                raise StoreError(f"{self.name}: a value does not fit the store ({_one_line(exc)}); "
                                 f"nothing of it was written") from None
            # A damaged page met mid-transaction (SQLite raises the base class itself for it;
            # its subclasses, a broken constraint above all, are the caller's to judge).
            if type(exc) is self.errors.DatabaseError and isinstance(exc, BaseException):
                raise StoreError(f"{self.name}: damaged store ({_one_line(exc)}); nothing of this "
                                 f"change was written: restore the store from a backup, or give "
                                 f"another --db") from None

    def transaction(self) -> Store._Tx:
        """``with store.transaction(): ...``: all or nothing."""
        return Store._Tx(self)

    # -- bots and tournaments

    def ensure_bot(self, name: str, command: str) -> None:
        """Record bot ``name`` (with the command that first ran it) if it is new.
        StoreError for a name longer than the store keeps (``MAX_NAME``, on every back end)."""
        if len(name) > MAX_NAME:
            raise StoreError(f"bot name {name[:MAX_NAME]!r}...: {len(name)} characters; the store keeps "
                             f"names of at most {MAX_NAME}: give it a shorter name (NAME=CMD)")
        if self.db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is None:
            self.db.execute("INSERT INTO bots (name, command, first_seen) VALUES (?, ?, ?)",
                            (name, command, utc_now()))

    def bot_command(self, name: str) -> str | None:
        with self._reading("bots"):
            row = self.db.execute("SELECT command FROM bots WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def set_bot_command(self, name: str, command: str) -> None:
        """Set what ``name`` is recorded as (``ensure_bot``'s ``command``)."""
        self.db.execute("UPDATE bots SET command = ? WHERE name = ?", (command, name))

    def set_token_hash(self, name: str, token_hash: str | None) -> None:
        """Set (None: revoke) the arena token of ``name``."""
        self.db.execute("UPDATE bots SET token_hash = ? WHERE name = ?", (token_hash, name))

    def data_version(self) -> int:
        """A number that changes whenever another connection (another process: say
        ``durak-ref register``) commits to the store; this connection's own writes do not
        change it. Cheap enough to ask before every authentication."""
        return self.backend.data_version()

    def token_hashes(self) -> dict[str, str]:
        with self._reading("bots"):
            return {r[0]: r[1] for r in self.db.execute(
                "SELECT name, token_hash FROM bots WHERE token_hash IS NOT NULL")}

    def set_lobby(self, name: str, allowed: bool) -> None:
        """Allow (or not) people to seat registered bot ``name`` in the lobby."""
        self.db.execute("DELETE FROM lobby_bots WHERE name = ?", (name,))
        if allowed:
            self.db.execute("INSERT INTO lobby_bots (name, since) VALUES (?, ?)", (name, utc_now()))

    def lobby_bots(self) -> set[str]:
        """The registered bots whose owners allow lobby play (``set_lobby``)."""
        with self._reading("lobby_bots"):
            return {r[0] for r in self.db.execute("SELECT name FROM lobby_bots")}

    def bots(self) -> list[tuple[str, str, str]]:
        with self._reading("bots"):
            return list(self.db.execute("SELECT name, command, first_seen FROM bots ORDER BY name"))

    def create_tournament(self, tid: str, kind: str, settings: dict[str, Any]) -> None:
        with self.transaction():
            self.db.execute(
                "INSERT INTO tournaments (id, created, kind, settings, status) VALUES (?, ?, ?, ?, ?)",
                (tid, utc_now(), kind, jsonout.dumps(settings), "running"))

    def tournament(self, tid: str) -> tuple[str, dict[str, Any], str]:
        """(kind, settings, status) of tournament ``tid``; StoreError if there is none."""
        with self._reading("tournaments"):
            row = self.db.execute("SELECT kind, settings, status FROM tournaments WHERE id = ?",
                                  (tid,)).fetchone()
            known = [] if row is not None else [r[0] for r in self.db.execute(
                "SELECT id FROM tournaments ORDER BY created DESC")][:10]
        if row is None:
            raise StoreError(f"{self.name}: no tournament {tid!r}"
                             + (f"; recent ones: {', '.join(known)}" if known else "; the store has none"))
        try:
            settings = json.loads(row[1])
        except (TypeError, ValueError) as exc:
            raise self._damaged("tournaments", (tid,), f"the settings are not JSON ({exc})") from None
        if not isinstance(settings, dict):
            raise self._damaged("tournaments", (tid,), "the settings are not a JSON map")
        return row[0], settings, row[2]

    def set_settings(self, tid: str, settings: dict[str, Any]) -> None:
        """Replace tournament ``tid``'s settings (the ladder adds each run's seed)."""
        with self.transaction():
            self.db.execute("UPDATE tournaments SET settings = ? WHERE id = ?",
                            (jsonout.dumps(settings), tid))

    def tournaments(self) -> list[tuple[str, str, str, str]]:
        with self._reading("tournaments"):
            return list(self.db.execute(
                "SELECT id, created, kind, status FROM tournaments ORDER BY created"))

    def set_status(self, tid: str, status: str) -> None:
        try:
            self.db.execute("UPDATE tournaments SET status = ? WHERE id = ?", (status, tid))
        except self.errors.OperationalError as exc:
            raise _write_error(self.name, exc) from None

    # -- games

    def add_game(self, row: GameRow) -> None:
        """Write one finished game and its seats atomically. Raises StoreError if the
        store cannot be written (disk full, file size limit, permission): the games
        stored before are intact."""
        self.add_games([row])

    def add_games(self, rows: Sequence[GameRow]) -> None:
        """Write finished games and their seats in one transaction: all of them or none
        (one commit for many games is what keeps a fast tournament's parent cheap).
        Raises StoreError as ``add_game`` does; then none of ``rows`` is stored."""
        try:
            with self.transaction():
                self.insert_games(rows)
        except (self.errors.OperationalError, self.errors.DatabaseError) as exc:
            if isinstance(exc, self.errors.IntegrityError):
                raise
            raise StoreError(f"cannot write to the store {self.name}: {_one_line(exc)}; every game stored "
                             f"before is intact") from None

    def insert_game(self, row: GameRow) -> None:
        """Write one game and its seats inside the caller's transaction."""
        self.insert_games([row])

    def insert_games(self, rows: Sequence[GameRow]) -> None:
        """Write games and their seats inside the caller's transaction."""
        rules, text = None, ""
        games = []
        for row in rows:
            if row.rules is not rules:  # a run's games share one rules map: encode it once
                rules, text = row.rules, jsonout.dumps(row.rules)
            games.append((row.tournament_id, row.game_index, row.deal_seed, row.rotation, text,
                          row.log_file, row.log_line, row.termination, row.durak, row.started,
                          row.ended))
        self.db.executemany(
            "INSERT INTO games (tournament_id, game_index, deal_seed, rotation, rules, log_file, "
            "log_line, termination, durak, started, ended) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            games)
        self.db.executemany(
            "INSERT INTO seats (tournament_id, game_index, seat, bot, result, forfeit, decisions, "
            "time_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(row.tournament_id, row.game_index, s.seat, s.bot, s.result, s.forfeit,
              s.decisions, s.time_used) for row in rows for s in row.seats])

    def delete_game(self, tid: str, index: int) -> None:
        """Remove one game and its seats (if stored), inside the caller's transaction."""
        self.db.execute("DELETE FROM seats WHERE tournament_id = ? AND game_index = ?", (tid, index))
        self.db.execute("DELETE FROM games WHERE tournament_id = ? AND game_index = ?", (tid, index))

    def finished_indices(self, tid: str) -> set[int]:
        with self._reading("games"):
            return {r[0] for r in self.db.execute(
                "SELECT game_index FROM games WHERE tournament_id = ?", (tid,))}

    def games(self, tid: str | None = None, from_index: int = 0,
              below: int | None = None) -> list[GameRow]:
        """Every finished game (of one tournament, or all; with ``from_index``, of that
        tournament only those with an index that high or higher, and with ``below``, lower
        than that), in order."""
        where, args = ("WHERE g.tournament_id = ? AND g.game_index >= ?", (tid, from_index)) if tid else ("", ())
        if tid and below is not None:
            where, args = where + " AND g.game_index < ?", (*args, below)
        rows = self.db.execute(
            "SELECT g.tournament_id, g.game_index, g.deal_seed, g.rotation, g.rules, g.log_file, "
            "g.log_line, g.termination, g.durak, g.started, g.ended, s.seat, s.bot, s.result, "
            "s.forfeit, s.decisions, s.time_used FROM games g JOIN seats s ON "
            "s.tournament_id = g.tournament_id AND s.game_index = g.game_index "
            f"{where} ORDER BY g.tournament_id, g.game_index, s.seat", args)
        out: list[GameRow] = []
        with self._reading("games"):
            for r in rows:
                if not out or (out[-1].tournament_id, out[-1].game_index) != (r[0], r[1]):
                    if out:
                        self._check_game(out[-1])
                    out.append(GameRow(r[0], r[1], r[2], r[3], self._rules(r), r[5], r[6], r[7],
                                       r[8], r[9], r[10], []))
                out[-1].seats.append(self._seat(r))
            if out:
                self._check_game(out[-1])
        return out

    # -- rows as read: the file is input, so every row is checked before it is trusted

    def _damaged(self, table: str, key: tuple[Any, ...], what: str) -> StoreError:
        row = ", ".join(map(repr, key))
        return StoreError(f"{self.name}: damaged store: table {table}, row ({row}): {what}; "
                          f"restore it from a backup or delete that row")

    def _reading(self, what: str) -> _Reading:
        return _Reading(self, what)

    def _rules(self, r: Sequence[Any]) -> dict[str, Any]:
        try:
            rules = json.loads(r[4])
        except (TypeError, ValueError):
            raise self._damaged("games", (r[0], r[1]), f"rules {str(r[4])[:40]!r} are not JSON") from None
        if not isinstance(rules, dict):
            raise self._damaged("games", (r[0], r[1]), "rules are not a JSON map")
        for i, (name, kind) in enumerate((("tournament_id", str), ("game_index", int),
                                          ("deal_seed", str), ("rotation", int))):
            if not _is(r[i], kind):
                raise self._damaged("games", (r[0], r[1]), f"{name} {r[i]!r} is not {kind.__name__}")
        for i, name in ((7, "termination"), (9, "started"), (10, "ended")):
            if not isinstance(r[i], str):
                raise self._damaged("games", (r[0], r[1]), f"{name} {r[i]!r} is not text")
        if r[8] is not None and not isinstance(r[8], str):
            raise self._damaged("games", (r[0], r[1]), f"durak {r[8]!r} is not a bot name")
        if (r[5] is not None and not isinstance(r[5], str)) or (r[6] is not None and not _is(r[6], int)):
            raise self._damaged("games", (r[0], r[1]), f"log_file/log_line {r[5]!r}:{r[6]!r} is not a place")
        return rules

    def _seat(self, r: Sequence[Any]) -> SeatRow:
        key = (r[0], r[1], r[11])
        checks = ((r[11], int, "seat"), (r[12], str, "bot"), (r[15], int, "decisions"),
                  (r[16], float, "time_used"))
        for value, kind, name in checks:
            if not _is(value, kind) or (kind is not str and value < 0):
                raise self._damaged("seats", key, f"{name} {value!r} is not "
                                    f"{'a name' if kind is str else 'a number >= 0'}")
        if r[13] not in ("durak", "safe", "draw"):
            raise self._damaged("seats", key, f"result {r[13]!r} is not durak, safe or draw")
        if r[14] is not None and not isinstance(r[14], str):
            raise self._damaged("seats", key, f"forfeit {r[14]!r} is not a kind")
        return SeatRow(r[11], r[12], r[13], r[14], r[15], float(r[16]))

    def _check_game(self, g: GameRow) -> None:
        key = (g.tournament_id, g.game_index)
        seats = sorted(s.seat for s in g.seats)
        if seats != list(range(len(seats))) or seat_count_error(len(seats)):
            raise self._damaged("seats", key,
                                f"the game's seats are {seats}, not 0..n-1 for {SEATS_TEXT} players")
        if g.durak is not None and g.durak not in g.players:
            raise self._damaged("games", key, f"durak {g.durak!r} is not one of its players")

    # -- ladder

    def ladder(self) -> list[tuple[str, float, int]]:
        with self._reading("ladder"):
            rows = list(self.db.execute("SELECT bot, rating, games FROM ladder ORDER BY rating DESC, bot"))
        for r in rows:
            if not (isinstance(r[0], str) and _is(r[1], float) and _is(r[2], int)):
                raise self._damaged("ladder", (r[0],), f"rating {r[1]!r} or games {r[2]!r} is not a number")
        return [(r[0], float(r[1]), r[2]) for r in rows]

    def ladder_rating(self, bot: str) -> tuple[float, int] | None:
        with self._reading("ladder"):
            row = self.db.execute("SELECT rating, games FROM ladder WHERE bot = ?", (bot,)).fetchone()
        if row is None:
            return None
        if not (_is(row[0], float) and _is(row[1], int)):
            raise self._damaged("ladder", (bot,), f"rating {row[0]!r} or games {row[1]!r} is not a number")
        return float(row[0]), row[1]

    def set_ladder(self, bot: str, rating: float, games: int) -> None:
        if self.ladder_rating(bot) is None:
            self.db.execute("INSERT INTO ladder (bot, rating, games, updated) VALUES (?, ?, ?, ?)",
                            (bot, rating, games, utc_now()))
        else:
            self.db.execute("UPDATE ladder SET rating = ?, games = ?, updated = ? WHERE bot = ?",
                            (rating, games, utc_now(), bot))

    def add_history(self, bot: str, tid: str, index: int, before: float, after: float) -> None:
        self.db.execute(
            "INSERT INTO ladder_history (bot, tournament_id, game_index, rating_before, "
            "rating_after, at) VALUES (?, ?, ?, ?, ?, ?)", (bot, tid, index, before, after, utc_now()))

    def history(self, bot: str) -> list[tuple[str, int, float, float, str]]:
        with self._reading("ladder_history"):
            rows = list(self.db.execute(
                "SELECT tournament_id, game_index, rating_before, rating_after, at FROM ladder_history "
                "WHERE bot = ? ORDER BY at, tournament_id, game_index", (bot,)))
        for r in rows:
            if not (_is(r[1], int) and _is(r[2], float) and _is(r[3], float)):
                raise self._damaged("ladder_history", (bot, r[0], r[1]), "a rating is not a number")
        return [(r[0], r[1], float(r[2]), float(r[3]), r[4]) for r in rows]


def _write_error(name: str, exc: BaseException) -> StoreError:
    return StoreError(f"cannot write to the store {name}: {_one_line(exc)} (disk full, a file "
                      f"size limit, no permission, or the server gone?); everything stored before "
                      f"is intact")


def _busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's SQLITE_BUSY (any extended code: recovery, snapshot)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and code is not None and code & 0xFF == sqlite3.SQLITE_BUSY


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _is(value: Any, kind: type) -> bool:
    """``value`` is a ``kind`` as SQLite gives it back (an int counts as a float; bools
    never come back from SQLite, text never counts as a number)."""
    if kind is float:
        return isinstance(value, (int, float)) and value == value and abs(value) != float("inf")
    return isinstance(value, kind)


class _Reading:
    """``with store._reading(table):`` turns SQLite's "malformed" errors met while
    reading into a StoreError naming the store (a damaged page found mid-query)."""

    def __init__(self, store: Store, what: str) -> None:
        self.store, self.what = store, what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if isinstance(exc, self.store.errors.DatabaseError):
            raise StoreError(f"{self.store.name}: damaged store: reading {self.what}: {exc}; "
                             f"restore it from a backup") from None


def _not_writable(path: Path) -> str | None:
    """Why this process may not write the store ``path`` by permission (None: it may).
    SQLite keeps its -wal and -shm files beside the store, so its directory counts."""
    directory = path.parent if str(path.parent) else Path(".")
    if not os.access(directory, os.W_OK | os.X_OK):
        return (f"no permission to write in its directory {directory}, where SQLite keeps the "
                f"store's -wal and -shm files")
    if path.exists() and not os.access(path, os.W_OK):
        return "no permission to write the file"
    return None


def _make_private(path: Path) -> None:
    """Make a store file 0600 if it exists and is ours; another user's is left alone."""
    try:
        if path.exists() and path.stat().st_uid == os.getuid():
            os.chmod(path, PRIVATE_FILE)
    except OSError:
        pass


def open_store(path: Path | PgUrl | str, check: bool = False) -> Store:
    """Open (creating or migrating) the store at ``path`` (a file, or a PostgreSQL URL);
    with ``check``, run the database's integrity check first (for commands that trust
    what the store holds: ratings, --resume, verify). Raises StoreError."""
    store = Store(path)
    if check:
        try:
            store.check_integrity()
        except BaseException:
            store.close()
            raise
    return store


def iter_rated(rows: Sequence[GameRow]) -> Iterator[Any]:
    """The games as ``ratings.RatedGame`` values."""
    from ..scoring.ratings import RatedGame

    for g in rows:
        if g.durak is not None:
            yield RatedGame(tuple(g.players), durak=g.durak)
        else:
            drawn = g.drawn or g.players
            yield RatedGame(tuple(g.players), last_two=tuple(drawn))
