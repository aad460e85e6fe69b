"""The store's two back ends: an SQLite file (the embedded default) or a PostgreSQL server.

``--db`` (or the environment variable ``DURAK_DB``) names either a file path (SQLite) or
a URL ``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB`` (PostgreSQL, through psycopg 3).
``parse_target`` tells them apart; ``connect`` opens a ``Backend``: the connection plus
the few things the two dialects say differently (listing tables and columns, the
integrity check, the lock that serialises creating a fresh schema, placeholders). Every
portable statement stays in referee/records/store.py; this module holds only the dialects.

A URL is shown without its password everywhere (``redact``): in errors, progress lines
and resume commands. Once connected to a server, the process drops the store's address
and credentials from its environment (``hide_credentials``): every bot it starts
inherits that environment, and a bot that learnt them could write results of its own.
(A password written into ``--db`` is on the command line, which unsandboxed bots can
read in /proc: prefer ``~/.pgpass`` or ``PGPASSWORD``.)
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..errors import UserError

PG_SCHEMES = ("postgresql", "postgres")
#: The advisory-lock key (any fixed 64-bit number) that serialises schema creation and
#: migration on a PostgreSQL server: two processes opening one fresh database at once.
_MIGRATION_LOCK = 0x6475_72616B  # "durak"


#: Environment variables that carry the store's address or credentials.
CREDENTIAL_VARIABLES = ("DURAK_DB", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE")
#: libpq's password file as the environment named it when durak-ref started.
PASSFILE_AT_START = os.environ.get("PGPASSFILE")


def hide_credentials() -> None:
    """Remove the store's URL and password from this process's environment (the
    connection is open; bots and the referee processes that start them must not see them)."""
    for name in CREDENTIAL_VARIABLES:
        os.environ.pop(name, None)


class TargetError(UserError, ValueError):
    """``--db`` names no usable store location (a malformed URL): the user's input."""

    hint = "give --db a file path or postgresql://USER@HOST:PORT/DB"


@dataclass(frozen=True)
class PgUrl:
    """A PostgreSQL store's URL, as given (``url``, password included: it connects)."""

    url: str

    def __str__(self) -> str:
        return redact(self.url)


def parse_target(text: str | Path | PgUrl) -> Path | PgUrl:
    """A ``--db`` value: a PgUrl for ``postgresql://`` / ``postgres://``, else a Path
    (an SQLite file). Raises TargetError for a URL that names no database."""
    if isinstance(text, (Path, PgUrl)):
        return text
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme not in PG_SCHEMES:
        if scheme:
            raise TargetError(f"--db {redact(text)}: unknown store URL scheme {scheme!r}; give a "
                              f"file path (SQLite) or postgresql://USER@HOST:PORT/DB")
        return Path(text)
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as exc:
        raise TargetError(f"--db {redact(text)}: not a PostgreSQL URL ({exc}); expected "
                          f"postgresql://USER@HOST:PORT/DB") from None
    if not parts.hostname or not parts.path.strip("/"):
        raise TargetError(f"--db {redact(text)}: a PostgreSQL URL needs a host and a database: "
                          f"postgresql://USER@HOST:PORT/DB")
    return PgUrl(text)


def redact(url: str) -> str:
    """``url`` without its password (``user:***@host``); other text unchanged."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url.split("@", 1)[-1] if "@" in url else url
    if not password:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


class Backend:
    """An open connection in one dialect. ``db`` has DB-API ``execute(sql, args)``
    returning an iterable cursor (placeholders ``?`` in both dialects) and
    ``executemany``; ``errors`` is the driver module (its ``Error``, ``DatabaseError``,
    ``OperationalError``, ``IntegrityError``)."""

    name: str  #: how messages name the store (a path, or the URL without its password)
    path: Path | None  #: the SQLite file (None: a server)
    errors: Any
    db: Any
    #: Starts a write transaction.
    begin_write = "BEGIN"

    def tables(self) -> set[str]:
        raise NotImplementedError

    def columns(self, table: str) -> list[str]:
        raise NotImplementedError

    def integrity_problems(self) -> list[str]:
        """Problems found by the database's own consistency check; [] when sound."""
        raise NotImplementedError

    def begin_migration(self) -> None:
        """Begin the transaction that creates or migrates the schema, holding the lock
        that makes a second process wait for it (then find the schema made)."""
        raise NotImplementedError

    def data_version(self) -> int:
        raise NotImplementedError

    def close(self) -> None:
        self.db.close()


