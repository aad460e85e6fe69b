"""Names, paths and messages from outside are printed literally: a bot whose hello name
is rich markup (``[/]``), a ``--log-dir`` or a seat name with brackets never crash the
summary or the progress bar (which is drawn when stderr is a terminal: here a pty)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import DURAK_REF

pytestmark = pytest.mark.process

BOT = f"{sys.executable} {Path(__file__).parent / 'bots' / 'markup_bot.py'}"


def _run_on_a_terminal(*args: str | Path, cwd: Path) -> tuple[int, str, str]:
    """Run the real CLI with stderr on a pseudo-terminal (so the live bar is drawn)."""
    primary, secondary = os.openpty()
    try:
        p = subprocess.Popen([str(DURAK_REF), *map(str, args)], stdout=subprocess.PIPE,
                             stderr=secondary, cwd=cwd, text=True,
                             env=dict(os.environ, COLUMNS="200", TERM="xterm"))
        os.close(secondary)
        chunks = []
        while True:
            try:
                data = os.read(primary, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        stdout, _ = p.communicate(timeout=120)
    finally:
        os.close(primary)
    return p.returncode, stdout, b"".join(chunks).decode("utf-8", "replace")


def test_a_markup_hello_name_and_log_dir_are_printed_literally(tmp_path: Path) -> None:
    log_dir = tmp_path / "x[/]y[bold]"
    code, stdout, stderr = _run_on_a_terminal("match", BOT, "builtin:greedy", "-n", "6", "--log-dir",
                                              log_dir, "--sandbox", "none", cwd=tmp_path)
    assert code == 0, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    assert "│ [/]" in stdout  # the table row, literally
    assert f"log: {log_dir}/" in stdout
    assert list(log_dir.glob("match-*.jsonl"))


def test_markup_seat_names_in_a_tournament_and_its_ratings(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    code, stdout, stderr = _run_on_a_terminal(
        "tournament", "--bot", "[/]=builtin:greedy", "--bot", "[bold]b=builtin:random", "--games", "4",
        "--db", db, "--log-dir", tmp_path / "l[/]", cwd=tmp_path)
    assert code == 0, stderr
    assert "│ [/]" in stdout and "│ [bold]b" in stdout
    code, stdout, stderr = _run_on_a_terminal("ratings", "--db", db, cwd=tmp_path)
    assert code == 0, stderr
    assert "│ [/]" in stdout and "│ [bold]b" in stdout
