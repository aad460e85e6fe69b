"""The example bots (Python, JavaScript, C) play full matches in the default sandbox.

``durak-ref match`` with no --sandbox option sandboxes bot programs with bubblewrap
where it works (see referee/seats/sandbox.py): each example must still start (its
interpreter, its libraries, its compiled binary are readable), play every game without
a forfeit and exit after bye. Without bwrap the same match runs unsandboxed, and the
test says which it checked.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from support import cli

ROOT = Path(__file__).resolve().parents[2]


def _play(tmp_path: Path, command: list[str]) -> None:
    proc = cli("match", f"example={shlex.join(command)}", "builtin:greedy", "--games", "6",
               "--move-time", "10", "--log-dir", tmp_path / "logs", "--json", cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["games"] == 6 and not summary["forfeit_details"], summary
    assert summary["sandbox"] == ("bwrap" if shutil.which("bwrap") else "none")


@pytest.mark.process
def test_python_example_plays_in_the_default_sandbox(tmp_path: Path) -> None:
    _play(tmp_path, [sys.executable, str(ROOT / "examples" / "python" / "greedy_bot.py")])


def test_c_example_plays_in_the_default_sandbox(tmp_path: Path, c_bot_cmd: list[str]) -> None:
    _play(tmp_path, c_bot_cmd)


def test_js_example_plays_in_the_default_sandbox(tmp_path: Path, js_bot_cmd: list[str]) -> None:
    _play(tmp_path, js_bot_cmd)


@pytest.mark.process
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) not installed")
def test_a_relative_command_plays_in_the_sandbox_from_its_cwd(tmp_path: Path) -> None:
    """A relative script path works: the sandbox shows the script's project (here the
    repository, which is also the cwd) read-only at the same place, and starts the bot
    there."""
    _play(tmp_path, [sys.executable, "examples/python/random_bot.py", "3"])
