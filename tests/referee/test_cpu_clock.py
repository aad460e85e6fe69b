"""``--clock cpu``: each seat is charged its own CPU time, with a wall-clock backstop.

Real bot processes in real control groups (the CLI's ``match``): a bot that sleeps past
its per-move limit uses no CPU, so under the cpu clock it keeps playing where the wall
clock forfeits it; a bot that spins past its limit forfeits on time either way; a bot
that sleeps past the backstop forfeits. No assertion depends on how fast this machine
is: every sleep and spin is far from the limit it is tested against.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.seats.cgroups import Limits, confinement
from referee.table.clock import Clock, TimeControl, TimeControlError
from support import cli

BOT = Path(__file__).resolve().parent / "bots" / "clock_bot.py"
CONFINED = confinement(Limits(), announce=False)
needs_cpu_time = pytest.mark.skipif(
    CONFINED.cpu_time_why_not() is not None,
    reason=f"bots' CPU time cannot be read here: {CONFINED.cpu_time_why_not()}")


def bot(name: str, *args: object) -> str:
    return f"{name}={sys.executable} {BOT} {' '.join(map(str, args))}"


def match(tmp_path: Path, *args: str | float, code: int = 0) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """Play one game through the CLI: (its --json summary, the log header, the games)."""
    logs = tmp_path / "logs"
    tmp_path.mkdir(exist_ok=True)
    proc = cli("match", *args, "-n", 1, "--max-restarts", 0, "--log-dir", logs, "--json",
               cwd=tmp_path, timeout=180)
    assert proc.returncode == code, proc.stderr
    [log] = logs.glob("*.jsonl")
    header, *records = [json.loads(line) for line in log.read_text().splitlines()]
    return json.loads(proc.stdout), header, [r for r in records if r["type"] == "game"]


# -- the arithmetic (table/clock.py) ------------------------------------------------------

def test_under_the_cpu_clock_a_decision_is_charged_its_cpu_and_waited_for_the_backstop() -> None:
    clock = Clock(TimeControl.parse(None, move=0.5, clock="cpu", backstop=4))
    assert clock.budget() == 0.5 and clock.wait() == 2.0
    assert clock.ruling(1.9, 0.1) == 0.1 and clock.charge(1.9, 0.1) is None  # slept: in time
    assert clock.charge(0.6, 0.6) == 0.5  # spun past its CPU budget
    assert clock.ruling(2.5, 0.1) == 2.5 and clock.charge(2.5, 0.1) == 2.0  # past the backstop
    assert clock.ruling(0.7, -1.0) == 0.7 and clock.charge(0.7) == 0.5  # CPU unread: the wall's


def test_the_wall_clock_ignores_the_cpu_a_seat_measured() -> None:
    clock = Clock(TimeControl.parse(None, move=0.5))
    assert clock.wait() == 0.5 and clock.charge(0.7, 0.1) == 0.5 and clock.ruling(0.7, 0.1) == 0.7


def test_a_game_clock_under_the_cpu_clock_counts_down_cpu_seconds() -> None:
    clock = Clock(TimeControl.parse("10+1", clock="cpu"))
    assert clock.charge(30.0, 2.0) is None  # 30 s of wall time is within 5 x 10 s
    assert clock.remaining == 9.0 and clock.wait() == 45.0


@pytest.mark.parametrize("clock, backstop, message", [
    ("cpus", 5.0, "--clock 'cpus': expected wall or cpu"),
    ("cpu", 0.5, "--backstop 0.5: must be a factor from 1 to 1000"),
    ("cpu", float("inf"), "--backstop inf: must be a factor from 1 to 1000"),
])
def test_a_bad_clock_or_backstop_is_the_users_error_naming_it(clock: str, backstop: float, message: str) -> None:
    with pytest.raises(TimeControlError, match=message):
        TimeControl.parse(None, 1.0, clock=clock, backstop=backstop)


# -- real bot processes ---------------------------------------------------------------------

@pytest.mark.process
@needs_cpu_time
def test_a_bot_that_sleeps_past_its_move_time_forfeits_on_the_wall_clock_not_the_cpu_clock(
        tmp_path: Path) -> None:
    """Its first 3 decisions sleep 0.6 s with a 0.2 s limit: it uses no CPU for them."""
    sleeper = bot("sleeper", "sleep", 0.6, 3)
    args = (sleeper, "builtin:greedy", "--move-time", 0.2, "--backstop", 50)
    on_cpu, header, [game] = match(tmp_path / "cpu", *args, "--clock", "cpu")
    assert on_cpu["forfeits_total"] == 0 and game["forfeit"] is None
    assert header["time_control"]["clock"] == "cpu" and header["time_control"]["backstop_x"] == 50
    slept = [d for d in game["decisions"] if d[0] == 0 and not d[2]][:3]
    assert all(ms < 200 for *_, ms in slept), slept  # charged CPU ms, not the 600 ms slept
    assert game["wall_ms"] > 3 * 600
    on_wall, header, [game] = match(tmp_path / "wall", *args, "--clock", "wall")
    assert header["time_control"]["clock"] == "wall"
    assert game["forfeit"]["bot"] == "sleeper" and game["termination"] == "timeout"
    assert game["forfeit"]["reason"].startswith("no answer to request 1 within 0.200 s")


def cpu_clock_timeout(tmp_path: Path, name: str, mode: tuple[Any, ...],
                      backstop: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """A one-game match of bot ``name`` (clock_bot ``mode``) against greedy under
    ``--clock cpu --move-time 0.1 --backstop BACKSTOP``, which that bot forfeits on time:
    the summary and the forfeit."""
    summary, _, [game] = match(tmp_path, bot(name, *mode), "builtin:greedy",
                               "--move-time", 0.1, "--backstop", backstop, "--clock", "cpu")
    assert game["forfeit"]["bot"] == name and game["termination"] == "timeout", game["forfeit"]
    return summary, game["forfeit"]


@pytest.mark.process
@needs_cpu_time
def test_a_bot_that_spins_past_its_cpu_budget_forfeits_on_time(tmp_path: Path) -> None:
    """Stopped at its CPU budget, long before the backstop (50 x 0.1 s of wall time)."""
    summary, forfeit = cpu_clock_timeout(tmp_path, "spinner", ("spin", 5), backstop=50)
    assert "within its CPU budget of 0.100 s" in forfeit["reason"], forfeit
    assert forfeit["evidence"]["clock"] == "cpu" and forfeit["evidence"]["cpu_s"] >= 0.1
    assert forfeit["evidence"]["waited_s"] < 5.0
    assert summary["time_control"]["clock"] == "cpu"


@pytest.mark.process
@needs_cpu_time
def test_a_bot_that_sleeps_past_the_backstop_forfeits_on_time(tmp_path: Path) -> None:
    _, forfeit = cpu_clock_timeout(tmp_path, "sleeper", ("sleep", 30), backstop=5)
    assert "within 0.500 s of wall time, the cpu clock's backstop" in forfeit["reason"], forfeit
    assert forfeit["evidence"]["clock"] == "wall backstop"


@pytest.mark.process
@needs_cpu_time
def test_replay_verifies_a_cpu_clock_log_and_says_its_times_are_cpu(tmp_path: Path) -> None:
    match(tmp_path, bot("sleeper", "sleep", 0.01, 2), "builtin:greedy", "--clock", "cpu")
    [log] = (tmp_path / "logs").glob("*.jsonl")
    verified = cli("replay", log, "--verify", cwd=tmp_path)
    assert verified.returncode == 0 and "1 of 1 games verified" in verified.stdout
    shown = cli("replay", log, "--game", 0, cwd=tmp_path)
    assert " ms CPU)" in shown.stdout


@pytest.mark.process
def test_a_log_with_an_unknown_clock_does_not_verify(tmp_path: Path) -> None:
    _, header, [game] = match(tmp_path, "builtin:greedy", "builtin:random")
    header["time_control"]["clock"] = "sundial"
    (tmp_path / "bad.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(game) + "\n")
    proc = cli("replay", tmp_path / "bad.jsonl", "--verify", cwd=tmp_path)
    assert proc.returncode == 2 and "time_control clock 'sundial' is none of wall, cpu" in proc.stderr


# -- seats the cpu clock cannot measure --------------------------------------------------

@pytest.mark.process
def test_the_cpu_clock_refuses_a_tcp_bot_before_listening(tmp_path: Path) -> None:
    proc = cli("match", "builtin:greedy", "tcp:remote", "--clock", "cpu", "--no-log", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--clock cpu: tcp:remote: a TCP bot runs where the referee cannot read its CPU time" in proc.stderr


@pytest.mark.process
def test_the_cpu_clock_refuses_a_bot_program_without_cgroup_cpu_accounting(tmp_path: Path) -> None:
    """No cgroup hierarchy at all (DURAK_CGROUP_ROOT at an empty directory): refused, not
    timed on the wall clock unannounced."""
    empty = tmp_path / "no-cgroups"
    empty.mkdir()
    import os
    import subprocess

    from support import DURAK_REF
    proc = subprocess.run([str(DURAK_REF), "match", bot("b", "sleep", 0), "builtin:greedy",
                           "--clock", "cpu", "--no-log"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120,
                          env=dict(os.environ, DURAK_CGROUP_ROOT=str(empty), COLUMNS="200"))
    assert proc.returncode == 2, proc.stderr
    assert "--clock cpu: seat b: no control group can be had for bot programs here" in proc.stderr


@pytest.mark.process
def test_built_ins_play_under_the_cpu_clock(tmp_path: Path) -> None:
    proc = cli("match", "builtin:greedy", "builtin:gentle", "builtin:random", "--clock", "cpu",
               "-n", 2, "--no-log", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["forfeits_total"] == 0 and summary["time_control"]["clock"] == "cpu"


@pytest.mark.process
def test_bench_strength_plays_on_the_cpu_clock_by_default(tmp_path: Path) -> None:
    proc = cli("bench", "strength", "--only", "random,greedy", "--games", 2, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["time_control"]["clock"] == "cpu"
    assert all(row["forfeits"] == {} for row in result["standings"])
