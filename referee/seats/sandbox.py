"""The sandbox for program bots: how a bot's command becomes the command we exec.

A ``Sandbox`` is a policy (mode ``auto``, ``bwrap`` or ``none``; extra read-only paths
the user binds; referee paths to hide). ``resolve()`` turns ``auto`` into the mode that
is actually used; ``launch()`` turns a bot's argv, cwd and environment into a ``Launch``
(what to exec, with which environment, and a cleanup for after the process ended).

With bubblewrap (``bwrap``) a bot:

- sees an allowlist root (referee/seats/sandbox_view.py says exactly what): the system's
  runtime, a part of /etc, what its command needs (its program, interpreter, venv,
  project root), an explicit cwd and the ``--bind`` paths, all read-only, and nothing
  else (no home directory, /var, /run, /srv, /mnt, /sys, other bots' programs, sockets);
  the root itself is read-only; the referee's cwd is an empty stand-in;
- writes only to a private, size-capped tmpfs at ``/tmp``, its scratch dir (``HOME`` and
  ``TMPDIR`` point at it), and a private ``/dev/shm``: both live in the bot's own mount
  namespace, so they are fresh per process, invisible to every other bot, and gone when
  the process ends;
- never sees the paths in ``hide`` (log dir, store file and its SQLite side files,
  config and token files), the other seats' program files (``rivals``) nor libpq's
  password files, where its view would otherwise hold them: an empty read-only tmpfs over
  each directory, ``/dev/null`` over each file, mounted last so that no bind can expose
  them again;
- has its own PID, network, IPC, UTS and cgroup namespaces: no network at all (abstract
  unix sockets included), the referee's processes and their command lines are
  invisible (``--proc`` of its own, with /proc/sys and the other machine-wide entries
  read-only); the bot is PID 1 of its namespace (``--as-pid-1``), so when it exits the
  kernel kills every descendant (``setsid`` and double forks included) and bwrap, our
  child, reaps the bot itself (with bwrap's own init, bwrap exits without reaping that
  init, which becomes a zombie of whoever adopts it); ``--new-session`` keeps it off the
  referee's terminal, and ``--die-with-parent`` makes it die with the referee;
- gets only the allowlisted environment (``sandbox_view.BOT_ENVIRONMENT``; in every mode).

Which uid. When the referee runs as root, bwrap makes no user namespace: as root it can
bind any path (a pyenv under a 0700 ``/root``), and the directories leading to a bound
path are made by us, mode 0755, so only the bound paths' own permissions count; the last
step before the bot is ``setpriv``, which drops to the bot's uid and gid with no
supplementary groups, no capabilities (bounding set emptied) and no_new_privs, and execs
the bot, which stays PID 1. That uid is the bot's own: each bot process leases one from
a range no person or system uses (referee/seats/uids.py, ``--bot-uids``), so the
kernel's per-user pools (inotify instances, pending signals and POSIX timers, message
queue bytes, processes) are not shared with any other bot, and ``RLIMIT_NPROC`` is the
process limit. File permissions are a wall of their own: the bot reads what "others"
may. A program it cannot run or read is a start error naming the path and its mode
(``sandbox_view.unreadable``). When the referee is not root, bwrap makes an
unprivileged user namespace in which the bot is uid 65534, mapped to the referee's own
uid outside (one line at start says so): it has no capabilities outside, reads what the
referee's user may, of what its view shows, and shares that user's per-user pools.
Every bot gets a low ``RLIMIT_SIGPENDING`` (``SIGPENDING``): signals queued to it and
POSIX timers.

Resource walls (memory, processes, CPU, freezing off-move) are cgroups
(referee/seats/cgroups.py): the command starts with the group's join prefix, then
prlimit, then bwrap. /tmp and /dev/shm are sized inside the memory limit (``tmpfs_mb``).
rlimits (``max_memory_mb`` where no memory cgroup can be had, ``max_cpu_s``) are applied
by ``prlimit`` (util-linux) in front of bwrap, so they are set before bwrap and the bot
exist and are inherited by both; without ``prlimit`` the caller falls back to a pre-exec
function.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import UserError
from . import seccomp, uids
from .cgroups import PROCS, Limits, default_limits
from .sandbox_view import (
    CommandView,
    bind_args,
    bot_environment,
    drop_args,
    identity_args,
    inside,
    merge_binds,
    proc_args,
    program_files,
    project_root,
    system_args,
    unreadable,
)
from .uids import UidLease

MODES = ("auto", "bwrap", "none")
SANDBOX_ID = 65534  #: uid and gid of a bot inside its user namespace when the referee is not root
SIGPENDING = 256  #: RLIMIT_SIGPENDING of a bot: its queued signals and POSIX timers
SCRATCH_MB = 256  #: size cap of a bot's private /tmp (tmpfs memory is not in RLIMIT_AS)
#: The one line saying where the walls come from when the referee is not root.
UNPRIVILEGED_WALLS = ("sandbox: not root, so bots run as your uid in a user namespace without "
                      "capabilities: they may read what your user may, of what the sandbox "
                      "shows them, and share your per-user kernel pools (as root each would run as a "
                      "uid of its own)")
SHM_MB = 64  #: size cap of a bot's private /dev/shm (inside its memory limit: tmpfs_mb)
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


class SandboxError(UserError, ValueError):
    """The user's sandbox options are unusable (``--sandbox bwrap`` where bwrap cannot
    run, a ``--bind`` path that does not exist, an unknown mode). Exit code 2."""

    hint = "install bubblewrap (bwrap) or give --sandbox none; give --bind only existing paths"


@dataclass(frozen=True)
class Launch:
    """What to exec for one bot process, and what to do after it ended."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    mode: str
    scratch: str  #: the scratch dir as the bot sees it (HOME, TMPDIR)
    cleanup: Callable[[], None] = field(default=lambda: None)
    #: Where in ``argv`` (bwrap's command inside the sandbox) ``spawn`` puts the relay that
    #: hands the bot its stdin and stdout (``stdio_relay``); None: they are fds 0 and 1.
    relay_at: int | None = None
    pass_fds: tuple[int, ...] = ()  #: fds the child inherits (the seccomp filter); spawn closes ours
    #: The bot's own uid, leased (root only: referee/seats/uids.py): release it once the
    #: bot's processes are gone and its group removed.
    lease: UidLease | None = None


