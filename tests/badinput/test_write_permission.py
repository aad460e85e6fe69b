"""A write refused by permission is the user's environment, never our bug: the run ends
with exit 2 and a message naming what could not be written and why, what was finished
before is intact, and the run resumes once the permission is given back. Run for real
as an unprivileged user (uid 65534 via ``setpriv``), since root ignores permissions.

The work directory is made under /tmp, not in tmp_path: pytest makes its base directory
0700 for root, which the unprivileged user cannot even enter."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import DURAK_REF, LONG_TIMEOUT_S

pytestmark = pytest.mark.process

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
BOTS = ("--bot", "a=builtin:greedy", "--bot", "b=builtin:random")


def _unavailable(reason: str) -> None:
    """Skip visibly, but never on CI (CI=true), where the test must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"cannot test write permissions on CI: {reason}")
    pytest.skip(reason)


@pytest.fixture
def work() -> Iterator[Path]:
    """A directory the unprivileged user owns, with ``logs`` and ``store`` in it."""
    if os.geteuid() != 0:
        _unavailable("needs root to run durak-ref as another, unprivileged user")
    if shutil.which("setpriv") is None:
        _unavailable("needs setpriv (util-linux)")
    base = Path(tempfile.mkdtemp(prefix="durak-perm-", dir="/tmp"))
    try:
        base.chmod(0o755)
        for d in (base, base / "logs", base / "store"):
            d.mkdir(exist_ok=True)
            os.chown(d, NOBODY, NOBODY)
        probe = subprocess.run([*AS_NOBODY, str(DURAK_REF), "--help"], capture_output=True, text=True,
                               cwd=base, timeout=60)
        if probe.returncode != 0:
            _unavailable(f"durak-ref does not run as uid {NOBODY}: {probe.stderr.strip()[-300:]}")
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@functools.cache
def nobody_key() -> str:
    """Where the unprivileged user's referee keeps its own signing key (it may not read
    the tests' key, which is root's): a directory of its own."""
    directory = tempfile.mkdtemp(prefix="durak-nobody-key-")
    os.chown(directory, NOBODY, NOBODY)
    return os.path.join(directory, "referee-ed25519.key")


def nobody(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``durak-ref ARGS`` as the unprivileged user."""
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", DURAK_REF_KEY=nobody_key())
    return subprocess.run([*AS_NOBODY, str(DURAK_REF), *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


def stored(db: Path) -> dict[str, int]:
    """Games stored per tournament id, after SQLite's full integrity check."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return dict(con.execute("SELECT tournament_id, COUNT(*) FROM games GROUP BY tournament_id"))
    finally:
        con.close()


def assert_users_error(r: subprocess.CompletedProcess[str], *says: str) -> None:
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    for text in says:
        assert text in r.stderr, r.stderr


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_a_tournament_whose_log_dir_turned_unwritable_stops_clearly_and_resumes(work: Path) -> None:
    db = work / "store" / "db.sqlite"
    first = nobody("tournament", *BOTS, "--games", "4", "--db", db, "--log-dir", "logs", "--json", cwd=work)
    assert first.returncode == 0, first.stderr
    (work / "logs").chmod(0o500)  # the operator (or a cleanup job) takes the log dir away
    r = nobody("tournament", *BOTS, "--games", "4", "--db", db, "--log-dir", "logs", cwd=work)
    assert_users_error(r, "durak-ref: error: cannot write the log logs/tournament-", "Permission denied",
                       "give another --log-dir")
    tid = re.search(r"resume with durak-ref tournament --resume (\S+) ", r.stderr)
    assert tid, r.stderr
    before = stored(db)  # everything finished before is there, whole
    assert sum(before.values()) == 4 and tid[1] not in before

    (work / "logs").chmod(0o700)
    done = nobody("tournament", "--resume", tid[1], "--db", db, "--log-dir", "logs", cwd=work)
    assert done.returncode == 0, done.stderr
    assert stored(db) == dict(before, **{tid[1]: 4})
    check = nobody("verify", "--db", db, cwd=work)
    assert check.returncode == 0 and "8 stored games" in check.stdout, check.stdout + check.stderr


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_a_store_in_a_directory_turned_unwritable_is_left_as_it_was(work: Path) -> None:
    db = work / "store" / "db.sqlite"
    assert nobody("tournament", *BOTS, "--games", "2", "--db", db, "--log-dir", "logs",
                  cwd=work).returncode == 0
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    (work / "store").chmod(0o500)  # SQLite cannot make its -wal and -shm files there now
    for args in (("tournament", *BOTS, "--games", "2"), ("ratings",), ("ladder", "add", "x", "builtin:greedy")):
        r = nobody(*args, "--db", db, *(("--log-dir", "logs") if args[0] == "tournament" else ()), cwd=work)
        assert_users_error(r, f"cannot write to the store {db}", "no permission to write in its directory")
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    (work / "store").chmod(0o700)
    assert nobody("ratings", "--db", db, cwd=work).returncode == 0
    assert sum(stored(db).values()) == 2


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_sprt_ladder_and_match_with_an_unwritable_log_dir_stop_clearly(work: Path) -> None:
    db = work / "store" / "db.sqlite"
    (work / "logs").chmod(0o500)
    match = nobody("match", "builtin:greedy", "builtin:random", "-n", "2", "--log-dir", "logs", cwd=work)
    assert_users_error(match, "cannot write the log logs/match-", "Permission denied")

    sprt = nobody("sprt", "builtin:greedy", "builtin:random", "--max-pairs", "2", "--db", db,
                  "--log-dir", "logs", cwd=work)
    assert_users_error(sprt, "cannot write the log logs/sprt-", "Permission denied", "resume with")
    sid = re.search(r"durak-ref sprt --resume (\S+) ", sprt.stderr)
    assert sid, sprt.stderr

    for name, command in (("g", "builtin:greedy"), ("r", "builtin:random")):
        assert nobody("ladder", "add", name, command, "--db", db, cwd=work).returncode == 0
    ladder = nobody("ladder", "run", "--games", "2", "--db", db, "--log-dir", "logs", cwd=work)
    assert_users_error(ladder, "cannot write the log logs/ladder-", "Permission denied",
                       "every finished game and rating is stored")
    assert stored(db) == {}  # nothing half-written

    (work / "logs").chmod(0o700)  # given back: the stopped runs go on
    again = nobody("sprt", "--resume", sid[1], "--db", db, "--log-dir", "logs", "--json", cwd=work)
    assert again.returncode in (0, 1), again.stderr  # a verdict or undecided: it played
    assert nobody("ladder", "run", "--games", "2", "--db", db, "--log-dir", "logs", cwd=work).returncode == 0
    assert stored(db) == {sid[1]: 4, "ladder": 2}
