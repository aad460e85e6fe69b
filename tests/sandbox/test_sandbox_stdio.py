"""In the sandbox a bot's end of output is seen as it is unsandboxed: a bot that closes
its stdout is a ``crash``, a frame cut short a ``protocol`` error, both at once, not a
``timeout`` at the decision's limit (bwrap's own process held a copy of the pipe)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from support import cli

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("bwrap") is None,
                       reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap"),
]

BOT = Path(__file__).resolve().parent / "bots" / "closing_bot.py"


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
@pytest.mark.parametrize("mode, kind, reason", [
    ("close", "crash", "the bot closed its stdout (still running)"),
    ("cut", "protocol", "stream ended 1 byte into a 50-byte frame")])
def test_a_bot_whose_output_ends_early_is_judged_by_what_it_did(tmp_path: Path, sandbox: str, mode: str,
                                                                kind: str, reason: str) -> None:
    proc = cli("match", f"{sys.executable} {BOT} {mode}", "builtin:greedy", "-n", "1", "--no-log",
               "--move-time", "120", "--sandbox", sandbox, "--json", cwd=tmp_path, timeout=100)
    assert proc.returncode == 0, proc.stderr
    (forfeit,) = json.loads(proc.stdout)["forfeit_details"]
    assert (forfeit["kind"], forfeit["reason"]) == (kind, f"{reason} (request 1)")