def stdio_relay(stdin_fd: int, stdout_fd: int) -> list[str]:
    """The command that makes the inherited fds ``stdin_fd``/``stdout_fd`` the bot's stdin
    and stdout, closes them, and execs the rest of the command line (so it stays PID 1).

    Why: bwrap's own process outside the namespace (it waits for the sandbox to end)
    keeps its fds 0, 1 and 2 open, so with the pipes there a bot that closed its stdout,
    or died leaving a frame cut short, was never seen to end its output: the referee
    waited out the decision's time limit (a ``timeout`` where the SPEC says ``crash`` or
    ``protocol``). bwrap closes every other fd in that process, so the pipes go in as
    other fds, bwrap's own stdin and stdout are /dev/null, and only the bot holds them."""
    # bash, not sh: dash's redirections take single-digit fds only.
    script = f'exec 0<&{stdin_fd} 1>&{stdout_fd} {stdin_fd}<&- {stdout_fd}>&- && exec "$@"'
    return [RELAY_SHELL or "/bin/bash", "--noprofile", "--norc", "-c", script, "bash"]


#: The shell ``stdio_relay`` runs (None where there is none: the pipes are then fds 0
#: and 1 of bwrap itself, and a bot's closed stdout is seen only when it exits).
RELAY_SHELL = shutil.which("bash", path="/usr/bin:/bin")


_probe_cache: dict[str, str | None] = {}
_warned: set[str] = set()


