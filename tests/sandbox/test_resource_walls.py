"""The resource walls (referee/seats/cgroups.py): real hostile bots under the real
sandbox, through the real CLI with default options, and the backend on this machine's
real cgroup hierarchy.

Each bot (``bots/resource_bot.py MODE``) plays legal random moves and attacks a shared
resource, reporting what it managed as ``ATTACK {json}`` lines on its stderr (kept in
its stderr log). Controls (``--ponder``, a smaller ``--max-procs``) show that the wall
is what makes the difference.

Skipped, with the reason shown, where bwrap is missing or no cgroup controller can be
used (not root, no delegation); CI has both, as this machine has (cgroup v1 controllers
under /sys/fs/cgroup, a controller-less cgroup2 at /sys/fs/cgroup/unified).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.rules.options import make_rules
from referee.seats.cgroups import Limits, confinement, detect
from referee.seats.confined import ConfinedBuiltin
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.seats.process import ProcessPlayer
from referee.table.clock import TimeControl
from referee.table.match import GameRecord, MatchConfig, play_match
from referee.table.runner import make_players
from support import attack_reports as reports
from support import cli

BOT = Path(__file__).resolve().parent / "bots" / "resource_bot.py"
PY = sys.executable
CONFINED = confinement(Limits(), announce=False)

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None,
                       reason="bubblewrap (bwrap) not installed: apt-get install bubblewrap"),
    pytest.mark.skipif(CONFINED.backend is None,
                       reason=f"no cgroup controller usable here: {CONFINED.why_not}"),
]


def bot(mode: str, *args: object) -> str:
    return " ".join([PY, str(BOT), mode, *map(str, args)])




def match(tmp_path: Path, name: str, *args: str | int | float) -> tuple[dict[str, Any], Path, str]:
    """Play a match through the CLI (exit 0); (summary, log dir, stderr)."""
    logs = tmp_path / name
    proc = cli("match", *args, "--log-dir", logs, "--json", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), logs, proc.stderr


def dead_subtrees() -> list[str]:
    """durak-ref.<pid> groups of referees that are gone (a leak), where this process's
    own subtree lives (the CLI's runs make theirs in the same places)."""
    assert CONFINED.backend is not None
    found = []
    for base in CONFINED.backend.bases.values():
        for path in Path(base).parent.glob("durak-ref.*"):
            pid = path.name.split(".", 1)[1]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                found.append(str(path))
    return found


# -- CPU: no thinking on the opponent's time -----------------------------------------------


@pytest.mark.process
def test_spinning_children_are_frozen_while_the_opponent_thinks_so_it_never_forfeits(
        tmp_path: Path) -> None:
    """32 setsid spinners against a bot doing 30 ms of CPU work per decision under a
    400 ms limit. The spinners note each millisecond (of the clock all processes share)
    in which one of them ran, the thinker when each of its decisions started and ended:
    frozen, no spinner runs while the thinker decides; with --ponder they run through
    its decisions (their group's quota of one CPU still leaves it the other). The signal
    is which milliseconds the spinners ran, not a wall time against a threshold."""
    args = (bot("spin", 32), bot("think", 30), "--games", 1, "--move-time", 0.4)
    frozen, logs, err = match(tmp_path, "frozen", *args)
    assert "off-move frozen" in err
    assert frozen["games"] == 1 and not frozen["forfeit_details"], frozen
    _, plogs, _ = match(tmp_path, "ponder", *args, "--ponder")

    def spun_while_thinking(where: Path) -> float:
        """The share of the thinker's deciding milliseconds in which a spinner ran (a
        millisecond at each end left out: the freeze follows the request's write)."""
        got = reports(where)
        ran = {ms for r in got if r["mode"] == "spin" for a, b in r["ran_ms"] for ms in range(a, b)}
        thinking = [ms for r in got if r["mode"] == "think"
                    for ms in range(r["start_ms"] + 2, r["end_ms"] - 1)]
        assert ran and thinking, got
        return sum(ms in ran for ms in thinking) / len(thinking)

    assert spun_while_thinking(logs) < 0.02
    # The control only has to show that the spinners do run through its decisions when not
    # frozen: niced to 19 on a loaded 2-core host they got 12% of those milliseconds
    # (30-70% on a quiet one), so the bar sits well below that, far above the 2% above.
    assert spun_while_thinking(plogs) > 0.05


#: Two spinners at niceness 0 (they take every CPU they are given, so any time they
#: are let run shows as CPU), opposite the expert at a budget that keeps the test short.
SPINNER, EXPERT = bot("spin", 2, 0), "builtin:expert:iterations=150"


@pytest.mark.process
def test_a_bot_opposite_builtin_expert_is_frozen_whenever_the_expert_is_waited_for() -> None:
    """Against ``builtin:expert`` (issue 35: a bot's child got 83-106 ms of CPU per expert
    decision, the expert searching in the referee's process where nothing froze the bot):
    the run seats the expert as a confined process, so the turn logic freezes the spinning
    bot while the expert decides. Checked as each expert answer comes back: the spinner's
    group is frozen in the kernel (its freezer asked to be: v1 FREEZING or FROZEN, v2
    cgroup.freeze 1) exactly when the referee froze it, and it did so at most of the
    expert's decisions (not at those answered within the pipe's 1 ms quick window, such
    as a forced take). Control: opposite the expert deciding in the referee's process
    (main's way) the spinner is never frozen and takes CPU across the expert's decisions. (The CPU it takes between
    a request's write and its freeze, the referee's own scheduling delay, was 0.1 ms per
    decision on a quiet machine and about 20 ms on a loaded CI: a figure, not a test.)"""
    confined, confined_frozen = trio.run(_spinner_across_expert_decisions, True)
    in_process, in_process_frozen = trio.run(_spinner_across_expert_decisions, False)
    assert len(confined_frozen) >= 5 and len(in_process) >= 5, (confined_frozen, in_process)
    assert all(kernel == referee for kernel, referee in confined_frozen), confined_frozen
    assert sum(kernel for kernel, _ in confined_frozen) >= len(confined_frozen) / 2, confined_frozen
    assert not any(kernel or referee for kernel, referee in in_process_frozen), in_process_frozen
    assert sum(in_process) > 0, in_process


async def _spinner_across_expert_decisions(
        confine: bool) -> tuple[list[float], list[tuple[bool, bool]]]:
    """Play one game of the spinner against the expert (confined as a run seats it when
    ``confine``, else in the referee's process); the CPU seconds the spinner's processes
    took across each expert decision, and for each awaited answer whether the spinner's
    group was frozen when it came back: in the kernel, and by the referee's account."""
    config = MatchConfig(rules=make_rules("classic", []), games=1, seed=11,
                         tc=TimeControl.parse(None, 60.0))
    players = make_players([parse_bot_spec(SPINNER), parse_bot_spec(EXPERT)], config,
                           stderr_stem=None)
    spinner, expert = players
    assert isinstance(expert, ConfinedBuiltin)  # what every run with a program bot does
    if not confine:
        players[1] = expert = BuiltinPlayer(expert.name, expert.builtin, config.seed)
    grown: list[float] = []
    frozen: list[tuple[bool, bool]] = []
    games: list[GameRecord] = []
    async with trio.open_nursery() as nursery:
        try:
            for p in players:
                await p.start(nursery)
            assert isinstance(spinner, ProcessPlayer) and spinner.group is not None
            group = spinner.group
            _watch_decisions(expert, lambda: _group_cpu(group), grown,
                             lambda: frozen.append((_freeze_asked(group), group.frozen)))
            await play_match(players, config, on_game=lambda g, _: games.append(g))
        finally:
            for p in players:
                await p.close()
            nursery.cancel_scope.cancel()
    assert [g.forfeit for g in games] == [None], games
    return grown, frozen


def _watch_decisions(player: Any, cpu: Any, grown: list[float], on_waited: Any) -> None:
    """Append to ``grown`` how much ``cpu()`` grew across each decision of ``player``:
    from its ``attempt`` (the request asked) to its answer (from ``attempt`` at once, or
    from the awaited ``finish``); call ``on_waited()`` as each awaited answer is back.
    An in-process built-in answers from ``attempt``: every decision counts as waited."""
    attempt, finish = player.attempt, player.finish
    asked = [0.0]

    def attempt_watched(ask: Any) -> Any:
        asked[0] = cpu()
        answer = attempt(ask)
        if answer is not None:
            grown.append(cpu() - asked[0])
            if isinstance(player, BuiltinPlayer):
                on_waited()
        return answer

    async def finish_watched(ask: Any) -> Any:
        answer = await finish(ask)
        on_waited()
        grown.append(cpu() - asked[0])
        return answer

    player.attempt, player.finish = attempt_watched, finish_watched


def _freeze_asked(group: Any) -> bool:
    """Whether ``group``'s freezer is asked to hold it now (v1 freezer.state FREEZING or
    FROZEN, v2 cgroup.freeze 1), read from the kernel, not the referee's own flag."""
    if "v2" in group.dirs and group.backend.freezer == "v2":
        with open(os.path.join(group.dirs["v2"], "cgroup.freeze")) as f:
            return f.read().strip() == "1"
    with open(os.path.join(group.dirs["freezer"], "freezer.state")) as f:
        return f.read().strip() in ("FREEZING", "FROZEN")


def _group_cpu(group: Any) -> float:
    """CPU seconds the processes of ``group`` have taken (schedstat: ns, per task)."""
    total = 0
    for pid in group.pids():
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9


# -- processes -------------------------------------------------------------------------------


@pytest.mark.process
def test_a_fork_bomb_is_refused_at_the_process_limit_and_the_run_goes_on(tmp_path: Path) -> None:
    tag = f"durak-forkbomb-{os.getpid()}"
    summary, logs, err = match(tmp_path, "bomb", bot("forkbomb", tag), "builtin:random",
                               "--games", 2)
    assert "64 processes" in err
    assert summary["games"] == 2 and not summary["forfeit_details"], summary
    bomb = [r for r in reports(logs) if r["mode"] == "forkbomb"]
    assert bomb and all(r["made"] < 64 and r["error"] == "BlockingIOError: errno 11" for r in bomb), bomb
    # The option is the limit: fewer allowed, fewer made.
    small, slogs, _ = match(tmp_path, "small", bot("forkbomb", tag), "builtin:random",
                            "--games", 1, "--max-procs", 16)
    assert all(r["made"] < 16 for r in reports(slogs) if r["mode"] == "forkbomb")
    assert max(r["made"] for r in bomb) > 16
    leftover = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split()
    assert leftover == [], "the bomb's processes outlived the run"


# -- memory ----------------------------------------------------------------------------------


@pytest.mark.process
def test_shm_tmp_and_children_over_the_memory_limit_make_the_bot_crash_at_the_memory_limit(
        tmp_path: Path) -> None:
    """The bot fills /dev/shm and /tmp (capped inside the limit: 64 and 256 MB of 1024),
    then forks 4 children that touch 800 MB each: the group is killed, the game is a
    crash whose reason says "memory limit", and the run goes on (the second game
    restarts the bot, which does the same). 800 MB is more than the fills leave of the
    limit, so no child can hold its memory however the children are scheduled (with
    300 MB each, two children that happened to run one after the other both fitted)."""
    summary, logs, err = match(tmp_path, "memory", bot("memory", 800), "builtin:random",
                               "--games", 2)
    assert "memory 1024 MB incl. tmpfs/shm, no swap" in err
    assert summary["games"] == 2
    crashes = summary["forfeit_details"]
    assert len(crashes) == 2 and all(f["kind"] == "crash" and "memory limit" in f["reason"]
                                     and f["evidence"]["memory_limit_mb"] == 1024
                                     for f in crashes), crashes
    fills = {r["path"]: r["mb"] for r in reports(logs) if r["mode"] == "fill"}
    assert fills == {"/dev/shm": 64, "/tmp": 256}, fills
    assert not [r for r in reports(logs) if r["mode"] == "held"], "a child held its 800 MB"
    assert dead_subtrees() == []


# -- the fallback ----------------------------------------------------------------------------


@pytest.mark.process
def test_where_no_controller_can_be_used_one_warning_line_says_so_and_the_match_plays(
        tmp_path: Path) -> None:
    """The detector pointed at an empty directory (DURAK_CGROUP_ROOT) stands for a host
    without usable cgroups; the match itself is real."""
    empty = tmp_path / "no-cgroups"
    empty.mkdir()
    env = dict(os.environ, DURAK_CGROUP_ROOT=str(empty), COLUMNS="200", NO_COLOR="1")
    from support import DURAK_REF
    proc = subprocess.run([str(DURAK_REF), "match", "builtin:random", bot("think", 1), "--games", "1",
                           "--no-log", "--json"], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "CPU limits" in line]
    assert lines == [f"durak-ref: warning: bots run without memory, process or CPU limits and "
                     f"are not frozen off-move: no cgroup v1 memory, pids or cpu controller "
                     f"under {empty}"], proc.stderr
    assert "bots confined" not in proc.stderr
    assert json.loads(proc.stdout)["games"] == 1


# -- the backend on the real v1 hierarchy -----------------------------------------------------


@pytest.mark.process
def test_the_v1_backend_writes_the_limits_joins_freezes_kills_and_removes_its_groups() -> None:
    """On this machine's real cgroup v1 hierarchy (the v2 mount has no controllers, so
    detection falls back to v1, as on CI)."""
    backend, why = detect(Limits(memory_mb=300, procs=20, cpus=0.5))
    assert backend is not None, why
    if backend.version != 1:
        pytest.skip("this host gives cgroup v2 controllers: the v1 backend is not used here")
    # One empty group stays frozen, so the kernel's freezer fast path stays on.
    assert Path(backend.bases["freezer"], "anchor", "freezer.state").read_text().strip() == "FROZEN"
    group = backend.create()
    d = group.dirs
    assert Path(d["memory"], "memory.limit_in_bytes").read_text().strip() == str(300 << 20)
    assert Path(d["memory"], "memory.memsw.limit_in_bytes").read_text().strip() == str(300 << 20)
    assert Path(d["pids"], "pids.max").read_text().strip() == "20"
    assert Path(d["cpu"], "cpu.cfs_quota_us").read_text().strip() == "50000"
    assert Path(d["cpu"], "cpu.shares").read_text().strip() == "1024"
    child = subprocess.Popen([*group.join_argv(), "sh", "-c", "sleep 30 & sleep 30"])
    try:
        for _ in range(200):
            if len(group.pids()) == 3:
                break
            time.sleep(0.01)
        assert child.pid in group.pids() and len(group.pids()) == 3  # the sh, both sleeps
        group.freeze()
        assert Path(d["freezer"], "freezer.state").read_text().strip() in ("FREEZING", "FROZEN")
        group.thaw()
        assert Path(d["freezer"], "freezer.state").read_text().strip() == "THAWED"
        group.freeze()
        group.kill_all()  # thaws first: a frozen process cannot die
        assert child.wait(timeout=10) == -9
    finally:
        child.kill()
        child.wait()
    for _ in range(100):
        if group.remove():
            break
        time.sleep(0.01)
    assert not any(os.path.exists(p) for p in d.values())
    backend.remove_all()
    assert not any(os.path.exists(p) for p in backend.bases.values())


@pytest.mark.process
def test_many_bot_processes_started_and_stopped_leave_no_group_behind(tmp_path: Path) -> None:
    """The long run: 40 bot processes in turn (sandboxed and not, closed politely and
    killed, one leaving a setsid daemon), then the referee's subtree is empty."""
    from referee.seats.players import BotSpec
    from referee.seats.process import ProcessPlayer
    from referee.seats.sandbox import Sandbox

    daemon = ("import os,sys,time\nif os.fork()==0:\n os.setsid()\n time.sleep(60)\n"
              "os.execv(sys.executable,[sys.executable]+sys.argv[1:])")
    minimal = str(Path(__file__).resolve().parents[2] / "examples" / "python" / "minimal_bot.py")

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for i in range(40):
                argv = (PY, "-c", daemon, minimal) if i % 4 == 3 else (PY, minimal)
                player = ProcessPlayer(f"bot{i}", BotSpec("command", f"bot{i}", argv),
                                       sandbox=Sandbox("bwrap" if i % 2 else "none", warn=False),
                                       grace=0.2)
                await player.start(nursery)
                assert player.group is not None and player.group.pids()
                if i % 3 == 0:
                    await player.last_words()  # killed, as a failed bot is
                await player.close()
            nursery.cancel_scope.cancel()

    trio.run(main)
    backend = CONFINED.backend
    assert backend is not None
    for base in backend.bases.values():
        assert [p.name for p in Path(base).iterdir() if p.is_dir()] == [], base


# -- cgroup v2, on a fake hierarchy -----------------------------------------------------------


def test_v2_detection_and_limits_on_a_fake_cgroup2_directory(tmp_path: Path) -> None:
    """cgroup v2 cannot be had on this machine (its cgroup2 mount has no controllers),
    so the v2 logic is checked on a directory shaped like one: the controllers handed
    down at the root, the referee in /app. Limits land in the v2 files; freezing writes
    cgroup.freeze; a v2 mount without the controllers is "present but not usable"."""
    root = tmp_path / "cg"
    (root / "app").mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("cpu memory pids\n")
    own = tmp_path / "self-cgroup"
    own.write_text("0::/app\n")
    backend, why = detect(Limits(memory_mb=512, procs=32, cpus=2), str(root), str(own))
    assert backend is not None and backend.version == 2, why
    assert Path(backend.bases["v2"]).parent == root  # the nearest group that hands them down
    group = backend.create()
    v2 = Path(group.dirs["v2"])
    assert (v2 / "memory.max").read_text() == str(512 << 20)
    assert (v2 / "memory.swap.max").read_text() == "0"
    assert (v2 / "memory.oom.group").read_text() == "1"
    assert (v2 / "pids.max").read_text() == "32"
    assert (v2 / "cpu.max").read_text() == "200000 100000"
    assert (v2 / "cpu.weight").read_text() == "100"
    (v2 / "cgroup.freeze").write_text("")
    group.freeze()
    assert (v2 / "cgroup.freeze").read_text() == "1"
    group.thaw()
    assert (v2 / "cgroup.freeze").read_text() == "10"  # one write per change, same fd
    (v2 / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert group.oom_kills() == 1
    assert backend.summary().startswith("cgroup v2, memory 512 MB incl. tmpfs/shm")

    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "cgroup.controllers").write_text("")
    none, why = detect(Limits(), str(bare), str(own))
    assert none is None and "has no memory/pids/cpu controller" in why
