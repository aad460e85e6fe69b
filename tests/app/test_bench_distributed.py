"""``durak-ref bench distributed`` measures games/s of 1, 2, 3 ... real ``durak-ref worker``
processes sharing one PostgreSQL store. Speed is never asserted here:
only that the figures are there and well-formed, and that every measured run stored
every game of its schedule exactly once."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from pgserver import missing
from referee.records.pgserver import pg_bin
from referee.records.store import Store
from support import DURAK_REF, cli


def test_bench_distributed_reports_games_per_s_per_worker_count_and_stores_every_game_once(
        pg_url: str, tmp_path: Path) -> None:
    run = cli("bench", "distributed", "--db", pg_url, "--builtin-games", "2", "--rounds", "2",
              "--max-workers", "2", "--programs", "--games", "2", "--json", cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout)
    assert (r["command"], r["version"]) == ("bench distributed", 1)  # docs/JSON.md
    assert r["benchmark"] == "distributed" and r["worker_counts"] == [1, 2] and r["rounds"] == 2
    assert r["server"] == "given (--db)"
    for kind in ("builtin", "program"):
        runs = r[kind]["runs"]
        assert set(runs) == {"1", "2"}
        for n, level in runs.items():
            assert level["games"] == 6  # 3 pairings x 2 games
            assert len(level["games_per_s"]) == 2 and level["games_per_s_median"] > 0
            assert len(level["steady_games_per_s"]) == 2
            assert level["workers_cpu_ms_per_game"] > 0
            # Each round: one count of stored games per worker, adding up to the schedule.
            assert [len(x) for x in level["stored_by_worker"]] == [int(n)] * 2
            assert all(sum(x) == 6 for x in level["stored_by_worker"])
        assert r[kind]["speedup"]["1"] == 1.0
        assert math.isfinite(r[kind]["speedup"]["2"]) and r[kind]["speedup"]["2"] > 0
    # In the store: 2 kinds x 2 worker counts x 2 rounds runs, each with its 6 games
    # stored once (and their log records), each finished.
    with Store(pg_url) as store:
        runs_stored = store.tournaments()
        assert len(runs_stored) == 8
        for tid, *_ in runs_stored:
            assert store.tournament(tid)[2] == "finished"
            assert sorted(g.game_index for g in store.games(tid)) == list(range(6))
        assert store.db.execute("SELECT count(*), count(DISTINCT (tournament_id, game_index)) "
                                "FROM game_records").fetchone() == (48, 48)
    text = cli("bench", "distributed", "--db", pg_url, "--builtin-games", "2", "--rounds", "1",
               "--max-workers", "1", cwd=tmp_path, timeout=300)
    assert text.returncode == 0, text.stderr
    assert "builtin, 1 worker(s): 6 games" in text.stdout
    assert "round 1, builtin, 1 worker(s): 6 games in" in text.stderr


@pytest.mark.process
def test_bench_distributed_without_db_makes_and_removes_a_private_server(tmp_path: Path) -> None:
    if pg_bin("initdb") is None:
        missing("PostgreSQL's initdb/postgres are not installed (apt-get install postgresql)")
    # Its own short temporary directory (a server's socket path must stay short), so that
    # other tests' private servers, made at the same time, are not counted as its own.
    tmp = Path(tempfile.mkdtemp(prefix="bd-"))
    tmp.chmod(0o755)  # the server runs as another user when the tests run as root
    try:
        run = subprocess.run([str(DURAK_REF), "bench", "distributed", "--builtin-games", "2", "--rounds", "1",
                              "--max-workers", "1", "--json"], capture_output=True, text=True, cwd=tmp_path,
                             env=dict(os.environ, TMPDIR=str(tmp), NO_COLOR="1"), timeout=300)
        assert run.returncode == 0, run.stderr
        r = json.loads(run.stdout)
        assert r["server"].startswith("private") and r["builtin"]["runs"]["1"]["games"] == 6
        assert not list(tmp.glob("durak-pg-*"))  # its directory is gone
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.process
def test_bench_distributed_refuses_a_file_store_and_bad_counts(tmp_path: Path) -> None:
    run = cli("bench", "distributed", "--db", tmp_path / "x.sqlite", cwd=tmp_path)
    assert run.returncode == 2
    assert "PostgreSQL" in run.stderr and "x.sqlite" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "x.sqlite").exists()
    run = cli("bench", "distributed", "--db", "postgresql://", cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    for option in ("--rounds", "--max-workers", "--builtin-games"):
        run = cli("bench", "distributed", option, "0", cwd=tmp_path)
        assert run.returncode == 2 and option in run.stderr


@pytest.mark.process
def test_bench_distributed_names_an_unreachable_server(tmp_path: Path) -> None:
    from referee.records.pgserver import free_port

    url = f"postgresql://nobody@127.0.0.1:{free_port()}/none"
    run = cli("bench", "distributed", "--db", url, "--rounds", "1", cwd=tmp_path, timeout=120)
    assert run.returncode == 2, run.stderr
    assert "127.0.0.1" in run.stderr and "Traceback" not in run.stderr
