"""``durak-ref check-bot`` against bots that play legally but misbehave otherwise:
a bot that answers a request twice, one that answers before it is asked, one that
leaves a forked child running after bye, and one that leaves a ``setsid`` daemon
(double fork: its own session and process group, re-parented away from the bot).
Each makes the real CLI exit 1 with the failed check, its evidence in ``--json``, and
what the spec requires; and check-bot kills what the bot left, so no process of the
bot survives the test.

The bots (``bots/conduct_bot.py MODE PIDFILE``) note every pid they start in PIDFILE.
The test process is a child subreaper while the CLI runs: should check-bot leave an
orphan behind, it is re-parented to us (not to a PID 1 that may hide it), and the test
sees it, fails, and kills it.

Timing: the double answer is written in the same write as the answer; the early answer
is written the moment game_start arrives, and every game gives it a chance (one is
enough); the leftovers sleep for a minute. Nothing here depends on a close race.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.conformance.checkbot import CONFIGS, check_bot
from referee.seats.leftovers import PR_GET_CHILD_SUBREAPER, PR_SET_CHILD_SUBREAPER
from referee.seats.sandbox import Sandbox
from support import child_subreaper, cli, proc_stat

pytestmark = pytest.mark.process

BOT = Path(__file__).resolve().parent / "bots" / "conduct_bot.py"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"
CONDUCT = ("one answer per request", "no answer before request", "no processes left")


@pytest.fixture(autouse=True)
def subreaper() -> Iterator[None]:
    with child_subreaper():
        yield


def read_pids(pidfile: Path) -> dict[str, list[int]]:
    pids: dict[str, list[int]] = {"bot": [], "child": [], "daemon": []}
    if pidfile.exists():
        for line in pidfile.read_text().splitlines():
            role, pid = line.split()
            pids[role].append(int(pid))
    return pids


def still_there(pid: int) -> str | None:
    """The state of ``pid`` if it is still one of our bot's processes: running (its
    command line names the bot) or a zombie re-parented to us (nobody reaped it)."""
    st = proc_stat(pid)
    if st is None:
        return None
    if st[0] == "Z":
        return "Z" if st[1] == os.getpid() else None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return st[0] if str(BOT).encode() in cmdline else None


def kill_and_reap(pidfile: Path) -> None:
    """After a failed test: nothing of ours may linger."""
    for pids in read_pids(pidfile).values():
        for pid in pids:
            if still_there(pid) not in (None, "Z"):
                os.kill(pid, signal.SIGKILL)
    time.sleep(0.1)
    for pids in read_pids(pidfile).values():
        for pid in pids:
            if still_there(pid) == "Z":
                os.waitpid(pid, 0)


def check(tmp_path: Path, mode: str) -> tuple[int, dict[str, Any], dict[str, list[int]]]:
    """Run ``durak-ref check-bot --json`` on the bot in MODE; return the exit code, the
    report, and the pids the bot started, having checked that none of them is left."""
    pidfile = tmp_path / "pids"
    command = f"{sys.executable} {BOT} {mode} {pidfile}"
    try:
        # Unsandboxed: the bot records its pids in tmp_path, and the conduct checks are
        # about a bot that can fork freely (in the sandbox its processes die with it).
        done = cli("check-bot", command, "--games", "1", "--json", "--sandbox", "none",
                   cwd=tmp_path, timeout=120)
        pids = read_pids(pidfile)
        left = {pid: state for role in pids for pid in pids[role] if (state := still_there(pid))}
        assert not left, f"processes of the bot left after check-bot (pid: state): {left}"
    finally:
        kill_and_reap(pidfile)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout), pids


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["status"] for c in report["checks"]}


def failed(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    (c,) = [c for c in report["checks"] if c["name"] == name]
    assert c["status"] == "fail", c
    return c["problems"]


# -- misbehaving bots fail ---------------------------------------------------------


def test_a_bot_that_answers_twice_fails(tmp_path: Path) -> None:
    code, report, _ = check(tmp_path, "double")
    assert code == 1 and report["ok"] is False
    s = statuses(report)
    assert s["no answer before request"] == "pass" and s["no processes left"] == "pass"
    problems = failed(report, "one answer per request")
    assert problems
    for p in problems:
        assert p["kind"] == "double_answer"
        rid = p["where"]["request"]
        assert p["message"].startswith(f"answered request {rid} twice: a second action ")
        # What was asked, what came: the same action twice, for the same id.
        assert p["sent"]["request"] == rid and p["sent"]["legal"]
        assert p["received"]["second"] == {"type": "action", "id": rid,
                                           "action": p["received"]["first"]}
        assert "exactly one action per request" in p["required"]
        assert "SPEC section 6" in p["required"]
    # A second answer is caught right after the answer (the usual probe) ...
    assert any(p["received"]["probe"] == "answer" for p in problems)


def test_a_bot_that_answers_before_it_is_asked_fails(tmp_path: Path) -> None:
    code, report, _ = check(tmp_path, "early")
    assert code == 1 and report["ok"] is False
    s = statuses(report)
    assert s["one answer per request"] == "pass" and s["no processes left"] == "pass"
    problems = failed(report, "no answer before request")
    for p in problems:
        assert p["kind"] == "early_answer"
        assert p["message"].startswith("wrote an action for request ")
        assert "after game_start, before any request of that game" in p["message"]
        assert p["sent"]["message"] == "game_start"
        frame = p["received"]["frame"]
        assert frame["type"] == "action" and frame["action"] == {"type": "pass"}
        assert p["received"]["probe"] == "game_start"
        assert "SPEC sections 5 and 6" in p["required"]


def test_a_bot_whose_forked_child_survives_bye_fails(tmp_path: Path) -> None:
    code, report, pids = check(tmp_path, "fork")
    assert code == 1 and report["ok"] is False
    s = statuses(report)
    assert s["exit after bye"] == "pass"  # the bot itself exited properly
    assert s["one answer per request"] == "pass" and s["no answer before request"] == "pass"
    problems = failed(report, "no processes left")
    assert len(pids["child"]) == len(CONFIGS)  # one child per bot process
    assert sorted(p["received"]["pid"] for p in problems) == sorted(pids["child"])
    for p in problems:
        left = p["received"]
        assert p["kind"] == "leftover"
        assert str(BOT) in left["cmdline"] and "fork" in left["cmdline"]
        assert p["message"].startswith(f"pid {left['pid']} (")
        assert "still running 0.5 s after the bot exited" in p["message"]
        assert "in the bot's process group" in p["message"]
        assert left["pgid"] == left["bot_pid"] and left["own_session"] is False
        assert left["after_exit"] is True
        assert left["survived_group_kill"] is False  # the referee's group kill got it
        assert p["message"].endswith("the referee's kill of the bot's process group ended it")
        assert "SPEC section 12" in p["required"]
    assert [len(c["leftovers"]) for c in report["configs"]] == [1] * len(CONFIGS)


def test_a_bot_that_leaves_a_setsid_daemon_fails(tmp_path: Path) -> None:
    code, report, pids = check(tmp_path, "daemon")
    assert code == 1 and report["ok"] is False
    assert statuses(report)["exit after bye"] == "pass"
    problems = failed(report, "no processes left")
    assert len(pids["daemon"]) == len(CONFIGS)
    assert sorted(p["received"]["pid"] for p in problems) == sorted(pids["daemon"])
    for p in problems:
        left = p["received"]
        assert p["kind"] == "leftover" and "daemon" in left["cmdline"]
        # Out of the bot's group and session, and re-parented to check-bot (the subreaper):
        assert left["sid"] == left["pgid"] != left["bot_pid"] and left["own_session"] is True
        assert left["reparented"] is True
        # ... so the referee's kill of the bot's group missed it; check-bot killed it.
        assert left["after_exit"] is True and left["survived_group_kill"] is True
        assert left["killed_by_check_bot"] is True
        assert f"in a session of its own (sid {left['sid']})" in p["message"]
        assert p["message"].endswith("check-bot killed it")


async def test_a_daemon_left_by_a_bot_that_crashed_is_found_too(tmp_path: Path) -> None:
    # No bye here: the bot crashed; the referee killed its group; the daemon lives on.
    pidfile = tmp_path / "pids"
    try:
        report = await check_bot([sys.executable, str(BOT), "crash", str(pidfile)],
                                 configs=CONFIGS[:1], grace=0.2, sandbox=Sandbox("none"))
        pids = read_pids(pidfile)
        assert not {pid for pid in pids["daemon"] if still_there(pid)}
    finally:
        kill_and_reap(pidfile)
    s = {c.name: c.status for c in report.checks}
    assert s["games: classic"] == "fail" and report.configs[0].failure is not None
    assert report.configs[0].failure.kind == "crash"
    (problem,) = report.check("no processes left").problems
    left = problem.received
    assert left["pid"] == pids["daemon"][0] and left["own_session"] is True
    assert left["after_exit"] is False and left["survived_group_kill"] is True
    assert left["killed_by_check_bot"] is True


def test_the_human_report_says_what_the_bot_did_and_what_is_required(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    try:
        done = cli("check-bot", f"{sys.executable} {BOT} double {pidfile}", "--games", "1",
                   "--sandbox", "none",
                   cwd=tmp_path, timeout=120)
    finally:
        kill_and_reap(pidfile)
    assert done.returncode == 1, done.stdout + done.stderr
    text = done.stdout
    # The referee's own match loop also forfeits the games where the second answer is
    # found before the next request (SPEC section 6), so the game checks fail as well.
    assert "one answer per request" in text and "FAILED: " in text
    assert "answered request 3 twice" in text
    assert "[double_answer] answered request " in text and " twice: a second action " in text
    assert "required: exactly one action per request" in text


# -- well-behaved bots pass ---------------------------------------------------------


def test_a_helper_process_that_exits_with_the_bot_is_fine(tmp_path: Path) -> None:
    code, report, pids = check(tmp_path, "helper")
    assert code == 0, report
    assert len(pids["child"]) == len(CONFIGS)
    s = statuses(report)
    assert all(s[name] == "pass" for name in CONDUCT)
    assert all(c["leftovers"] == [] for c in report["configs"])
    settings = report["settings"]
    assert settings["settle_ms"] > 0 and settings["probes_per_game"] >= 1


@pytest.mark.parametrize("bot", ["random_bot.py", "greedy_bot.py", "minimal_bot.py"])
async def test_the_example_bots_pass_the_conduct_checks(bot: str) -> None:
    report = await check_bot([sys.executable, str(EXAMPLES / bot)], games_per_config=2,
                             configs=CONFIGS[:2])
    s = {c.name: c.status for c in report.checks}
    assert all(s[name] == "pass" for name in CONDUCT), s
    assert report.ok


async def test_check_bot_leaves_the_subreaper_flag_as_it_found_it() -> None:
    # check-bot makes itself a subreaper while it runs, and must then restore the flag.
    libc = ctypes.CDLL(None, use_errno=True)

    def flag() -> int:
        value = ctypes.c_int(-1)
        assert libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0) == 0
        return value.value

    for before in (0, 1):
        assert libc.prctl(PR_SET_CHILD_SUBREAPER, before, 0, 0, 0) == 0
        report = await check_bot([sys.executable, str(EXAMPLES / "minimal_bot.py")],
                                 games_per_config=1, configs=CONFIGS[:1])
        assert report.check("no processes left").status == "pass"
        assert flag() == before
