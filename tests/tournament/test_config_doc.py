"""docs/CONFIG.md documents every key the tournament file accepts, and its example file
is one that durak-ref reads."""

from __future__ import annotations

import re
from pathlib import Path

from referee.league import tournament
from support import ROOT

DOC = ROOT / "docs" / "CONFIG.md"


def test_every_accepted_key_is_documented() -> None:
    text = DOC.read_text()
    keys = tournament._CONFIG_KEYS | set(tournament._TC_TYPES) | {"name", "command", "cwd", "env"}
    assert not {k for k in keys if f"`{k}`" not in text and f"\n{k} =" not in text}


def test_the_documented_example_is_read(tmp_path: Path) -> None:
    (example,) = re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.S)
    path = tmp_path / "t.toml"
    path.write_text(example)
    (tmp_path / "data").mkdir()
    settings = tournament.load_config(path)
    assert settings["format"] == "round-robin" and settings["preset"] == "perevodnoy"
    assert [b.name for b in settings["bots"]] == ["alice", "greedy"]
    assert settings["bots"][0].cwd == str(tmp_path / "bots" / "alice")
