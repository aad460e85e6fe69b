"""check-bot over TCP: ``durak-ref check-bot tcp:NAME --listen HOST:PORT`` listens as
``match --listen`` does for a tcp:NAME seat, the bot connects with ``--connect`` and its
token, and plays every rule variant on that one connection."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from support import DURAK_REF

ROOT = Path(__file__).resolve().parents[2]


def test_the_python_example_bot_passes_check_bot_over_tcp(tmp_path: Path) -> None:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    check = subprocess.Popen([str(DURAK_REF), "check-bot", "tcp:seat", "--listen", "127.0.0.1:0",
                              "--token", "s3cret", "--json"], cwd=tmp_path, env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    bot = None
    try:
        assert check.stderr is not None
        lines = []
        for line in check.stderr:
            lines.append(line)
            found = re.search(r"listening on 127\.0\.0\.1:(\d+) for seat", line)
            if found:
                break
        assert found, "".join(lines)
        bot = subprocess.Popen([sys.executable, str(ROOT / "examples" / "python" / "random_bot.py"),
                                "--connect", f"127.0.0.1:{found[1]}", "--token", "s3cret",
                                "--name", "seat"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out, rest = check.communicate(timeout=120)
        assert check.returncode == 0, "".join(lines) + rest
        report = json.loads(out)
        assert report["ok"] and set(report["variants"].values()) == {"pass"}
        assert report["hello"]["name"] == "seat"
        assert sum(1 for line in rest.splitlines() if line.startswith("check-bot: variant ")) == len(
            report["variants"])
        assert bot.wait(timeout=10) == 0  # the bye came, and the bot left
    finally:
        for p in (check, bot):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()
