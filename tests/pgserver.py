"""A real PostgreSQL server for the tests: the machine's ``initdb`` and ``pg_ctl``.

``pg_server`` (one per test session) makes a cluster in a temporary directory and starts
it on a free loopback port, trusting local connections (it is reachable only from this
machine, for the session). ``initdb`` refuses to run as root, so as root the cluster is
made and run as the ``postgres`` user (or uid 65534) owning its directory. Without the
binaries the tests that need them skip, visibly; on CI (``CI=true``) they fail instead,
as ``.ci/run`` installs the ``postgresql`` package.

``pg_url`` gives each test a fresh, empty database on that server.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

PG_BIN_DIRS = [Path("/usr/lib/postgresql/15/bin"), *sorted(Path("/usr/lib/postgresql").glob("*/bin"),
                                                             reverse=True)]
USER = "durak"
PASSWORD_USER, PASSWORD = "pwuser", "right-horse"  #: the one user that needs a password


def pg_bin(name: str) -> Path | None:
    for d in PG_BIN_DIRS:
        if (d / name).is_file():
            return d / name
    found = shutil.which(name)
    return Path(found) if found else None


def missing(reason: str) -> None:
    """Skip visibly, or on CI fail: there the component must exist."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    host: str
    port: int
    root: Path

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://{USER}@{self.host}:{self.port}/{db}"

    def create_database(self) -> str:
        import psycopg

        name = "t_" + secrets.token_hex(6)
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
def cluster(listen: str = "127.0.0.1", clients: tuple[str, ...] = ()) -> Iterator[PgServer]:
    """A running server listening on ``listen`` (and trusting ``clients`` too, CIDRs), in a
    temporary directory; stopped and removed afterwards. Skips (on CI: fails) without
    the binaries."""
    initdb, pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        missing("PostgreSQL's initdb/pg_ctl are not installed (apt-get install postgresql)")
    assert initdb is not None and pg_ctl is not None
    try:
        import psycopg
    except ImportError:
        missing("psycopg is not installed (pip install -e '.[test]')")
    root = Path(tempfile.mkdtemp(prefix="durak-pg-"))
    runner = _runner()
    if runner:
        uid = int(runner[1].split("=")[1])
        gid = int(runner[2].split("=")[1])
        os.chown(root, uid, gid)
    data, log = root / "data", root / "server.log"
    port = free_port()
    env = dict(os.environ, LC_ALL="C")
    subprocess.run([*runner, str(initdb), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8",
                    "--no-sync"], check=True, capture_output=True, env=env, cwd=root)
    # One user signs in with a password (the tests of a wrong one); the rest are trusted.
    (data / "pg_hba.conf").write_text(
        f"local all all trust\nhost all {PASSWORD_USER} 127.0.0.1/32 scram-sha-256\n"
        "host all all 127.0.0.1/32 trust\n" + "".join(f"host all all {c} trust\n" for c in clients))
    # fsync off: a test cluster dies with the session; max_connections for many workers.
    options = (f"-p {port} -k {root} -c listen_addresses={listen} -c fsync=off "
               f"-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
    started = subprocess.run([*runner, str(pg_ctl), "-D", str(data), "-o", options, "-l", str(log),
                              "-w", "-t", "60", "start"], capture_output=True, text=True, env=env, cwd=root)
    if started.returncode != 0:
        text = log.read_text() if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {started.stderr}\n{text}")
    server = PgServer(listen.split(",")[0], port, root)
    try:
        with psycopg.connect(f"postgresql://{USER}@/postgres?host={root}&port={port}",
                             autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {PASSWORD_USER} LOGIN PASSWORD '{PASSWORD}'")
            conn.execute(f"CREATE DATABASE {PASSWORD_USER} OWNER {PASSWORD_USER}")
        yield server
    finally:
        subprocess.run([*runner, str(pg_ctl), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, env=env, cwd=root)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    with cluster() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh, empty database on the session's server: its URL."""
    return pg_server.create_database()
