"""SIGTERM to ``durak-ref match`` ends it as Ctrl-C does: the summary so far,
exit 130, every bot closed by the referee (none orphaned), the log complete up to the
last finished game and closed with an ``interrupted`` footer.

A real referee and a real bot process: the bot (tests/tournament/bots/slow_bot.py)
stalls for good after $DURAK_BOT_STALL_AFTER decisions, so the match is still running
when the signal comes, however slow the machine. This process is a child subreaper: a
bot the referee failed to close would be re-parented to us, and seen.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.records.matchlog import read_log
from support import DURAK_REF, child_subreaper, default_signals, proc_stat

pytestmark = pytest.mark.process

BOT = Path(__file__).resolve().parents[1] / "tournament" / "bots" / "slow_bot.py"
TIMEOUT = 60.0


def tagged(tag: str) -> set[int]:
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    out.add(int(entry.name))
            except OSError:
                pass
    return out


def complete_games(log_dir: Path) -> int:
    """Finished games in the match log so far (complete lines after the header)."""
    logs = list(log_dir.glob("match-*.jsonl"))
    if not logs:
        return 0
    lines = logs[0].read_text().splitlines(keepends=True)
    return max(0, sum(line.endswith("\n") for line in lines) - 1)


def signal_after_first_game(proc: subprocess.Popen, logs: Path, sig: int,
                            ready: Callable[[], bool] = lambda: True) -> tuple[bytes, bytes]:
    """Wait until ``proc`` (a ``durak-ref match`` writing to ``logs``) has finished a game
    and ``ready()`` holds, send it ``sig``, and return its stdout and stderr; it exits
    130 with the interrupted summary and no traceback. Kills it if anything fails."""
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (complete_games(logs) >= 1 and ready()):
            assert proc.poll() is None, "the match ended before the signal"
            assert time.monotonic() < deadline, "timed out waiting for a finished game"
            time.sleep(0.02)
        os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted; the log holds every finished game" in err.decode()
    assert "Traceback" not in err.decode()
    return out, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signalled_match_closes_its_bot_and_keeps_its_log(tmp_path: Path, sig: int) -> None:
    tag = f"tag-{uuid.uuid4().hex}"
    logs = tmp_path / "logs"
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", DURAK_BOT_STALL_AFTER="60")
    with child_subreaper():
        proc = subprocess.Popen(
            [str(DURAK_REF), "match", f"{sys.executable} {BOT} {tag}", "builtin:random", "--games", "50",
             "--log-dir", str(logs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            cwd=tmp_path, preexec_fn=default_signals())
        bots: set[int] = set()

        def bot_started() -> bool:
            bots.update(tagged(tag))
            return bool(bots)
        out, err = signal_after_first_game(proc, logs, sig, bot_started)
        assert "durak" in out.decode()  # the summary of the games played
        # The referee closed and reaped its bot: not alive, not even a zombie left to us.
        assert tagged(tag) == set()
        assert {pid: proc_stat(pid) for pid in bots} == dict.fromkeys(bots)
    [path] = logs.glob("match-*.jsonl")
    log = read_log(path)
    assert log.error is None and log.footer is not None and log.footer["interrupted"] is True
    assert 1 <= len(log.games) < 50


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signal_stops_a_match_of_built_ins_between_two_games(tmp_path: Path, sig: int) -> None:
    """Built-ins decide inside the referee and never make it wait: the signal still ends
    the match at the next game (exit 130, the log closed with an ``interrupted`` footer),
    far short of the games asked for."""
    logs = tmp_path / "logs"
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    proc = subprocess.Popen(
        [str(DURAK_REF), "match", "builtin:greedy", "builtin:random", "--games", "10000000",
         "--log-dir", str(logs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        cwd=tmp_path, preexec_fn=default_signals())
    signal_after_first_game(proc, logs, sig)
    [path] = logs.glob("match-*.jsonl")
    log = read_log(path)
    assert log.error is None and log.footer is not None and log.footer["interrupted"] is True
    assert 1 <= len(log.games) < 10_000_000


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
@pytest.mark.parametrize("bots", [("builtin:ismcts", "builtin:gentle"), ("builtin:gentle", "builtin:ismcts")])
def test_a_signal_stops_a_match_of_searching_built_ins(tmp_path: Path, sig: int,
                                                       bots: tuple[str, str]) -> None:
    """ismcts and gentle are asked one decision at a time (not a whole game in one call)
    and never make the referee wait either: the signal is seen at the next decision,
    long before the match of 1000 games (minutes of search) could end by itself."""
    logs = tmp_path / "logs"
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    proc = subprocess.Popen(
        [str(DURAK_REF), "match", *bots, "--games", "1000", "--log-dir", str(logs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
        preexec_fn=default_signals())
    signal_after_first_game(proc, logs, sig)
    [path] = logs.glob("match-*.jsonl")
    log = read_log(path)
    assert log.error is None and log.footer is not None and log.footer["interrupted"] is True
    assert 1 <= len(log.games) < 1000
