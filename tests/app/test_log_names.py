"""Two runs never share a log file: a log's name is claimed when it is chosen."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from referee.records.matchlog import fresh_log_path, new_log_path
from tests.support import DURAK_REF


def test_a_name_is_taken_as_soon_as_it_is_chosen(tmp_path: Path) -> None:
    first = fresh_log_path(tmp_path, "match-20261202-120000")
    second = fresh_log_path(tmp_path, "match-20261202-120000")
    assert (first.name, second.name) == ("match-20261202-120000.jsonl", "match-20261202-120000-2.jsonl")
    assert first.exists() and first.stat().st_mode & 0o777 == 0o600


def test_the_log_dir_is_made_when_a_name_is_claimed(tmp_path: Path) -> None:
    path = new_log_path(tmp_path / "a" / "b")
    assert path.parent == tmp_path / "a" / "b" and path.exists()


@pytest.mark.process
def test_matches_started_together_in_one_log_dir_write_separate_logs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    runs = [subprocess.Popen([str(DURAK_REF), "match", "builtin:random", "builtin:greedy", "--games", "2",
                              "--log-dir", str(logs)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True) for _ in range(4)]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    written = sorted(logs.glob("match-*.jsonl"))
    assert len(written) == 4
    for log in written:
        check = subprocess.run([str(DURAK_REF), "replay", str(log), "--verify"], capture_output=True,
                               text=True, timeout=120)
        assert check.returncode == 0, check.stdout + check.stderr
