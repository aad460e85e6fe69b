"""Nothing durak-ref starts for itself outlives its run or lets others in.

The private PostgreSQL server (referee/records/pgserver.py: ``bench distributed`` without
``--db``, and the tests' own server) is a child tied to its starter's life: a starter
killed by SIGKILL leaves no server process and no listening socket behind (on 5aa61aa
``pg_ctl`` daemonized it, and a killed test run left one running for hours). While it
runs, nobody else signs in: TCP asks every client for the generated password (5aa61aa
trusted anyone on 127.0.0.1), and its Unix socket lies in a 0700 directory that other
users cannot enter. ``bench distributed``'s worker processes are tied to it the same
way: SIGKILL to the benchmark leaves neither workers nor the server.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pgserver import cluster, missing
from referee.records.pgserver import pg_bin
from support import DURAK_REF, ROOT

pytestmark = pytest.mark.process

DEADLINE_S = 30.0  #: generous: the machine is shared; the kernel acts at once

STARTER = """
import json, sys, time
from referee.records.pgserver import cluster
with cluster() as server:
    print(json.dumps({"port": server.port, "root": str(server.root)}), flush=True)
    time.sleep(600)
"""


@pytest.fixture(autouse=True)
def _needs_postgres() -> None:
    if pg_bin("initdb") is None:
        missing("PostgreSQL's initdb is not installed (apt-get install postgresql)")


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (by parent links in /proc), zombies left out."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def postmaster(root: Path) -> int:
    return int((root / "data" / "postmaster.pid").read_text().split()[0])


def read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "the starter printed nothing"
    return proc.stdout.readline()


def wait_until(what: str, done: Callable[[], bool], timeout: float = DEADLINE_S) -> None:
    """Poll ``done`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"after {timeout:g} s, not yet: {what}"
        time.sleep(0.05)


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@contextmanager
def started(argv: list[str], tmp: Path, **options: Any) -> Iterator[subprocess.Popen[str]]:
    """``argv`` running with TMPDIR ``tmp``; killed, if still running, and its pipes
    closed afterwards."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp), NO_COLOR="1")
    with subprocess.Popen(argv, text=True, cwd=options.pop("cwd", ROOT), env=env, **options) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()


@contextmanager
def short_tmpdir() -> Iterator[Path]:
    """A short TMPDIR (a server's socket path must stay short) that the server's user can
    enter when the tests run as root."""
    tmp = Path(tempfile.mkdtemp(prefix="pl-"))
    tmp.chmod(0o755)
    try:
        yield tmp
    finally:
        subprocess.run(["rm", "-rf", str(tmp)], check=False)


def kill_and_find_nothing_left(starter: subprocess.Popen[str], family: set[int], port: int) -> None:
    """SIGKILL ``starter``: within DEADLINE_S none of ``family`` (what it started) is alive
    and nothing listens on ``port``."""
    assert listening(port) and family
    starter.send_signal(signal.SIGKILL)
    starter.wait()
    wait_until("no process it started left", lambda: not [p for p in family if alive(p)])
    wait_until(f"nothing listening on port {port}", lambda: not listening(port))


def test_a_private_server_ends_when_its_starter_is_killed_with_sigkill() -> None:
    with short_tmpdir() as tmp, started([sys.executable, "-c", STARTER], tmp, stdout=subprocess.PIPE) as starter:
        info = json.loads(read_line(starter, 120))
        server = postmaster(Path(info["root"]))
        family = descendants(starter.pid) | descendants(server) | {server}
        assert len(family) >= 2, family  # the postmaster and its own processes
        kill_and_find_nothing_left(starter, family, info["port"])


def test_a_private_server_lets_in_no_one_without_its_password_or_user() -> None:
    import psycopg

    with cluster() as server:
        with psycopg.connect(server.url(), connect_timeout=10) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://durak@127.0.0.1:{server.port}/postgres", connect_timeout=10)
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://durak:guess@127.0.0.1:{server.port}/postgres", connect_timeout=10)
        hba = (server.root / "data" / "pg_hba.conf").read_text().splitlines()
        rules = [line.split() for line in hba if line.strip() and not line.startswith("#")]
        assert [r for r in rules if "trust" in r] == [["local", "all", "all", "trust"]], rules
        assert server.root.stat().st_mode & 0o777 == 0o700
        if os.getuid() == 0:  # another user cannot even reach the trusted socket
            probe = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1])\n"
                     "except PermissionError:\n    raise SystemExit(3)\n")
            other = subprocess.run(["/usr/bin/python3", "-c", probe, str(server.root / f".s.PGSQL.{server.port}")],
                                   capture_output=True, text=True, user=65534, group=65534, extra_groups=[],
                                   timeout=60)
            assert other.returncode == 3, (other.stdout, other.stderr)


def test_bench_distributed_killed_with_sigkill_leaves_no_worker_and_no_server(tmp_path: Path) -> None:
    argv = [str(DURAK_REF), "bench", "distributed", "--builtin-games", "400", "--rounds", "1", "--max-workers", "1"]
    with short_tmpdir() as tmp, started(argv, tmp, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL) as bench:
        wait_until("a worker playing", lambda: any(b"worker" in cmdline(p) for p in descendants(bench.pid)), 180)
        (root,) = tmp.glob("durak-pg-*")
        port = int((root / "data" / "postmaster.pid").read_text().split()[3])
        kill_and_find_nothing_left(bench, descendants(bench.pid), port)
