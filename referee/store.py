"""The result store: every tournament and ladder game in one SQL database.

SQLite by default (``logs/durak.sqlite``). The SQL is plain and portable on purpose (no
AUTOINCREMENT, no SQLite-only functions or upserts, natural composite keys, times as
ISO-8601 text, JSON settings as text) so the same schema runs on PostgreSQL when several
machines share one ladder. Only the placeholder style differs between drivers; every
statement lives in this module.

Schema version 1::

    schema_version(version)
    bots(name PK, command, first_seen, token_hash)
    tournaments(id PK, created, kind, settings, status)
    games(tournament_id, game_index, deal_seed, rotation, rules, log_file, log_line,
          termination, durak, started, ended)               PK (tournament_id, game_index)
    seats(tournament_id, game_index, seat, bot, result, forfeit, decisions, time_used)
                                                            PK (tournament_id, game_index, seat)
    ladder(bot PK, rating, games, updated)
    ladder_history(bot, tournament_id, game_index, rating_before, rating_after, at)

A game is written with its seats in one transaction, so a game is either wholly in
the store or not at all: that is what makes resuming safe.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .matchlog import PRIVATE_FILE, private_mkdir, private_open, utc_now

SCHEMA_VERSION = 1

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


class StoreError(RuntimeError):
    """The store cannot be used: not a database, from a newer durak-ref, unwritable,
    or a tournament that does not exist. The message names the file and what to do."""


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

    def __init__(self, path: Path) -> None:
        self.path = path
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
            self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a usable durak-ref store ({exc}); give another --db "
                             f"path or move the file away") from None
        try:
            self.db.execute("PRAGMA foreign_keys = ON")
            # Check the schema before anything writes to the file: a store we refuse
            # (not ours, or from a newer durak-ref) must be left byte for byte as it was.
            tables = self._check_schema()
            # Readers (sqlite3 logs/durak.sqlite) never block the writer; one fsync per
            # checkpoint rather than per game. Pragmas, not schema: portable SQL stays so.
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
            for suffix in ("-wal", "-shm", "-journal"):  # left by an older durak-ref
                _make_private(path.with_name(path.name + suffix))
            self._migrate(tables)
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise StoreError(f"{path}: not a usable durak-ref store ({exc}); give another --db "
                             f"path or move the file away") from None
        except BaseException:
            self.db.close()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # -- schema

    def _check_schema(self) -> set[str]:
        """Read-only checks: the file's tables; StoreError if it is not a store we can use."""
        tables = {r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_version" not in tables:
            if tables:
                raise StoreError(f"{self.path}: holds tables {sorted(tables)} but no durak-ref "
                                 f"schema version; it is not a durak-ref store")
            return tables
        row = self.db.execute("SELECT version FROM schema_version").fetchone()
        version = row[0] if row else None
        if version is None or not isinstance(version, int):
            raise StoreError(f"{self.path}: the schema version is missing or unreadable")
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema version {version} is newer than this durak-ref "
                             f"understands ({SCHEMA_VERSION}); upgrade durak-ref to use this store")
        return tables

    def _migrate(self, tables: set[str]) -> None:
        if "schema_version" not in tables:
            with self.transaction():
                for stmt in _SCHEMA:
                    self.db.execute(stmt)
                self.db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            return
        # Version 1 is the first; later versions add their migrations here, in order.

    # -- transactions

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> None:
            self.db.execute("BEGIN")

        def __exit__(self, kind: object, exc: object, tb: object) -> None:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def transaction(self) -> Store._Tx:
        """``with store.transaction(): ...``: all or nothing."""
        return Store._Tx(self.db)

    # -- bots and tournaments

    def ensure_bot(self, name: str, command: str) -> None:
        if self.db.execute("SELECT 1 FROM bots WHERE name = ?", (name,)).fetchone() is None:
            self.db.execute("INSERT INTO bots (name, command, first_seen) VALUES (?, ?, ?)",
                            (name, command, utc_now()))

    def bot_command(self, name: str) -> str | None:
        row = self.db.execute("SELECT command FROM bots WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def set_token_hash(self, name: str, token_hash: str | None) -> None:
        """Set (None: revoke) the arena token of ``name``."""
        self.db.execute("UPDATE bots SET token_hash = ? WHERE name = ?", (token_hash, name))

    def data_version(self) -> int:
        """A number that changes whenever another connection (another process: say
        ``durak-ref register``) commits to the store; this connection's own writes do not
        change it. Cheap enough to ask before every authentication."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def token_hashes(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self.db.execute(
            "SELECT name, token_hash FROM bots WHERE token_hash IS NOT NULL")}

    def bots(self) -> list[tuple[str, str, str]]:
        return list(self.db.execute("SELECT name, command, first_seen FROM bots ORDER BY name"))

    def create_tournament(self, tid: str, kind: str, settings: dict[str, Any]) -> None:
        with self.transaction():
            self.db.execute(
                "INSERT INTO tournaments (id, created, kind, settings, status) VALUES (?, ?, ?, ?, ?)",
                (tid, utc_now(), kind, json.dumps(settings), "running"))

    def tournament(self, tid: str) -> tuple[str, dict[str, Any], str]:
        """(kind, settings, status) of tournament ``tid``; StoreError if there is none."""
        row = self.db.execute("SELECT kind, settings, status FROM tournaments WHERE id = ?",
                              (tid,)).fetchone()
        if row is None:
            known = [r[0] for r in self.db.execute(
                "SELECT id FROM tournaments ORDER BY created DESC")][:10]
            raise StoreError(f"{self.path}: no tournament {tid!r}"
                             + (f"; recent ones: {', '.join(known)}" if known else "; the store has none"))
        try:
            settings = json.loads(row[1])
        except json.JSONDecodeError as exc:
            raise StoreError(f"{self.path}: tournament {tid}'s settings are corrupt ({exc})") from None
        return row[0], settings, row[2]

    def set_settings(self, tid: str, settings: dict[str, Any]) -> None:
        """Replace tournament ``tid``'s settings (the ladder adds each run's seed)."""
        with self.transaction():
            self.db.execute("UPDATE tournaments SET settings = ? WHERE id = ?",
                            (json.dumps(settings), tid))

    def tournaments(self) -> list[tuple[str, str, str, str]]:
        return list(self.db.execute(
            "SELECT id, created, kind, status FROM tournaments ORDER BY created"))

    def set_status(self, tid: str, status: str) -> None:
        self.db.execute("UPDATE tournaments SET status = ? WHERE id = ?", (status, tid))

    # -- games

    def add_game(self, row: GameRow) -> None:
        """Write one finished game and its seats atomically."""
        with self.transaction():
            self.insert_game(row)

    def insert_game(self, row: GameRow) -> None:
        """Write one game and its seats inside the caller's transaction."""
        self.db.execute(
            "INSERT INTO games (tournament_id, game_index, deal_seed, rotation, rules, log_file, "
            "log_line, termination, durak, started, ended) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.tournament_id, row.game_index, row.deal_seed, row.rotation,
             json.dumps(row.rules), row.log_file, row.log_line, row.termination, row.durak,
             row.started, row.ended))
        self.db.executemany(
            "INSERT INTO seats (tournament_id, game_index, seat, bot, result, forfeit, decisions, "
            "time_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(row.tournament_id, row.game_index, s.seat, s.bot, s.result, s.forfeit,
              s.decisions, s.time_used) for s in row.seats])

    def delete_game(self, tid: str, index: int) -> None:
        """Remove one game and its seats (if stored), inside the caller's transaction."""
        self.db.execute("DELETE FROM seats WHERE tournament_id = ? AND game_index = ?", (tid, index))
        self.db.execute("DELETE FROM games WHERE tournament_id = ? AND game_index = ?", (tid, index))

    def finished_indices(self, tid: str) -> set[int]:
        return {r[0] for r in self.db.execute(
            "SELECT game_index FROM games WHERE tournament_id = ?", (tid,))}

    def games(self, tid: str | None = None) -> list[GameRow]:
        """Every finished game (of one tournament, or all), in order."""
        where, args = ("WHERE g.tournament_id = ?", (tid,)) if tid else ("", ())
        rows = self.db.execute(
            "SELECT g.tournament_id, g.game_index, g.deal_seed, g.rotation, g.rules, g.log_file, "
            "g.log_line, g.termination, g.durak, g.started, g.ended, s.seat, s.bot, s.result, "
            "s.forfeit, s.decisions, s.time_used FROM games g JOIN seats s ON "
            "s.tournament_id = g.tournament_id AND s.game_index = g.game_index "
            f"{where} ORDER BY g.tournament_id, g.game_index, s.seat", args)
        out: list[GameRow] = []
        for r in rows:
            if not out or (out[-1].tournament_id, out[-1].game_index) != (r[0], r[1]):
                out.append(GameRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7],
                                   r[8], r[9], r[10], []))
            out[-1].seats.append(SeatRow(r[11], r[12], r[13], r[14], r[15], r[16]))
        return out

    # -- ladder

    def ladder(self) -> list[tuple[str, float, int]]:
        return [(r[0], r[1], r[2]) for r in self.db.execute(
            "SELECT bot, rating, games FROM ladder ORDER BY rating DESC, bot")]

    def ladder_rating(self, bot: str) -> tuple[float, int] | None:
        row = self.db.execute("SELECT rating, games FROM ladder WHERE bot = ?", (bot,)).fetchone()
        return (row[0], row[1]) if row else None

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
        return [(r[0], r[1], r[2], r[3], r[4]) for r in self.db.execute(
            "SELECT tournament_id, game_index, rating_before, rating_after, at FROM ladder_history "
            "WHERE bot = ? ORDER BY at, tournament_id, game_index", (bot,))]


def _make_private(path: Path) -> None:
    """Make a store file 0600 if it exists and is ours; another user's is left alone."""
    try:
        if path.exists() and path.stat().st_uid == os.getuid():
            os.chmod(path, PRIVATE_FILE)
    except OSError:
        pass


def open_store(path: Path) -> Store:
    """Open (creating or migrating) the store at ``path``. Raises StoreError."""
    return Store(path)


def iter_rated(rows: Sequence[GameRow]) -> Iterator[Any]:
    """The games as ``ratings.RatedGame`` values."""
    from .ratings import RatedGame

    for g in rows:
        if g.durak is not None:
            yield RatedGame(tuple(g.players), durak=g.durak)
        else:
            drawn = g.drawn or g.players
            yield RatedGame(tuple(g.players), last_two=tuple(drawn))
