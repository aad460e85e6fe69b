"""A store damaged on disk is the user's problem, named in one line (exit 2), whichever
command meets the damage and wherever in the file it lies; nothing is half-written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import cli

pytestmark = pytest.mark.process

PAGE = 4096


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store with a finished tournament and a registered arena bot."""
    root = tmp_path_factory.mktemp("store")
    db = root / "s.sqlite"
    run = cli("tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy", "--games", "20",
              "--db", db, "--log-dir", root / "logs", "--json", cwd=root)
    assert run.returncode == 0, run.stderr
    assert cli("register", "zed", "--db", db, cwd=root).returncode == 0
    return db, json.loads(run.stdout)["tournament"]


def damaged(healthy: Path, page: int, into: Path) -> Path:
    """A copy of the store with one whole page overwritten (what a bad sector leaves)."""
    data = bytearray(healthy.read_bytes())
    assert len(data) >= (page + 1) * PAGE
    data[page * PAGE:(page + 1) * PAGE] = b"\xab" * PAGE
    into.write_bytes(bytes(data))
    return into


@pytest.mark.parametrize("page", [2, 3, 4, 5])
def test_every_store_command_names_the_damage_in_one_line(healthy: tuple[Path, str], page: int,
                                                            tmp_path: Path) -> None:
    db, tid = healthy
    commands = [["register", "newbot"], ["register", "--rotate", "zed"], ["unregister", "zed"],
                ["ladder", "show"], ["ratings", "--tournament", tid], ["report", "--tournament", tid],
                ["verify"], ["tournament", "--resume", tid]]
    for words in commands:
        copy = damaged(db, page, tmp_path / "x.sqlite")
        proc = cli(*words, "--db", copy, cwd=tmp_path)
        assert "Traceback" not in proc.stderr, (words, proc.stderr)
        assert proc.returncode in (0, 1, 2), (words, proc.returncode, proc.stderr)
        if proc.returncode == 2:
            assert proc.stderr.startswith("durak-ref: error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_register_on_a_damaged_bots_table_says_damaged_and_changes_nothing(
        healthy: tuple[Path, str], tmp_path: Path) -> None:
    db, _ = healthy
    hits = 0
    for page in range(1, healthy[0].stat().st_size // PAGE):
        copy = damaged(db, page, tmp_path / f"p{page}.sqlite")
        before = copy.read_bytes()
        proc = cli("register", "newbot", "--db", copy, cwd=tmp_path)
        assert "Traceback" not in proc.stderr and proc.returncode in (0, 2), proc.stderr
        if proc.returncode == 2:
            hits += 1
            assert "damaged store" in proc.stderr or "not a usable durak-ref store" in proc.stderr
            assert copy.read_bytes() == before
