"""A bot's text never reaches the organiser's terminal as escape sequences.

A bot chooses its stderr, its hello's version and author, and the bytes an error message
quotes. ``bots/escape_bot.py`` fills all of them with a clipboard write (OSC 52), a title
set, screen clears (CSI, 7-bit and 8-bit), a bidi override and a DCS string; run through
the real CLI (a match summary with its stderr tail, a protocol error, a start-up failure,
check-bot), no ESC, BEL, 8-bit CSI or bidi override reaches stdout or stderr, while the
readable rest of the bot's text still does. The match log keeps the exact text, escaped
by JSON.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
from rich.table import Table
from rich.text import Text

from referee.console.printable import TerminalConsole, printable
from support import ROOT, cli

BOT = Path(__file__).resolve().parent / "bots" / "escape_bot.py"
sys.path.insert(0, str(BOT.parent))
from escape_bot import ESCAPES  # noqa: E402

#: What a terminal acts on instead of showing: ESC, BEL, the 8-bit CSI, RIGHT-TO-LEFT OVERRIDE.
ACTIVE = ("\x1b", "\x07", "\x9b", "\u202e")


def bot(mode: str) -> str:
    return f"{sys.executable} {BOT} {mode}"


def assert_inert(*texts: str) -> None:
    for text in texts:
        found = [repr(c) for c in ACTIVE if c in text]
        assert not found, f"{found} reached the terminal in:\n{text}"


def test_printable_removes_every_sequence_a_terminal_acts_on_and_keeps_the_text() -> None:
    assert printable(ESCAPES) == "REDevil"
    assert printable("tail: " + ESCAPES + "\nnext line\tend") == "tail: REDevil\nnext line\tend"
    assert printable("\x1b]0;an unterminated title\nnext") == "\nnext"  # ends at the line
    assert printable("\x9d8;;http://x\x9clink\x1bcreset\x1b(Bx\x00\x7f\u2066y") == "linkresetxy"
    assert printable("plain text, кириллица, 6S TH") == "plain text, кириллица, 6S TH"
    assert printable(printable(ESCAPES)) == printable(ESCAPES)


def test_a_terminal_console_keeps_its_own_colours_and_drops_the_bots_escapes() -> None:
    buffer = io.StringIO()
    console = TerminalConsole(file=buffer, force_terminal=True, color_system="standard", width=200)
    table = Table("bot")
    table.add_row("v" + ESCAPES)
    console.print(f"stderr: {ESCAPES}", markup=False, highlight=False)
    console.print(Text("version " + ESCAPES, style="bold red"))
    console.print(table)
    shown = buffer.getvalue()
    assert "\x1b[1;31m" in shown  # the console's own style is written
    # Once rich's own colour codes are taken out, nothing active is left.
    assert_inert(re.sub(r"\x1b\[[0-9;]*m", "", shown))
    assert shown.count("REDevil") == 3


def test_no_console_of_the_referee_is_built_without_the_filter() -> None:
    """Every rich Console the referee prints through is a TerminalConsole."""
    bare = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "referee").rglob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"(?<!Terminal)Console\(", line) and path.name != "printable.py"]
    assert bare == []


@pytest.mark.process
def test_a_match_summary_shows_the_stderr_tail_of_a_crash_without_its_escapes(tmp_path: Path) -> None:
    proc = cli("match", bot("crash"), "builtin:random", "--games", 1, "--seed", "esc",
               "--log-dir", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "esc forfeited (crash)" in proc.stdout and "stderr: decision 3" in proc.stdout
    assert_inert(proc.stdout, proc.stderr)
    # The log keeps the bot's exact stderr, JSON-escaped.
    log = next(tmp_path.glob("*.jsonl")).read_text(encoding="utf-8")
    assert "\x1b" not in log and "\\u001b]52;c;cHduZWQ=" in log
    game = next(r for r in map(json.loads, log.splitlines()) if r.get("type") == "game")
    assert game["forfeit"]["evidence"]["stderr_tail"][-1] == f"decision 3 {ESCAPES}".rstrip("\r")  # (split into lines)


@pytest.mark.process
def test_a_protocol_error_quoting_the_bots_bytes_is_shown_without_its_escapes(tmp_path: Path) -> None:
    proc = cli("match", bot("garble"), "builtin:random", "--games", 1, "--seed", "esc",
               "--log-dir", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "esc forfeited (protocol): type: unknown message type" in proc.stdout
    assert_inert(proc.stdout, proc.stderr)


@pytest.mark.process
def test_a_start_up_failure_quotes_the_stderr_tail_without_its_escapes(tmp_path: Path) -> None:
    proc = cli("match", bot("die"), "builtin:random", "--games", 1, "--log-dir", tmp_path,
               cwd=tmp_path)
    assert proc.returncode == 2
    assert "failed its first start-up" in proc.stderr and "stderr tail: start" in proc.stderr
    assert_inert(proc.stdout, proc.stderr)


@pytest.mark.process
@pytest.mark.timeout(120)
def test_check_bot_shows_the_hello_version_and_author_without_their_escapes(tmp_path: Path) -> None:
    proc = cli("check-bot", bot("play"), cwd=tmp_path, timeout=110)
    assert "bot: esc vREDevil" in proc.stdout and "author: aREDevil" in proc.stdout, proc.stdout
    assert_inert(proc.stdout, proc.stderr)
