"""Several runs on one store: creating a fresh store at once is safe, and one tournament
is played by one run at a time (a second run of the same id is refused, clearly; the
lock dies with its holder)."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from support import DURAK_REF, LONG_TIMEOUT_S, cli, default_signals

pytestmark = pytest.mark.process

BOTS = ("--bot", "a=builtin:greedy", "--bot", "b=builtin:random")


def _popen(*args: str | Path, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([str(DURAK_REF), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd,
                            env=dict(os.environ, COLUMNS="200", NO_COLOR="1"),
                            preexec_fn=default_signals())  # the test signals it


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_four_tournaments_create_one_fresh_store_at_once(tmp_path: Path) -> None:
    db = tmp_path / "fresh.sqlite"
    runs = [_popen("tournament", *BOTS, "--games", "2", "--db", db, "--log-dir", tmp_path / f"l{i}",
                   "--json", cwd=tmp_path) for i in range(4)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in runs]
    for code, _, stderr in results:
        assert code == 0, stderr
    ids = {json.loads(stdout)["tournament"] for _, stdout, _ in results}
    with sqlite3.connect(db) as con:
        stored = {r[0] for r in con.execute("SELECT id FROM tournaments")}
        assert con.execute("SELECT COUNT(*) FROM schema_version").fetchone() == (1,)
    con.close()
    assert stored == ids and len(ids) == 4


def test_a_second_run_of_one_tournament_is_refused_until_the_first_dies(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    first = _popen("tournament", *BOTS, "--games", "1000000", "--db", db, "--log-dir", tmp_path / "logs",
                   cwd=tmp_path)
    try:
        assert first.stderr is not None
        line = first.stderr.readline()
        tid = re.match(r"tournament (\S+);", line)
        assert tid, line
        second = cli("tournament", "--resume", tid[1], "--db", db, "--log-dir", tmp_path / "logs",
                     cwd=tmp_path)
        assert second.returncode == 2, second.stderr
        assert (f"durak-ref: error: tournament {tid[1]} is being played right now by pid {first.pid}"
                in second.stderr), second.stderr
        assert "IntegrityError" not in second.stderr and "Traceback" not in second.stderr
        assert first.poll() is None  # the first run goes on, undisturbed
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
        first.communicate()
    # The lock died with its holder: the tournament can be resumed (and is cut short here).
    again = _popen("tournament", "--resume", tid[1], "--db", db, "--log-dir", tmp_path / "logs",
                   cwd=tmp_path)
    try:
        assert again.stderr is not None
        assert again.stderr.readline().startswith(f"tournament {tid[1]};")
    finally:
        again.send_signal(signal.SIGINT)
        _, err = again.communicate(timeout=120)
    assert again.returncode == 130, err
    assert "being played" not in err


def test_a_second_ladder_run_on_one_store_is_refused_while_the_first_plays(tmp_path: Path) -> None:
    from referee.records.storelock import lock_path

    db = tmp_path / "l.sqlite"
    for name, command in (("g", "builtin:greedy"), ("r", "builtin:random")):
        assert cli("ladder", "add", name, command, "--db", db, cwd=tmp_path).returncode == 0
    first = _popen("ladder", "run", "--games", "1000000", "--db", db, "--log-dir", tmp_path / "logs",
                   cwd=tmp_path)
    try:
        holder = lock_path(db, "ladder")
        for _ in range(6000):  # until the first run holds the ladder (it writes its pid)
            if holder.exists() and f"pid {first.pid} " in holder.read_text():
                break
            assert first.poll() is None, first.communicate()
            time.sleep(0.01)
        second = cli("ladder", "run", "--games", "2", "--db", db, "--log-dir", tmp_path / "logs2",
                     cwd=tmp_path)
        assert second.returncode == 2, second.stderr
        assert (f"durak-ref: error: the ladder of {db} is being played right now by pid {first.pid}"
                in second.stderr), second.stderr
        assert "Traceback" not in second.stderr
        assert first.poll() is None  # the first run goes on, undisturbed
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=120)
    assert first.returncode == 130
    # Every game the first run stored has its rating update: games and history agree.
    with sqlite3.connect(db) as con:
        games = con.execute("SELECT COUNT(*) FROM games WHERE tournament_id = 'ladder'").fetchone()[0]
        history = con.execute("SELECT COUNT(*) FROM ladder_history").fetchone()[0]
    con.close()
    assert games > 0 and history == 2 * games
    # Once the first has ended, the ladder plays again.
    again = cli("ladder", "run", "--games", "2", "--db", db, "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
