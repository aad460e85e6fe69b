"""No bot survives its referee (referee/seats/watchdog.py): a real ``durak-ref match``
is killed with SIGKILL while its sandboxed bot is frozen off-move, holding memory and a
child; within seconds no process of that bot is left and no control group of the run.

On cgroup v1 (this machine and CI: controllers under /sys/fs/cgroup) through the whole
CLI. cgroup v2 through the whole CLI needs a v2 tree with the memory, pids and cpu
controllers (the referee's backend prefers it then); where there is none the test says
so and skips. The watchdog's v2 path (``cgroup.freeze``, ``cgroup.kill``) is tested
on its own wherever a cgroup2 mount lets us make a group, as this machine's controller-less
/sys/fs/cgroup/unified does: a frozen process tree in a v2 group whose referee stand-in
is SIGKILLed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from referee.seats.cgroups import Limits, confinement
from support import DURAK_REF

BOT = Path(__file__).resolve().parent / "bots" / "orphan_bot.py"
PY = sys.executable
CONFINED = confinement(Limits(), announce=False)
V2_MOUNT = "/sys/fs/cgroup/unified"

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None,
                                 reason="bubblewrap (bwrap) not installed: apt-get install bubblewrap")


def marked(tag: str) -> list[int]:
    """The live (not zombie) processes whose command line holds ``tag``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def run_groups(pid: int) -> list[str]:
    """Every control group directory of the referee ``pid`` (its durak-ref.<pid> subtrees)."""
    found: list[str] = []
    for top, dirs, _ in os.walk("/sys/fs/cgroup"):  # (a group may go while we look)
        found += [os.path.join(top, d) for d in dirs if d == f"durak-ref.{pid}"]
    return found


def frozen(pid: int) -> bool:
    """Whether ``pid``'s v1 freezer group (or v2 group) is frozen now."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "freezer" in controllers.split(","):
            state = Path("/sys/fs/cgroup/freezer", path.lstrip("/"), "freezer.state")
            return state.exists() and state.read_text().strip() == "FROZEN"
    return False


def wait_for(check, seconds: float):  # type: ignore[no-untyped-def]
    """Poll ``check()`` until it is truthy or ``seconds`` pass; its last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(0.05)


@needs_bwrap
@pytest.mark.skipif(CONFINED.backend is None or CONFINED.backend.version != 1,
                    reason=f"needs the cgroup v1 backend with a freezer here: "
                           f"{CONFINED.why_not or 'this host gives the referee cgroup v2'}")
