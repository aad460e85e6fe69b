"""What a sandboxed bot's bwrap command binds: the allowlist root.

The sandbox's root is empty but for the system runtime, a part of /etc and what the
bot's command needs (referee/seats/sandbox_view.py): a program's installation prefix (a
venv, with its base interpreter and the trees its .pth files name), the project root of a
script named in the command, an explicit cwd. Never a home directory, /tmp itself, or
the referee's cwd (an empty stand-in is made there).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from referee.seats.sandbox import Sandbox
from referee.seats.sandbox_view import BOT_ENVIRONMENT, bot_environment

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap")


def binds(argv: list[str]) -> list[str]:
    """The host paths bound at the same place, but for the system's and /etc's."""
    out = []
    for i, word in enumerate(argv):
        if word == "--ro-bind" and argv[i + 1] == argv[i + 2] and not argv[i + 1].startswith(
                ("/usr", "/etc", "/proc", "/lib", "/bin", "/sbin")):
            out.append(argv[i + 1])
    return out


@pytest.mark.process
def test_a_venv_brings_itself_its_base_interpreter_and_its_pth_trees(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    (project / "bots").mkdir()
    (project / "bots" / "bot.py").write_text("")
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (venv / "bin").mkdir()
    base = Path(sys.base_prefix)
    (venv / "bin" / "python").symlink_to(Path(sys.executable).resolve())
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\n")
    (site / "_editable.pth").write_text(f"{project / 'src'}\nimport sys\n")
    work = tmp_path / "work"
    work.mkdir()
    launch = Sandbox("bwrap").launch([str(venv / "bin/python"), "bots/bot.py"], str(project), {})
    try:
        bound = binds(launch.argv)
        assert str(venv) in bound and str(project) in bound  # the script's project root
        if not str(Path(sys.executable).resolve()).startswith("/usr/"):
            assert str(Path(sys.executable).resolve().parent.parent) in bound
        assert str(tmp_path) not in bound and "/tmp" not in bound
        assert str(project / "src") not in bound  # inside the project, bound already
    finally:
        launch.cleanup()


@pytest.mark.process
def test_the_referees_cwd_is_an_empty_stand_in_and_a_system_program_needs_no_bind(
        tmp_path: Path) -> None:
    launch = Sandbox("bwrap").launch(["/bin/sh", "-c", "true"], None, {})
    try:
        assert binds(launch.argv) == []
        chdir = launch.argv.index("--chdir")
        assert launch.argv[chdir + 1] == os.getcwd()
        made = [launch.argv[i + 1] for i, w in enumerate(launch.argv[:chdir]) if w == "--dir"]
        assert made[-1] == os.getcwd()
    finally:
        launch.cleanup()
    launch = Sandbox("bwrap").launch(["/bin/sh", "-c", "true"], str(tmp_path), {})
    try:
        assert binds(launch.argv) == [str(tmp_path)]  # a bot's own cwd (tournament config)
    finally:
        launch.cleanup()


@pytest.mark.process
def test_a_home_directory_is_never_bound_whole(tmp_path: Path) -> None:
    home = os.path.expanduser("~")
    launch = Sandbox("bwrap").launch(["/bin/sh", os.path.join(home, "nonexistent-bot.sh")], None, {})
    try:
        assert home not in binds(launch.argv)
    finally:
        launch.cleanup()


def test_bots_inherit_only_the_allowlisted_environment() -> None:
    ours = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC",
            "DURAK_DB": "postgresql://u:pw@h/db", "PGPASSWORD": "pw", "DURAK_TOKEN": "t",
            "HOME": "/root", "TERM": "xterm", "AWS_SECRET_ACCESS_KEY": "k", "DURAK_BOT_LEVEL": "3"}
    env = bot_environment({"BOOK": "/data/book"}, ours)
    assert env == {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC",
                   "DURAK_BOT_LEVEL": "3", "BOOK": "/data/book"}
    assert BOT_ENVIRONMENT == ("PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "DURAK_BOT_*")


@pytest.mark.process
def test_a_program_behind_env_brings_its_installation(tmp_path: Path) -> None:
    """``env NAME=VALUE prog``: prog, found on PATH, is the program (its prefix bound)."""
    prog = tmp_path / "inst" / "bin" / "prog"
    prog.parent.mkdir(parents=True)
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    launch = Sandbox("bwrap").launch(["env", "LEVEL=3", "prog"], None,
                                     {"PATH": f"{prog.parent}:/usr/bin:/bin"})
    try:
        assert binds(launch.argv) == [str(tmp_path / "inst")]
    finally:
        launch.cleanup()
