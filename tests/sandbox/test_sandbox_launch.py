"""What a sandboxed bot's bwrap command binds back when its program lives under /tmp.

/tmp is an empty private tmpfs in the sandbox, so a bot whose program (or venv, or the
sources of an editable install) lies under /tmp would not start. A CI checkout under
/tmp is exactly that case: the venv's python and the project's test bots.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from referee.seats.sandbox import Sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap")


def binds(argv: list[str]) -> list[str]:
    out = []
    for i, word in enumerate(argv):
        if word == "--ro-bind" and argv[i + 1] == argv[i + 2] and argv[i + 1] != "/":
            out.append(argv[i + 1])
    return out


def test_a_program_under_tmp_brings_its_top_directory_and_the_cwd_only_itself() -> None:
    top = Path("/tmp") / f"durak-launch-{os.getpid()}"
    try:
        (top / "venv" / "bin").mkdir(parents=True)
        (top / "venv" / "bin" / "python").write_text("")
        (top / "venv" / "bin" / "python").chmod(0o755)
        (top / "bots").mkdir()
        (top / "bots" / "bot.py").write_text("")
        work = Path("/tmp") / f"durak-launch-cwd-{os.getpid()}" / "work"
        work.mkdir(parents=True)
        launch = Sandbox("bwrap").launch([str(top / "venv/bin/python"), str(top / "bots/bot.py")],
                                         str(work), {})
        try:
            bound = binds(launch.argv)
            # The whole /tmp/PROJECT (site-packages, editable sources), the cwd itself, and
            # never /tmp itself nor the cwd's parent (another test's or user's files).
            assert str(top) in bound and str(work) in bound
            assert "/tmp" not in bound and str(work.parent) not in bound
        finally:
            launch.cleanup()
    finally:
        shutil.rmtree(top, ignore_errors=True)
        shutil.rmtree(Path("/tmp") / f"durak-launch-cwd-{os.getpid()}", ignore_errors=True)


def test_a_program_outside_the_masked_roots_needs_no_bind() -> None:
    launch = Sandbox("bwrap").launch(["/bin/sh", "-c", "true"], "/", {})
    try:
        assert binds(launch.argv) == []
    finally:
        launch.cleanup()