def test_sigkill_of_the_referee_while_its_bot_is_frozen_leaves_no_process_and_no_group(
        tmp_path: Path) -> None:
    """The attack of issue 35: SIGKILL to the referee while a bot (100 MB, and a child
    with 100 MB more) is frozen because its opponent is thinking. Before the watchdog
    the bot, its child and bwrap stayed alive (frozen, in D state) with the memory, and
    the groups stayed until some later referee swept them."""
    assert CONFINED.backend is not None and CONFINED.backend.enforced["freezer"]
    tag = f"orphan-{uuid.uuid4().hex[:12]}"
    hold = f"{PY} {BOT} hold {tag} 100"
    slow = f"{PY} {BOT} slow other-{tag} 600"
    referee = subprocess.Popen(
        [str(DURAK_REF), "match", hold, slow, "--games", "1", "--move-time", "900",
         "--log-dir", str(tmp_path / "logs")],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        bots = wait_for(lambda: [p for p in marked(tag) if frozen(p)], 90)
        assert len(bots) >= 3, f"the bot, its child and bwrap never were frozen: {marked(tag)}"
        groups = run_groups(referee.pid)
        assert groups, "the referee made no control group"
        referee.send_signal(signal.SIGKILL)
        referee.wait(timeout=10)

        left = wait_for(lambda: not marked(tag) and not run_groups(referee.pid), 10)
        assert left, (f"5 s after the referee's SIGKILL: processes {marked(tag)}, "
                      f"groups {run_groups(referee.pid)}")
        assert not marked(f"other-{tag}")  # the opponent too
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
        for pid in marked(tag):
            os.kill(pid, signal.SIGKILL)


def v2_why_not() -> str | None:
    """Why the watchdog's v2 path cannot be tried here (None: it can)."""
    if not os.path.exists(os.path.join(V2_MOUNT, "cgroup.controllers")):
        return f"no cgroup2 mount at {V2_MOUNT}"
    probe = os.path.join(V2_MOUNT, f"durak-probe.{os.getpid()}")
    try:
        os.mkdir(probe)
    except OSError as exc:
        return f"cannot make a group in {V2_MOUNT}: {exc.strerror}"
    try:
        if not all(os.path.exists(os.path.join(probe, f)) for f in ("cgroup.freeze", "cgroup.kill")):
            return f"the kernel's cgroup2 at {V2_MOUNT} has no cgroup.freeze/cgroup.kill (needs 5.14+)"
    finally:
        os.rmdir(probe)
    return None


V2_WHY_NOT = v2_why_not()

#: A stand-in referee: it makes a v2 subtree ``durak-ref.<its pid>`` under argv[1], puts
#: a child that holds 50 MB and forks a grandchild into a group in it, freezes that
#: group, hands the subtree to its watchdog, prints its pid and waits to be killed.
STAND_IN = """
import os, sys, time
from referee.seats.watchdog import watchdog
base = os.path.join(sys.argv[1], f"durak-ref.{os.getpid()}")
group = os.path.join(base, "bot.1")
os.makedirs(group)
pid = os.fork()
if pid == 0:
    with open(os.path.join(group, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    held = bytearray(b"x" * (50 << 20))
    os.fork()
    os.execvp(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", sys.argv[2]])
time.sleep(1)
with open(os.path.join(group, "cgroup.freeze"), "w") as f:
    f.write("1")
watchdog().watch_base(base)
print(pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="making cgroup2 groups needs root here")
@pytest.mark.skipif(V2_WHY_NOT is not None, reason=f"cgroup v2: {V2_WHY_NOT}")
def test_on_cgroup_v2_the_watchdog_thaws_kills_and_removes_a_frozen_tree(tmp_path: Path) -> None:
    """The v2 path: ``cgroup.freeze`` 0, ``cgroup.kill``, rmdir, after a SIGKILL of the
    process that made the groups (whose watchdog alone is left to act)."""
    tag = f"v2orphan-{uuid.uuid4().hex[:12]}"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    stand_in = subprocess.Popen([PY, "-c", STAND_IN, V2_MOUNT, tag], stdout=subprocess.PIPE,
                                text=True, env=env)
    base = os.path.join(V2_MOUNT, f"durak-ref.{stand_in.pid}")
    try:
        assert stand_in.stdout is not None
        stand_in.stdout.readline()
        bots = wait_for(lambda: [p for p in marked(tag) if p != stand_in.pid][1:], 30)
        assert len(bots) == 1, marked(tag)  # the child and its grandchild
        assert Path(base, "bot.1", "cgroup.events").read_text().count("frozen 1") == 1
        stand_in.send_signal(signal.SIGKILL)
        stand_in.wait(timeout=10)
        assert wait_for(lambda: not marked(tag) and not os.path.exists(base), 10), (
            f"after the SIGKILL: processes {marked(tag)}, group left: {os.path.exists(base)}")
    finally:
        if stand_in.poll() is None:
            stand_in.kill()
            stand_in.wait()
        if stand_in.stdout is not None:
            stand_in.stdout.close()
        for pid in marked(tag):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(CONFINED.backend is None or CONFINED.backend.version == 2,
                    reason="the referee uses cgroup v2 here: the v1 test above was skipped instead")
def test_the_whole_cli_on_cgroup_v2_needs_a_tree_with_controllers() -> None:
    """Says, as a visible skip, why the CLI test above cannot run on cgroup v2 here."""
    pytest.skip(f"cgroup v2 through durak-ref match: {V2_MOUNT} has the controllers "
                f"{Path(V2_MOUNT, 'cgroup.controllers').read_text().split() if os.path.exists(V2_MOUNT) else 'none'}"
                f", not memory, pids and cpu, so the referee's backend is v1 here "
                f"(the watchdog's v2 path is tested above on its own)")


def test_the_watchdog_exits_when_its_referee_exits_normally(tmp_path: Path) -> None:
    """One watchdog per referee process, gone with a referee that simply returns."""
    code = ("from referee.seats.watchdog import watchdog; import sys;"
            "print(watchdog().pid, flush=True)")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    pid = int(out.stdout)
    assert wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
                    Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z", 10)
