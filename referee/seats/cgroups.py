"""Resource walls for bot process trees: one control group per bot process.

How it works. ``detect()`` looks once per run at what this host lets the referee enforce
and returns a ``Backend`` (or None, with the reasons): cgroup v2 where a v2 hierarchy
has the memory, pids and cpu controllers to give (a pure v2 host, or a delegated
subtree), else the v1 hierarchies mounted under /sys/fs/cgroup/<controller>. Either way
the groups live in a subtree of the referee's own: ``durak-ref.<pid>`` next to (v2: at
the nearest ancestor that delegates the controllers; v1: below) the group the referee
runs in, one ``bot.<n>`` group per bot process inside it. ``Backend.create()`` makes a
``Group`` with the limits written; the bot's command is prefixed with
``Group.join_argv()``, a ``/bin/sh`` that writes its own pid to the group's
``cgroup.procs`` files and execs the rest, so the bot's first process is in the group
before it can fork (no pre-exec function: the spawn keeps vfork, see spawn.py), and the
join is done as the referee's own user, before bwrap. Everything the bot forks stays in
the group: ``setsid`` and double forks included, with or without bwrap.

Limits (``Limits``): memory (v2 ``memory.max`` and ``memory.swap.max`` 0, the whole
group killed on an OOM, ``memory.oom.group``; v1 ``memory.limit_in_bytes`` and
``memory.memsw.limit_in_bytes`` where the kernel accounts swap, and an OOM eventfd on
which the referee kills the whole group). The memory controller charges tmpfs pages to
the process that writes them, so the sandbox's /tmp and /dev/shm count (the sandbox
sizes them inside the limit too). Processes: ``pids.max`` (a fork past it fails with
EAGAIN inside the bot). CPU: the same weight for every bot (v2 ``cpu.weight``, v1
``cpu.shares``) and a quota of ``cpus`` CPUs (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``).

Freezing. ``Group.freeze()``/``thaw()`` stop and resume the whole tree (v2
``cgroup.freeze``, v1 ``freezer.state``, through a file descriptor kept open: one write
per change; v1 keeps an empty ``anchor`` group frozen, see ``_anchor_freezer``); without
a freezer, SIGSTOP/SIGCONT of every process in the group. ``Turns`` holds the seats of
one table: when one is waited for beyond the quick lane (wire.StreamPlayer._receive),
the bots of the others are frozen, and each is thawed (``Lane.wake``) before its next
request is written. A bot already frozen, or already thawed, costs no write; two quick
bots (answers within pipelane.QUICK_WAIT_MS) are never frozen at all, so the fast lane
pays one field test per decision.

A frozen process cannot exit: ``kill_all()`` thaws before SIGKILL; ``remove()`` rmdirs
the group (it fails while a member is still exiting: the caller retries). The
``durak-ref.<pid>`` subtree is removed when the referee exits, and subtrees of referees
that are gone are removed at the next detection.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .watchdog import on_cgroupfs, remove_trees, watchdog

ROOT = "/sys/fs/cgroup"  #: where cgroup hierarchies are mounted
MEMORY_MB = 1024  #: default memory limit per bot process tree, MB (tmpfs and shm included)
PROCS = 64  #: default process limit per bot process tree
CPUS = 1.0  #: default CPU quota per bot process tree, in CPUs
PERIOD_US = 100_000  #: the CPU quota's period
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
V2_CONTROLLERS = ("memory", "pids", "cpu")
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


@dataclass(frozen=True)
class Limits:
    """What each bot process tree may use (None: no limit of that kind), and whether
    bots run while not asked to decide (``ponder``)."""

    memory_mb: int | None = MEMORY_MB
    procs: int | None = PROCS
    cpus: float | None = CPUS
    ponder: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"memory_mb": self.memory_mb, "procs": self.procs, "cpus": self.cpus,
                "ponder": self.ponder}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Limits:
        return cls(data.get("memory_mb", MEMORY_MB), data.get("procs", PROCS),
                   data.get("cpus", CPUS), bool(data.get("ponder", False)))


_default: list[Limits] = [Limits()]
#: Freezer writes made by this process (``bench match`` reports them per decision).
FREEZER_WRITES = [0]


def set_default_limits(limits: Limits) -> None:
    """The limits a ``Sandbox`` gets when none are given: the command line's, set once
    per run (so every route that makes a policy, tournaments, SPRTs, the ladder and
    workers included, confines bots alike)."""
    _default[0] = limits


def default_limits() -> Limits:
    return _default[0]


class Group:
    """One bot process tree's control group (see the module docstring)."""

    def __init__(self, backend: Backend, dirs: dict[str, str]) -> None:
        self.backend = backend
        self.dirs = dirs  #: controller ("v2" for the one v2 group) -> its directory
        self.frozen = False
        self._freeze_fd: int | None = None
        self.oom_fd: int | None = None  #: v1: an eventfd readable after an OOM (see Backend)
        self._cpu_fd: int | None = None  #: the CPU counter's file (``cpu_meter``)

    def join_argv(self) -> list[str]:
        """The prefix that puts the command after it into this group, then execs it."""
        files = [os.path.join(d, "cgroup.procs") for d in dict.fromkeys(self.dirs.values())]
        return ["/bin/sh", "-c", _JOIN, "durak-join", *files, "--"]

    def pids(self) -> list[int]:
        """The processes in the group now."""
        d = next(iter(self.dirs.values()))
        try:
            with open(os.path.join(d, "cgroup.procs")) as f:
                return [int(x) for x in f.read().split()]
        except OSError:
            return []

    def freeze(self) -> None:
        if not self.frozen:
            self.frozen = True
            self._set_frozen(True)

    def thaw(self) -> None:
        if self.frozen:
            self.frozen = False
            self._set_frozen(False)

    def _set_frozen(self, frozen: bool) -> None:
        kind = self.backend.freezer
        if kind is None:
            for pid in self.pids():
                _kill(pid, signal.SIGSTOP if frozen else signal.SIGCONT)
            return
        if self._freeze_fd is None:
            name = "cgroup.freeze" if kind == "v2" else "freezer.state"
            try:
                self._freeze_fd = os.open(os.path.join(self.dirs[kind], name), os.O_WRONLY | os.O_CLOEXEC)
            except OSError:
                return
        FREEZER_WRITES[0] += 1
        value = (b"1" if frozen else b"0") if kind == "v2" else (b"FROZEN" if frozen else b"THAWED")
        try:
            os.write(self._freeze_fd, value)
        except OSError:
            pass  # the group is being removed

    def oom_kills(self) -> int:
        """How many processes of the group the kernel killed at the memory limit (v1,
        without an oom_kill counter: how often the limit was hit)."""
        if "v2" in self.dirs:
            return _field(os.path.join(self.dirs["v2"], "memory.events"), "oom_kill")
        d = self.dirs.get("memory")
        if d is None:
            return 0
        kills = _field(os.path.join(d, "memory.oom_control"), "oom_kill", -1)
        if kills >= 0:
            return kills
        return _field(os.path.join(d, "memory.failcnt"), None)

    def cpu_meter(self) -> Callable[[], float] | None:
        """A function that reads the CPU seconds every process of the group has used so
        far (v1 ``cpuacct.usage``, nanoseconds; v2 ``cpu.stat`` ``usage_usec``): one
        pread of a file kept open, a few microseconds. None where the backend has no CPU
        counter (``Backend.cpu_time``) or the file cannot be opened. The cpu clock
        (table/clock.py) charges a decision the difference of two reads."""
        where = self.backend.cpu_time
        if where is None:
            return None
        v2 = where == "v2"
        try:
            fd = self._cpu_fd = os.open(os.path.join(self.dirs[where], "cpu.stat" if v2 else "cpuacct.usage"),
                                        os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        pread = os.pread
        if v2:
            def read_v2() -> float:
                head = pread(fd, 64, 0).split(None, 2)  # "usage_usec N\n..."
                return int(head[1]) / 1e6
            return read_v2

        def read_v1() -> float:
            return int(pread(fd, 32, 0)) / 1e9
        return read_v1

    def pids_refused(self) -> int:
        """How many forks the process limit refused."""
        d = self.dirs.get("v2", self.dirs.get("pids"))
        return 0 if d is None else _field(os.path.join(d, "pids.events"), "max")

    def kill_all(self) -> None:
        """SIGKILL every process in the group (thawed first: a frozen one cannot die)."""
        if "v2" in self.dirs and _write(os.path.join(self.dirs["v2"], "cgroup.kill"), "1"):
            self.thaw()
            return
        for _ in range(100):  # it may fork while we kill: until the group is empty
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                _kill(pid, signal.SIGKILL)
            self.frozen = True  # (force the write: a stopped tree needs SIGCONT too)
            self.thaw()
            for pid in pids:
                _kill(pid, signal.SIGCONT)

    def remove(self) -> bool:
        """Close the group's fds and rmdir it: True when it is gone (False: a member is
        still exiting; try again)."""
        for fd in (self._freeze_fd, self.oom_fd, self._cpu_fd):
            if fd is not None:
                os.close(fd)
        self._freeze_fd = self.oom_fd = self._cpu_fd = None
        gone = True
        for d in dict.fromkeys(self.dirs.values()):
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError:
                gone = False
        return gone


class Backend:
    """A place where this referee makes bot groups: cgroup v2 (one directory) or v1 (one
    per controller). Chosen once per run by ``detect``."""

    def __init__(self, version: int, bases: dict[str, str], enforced: dict[str, bool],
                 limits: Limits) -> None:
        self.version = version
        self.bases = bases  #: controller ("v2" for v2) -> the durak-ref.<pid> directory
        self.enforced = enforced  #: memory, swap, pids, cpu, freezer -> enforced here
        self.limits = limits
        self.freezer: str | None = ("v2" if version == 2 else "freezer") if enforced["freezer"] else None
        #: Which group directory holds the CPU counter the cpu clock reads (v2: "v2", its
        #: ``cpu.stat``; v1: "cpuacct", or "cpu" where the two are mounted together), or
        #: None: bots' CPU time cannot be read here.
        self.cpu_time: str | None = "v2" if version == 2 else next(
            (c for c in ("cpuacct", "cpu") if c in bases
             and os.path.exists(os.path.join(bases[c], "cpuacct.usage"))), None)
        self._count = 0

    def create(self) -> Group:
        """A new, empty group with the limits written. Raises OSError when the kernel
        refuses."""
        self._count += 1
        name = f"bot.{self._count}"
        dirs = {c: os.path.join(base, name) for c, base in self.bases.items()}
        for d in dict.fromkeys(dirs.values()):
            os.makedirs(d, exist_ok=True)
        group = Group(self, dirs)
        try:
            self._write_limits(group)
        except OSError:
            group.remove()
            raise
        return group

    def _write_limits(self, group: Group) -> None:
        lim = self.limits
        d = group.dirs
        if self.version == 2:
            v2 = d["v2"]
            if lim.memory_mb is not None and self.enforced["memory"]:
                _put(v2, "memory.max", str(lim.memory_mb << 20))
                _write(os.path.join(v2, "memory.swap.max"), "0")
                _write(os.path.join(v2, "memory.oom.group"), "1")
            if lim.procs is not None and self.enforced["pids"]:
                _put(v2, "pids.max", str(lim.procs))
            if self.enforced["cpu"]:
                _put(v2, "cpu.weight", "100")
                if lim.cpus is not None:
                    _put(v2, "cpu.max", f"{max(1000, int(lim.cpus * PERIOD_US))} {PERIOD_US}")
            return
        if lim.memory_mb is not None and "memory" in d:
            _put(d["memory"], "memory.limit_in_bytes", str(lim.memory_mb << 20))
            if self.enforced["swap"]:
                _put(d["memory"], "memory.memsw.limit_in_bytes", str(lim.memory_mb << 20))
            group.oom_fd = _oom_eventfd(d["memory"])
        if lim.procs is not None and "pids" in d:
            _put(d["pids"], "pids.max", str(lim.procs))
        if "cpu" in d:
            _put(d["cpu"], "cpu.shares", "1024")
            if lim.cpus is not None:
                _put(d["cpu"], "cpu.cfs_period_us", str(PERIOD_US))
                _put(d["cpu"], "cpu.cfs_quota_us", str(max(1000, int(lim.cpus * PERIOD_US))))

    def summary(self) -> str:
        """What is enforced, as the start-up line says it."""
        lim, on = self.limits, self.enforced
        parts = [f"cgroup v{self.version}"]
        if on["memory"] and lim.memory_mb is not None:
            parts.append(f"memory {lim.memory_mb} MB incl. tmpfs/shm"
                         + (", no swap" if on["swap"] else ", swap not accounted"))
        if on["pids"] and lim.procs is not None:
            parts.append(f"{lim.procs} processes")
        if on["cpu"] and lim.cpus is not None:
            parts.append(f"{lim.cpus:g} CPU" + ("" if lim.cpus == 1 else "s"))
        if not lim.ponder:
            parts.append("off-move frozen" if on["freezer"] else "off-move stopped (SIGSTOP)")
        return ", ".join(parts)

    def header(self) -> dict[str, Any]:
        """What is enforced, for the match log header."""
        lim, on = self.limits, self.enforced
        return {"cgroup": self.version,
                "memory_mb": lim.memory_mb if on["memory"] else None, "no_swap": on["swap"],
                "procs": lim.procs if on["pids"] else None,
                "cpus": lim.cpus if on["cpu"] else None,
                "frozen_off_move": not lim.ponder, "cpu_time": self.cpu_time is not None}

    def guard(self) -> None:
        """Remove this subtree when the referee exits: at a normal exit here, and
        whatever way it dies by its watchdog (referee/seats/watchdog.py), which thaws
        and kills what is still in it first."""
        atexit.register(self.remove_all)
        real = [b for b in dict.fromkeys(self.bases.values()) if on_cgroupfs(b)]
        if real:  # (not a directory shaped like a hierarchy, as tests make)
            dog = watchdog()
            for base in real:
                dog.watch_base(base)

    def remove_all(self) -> None:
        """Remove this referee's subtree (what is still in it is killed first)."""
        remove_trees(list(dict.fromkeys(self.bases.values())))


def _put(directory: str, name: str, value: str) -> None:
    with open(os.path.join(directory, name), "w") as f:
        f.write(value)


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as f:
            f.write(value)
        return True
    except OSError:
        return False


def _field(path: str, key: str | None, missing: int = 0) -> int:
    """The number after ``key`` in a "key value" file (``key`` None: the file's number)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return missing
    if key is None:
        return int(text.split()[0]) if text.split() else missing
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == key:
            return int(words[1])
    return missing


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _oom_eventfd(memory_dir: str) -> int | None:
    """v1: an eventfd the kernel signals when the group hits an OOM (cgroup.event_control)."""
    try:
        efd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
    except (AttributeError, OSError):
        return None
    try:
        ofd = os.open(os.path.join(memory_dir, "memory.oom_control"), os.O_RDONLY | os.O_CLOEXEC)
        try:
            _put(memory_dir, "cgroup.event_control", f"{efd} {ofd}")
        finally:
            os.close(ofd)
    except OSError:
        os.close(efd)
        return None
    return efd


def _own_groups(proc_cgroup: str) -> dict[str, str]:
    """The referee's own group per v1 controller, and "" -> its v2 group."""
    out: dict[str, str] = {}
    try:
        with open(proc_cgroup) as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for name in parts[1].split(","):
            out[name] = parts[2]
    return out


def _sweep(parent: str) -> None:
    """Remove the subtrees of referees that are gone (a crash, a SIGKILL)."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("durak-ref.") and entry.is_dir(follow_symlinks=False):
            pid = entry.name.split(".", 1)[1]
            if pid.isdigit() and int(pid) != os.getpid() and not os.path.exists(f"/proc/{pid}"):
                remove_trees([entry.path])


def _v2_parent(mount: str, own: str) -> tuple[str | None, str]:
    """The directory under which v2 bot groups can get memory, pids and cpu: the
    nearest group, from the referee's own up, that hands them down (subtree_control)
    and in which we may make a directory; or (None, why not)."""
    try:
        with open(os.path.join(mount, "cgroup.controllers")) as f:
            at_root = set(f.read().split())
    except OSError:
        return None, f"no cgroup2 hierarchy at {mount}"
    missing = [c for c in V2_CONTROLLERS if c not in at_root]
    if missing:
        return None, f"cgroup v2 at {mount} has no {'/'.join(missing)} controller"
    rel = own.strip("/")
    path = os.path.join(mount, rel) if rel else mount
    while True:
        try:
            with open(os.path.join(path, "cgroup.subtree_control")) as f:
                handed = set(f.read().split())
        except OSError:
            handed = set()
        if path == mount and not all(c in handed for c in V2_CONTROLLERS):
            _write(os.path.join(path, "cgroup.subtree_control"),
                   " ".join(f"+{c}" for c in V2_CONTROLLERS))  # the root may have processes
            try:
                with open(os.path.join(path, "cgroup.subtree_control")) as f:
                    handed = set(f.read().split())
            except OSError:
                pass
        if all(c in handed for c in V2_CONTROLLERS) and os.access(path, os.W_OK):
            return path, ""
        if path == mount:
            return None, (f"cgroup v2 at {mount}: memory/pids/cpu are not delegated to "
                          f"{own or '/'} or an ancestor we may write (run as root, or under "
                          f"a delegated unit: systemd-run --user --scope -p Delegate=yes)")
        path = os.path.dirname(path)


def detect(limits: Limits, root: str = ROOT, proc_cgroup: str = "/proc/self/cgroup") -> tuple[Backend | None, str]:
    """The backend for this run, made ready (its durak-ref.<pid> subtree exists), or
    None and why nothing can be enforced. v2 is preferred where it has the controllers;
    v1 needs at least one of memory, pids, cpu. Also sweeps subtrees of referees that
    are gone, and removes ours at exit."""
    own = _own_groups(proc_cgroup)
    name = f"durak-ref.{os.getpid()}"
    reasons = []
    mount = None
    for candidate in (root, os.path.join(root, "unified")):
        if os.path.exists(os.path.join(candidate, "cgroup.controllers")):
            mount = candidate
            break
    if mount is not None:
        parent, why = _v2_parent(mount, own.get("", "/"))
        if parent is not None:
            _sweep(parent)
            base = os.path.join(parent, name)
            try:
                os.makedirs(base, exist_ok=True)
                _put(base, "cgroup.subtree_control", " ".join(f"+{c}" for c in V2_CONTROLLERS))
            except OSError as exc:
                reasons.append(f"cgroup v2: cannot make {base}: {exc.strerror or exc}")
            else:
                swap = os.path.exists(os.path.join(base, "memory.swap.max"))
                backend = Backend(2, {"v2": base}, {"memory": True, "swap": swap, "pids": True,
                                                     "cpu": True, "freezer": True}, limits)
                backend.guard()
                return backend, ""
        else:
            reasons.append(why)
    bases: dict[str, str] = {}
    mounts: set[str] = set()
    for ctrl in V1_CONTROLLERS:
        mounted = os.path.join(root, ctrl)
        if not os.path.exists(os.path.join(mounted, "cgroup.procs")) or os.path.exists(
                os.path.join(mounted, "cgroup.controllers")):
            continue
        if os.path.realpath(mounted) in mounts:  # mounted together (cpu,cpuacct): one group
            continue
        mounts.add(os.path.realpath(mounted))
        parent = os.path.join(mounted, own.get(ctrl, "/").strip("/"))
        if not os.path.isdir(parent):
            parent = mounted
        _sweep(parent)
        base = os.path.join(parent, name)
        try:
            os.makedirs(base, exist_ok=True)
        except OSError as exc:
            reasons.append(f"cgroup v1 {ctrl}: cannot make {base}: {exc.strerror or exc}")
            continue
        bases[ctrl] = base
    if not any(c in bases for c in ("memory", "pids", "cpu")):
        remove_trees(list(bases.values()))
        if not reasons:
            reasons.append(f"no cgroup v1 memory, pids or cpu controller under {root}")
        return None, "; ".join(reasons)
    enforced = {"memory": "memory" in bases,
                "swap": "memory" in bases and os.path.exists(
                    os.path.join(bases["memory"], "memory.memsw.limit_in_bytes")),
                "pids": "pids" in bases, "cpu": "cpu" in bases, "freezer": "freezer" in bases}
    backend = Backend(1, bases, enforced, limits)
    backend.guard()
    if "freezer" in bases:
        _anchor_freezer(bases["freezer"])
    return backend, ""


def _anchor_freezer(base: str) -> None:
    """v1: keep one empty group frozen for the referee's life. The kernel turns its
    freezer's fast path on and off (a static key: code patched on every CPU) when the
    first group freezes and the last one thaws; with one always frozen, freezing or
    thawing a bot is one cheap write (measured here: 86 us without, 1.5 us with)."""
    anchor = os.path.join(base, "anchor")
    try:
        os.makedirs(anchor, exist_ok=True)
        _put(anchor, "freezer.state", "FROZEN")
    except OSError:
        pass


class Confinement:
    """The resource walls of one run: the backend (None: nothing enforceable) and the
    limits asked for. ``open_group`` gives each bot process its group."""

    def __init__(self, limits: Limits, backend: Backend | None, why_not: str = "") -> None:
        self.limits = limits
        self.backend = backend
        self.why_not = why_not

    @property
    def memory_enforced(self) -> bool:
        return self.backend is not None and self.backend.enforced["memory"] and self.limits.memory_mb is not None

    def cpu_time_why_not(self) -> str | None:
        """None when bot groups here count their CPU time (the cpu clock can charge a bot
        program), else why not."""
        if self.backend is None:
            return f"no control group can be had for bot programs here: {self.why_not}"
        if self.backend.cpu_time is None:
            return "no CPU accounting controller (cgroup v1 cpuacct) is mounted for bot groups"
        return None

    def open_group(self) -> Group | None:
        """A new group for one bot process (None: no backend, or the kernel refused)."""
        if self.backend is None:
            return None
        try:
            return self.backend.create()
        except OSError as exc:
            _say(f"warning: cannot make a control group for a bot ({exc.strerror or exc}): "
                 f"it runs without resource limits")
            return None

    def line(self) -> str:
        """The one start-up line: what is enforced, or what is not and why."""
        if self.backend is not None:
            return f"bots confined: {self.backend.summary()}"
        return (f"warning: bots run without memory, process or CPU limits and are not "
                f"frozen off-move: {self.why_not}")

    def announce(self) -> None:
        """Print the start-up line (once per process)."""
        _say(self.line())

    def header(self) -> dict[str, Any]:
        if self.backend is not None:
            return self.backend.header()
        return {"cgroup": None, "why_not": self.why_not, "frozen_off_move": False}


_confinements: dict[tuple[Limits, str], Confinement] = {}
_said: set[str] = set()


def confinement(limits: Limits, root: str | None = None, announce: bool = True) -> Confinement:
    """The run's confinement for ``limits``, detected once per process and limits
    (``root``: where cgroups are mounted; default ``$DURAK_CGROUP_ROOT`` or
    /sys/fs/cgroup). ``announce``: print the one start-up line (once)."""
    where = root or os.environ.get("DURAK_CGROUP_ROOT") or ROOT
    key = (limits, where)
    conf = _confinements.get(key)
    if conf is None:
        backend, why = detect(limits, where)
        conf = _confinements[key] = Confinement(limits, backend, why)
    if announce:
        _say(conf.line())
    return conf


def run_header(programs: object) -> dict[str, Any] | None:
    """For a log header: what the run's default limits enforce here (None when
    ``programs`` is None: no program bots)."""
    if programs is None:
        return None
    return confinement(default_limits(), announce=False).header()


def _say(text: str) -> None:
    if text not in _said:
        _said.add(text)
        print(f"durak-ref: {text}", file=sys.stderr, flush=True)


class Turns:
    """The seats of one table whose bots are frozen while another seat is waited for.
    A member has ``group`` (its bot's Group or None) and ``frozen`` (told that its bot
    was frozen: it thaws it before its next request is written, ``wire.StreamPlayer``)."""

    def __init__(self) -> None:
        self.members: list[Any] = []

    def add(self, player: Any) -> None:
        self.members.append(player)

    def hold(self, mover: Any) -> None:
        """Freeze the bot of every member but ``mover`` (which is being waited for); a
        bot already frozen costs nothing."""
        for p in self.members:
            if p is not mover:
                group = p.group
                if group is not None and not group.frozen:
                    group.freeze()
                    p.frozen()


def share_turns(players: Any) -> None:
    """Seat ``players`` (a table's) on one ``Turns``: players that take one
    (``take_turns``) are frozen while another is asked to decide."""
    turns = Turns()
    for p in players:
        take: Callable[[Turns], None] | None = getattr(p, "take_turns", None)
        if take is not None:
            take(turns)


__all__ = ["Backend", "Confinement", "Group", "Limits", "Turns", "confinement", "default_limits",
           "detect", "run_header", "set_default_limits", "share_turns"]
