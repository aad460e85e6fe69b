"""The README's "Write a bot" example is true: its bot, saved as mybot.py, passes
check-bot and plays a match against a built-in, run by the Python durak-ref is in."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from support import ROOT, cli

pytestmark = pytest.mark.process


def readme_bot() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Write a bot", 1)[1].split("\n## ", 1)[0]
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", section, re.S) if "mybot.py" in block]
    return code


def test_the_readme_bot_passes_check_bot_and_plays(tmp_path: Path) -> None:
    (tmp_path / "mybot.py").write_text(readme_bot())
    bot = f"{sys.executable} mybot.py"
    checked = cli("check-bot", bot, cwd=tmp_path, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    played = cli("match", bot, "builtin:greedy", "--games", "20", "--log-dir", tmp_path / "logs",
                 cwd=tmp_path, timeout=300)
    assert played.returncode == 0, played.stderr
    assert "forfeits" not in played.stdout or "mybot: forfeits none" in played.stdout
    assert "mybot" in played.stdout
