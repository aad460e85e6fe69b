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

import pytest

from support import DURAK_REF

pytestmark = pytest.mark.process

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


def test_a_tcp_bot_that_never_connects_fails_naming_the_wait_that_was_used(tmp_path: Path) -> None:
    """check-bot waited 120 s for the first connection but its failure said the bot had
    to answer "within the start-up time of 10 s". The wait is one option (--connect-wait,
    default CONNECT_WAIT_S, as for `match --listen`) and every text about it names it."""
    from referee.conformance.checkbot import SPEC_CONNECT
    from referee.table.runner import CONNECT_WAIT_S, SeatOptions

    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    r = subprocess.run([str(DURAK_REF), "check-bot", "tcp:seat", "--listen", "127.0.0.1:0",
                        "--token", "s3cret", "--connect-wait", "1.5", "--json"], cwd=tmp_path,
                       env=env, text=True, capture_output=True, timeout=60)
    assert r.returncode == 1, r.stderr
    handshake = json.loads(r.stdout)["checks"][0]
    assert handshake["status"] == "fail"
    [problem] = handshake["problems"]
    assert problem["message"] == "handshake failed: no client connected as seat within 1.5 s"
    assert problem["sent"] is None  # nobody was there to send a hello to
    assert problem["required"] == SPEC_CONNECT.format(name="seat", wait=1.5, startup=10)
    assert "within 1.5 s, then its hello" in problem["required"]

    help_text = subprocess.run([str(DURAK_REF), "check-bot", "--help"], env=env, text=True,
                               capture_output=True, timeout=60).stdout
    assert f"[default: {CONNECT_WAIT_S}]" in help_text
    assert SeatOptions().connect_wait == CONNECT_WAIT_S  # match --listen waits as long
    bad = subprocess.run([str(DURAK_REF), "check-bot", "tcp:seat", "--connect-wait", "0"], env=env,
                         text=True, capture_output=True, timeout=60)
    assert bad.returncode == 2 and "--connect-wait 0: must be a number > 0" in bad.stderr
