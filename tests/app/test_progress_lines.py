"""Progress as a match runs: a running score like cutechess's, and a Ctrl-C message on
a line of its own, not on the progress bar's."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pexpect
import pytest

from support import DURAK_REF

pytestmark = pytest.mark.process


def test_each_progress_line_of_a_duel_carries_the_running_score_and_elo(tmp_path: Path) -> None:
    env = dict(os.environ, DURAK_REF_PROGRESS_INTERVAL="0", NO_COLOR="1")
    proc = subprocess.run([str(DURAK_REF), "match", "builtin:random", "builtin:random", "-n", "40",
                           "--no-log", "--seed", "p1"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("match: ")]
    assert len(lines) == 40
    scores = [re.search(r"games, random (\d+)-(\d+)-(\d+) vs random#2, ", line) for line in lines]
    assert all(scores), lines
    assert [sum(map(int, m.groups())) for m in scores if m] == list(range(1, 41))  # W+L+D = games
    assert re.search(r", Elo [+-]\d+ ± \d+ \[", lines[-1]), lines[-1]
    assert "inf" not in proc.stderr


def test_the_ctrl_c_message_of_a_tournament_is_on_its_own_line(tmp_path: Path) -> None:
    env = dict(os.environ, COLUMNS="120", TERM="xterm")
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(str(DURAK_REF), ["tournament", "--bot", "a=builtin:ismcts", "--bot", "b=builtin:gentle",
                                           "--games", "300", "--db", str(tmp_path / "s.sqlite"),
                                           "--log-dir", str(tmp_path / "logs")],
                          cwd=str(tmp_path), env=env, encoding="utf-8", codec_errors="replace", timeout=120,
                          dimensions=(40, 120))
    child.expect(r"(?<![0-9])[1-9][0-9]*/300")  # the bar is up and a game is done (games are counted
    # in batches as they are stored: the first count seen may be 2 or 3)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before)  # the terminal's control codes
    (line,) = [row for row in re.split(r"[\r\n]+", screen) if "interrupted; finished games are stored" in row]
    assert line.lstrip("^C").startswith("durak-ref: interrupted"), repr(line)
