"""A write that fails (here: the file size limit of ``prlimit --fsize``, which fails
writes with EFBIG as a full disk fails them with ENOSPC) ends the run with exit 2 and a
clear message; what was finished is intact (complete log lines, a consistent store) and
a tournament resumes from it once there is room."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from support import DURAK_REF, LONG_TIMEOUT_S, cli

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)"),
]


def _limited(size: int, *args: str | Path, cwd: Path) -> tuple[int, str]:
    import subprocess
    r = subprocess.run(["prlimit", f"--fsize={size}", str(DURAK_REF), *map(str, args)],
                       capture_output=True, text=True, cwd=cwd, timeout=300)
    return r.returncode, r.stderr


def test_a_match_whose_log_cannot_grow_ends_with_exit_2_and_a_readable_log(tmp_path: Path) -> None:
    code, stderr = _limited(20000, "match", "builtin:greedy", "builtin:random", "-n", "200",
                            "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert re.search(r"durak-ref: error: cannot write the log \S+: File too large; its first \d+ "
                     r"line\(s\) are complete", stderr), stderr
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    assert log.read_bytes().endswith(b"\n")  # the cut-off line was taken back
    r = cli("replay", log, "--verify", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr  # every logged game verifies; no footer
    assert '"complete": false' in r.stdout


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_a_tournament_whose_store_cannot_grow_ends_with_exit_2_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    # The limit lets the fresh store's schema (its WAL: ~100 kB since schema version 2) and
    # a few games in, then fails a game's write.
    code, stderr = _limited(200000, "tournament", "--bot", "a=builtin:greedy", "--bot",
                            "b=builtin:random", "--games", "400", "--db", db, "--log-dir",
                            tmp_path / "logs", cwd=tmp_path)
    assert code == 2, stderr
    assert "Traceback" not in stderr
    # The log grows by each batch of lines and the store by each transaction of that batch
    # (referee/league/results.py): whichever reaches the limit first ends the run, with a message
    # naming that file and what of it is intact.
    assert ((f"cannot write to the store {db}" in stderr and "everything stored before is intact" in stderr)
            or re.search(r"cannot write the log \S+: File too large; its first \d+ line\(s\) are "
                         r"complete", stderr)), stderr
    tid = re.search(r"resume with durak-ref tournament --resume (\S+) ", stderr)
    assert tid, stderr
    with sqlite3.connect(db) as con:  # consistent: every stored game has its seats
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        games = con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        seats = con.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    con.close()
    assert 0 < games < 400 and seats == 2 * games
    r = cli("tournament", "--resume", tid[1], "--db", db, "--log-dir", tmp_path / "logs", "--json",
            cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    r = cli("verify", "--db", db, cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    assert "400 stored games" in r.stdout
