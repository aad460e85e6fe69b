"""A private, throwaway PostgreSQL server made with the machine's ``initdb`` and ``pg_ctl``.

``cluster()`` makes a cluster in a temporary directory, starts it on a free loopback
port trusting local connections (reachable only from this machine, while it runs), and
stops and removes it afterwards. ``initdb`` refuses to run as root, so as root the
cluster is made and run as the ``postgres`` user (or uid 65534) owning its directory.

Used by ``durak-ref bench distributed`` (without ``--db``) and by the tests'
``pg_server`` fixture (tests/pgserver.py): one way of starting a server.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: Where Debian puts the server binaries (not on PATH), newest first after 15.
PG_BIN_DIRS = [Path("/usr/lib/postgresql/15/bin"), *sorted(Path("/usr/lib/postgresql").glob("*/bin"),
                                                             reverse=True)]
USER = "durak"  #: the superuser every cluster made here has


class PgServerError(Exception):
    """No server could be started: ``unavailable`` if this machine lacks what it takes
    (the binaries, psycopg), else it failed to start (the message quotes its log)."""

    def __init__(self, message: str, unavailable: bool = False) -> None:
        super().__init__(message)
        self.unavailable = unavailable


def pg_bin(name: str) -> Path | None:
    """The PostgreSQL program ``name`` (e.g. ``initdb``), or None if it is not installed."""
    for d in PG_BIN_DIRS:
        if (d / name).is_file():
            return d / name
    found = shutil.which(name)
    return Path(found) if found else None


def free_port() -> int:
    """A loopback TCP port free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    """A running server: where it listens, and its directory (data, log, socket)."""

    host: str
    port: int
    root: Path

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://{USER}@{self.host}:{self.port}/{db}"

    def socket_url(self, db: str = "postgres") -> str:
        """The URL over the server's Unix socket (always trusted, whatever ``listen``)."""
        return f"postgresql://{USER}@/{db}?host={self.root}&port={self.port}"

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (``name``, a plain identifier, or a fresh one); its URL."""
        import psycopg

        name = name or "t_" + secrets.token_hex(6)
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


def _runner() -> list[str]:
    """The command prefix that runs initdb/postgres as a non-root user (empty if we are
    not root)."""
    if os.getuid() != 0:
        return []
    try:
        user = pwd.getpwnam("postgres")
        uid, gid = user.pw_uid, user.pw_gid
    except KeyError:
        uid = gid = 65534
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]


@contextmanager
def cluster(listen: str = "127.0.0.1", clients: Sequence[str] = (), hba: Sequence[str] = (),
            durable: bool = False) -> Iterator[PgServer]:
    """A running server listening on ``listen`` (and trusting ``clients`` too, CIDRs; ``hba``
    are pg_hba.conf lines that come before the trust rules), in a temporary directory;
    stopped and removed afterwards. ``durable=False`` turns fsync and synchronous commit
    off (the cluster dies with its user anyway; a server meant to keep data must not);
    ``durable=True`` keeps PostgreSQL's defaults, as a real server has them.
    PgServerError if it cannot be started."""
    initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise PgServerError("PostgreSQL's initdb/pg_ctl are not installed (apt-get install postgresql)",
                            unavailable=True)
    if importlib.util.find_spec("psycopg") is None:
        raise PgServerError("psycopg is not installed (pip install psycopg[binary])", unavailable=True)
    root = Path(tempfile.mkdtemp(prefix="durak-pg-"))
    runner = _runner()
    if runner:
        uid = int(runner[1].split("=")[1])
        gid = int(runner[2].split("=")[1])
        os.chown(root, uid, gid)
    data, log = root / "data", root / "server.log"
    port = free_port()
    env = dict(os.environ, LC_ALL="C")
    try:
        made = subprocess.run([*runner, str(initdb), "-D", str(data), "-U", USER, "--auth=trust", "-E",
                               "UTF8", "--no-sync"], capture_output=True, text=True, env=env, cwd=root)
        if made.returncode != 0:
            raise PgServerError(f"initdb failed: {made.stderr.strip()}")
        (data / "pg_hba.conf").write_text(
            "local all all trust\n" + "".join(f"{line}\n" for line in hba)
            + "host all all 127.0.0.1/32 trust\n" + "".join(f"host all all {c} trust\n" for c in clients))
        # max_connections: many workers, each with a connection per slot.
        options = f"-p {port} -k {root} -c listen_addresses={listen} -c max_connections=200"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        started = subprocess.run([*runner, str(pg_ctl), "-D", str(data), "-o", options, "-l", str(log),
                                  "-w", "-t", "60", "start"], capture_output=True, text=True, env=env,
                                 cwd=root)
        if started.returncode != 0:
            text = log.read_text() if log.exists() else ""
            raise PgServerError(f"PostgreSQL did not start: {started.stderr.strip()}\n{text}")
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        yield PgServer(listen.split(",")[0], port, root)
    finally:
        subprocess.run([*runner, str(pg_ctl), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, env=env, cwd=root)
        shutil.rmtree(root, ignore_errors=True)
