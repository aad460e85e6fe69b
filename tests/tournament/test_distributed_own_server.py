"""Distributed runs with a server of their own: workers as on separate
machines, each in a network namespace of its own joined to this one by a veth pair,
reaching the PostgreSQL server over that link (the server's loopback is not theirs;
needs root and ``ip``); and a server that dies mid-run."""

from __future__ import annotations

import json
import random
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from test_distributed import DEADLINE, env, finish, queue, start, wait_for

from pgserver import cluster, missing
from referee.records.storedb import redact
from support import DURAK_REF

pytestmark = pytest.mark.process


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@contextmanager
def namespace() -> Iterator[tuple[str, str, str]]:
    """A fresh network namespace with a veth link to this one: (its name, this side's
    address, its address), a /30 of 10.213.0.0/16 picked at random."""
    tag = secrets.token_hex(3)
    name, outside, inside = f"durak-{tag}", f"dh{tag}", f"dn{tag}"
    third, fourth = random.randrange(256), 4 * random.randrange(64)
    here, there = f"10.213.{third}.{fourth + 1}", f"10.213.{third}.{fourth + 2}"
    try:
        ip("netns", "add", name)
    except (OSError, subprocess.CalledProcessError) as exc:
        missing(f"cannot make a network namespace (needs root and iproute2): {exc}")
    try:
        ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        ip("link", "set", inside, "netns", name)
        ip("addr", "add", f"{here}/30", "dev", outside)
        ip("link", "set", outside, "up")
        ip("netns", "exec", name, "ip", "addr", "add", f"{there}/30", "dev", inside)
        ip("netns", "exec", name, "ip", "link", "set", inside, "up")
        ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield name, here, there
    finally:
        subprocess.run(["ip", "link", "del", outside], capture_output=True)
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def reachable(ns: str, host: str, port: int) -> bool:
    probe = (f"import socket; s = socket.socket(); s.settimeout(5); "
             f"raise SystemExit(s.connect_ex(({host!r}, {port})))")
    return subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", probe],
                          capture_output=True).returncode == 0


def test_workers_in_their_own_network_namespaces_play_over_a_real_link(tmp_path: Path) -> None:
    if shutil.which("ip") is None:
        missing("iproute2 (ip) is not installed")
    with ExitStack() as stack:
        spaces = [stack.enter_context(namespace()) for _ in range(2)]
        listen = ",".join(["127.0.0.1", *(here for _, here, _ in spaces)])
        server = stack.enter_context(cluster(listen, tuple(f"{there}/32" for _, _, there in spaces)))
        db = server.create_database().rsplit("/", 1)[1]
        for ns, here, _ in spaces:
            assert not reachable(ns, "127.0.0.1", server.port)  # its loopback is its own
            assert reachable(ns, here, server.port)
        url = f"postgresql://durak:{server.password}@127.0.0.1:{server.port}/{db}"
        coordinator = start("tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy",
                            "--bot", "c=builtin:random", "--games", "4", "--seed", "8", "--db", url,
                            "--distributed", "--json", cwd=tmp_path)
        try:
            wait_for("the schedule in the queue", lambda: len(queue(url)) == 12)
            workers = [subprocess.Popen(
                ["ip", "netns", "exec", ns, str(DURAK_REF), "worker", "--db",
                 f"postgresql://durak:{server.password}@{here}:{server.port}/{db}", "--exit-when-idle", "--poll", "0.05",
                 "--json"], cwd=tmp_path, env=env(), text=True, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE) for ns, here, _ in spaces]
            results = [w.communicate(timeout=DEADLINE) for w in workers]
            assert [w.returncode for w in workers] == [0, 0], [r[1] for r in results]
            assert sum(json.loads(r[0])["stored"] for r in results) == 12
            code, out, err = finish(coordinator)
            assert code == 0, err
            assert json.loads(out)["games"] == 12
        finally:
            if coordinator.poll() is None:
                coordinator.kill()
            coordinator.communicate()


def test_a_server_that_dies_mid_run_is_a_clear_error_for_coordinator_and_worker(tmp_path: Path) -> None:
    import os
    import signal

    slow = Path(__file__).resolve().parent / "bots" / "slow_bot.py"
    with cluster() as server:
        url = server.create_database()
        coordinator = start("tournament", "--bot", f"s={sys.executable} {slow} dist-dies-{tmp_path.name}",
                            "--bot", "g=builtin:greedy", "--games", "2", "--seed", "1", "--db", url,
                            "--distributed", "--sandbox", "none", "--move-time", "600", cwd=tmp_path)
        worker = start("worker", "--db", url, "--poll", "0.05", "--lease", "0.6", cwd=tmp_path,
                       DURAK_BOT_DELAY="0.05")
        try:
            wait_for("a game in play", lambda: [r for r in queue(url) if r[3] is not None])
            # Immediate shutdown (SIGQUIT to the postmaster, by its pid): every connection drops.
            postmaster = int((server.root / "data" / "postmaster.pid").read_text().split()[0])
            os.kill(postmaster, signal.SIGQUIT)
            for proc, who in ((coordinator, "coordinator"), (worker, "worker")):
                code, _, err = finish(proc)
                assert code == 2, (who, err)
                assert f"the store {redact(url)} failed" in err and "Traceback" not in err, (who, err)
        finally:
            for proc in (coordinator, worker):
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