class SqliteBackend(Backend):
    # Take the write lock at BEGIN: a deferred transaction that reads and then writes
    # while another process has committed meanwhile fails at once with "database is
    # locked" (SQLite cannot wait there without risking a deadlock), whatever the busy
    # timeout; an immediate one waits for the lock up to the busy timeout instead.
    begin_write = "BEGIN IMMEDIATE"

    def __init__(self, path: Path) -> None:
        self.path, self.name, self.errors = path, str(path), sqlite3
        self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)

    def tables(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def columns(self, table: str) -> list[str]:
        return [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]

    def integrity_problems(self) -> list[str]:
        try:
            rows = [str(r[0]) for r in self.db.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            rows = [str(exc)]
        return [] if rows == ["ok"] else rows

    def begin_migration(self) -> None:
        # The write lock (waiting up to the busy timeout) lets one process create it.
        self.db.execute("BEGIN IMMEDIATE")

    def data_version(self) -> int:
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])


class _PgConnection:
    """psycopg's connection with the store's ``?`` placeholders (the store's SQL never
    contains a literal ``?`` or ``%``)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Any = ()) -> Any:
        return self.conn.execute(sql.replace("?", "%s"), args or None)

    def executemany(self, sql: str, rows: Any) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(sql.replace("?", "%s"), list(rows))

    def close(self) -> None:
        self.conn.close()


class PgBackend(Backend):
    def __init__(self, target: PgUrl, connect_timeout: float = 10) -> None:
        try:
            import psycopg
        except ImportError:  # pragma: no cover - a dependency; installed with durak-ref
            raise ConnectError(f"{target}: PostgreSQL stores need psycopg 3 (pip install "
                               f"'psycopg[binary]')") from None
        self.path, self.name, self.errors = None, str(target), psycopg
        try:
            # Autocommit: every write is in an explicit BEGIN ... COMMIT, as with SQLite.
            conn = psycopg.connect(target.url, autocommit=True, connect_timeout=int(connect_timeout),
                                   application_name="durak-ref")
        except psycopg.Error as exc:
            raise ConnectError(f"cannot connect to the store {target}: {_scrub(exc, target)}; is the "
                               f"server running, and are the URL, user and password right?") from None
        self.db = _PgConnection(conn)
        hide_credentials()

    def tables(self) -> set[str]:
        return {r[0] for r in self.db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}

    def columns(self, table: str) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? ORDER BY ordinal_position", (table,))]

    def integrity_problems(self) -> list[str]:
        return []  # the server keeps its pages consistent; there is no file to scribble on

    def begin_migration(self) -> None:
        self.db.execute("BEGIN")
        self.db.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))

    def data_version(self) -> int:
        # No PRAGMA data_version: a digest of what it guards (the arena's tokens).
        text = "\n".join(f"{r[0]}\t{r[1]}" for r in self.db.execute(
            "SELECT name, token_hash FROM bots WHERE token_hash IS NOT NULL ORDER BY name"))
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:7], "big")


class ConnectError(UserError, RuntimeError):
    """The store's server cannot be reached or refuses us (the user's URL or server)."""

    hint = "check that the server runs and that the URL, user and password are right"


def _scrub(exc: BaseException, target: PgUrl) -> str:
    """The driver's message on one line, without the password should it quote it."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    password = urlsplit(target.url).password
    if password:
        text = text.replace(password, "***").replace(unquote(password), "***")
    return text


def connect(target: Path | PgUrl) -> Backend:
    """Open the back end for ``target``; ConnectError if a server cannot be used. (An
    SQLite file's own problems are the store's to word: see referee/records/store.py.)"""
    if isinstance(target, PgUrl):
        return PgBackend(target)
    return SqliteBackend(target)
