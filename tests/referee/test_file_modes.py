"""What durak-ref records is private: match logs, bots' stderr logs and
the result store (with SQLite's -wal/-shm files) are created 0600, and the directories
durak-ref creates for them 0700, whatever the umask. A directory the user made keeps its
mode. Real runs through the CLI, under the most permissive umask (0)."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.records.matchlog import MatchLogWriter, read_log
from referee.records.store import GameRow, SeatRow, Store
from support import cli

ROOT = Path(__file__).resolve().parents[2]
PROGRAM_BOT = f"{sys.executable} {ROOT / 'examples' / 'python' / 'random_bot.py'}"


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    """Umask 0: without durak-ref's care every file would be 0666 and every dir 0777.
    The CLI subprocesses inherit it."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(top: Path) -> dict[str, int]:
    """Every file and directory under ``top`` (and ``top``): relative name -> mode."""
    out = {".": mode(top)}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            out[str(p.relative_to(top))] = mode(p)
    return out


def assert_private(top: Path, created_dirs: list[Path]) -> dict[str, int]:
    found = modes(top)
    for d in created_dirs:
        assert mode(d) == 0o700, (d, oct(mode(d)))
    wrong = {name: oct(m) for name, m in found.items()
             if (top / name).is_file() and m != 0o600}
    assert wrong == {}
    return found


@pytest.mark.process
def test_a_match_log_and_stderr_logs_are_private(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)  # the user's directory: it must stay as it is
    logs = tmp_path / "new" / "deeper" / "logs"
    proc = cli("match", PROGRAM_BOT, "builtin:greedy", "--games", "2", "--log-dir", logs, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    found = assert_private(tmp_path / "new", [tmp_path / "new", tmp_path / "new" / "deeper", logs])
    assert any(n.endswith(".stderr.log") for n in found), found
    assert any(n.endswith(".jsonl") for n in found), found
    assert mode(tmp_path) == 0o755


@pytest.mark.process
@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_tournament_store_and_logs_are_private(tmp_path: Path, concurrency: int) -> None:
    proc = cli("tournament", "--bot", f"p={PROGRAM_BOT}", "--bot", "g=builtin:greedy",
               "--games", "2", "--concurrency", str(concurrency), "--db", "db/store/t.sqlite",
               "--log-dir", "out/logs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    logs = assert_private(tmp_path / "out", [tmp_path / "out", tmp_path / "out" / "logs"])
    assert any(n.endswith(".stderr.log") for n in logs), logs
    assert any(n.endswith(".jsonl") for n in logs), logs
    store = assert_private(tmp_path / "db", [tmp_path / "db", tmp_path / "db" / "store"])
    assert "store/t.sqlite" in store
    # and what was recorded, from worker processes too, checks out
    check = cli("verify", "--db", "db/store/t.sqlite", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr


def test_sqlite_side_files_are_private_while_the_store_is_open(tmp_path: Path) -> None:
    path = tmp_path / "s" / "d.sqlite"
    with Store(path) as store:
        store.create_tournament("t", "tournament", {})
        store.ensure_bot("a", "builtin:random")
        store.ensure_bot("b", "builtin:greedy")
        store.add_game(GameRow("t", 0, "T1:d0", 0, {}, None, None, "normal", "b",
                               "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:01+00:00",
                               [SeatRow(0, "a", "safe", None, 1, 0.1),
                                SeatRow(1, "b", "durak", None, 1, 0.1)]))
        found = assert_private(tmp_path / "s", [tmp_path / "s"])
        assert {"d.sqlite", "d.sqlite-wal", "d.sqlite-shm"} <= set(found), found


def test_an_existing_store_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    Store(path).close()
    os.chmod(path, 0o644)  # as an older durak-ref left it
    Store(path).close()
    assert mode(path) == 0o600


@pytest.mark.process
def test_an_existing_log_dir_keeps_its_mode_but_our_files_are_private(tmp_path: Path) -> None:
    logs = tmp_path / "mine"
    logs.mkdir()
    os.chmod(logs, 0o755)
    proc = cli("match", PROGRAM_BOT, "builtin:random", "--games", "1", "--log-dir", logs, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert mode(logs) == 0o755
    assert len(assert_private(logs, [])) >= 3  # the dir, the log, a stderr log


def test_a_gzip_log_is_private_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "g" / "m.jsonl.gz"
    writer = MatchLogWriter(path)
    writer.write({"type": "header", "format": "durak-ref-log/1"})
    writer.close()
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert read_log(path).header["format"] == "durak-ref-log/1"
