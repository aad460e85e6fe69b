"""What a newcomer meets first on the command line: --version, help that reads at 80
columns, a pointer from verify to replay, and ratings of durak-ref's own logs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from support import DURAK_REF, cli

pytestmark = pytest.mark.process

COMMANDS = [[], ["match"], ["tournament"], ["sprt"], ["replay"], ["check-bot"], ["ratings"], ["serve"],
            ["play"], ["bench", "match"], ["ladder", "run"]]


def help_at(width: int, *words: str) -> str:
    env = dict(os.environ, COLUMNS=str(width), NO_COLOR="1")
    proc = subprocess.run([str(DURAK_REF), *words, "--help"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_version_is_a_top_level_option(tmp_path: Path) -> None:
    flag, command = cli("--version", cwd=tmp_path), cli("version", cwd=tmp_path)
    assert flag.returncode == 0 and flag.stdout == command.stdout
    assert flag.stdout.startswith("durak-ref ") and ", protocol " in flag.stdout


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w) or "durak-ref" for w in COMMANDS])
def test_help_fits_80_columns_as_plain_reflowed_text(words: list[str]) -> None:
    text = help_at(80, *words)
    assert max(map(len, text.splitlines())) <= 80
    assert not set(text) & set("╭╮╰╯│─┃━"), "no boxes: their narrow columns leave ragged text"


def test_a_docstring_paragraph_is_reflowed_not_broken_where_the_source_breaks() -> None:
    text = " ".join(help_at(80, "match").split())
    assert "a bot that fails its first start-up, unless --recover" in text
    assert "\n first\n" not in help_at(80, "match")


def test_verify_of_a_log_without_a_store_points_to_replay_verify(tmp_path: Path) -> None:
    proc = cli("verify", "some.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert "durak-ref replay some.jsonl --verify" in proc.stderr


def test_ratings_read_durak_refs_own_match_log(tmp_path: Path) -> None:
    run = cli("match", "builtin:random", "builtin:greedy", "-n", "60", "--log-dir", tmp_path, "--json",
              cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    log = Path(json.loads(run.stdout)["log"])
    rated = cli("ratings", "--from", log, "--json", cwd=tmp_path)
    assert rated.returncode == 0, rated.stderr
    report = json.loads(rated.stdout)
    assert report["games"] == 60
    assert {r["name"]: r["games"] for r in report["standings"]} == {"random": 60, "greedy": 60}
    # A log cut short: its complete games are rated, and a warning says what was dropped.
    lines = log.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:31]) + lines[31][:20])
    partial = cli("ratings", "--from", cut, "--json", cwd=tmp_path)
    assert partial.returncode == 0, partial.stderr
    assert "warning" in partial.stderr and "the 30 complete games before it are rated" in partial.stderr