def probe_bwrap() -> str | None:
    """None if bwrap works here (a quick sandboxed ``true`` succeeds), else why not.
    Cached per process."""
    if "result" in _probe_cache:
        return _probe_cache["result"]
    exe = shutil.which("bwrap")
    why: str | None
    if exe is None:
        why = "bwrap not found on PATH"
    else:
        true = shutil.which("true") or "/bin/true"
        drop = drop_args(SANDBOX_ID, SANDBOX_ID) if as_root() else []
        argv = [exe, *_base_args(), "--", *drop, true]
        try:
            res = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, timeout=20)
            why = None if res.returncode == 0 else (
                f"bwrap cannot create a sandbox here: "
                f"{res.stderr.decode('utf-8', 'replace').strip() or f'exit code {res.returncode}'}")
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = f"bwrap cannot run: {exc}"
    _probe_cache["result"] = why
    return why


def tmpfs_mb(limits: Limits | None) -> tuple[int, int]:
    """The size caps (MB) of a bot's /tmp and /dev/shm: inside its memory limit (the
    memory cgroup charges tmpfs pages to their writer), a quarter of it each."""
    memory = None if limits is None else limits.memory_mb
    if memory is None:
        return SCRATCH_MB, SHM_MB
    return max(1, min(SCRATCH_MB, memory // 4)), max(1, min(SHM_MB, memory // 4))


def as_root() -> bool:
    """Whether the referee runs as root: then bwrap makes no user namespace and the bot
    drops to the sandbox uid itself (``sandbox_view.drop_args``), so that its uid
    outside is not root."""
    return os.geteuid() == 0


def _base_args(uid: int = SANDBOX_ID, limits: Limits | None = None) -> list[str]:
    scratch_mb, shm_mb = tmpfs_mb(limits)
    if as_root():
        # No user namespace: bwrap keeps root's capabilities to build the root (it may
        # read anything a bind names) and the bot sheds them with its uid (setpriv).
        # Nested user namespaces: refused by the seccomp filter alone.
        spaces = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                  "--unshare-cgroup-try"]
    else:
        # --unshare-user said outright (--unshare-all only tries it; --uid needs it):
        # it lets seccomp.py add --disable-userns, a second wall against nested ones.
        spaces = ["--unshare-all", "--unshare-user", "--uid", str(uid), "--gid", str(uid)]
    return [*spaces, "--as-pid-1", "--new-session", "--die-with-parent",
            *system_args(), "--dev", "/dev", *proc_args(),
            "--size", str(shm_mb << 20), "--perms", "1777", "--tmpfs", "/dev/shm",
            "--size", str(scratch_mb << 20), "--perms", "1777", "--tmpfs", "/tmp"]


def _bwrap_prefix() -> list[str]:
    """bwrap with the sandbox's options: a working command up to its ``--``."""
    return [shutil.which("bwrap") or "bwrap", *_base_args()]


def seccomp_state(mode: str | None) -> str | None:
    """The log header's ``"seccomp"``: ``"on"`` when sandboxed bots run under the
    seccomp filter (referee/seats/seccomp.py), ``"off"`` when they cannot (resolving the
    sandbox printed why), None when bots are not sandboxed (``mode`` is not bwrap)."""
    if mode != "bwrap":
        return None
    return "off" if seccomp.unavailable(_bwrap_prefix()) else "on"


def _warn(text: str) -> None:
    if text not in _warned:
        _warned.add(text)
        print(f"durak-ref: {text}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Sandbox:
    """How program bots are confined (see the module docstring)."""

    mode: str = "auto"
    binds: tuple[str, ...] = ()  #: extra read-only paths, visible at the same path
    hide: tuple[str, ...] = ()  #: referee paths no bot may see (logs, store, config, tokens)
    warn: bool = True  #: print the one-line "unsandboxed" warning (workers: the parent did)
    #: The commands of the other seats (argv): their program files are hidden from this bot.
    rivals: tuple[tuple[str, ...], ...] = ()
    #: uid and gid the bot runs as inside its user namespace when the referee is not root
    #: (as root each bot process leases a uid of its own: referee/seats/uids.py).
    uid: int = SANDBOX_ID
    #: The resource walls of each bot process tree (referee/seats/cgroups.py); they apply
    #: in mode ``none`` too (cgroups do not need bwrap).
    limits: Limits = field(default_factory=default_limits)

    def check(self) -> None:
        """Raise SandboxError for an unknown mode or a --bind path that does not exist."""
        if self.mode not in MODES:
            raise SandboxError(f"--sandbox {self.mode!r}: choose one of {', '.join(MODES)}")
        for path in self.binds:
            if not os.path.exists(path):
                raise SandboxError(f"--bind {path}: no such file or directory")
        if self.mode != "none" and as_root():
            uids.uid_range()  # a bad $DURAK_SANDBOX_UIDS is an error before the first game

    def hiding(self, *paths: str | Path | None) -> Sandbox:
        """This policy, also hiding ``paths`` (None entries are ignored). A store file
        brings its SQLite side files (-wal, -shm, -journal)."""
        extra: list[str] = []
        for p in paths:
            if p is None:
                continue
            # Both spellings: hiding a symlink's path would leave its target in view.
            for text in dict.fromkeys((os.path.abspath(str(p)), os.path.realpath(str(p)))):
                extra.append(text)
                if text.endswith((".sqlite", ".db", ".sqlite3")):
                    extra += [text + s for s in ("-wal", "-shm", "-journal")]
        return replace(self, hide=tuple(dict.fromkeys((*self.hide, *extra))))

    def resolve(self) -> Sandbox:
        """The policy with its mode made concrete (``bwrap`` or ``none``). ``auto``
        without a working bwrap, and ``none``, print one warning line on stderr (once per
        process). Raises SandboxError when ``bwrap`` was asked for and cannot run."""
        self.check()
        if self.mode == "none":
            if self.warn:
                _warn("bots run unsandboxed (--sandbox none): they can read and write "
                      "whatever the referee's user can")
            return self
        why = probe_bwrap()
        if why is None:
            if self.warn and not as_root():
                _warn(UNPRIVILEGED_WALLS)
            off = seccomp.unavailable(_bwrap_prefix())
            if off is not None and self.warn:
                _warn(f"seccomp is off for sandboxed bots: {off}")
            return replace(self, mode="bwrap")
        if self.mode == "bwrap":
            raise SandboxError(f"--sandbox bwrap: {why}; {INSTALL_HINT}, or choose "
                               f"--sandbox auto|none")
        if self.warn:
            _warn(f"bots run unsandboxed: {why}; {INSTALL_HINT}")
        return replace(self, mode="none")

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "binds": list(self.binds), "hide": list(self.hide),
                "warn": self.warn, "uid": self.uid, "limits": self.limits.as_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sandbox:
        return cls(data.get("mode", "auto"), tuple(data.get("binds", ())),
                   tuple(data.get("hide", ())), bool(data.get("warn", True)),
                   uid=int(data.get("uid", SANDBOX_ID)), limits=Limits.from_dict(data.get("limits", {})))

    def against(self, *commands: Sequence[str]) -> Sandbox:
        """This policy for one seat whose opponents run ``commands``: their program files
        are hidden from it (unless they are its own too)."""
        return replace(self, rivals=tuple(tuple(c) for c in commands))

    def launch(self, argv: Sequence[str], cwd: str | None, env: Mapping[str, str] | None,
               limits: Sequence[str] = (), join: Sequence[str] = ()) -> Launch:
        """The command to exec for a bot (``limits``: ``prlimit`` options, put in front;
        ``join``: the prefix that puts it into its control group, in front of those).
        ``cwd``: the bot's own working directory (a tournament config's ``cwd``: visible,
        read-only), or None for the referee's (then an empty directory in the sandbox).
        ``env``: variables the organiser set for this bot, added to the allowlisted part
        of ours (``sandbox_view.BOT_ENVIRONMENT``; in every mode). Each call makes a
        fresh scratch dir; call ``Launch.cleanup`` after the process ended (and was
        reaped). Raises PermissionError naming the path when the sandbox uid could not
        run or read the program."""
        mode = self.mode if self.mode != "auto" else self.resolve().mode
        base_env = bot_environment(env)
        _check_program(argv, cwd, base_env)
        lease = uids.lease() if mode == "bwrap" and as_root() else None
        if lease is not None and limits:  # its own uid: the processes of the uid are the bot's
            limits = [*limits, f"--nproc={self.limits.procs or PROCS}"]
        prefix = list(join)
        if limits:
            prefix += [shutil.which("prlimit") or "prlimit", *limits, "--"]
        if mode == "none":
            scratch = tempfile.mkdtemp(prefix="durak-bot-")
            base_env.update(HOME=scratch, TMPDIR=scratch)
            return Launch([*prefix, *argv], base_env, cwd, "none", scratch,
                          lambda: shutil.rmtree(scratch, ignore_errors=True))
        try:
            return self._bwrap_launch(argv, cwd, base_env, prefix, lease)
        except BaseException:
            if lease is not None:
                lease.release()
            raise

    def _bwrap_launch(self, argv: Sequence[str], cwd: str | None, base_env: dict[str, str],
                      prefix: list[str], lease: UidLease | None) -> Launch:
        """``launch`` in mode bwrap, the bot running as the ``lease``'s uid (None: not
        root; ``uid`` inside a user namespace)."""
        uid = self.uid if lease is None else lease.uid
        work = os.path.abspath(cwd or os.getcwd())
        view = CommandView(argv, work, base_env.get("PATH", os.defpath))
        own_cwd = [work] if cwd is not None else []
        binds = merge_binds([*view.binds, *own_cwd, *(os.path.abspath(b) for b in self.binds)])
        if as_root():
            why = unreadable([*view.files, *((w, "x") for w in own_cwd)], binds, uid, uid)
            if why is not None:
                raise PermissionError(13, why)
        etc = tempfile.mkdtemp(prefix="durak-etc-")
        os.chmod(etc, 0o755)
        args = [shutil.which("bwrap") or "bwrap", *_base_args(uid, self.limits),
                *identity_args(etc, uid, uid), *bind_args(binds)]
        if not inside(work, binds):
            args += ["--perms", "0755", "--dir", work]  # the referee's cwd: an empty stand-in
        hide = [*self.hide, *_rival_files(self.rivals, argv, view), *secret_files()]
        hidden_dirs = [h for h in hide if os.path.isdir(h)]
        for path in dict.fromkeys(hide):  # last: nothing bound above can expose them again
            if not inside(path, binds):
                continue  # not in the sandbox at all
            if any(path != d and path.startswith(d.rstrip("/") + "/") for d in hidden_dirs):
                # Inside a directory already hidden by an empty read-only tmpfs (the store
                # in the log dir, the default): it is not there to hide, and bwrap cannot
                # create a mount point in that tmpfs (the bot would fail to start).
                continue
            if os.path.isdir(path):
                args += ["--tmpfs", path, "--remount-ro", path]
            elif os.path.exists(path):
                args += ["--ro-bind", "/dev/null", path]
        # The root tmpfs (and the directories made in it) read-only: writes go to scratch.
        filter_args, filter_fds = seccomp.bwrap_args(_bwrap_prefix())
        args += [*filter_args, "--remount-ro", "/", "--chdir", work, "--"]
        relay_at = len(prefix) + len(args) if RELAY_SHELL else None
        args += drop_args(uid, uid) if as_root() else []
        base_env.update(HOME="/tmp", TMPDIR="/tmp")
        return Launch([*prefix, *args, *argv], base_env, None, "bwrap", "/tmp",
                      lambda: shutil.rmtree(etc, ignore_errors=True), relay_at, filter_fds, lease)


def secret_files() -> list[str]:
    """Credential files no bot may read even where its program's tree holds them:
    libpq's password and service files (``$PGPASSFILE`` as it was at start)."""
    from ..records.storedb import PASSFILE_AT_START
    home = os.path.expanduser("~")
    found = [PASSFILE_AT_START or "", os.environ.get("PGPASSFILE", ""),
             os.path.join(home, ".pgpass"), os.path.join(home, ".pg_service.conf")]
    return [os.path.abspath(f) for f in found if f]


def _rival_files(rivals: Sequence[tuple[str, ...]], argv: Sequence[str], own: CommandView) -> list[str]:
    """What of the other seats' programs to hide from this bot: a rival's whole project
    directory where it holds nothing of this bot's own (the C example's, seen from a
    Python bot of the same repository), else its program files
    (``sandbox_view.program_files``) that are not this bot's own too."""
    mine = {p for p, _ in own.files} | {os.path.realpath(p) for p, _ in own.files}
    mine |= set(program_files(argv, own.cwd)) | set(own.binds)
    out = []
    for other in rivals:
        for path in program_files(other, own.cwd):
            for p in dict.fromkeys((path, os.path.realpath(path))):
                root = project_root(p)
                if not any(inside(m, [root]) for m in mine):
                    out.append(root)
                elif p not in mine and not any(inside(m, [p]) for m in mine):
                    out.append(p)
    return out


def _check_program(argv: Sequence[str], cwd: str | None, env: Mapping[str, str] | None) -> None:
    """Raise FileNotFoundError/PermissionError now for a program that cannot be exec'd, so
    that a sandboxed bot with a wrong command is a start error as an unsandboxed one is
    (not a crash reported by bwrap from inside)."""
    if not argv:
        raise FileNotFoundError(2, "empty command")
    prog = argv[0]
    if "/" in prog:
        path = os.path.join(cwd or os.getcwd(), prog)
        if not os.path.exists(path):
            raise FileNotFoundError(2, os.strerror(2), prog)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(13, os.strerror(13), prog)
    else:
        search = (env if env is not None else os.environ).get("PATH", os.defpath)
        if shutil.which(prog, path=search) is None:
            raise FileNotFoundError(2, os.strerror(2), prog)


def limit_args(max_memory_mb: int | None, max_cpu_s: int | None) -> list[str]:
    """``prlimit`` options for the limits (``SIGPENDING`` always)."""
    out = [f"--sigpending={SIGPENDING}"]
    if max_memory_mb is not None:
        out.append(f"--as={max_memory_mb << 20}")
    if max_cpu_s is not None:
        out.append(f"--cpu={max_cpu_s}:{max_cpu_s + 1}")
    return out


#: What a bot could carry from a deal's first seat rotation to its second, by
#: ``duplicate_soundness()`` value (the log header's ``"duplicates"``).
DUPLICATE_CHANNELS = {
    "unsound": "anything: bots are not sandboxed (files, other processes, the network)",
    "memory": "its own memory: bots are sandboxed but keep running across a deal's seat "
              "rotations (--keep-bots-across-twins)",
    "page-cache": "the host's shared caches only: no sandboxed process plays two seat rotations "
                  "of one deal, "
                  "mincore and cachestat refused, but which file pages are cached still "
                  "shows in read timing and major-fault counts",
}


def duplicate_soundness(duplicate: bool, sandbox: str | None, keep_across_twins: bool) -> str | None:
    """What could carry a duplicate deal from its first seat rotation to the second for
    these program bots (None: not duplicate, or no program bots): a key of
    ``DUPLICATE_CHANNELS``. ``keep_across_twins``: a bot's process may play more than one
    rotation of a deal (else each twin gets a fresh process: ``match.twin_guard``).
    Never "sound": a sandbox with fresh processes still shares the host's page cache (and
    CPU caches) with the bot's next game, and seccomp cannot close channels that need no
    refusable call."""
    if not duplicate or sandbox is None:
        return None
    if sandbox == "none":
        return "unsound"
    return "memory" if keep_across_twins else "page-cache"


def warn_unsound_duplicates(soundness: str | None) -> None:
    """The one warning line for duplicate deals where a bot could remember a deal outright
    (unsandboxed, or kept running across a deal's rotations by --keep-bots-across-twins).
    None for "page-cache": that residue is in the log header and the README, not worth a
    line on every run."""
    if soundness == "unsound":
        print("durak-ref: warning: duplicate deals with unsandboxed bots: a bot could remember "
              "the first seat rotation of a deal and know its opponents' hands in the second",
              file=sys.stderr, flush=True)
    elif soundness == "memory":
        print("durak-ref: warning: duplicate deals with --keep-bots-across-twins: a bot kept "
              "running could remember the first seat rotation of a deal and know its opponents' "
              "hands in the second (without the option each rotation gets fresh processes)",
              file=sys.stderr, flush=True)
