"""A private, throwaway PostgreSQL server made with the machine's ``initdb`` and ``postgres``.

``cluster()`` makes a cluster in a temporary directory, starts it on a free loopback
port, and stops and removes it afterwards. Nothing of it outlives its starter: the
server is a child tied to the starter's life (referee/console/lifetime.py), not a
daemon (``pg_ctl start`` would make one), so a starter killed by SIGKILL takes it along.
Nobody else can sign in: TCP clients need the superuser's password, generated for the
cluster; the Unix socket lies in the cluster's 0700 directory. ``initdb`` refuses to
run as root, so as root the cluster is made and run as the ``postgres`` user (or uid
65534) owning its directory.

Used by ``durak-ref bench distributed`` (without ``--db``) and by the tests'
``pg_server`` fixture (tests/pgserver.py): one way of starting a server.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from ..console.lifetime import tied_to_parent

#: Where Debian puts the server binaries (not on PATH), newest first after 15.
PG_BIN_DIRS = [Path("/usr/lib/postgresql/15/bin"), *sorted(Path("/usr/lib/postgresql").glob("*/bin"),
                                                             reverse=True)]
USER = "durak"  #: the superuser every cluster made here has
START_S = 60.0  #: how long a server may take to take connections


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
    password: str  #: the superuser's: TCP clients must give it
    process: subprocess.Popen[bytes] | None = None  #: the postmaster, our child

    def url(self, db: str = "postgres") -> str:
        """The URL over TCP, the superuser's password in it (str(PgUrl) hides it)."""
        return f"postgresql://{USER}:{self.password}@{self.host}:{self.port}/{db}"

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


@contextmanager
def cluster(listen: str = "127.0.0.1", clients: Sequence[str] = (), hba: Sequence[str] = (),
            durable: bool = False) -> Iterator[PgServer]:
    """A running server listening on ``listen`` (and taking ``clients`` too, CIDRs; ``hba``
    are pg_hba.conf lines that come before the password rules), in a temporary directory;
    stopped and removed afterwards. ``durable=False`` turns fsync and synchronous commit
    off (the cluster dies with its user anyway; a server meant to keep data must not);
    ``durable=True`` keeps PostgreSQL's defaults, as a real server has them.

    The server is this process's child, started from this thread (the main thread: see
    referee/console/lifetime.py), not a daemon: it gets SIGKILL when its starter dies,
    however, and its own processes follow the postmaster. Over TCP every client gives
    the superuser's password (SCRAM; generated here, in ``PgServer.url``); the Unix
    socket, in the 0700 directory of the server's user, trusts whoever can reach it.
    PgServerError if it cannot be started."""
    initdb, postgres = pg_bin("initdb"), pg_bin("postgres")
    if initdb is None or postgres is None:
        raise PgServerError("PostgreSQL's initdb/postgres are not installed (apt-get install postgresql)",
                            unavailable=True)
    if importlib.util.find_spec("psycopg") is None:
        raise PgServerError("psycopg is not installed (pip install psycopg[binary])", unavailable=True)
    root = Path(tempfile.mkdtemp(prefix="durak-pg-"))  # 0700: the socket's directory
    user = _server_user()
    if user is not None:
        os.chown(root, *user)
    server = PgServer(listen.split(",")[0], free_port(), root, secrets.token_urlsafe(24))
    try:
        _initdb(initdb, server, user, hba, clients)
        server.process = _start(postgres, server, user, listen, durable)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        yield server
    finally:
        _stop(server.process)
        shutil.rmtree(root, ignore_errors=True)


def _server_user() -> tuple[int, int] | None:
    """The uid and gid to run initdb and the server as (None: ours; initdb refuses root)."""
    if os.getuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("postgres")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 65534, 65534


def _initdb(initdb: Path, server: PgServer, user: tuple[int, int] | None, hba: Sequence[str],
            clients: Sequence[str]) -> None:
    """Make the cluster in ``server.root``/data: superuser USER with the server's password,
    SCRAM for every TCP client, trust only on the private Unix socket."""
    pwfile = server.root / "pw"
    pwfile.write_text(server.password + "\n")
    os.chmod(pwfile, 0o600)
    if user is not None:
        os.chown(pwfile, *user)
    try:
        made = subprocess.run([str(initdb), "-D", str(server.root / "data"), "-U", USER, "--pwfile", str(pwfile),
                               "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync"],
                              capture_output=True, text=True, env=_env(), cwd=server.root,
                              preexec_fn=tied_to_parent(user))
    finally:
        pwfile.unlink(missing_ok=True)
    if made.returncode != 0:
        raise PgServerError(f"initdb failed: {made.stderr.strip()}")
    (server.root / "data" / "pg_hba.conf").write_text(
        "local all all trust\n" + "".join(f"{line}\n" for line in hba)
        + "host all all 127.0.0.1/32 scram-sha-256\n"
        + "".join(f"host all all {c} scram-sha-256\n" for c in clients))


def _env() -> dict[str, str]:
    return dict(os.environ, LC_ALL="C")


def _start(postgres: Path, server: PgServer, user: tuple[int, int] | None, listen: str,
           durable: bool) -> subprocess.Popen[bytes]:
    """Start the postmaster as our child and wait until it takes connections (60 s)."""
    # max_connections: many workers, each with a connection per slot.
    argv = [str(postgres), "-D", str(server.root / "data"), "-p", str(server.port), "-k", str(server.root),
            "-c", f"listen_addresses={listen}", "-c", "max_connections=200"]
    if not durable:
        argv += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
    with open(server.root / "server.log", "wb") as log:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_env(),
                                   cwd=server.root, preexec_fn=tied_to_parent(user))
    import psycopg

    deadline = time.monotonic() + START_S
    while True:
        try:
            psycopg.connect(server.socket_url(), connect_timeout=5).close()
            return process
        except psycopg.OperationalError:
            if process.poll() is not None or time.monotonic() > deadline:
                _stop(process)
                text = (server.root / "server.log").read_text(errors="replace")
                raise PgServerError(f"PostgreSQL did not start (exit {process.returncode}):\n{text}") from None
            time.sleep(0.05)


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    """Stop the postmaster (SIGQUIT: immediate shutdown; SIGKILL if it lingers)."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGQUIT)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=30)
    process.kill()  # nothing if it has ended (Popen knows)
    process.wait()
