"""The sandbox for program bots: how a bot's command becomes the command we exec.

A ``Sandbox`` is a policy (mode ``auto``, ``bwrap`` or ``none``; extra read-only paths
the user binds; referee paths to hide). ``resolve()`` turns ``auto`` into the mode that
is actually used; ``launch()`` turns a bot's argv, cwd and environment into a ``Launch``
(what to exec, with which environment, and a cleanup for after the process ended).

With bubblewrap (``bwrap``) a bot:

- sees the filesystem read-only (``--ro-bind / /``) except a private, size-capped tmpfs
  at ``/tmp`` that is its scratch dir (``HOME`` and ``TMPDIR`` point at it); the tmpfs
  lives in the bot's own mount namespace, so it is fresh per process, invisible to every
  other bot, and gone when the process ends;
- never sees the paths in ``hide`` (log dir, store file and its SQLite side files,
  config and token files): an empty read-only tmpfs over each directory, ``/dev/null``
  over each file, mounted last so that no bind can expose them again; ``/var/tmp`` and
  ``/run`` are empty read-only tmpfs too and ``/dev/shm`` a private one, so no unix
  socket of another program (a database's) is reachable;
- has its own user, PID, network, IPC, UTS and cgroup namespaces (``--unshare-all``): no
  network at all (abstract unix sockets included), the referee's processes and their
  command lines are invisible (``--proc`` of its own); the bot is PID 1 of its namespace
  (``--as-pid-1``), so when it exits the kernel kills every descendant (``setsid`` and
  double forks included) and bwrap, our child, reaps the bot itself (with bwrap's own
  init, bwrap exits without reaping that init, which becomes a zombie of whoever adopts
  it); ``--new-session`` keeps it off the referee's terminal, and ``--die-with-parent``
  makes it die with the referee;
- runs as uid/gid 65534 inside its user namespace, without capabilities.

Which uid outside. bwrap maps the bot's uid 65534 to the referee's own uid. When the
referee runs as root, that means the bot's files checks are done as root-without-
capabilities: file permissions protect nothing, and the read-only mounts and the hidden
paths are the protection. We measured the alternative (drop to uid 65534 before exec'ing
bwrap, which then uses an unprivileged user namespace; it works on Debian 12) and chose
not to: a bot must be able to run its own program, and with a real drop a bot run by a
pyenv/venv Python under ``/root`` (mode 0700) or a program under a 0700 temporary
directory cannot even be exec'd. Run the referee as an unprivileged user to get file
permissions as a second wall.

Programs under the masked roots (``/tmp`` ...) would vanish under the tmpfs: the bot's
cwd is bound back read-only, and for every argv word that names an existing path there,
the top directory below the masked root (``/tmp/PROJECT`` for
``/tmp/PROJECT/venv/bin/python``), since a program needs more than its own file (a venv's
site-packages, an editable install's sources); never a masked root itself (a file lying
right in ``/tmp`` is bound alone). The log dir, store and config are hidden on top of
these binds.

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

from .cgroups import Limits, default_limits

MODES = ("auto", "bwrap", "none")
SANDBOX_ID = 65534  #: uid and gid of a bot inside its user namespace ("nobody")
SCRATCH_MB = 256  #: size cap of a bot's private /tmp (tmpfs memory is not in RLIMIT_AS)
SHM_MB = 64  #: size cap of a bot's private /dev/shm
MASKED = ("/tmp", "/var/tmp", "/dev/shm", "/run")  #: empty tmpfs in the sandbox
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


class SandboxError(ValueError):
    """The user's sandbox options are unusable (``--sandbox bwrap`` where bwrap cannot
    run, a ``--bind`` path that does not exist, an unknown mode). Exit code 2."""


@dataclass(frozen=True)
class Launch:
    """What to exec for one bot process, and what to do after it ended."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    mode: str
    scratch: str  #: the scratch dir as the bot sees it (HOME, TMPDIR)
    cleanup: Callable[[], None] = field(default=lambda: None)


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
        argv = [exe, *_base_args(), "--", true]
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


def _base_args(limits: Limits | None = None) -> list[str]:
    scratch_mb, shm_mb = tmpfs_mb(limits)
    return ["--unshare-all", "--as-pid-1", "--new-session", "--die-with-parent",
            "--uid", str(SANDBOX_ID), "--gid", str(SANDBOX_ID),
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/run", "--remount-ro", "/run", "--tmpfs", "/var/tmp",
            "--remount-ro", "/var/tmp", "--size", str(shm_mb << 20), "--tmpfs", "/dev/shm",
            "--size", str(scratch_mb << 20), "--perms", "1777", "--tmpfs", "/tmp"]


def _warn(text: str) -> None:
    if text not in _warned:
        _warned.add(text)
        print(f"durak-ref: {text}", file=sys.stderr, flush=True)


def _masked_root(path: str) -> str | None:
    for root in MASKED:
        if path == root or path.startswith(root + "/"):
            return root
    return None


@dataclass(frozen=True)
class Sandbox:
    """How program bots are confined (see the module docstring)."""

    mode: str = "auto"
    binds: tuple[str, ...] = ()  #: extra read-only paths, visible at the same path
    hide: tuple[str, ...] = ()  #: referee paths no bot may see (logs, store, config, tokens)
    warn: bool = True  #: print the one-line "unsandboxed" warning (workers: the parent did)
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
            return replace(self, mode="bwrap")
        if self.mode == "bwrap":
            raise SandboxError(f"--sandbox bwrap: {why}; {INSTALL_HINT}, or choose "
                               f"--sandbox auto|none")
        if self.warn:
            _warn(f"bots run unsandboxed: {why}; {INSTALL_HINT}")
        return replace(self, mode="none")

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "binds": list(self.binds), "hide": list(self.hide),
                "warn": self.warn, "limits": self.limits.as_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sandbox:
        return cls(data.get("mode", "auto"), tuple(data.get("binds", ())),
                   tuple(data.get("hide", ())), bool(data.get("warn", True)),
                   Limits.from_dict(data.get("limits", {})))

    def launch(self, argv: Sequence[str], cwd: str | None, env: Mapping[str, str] | None,
               limits: Sequence[str] = (), join: Sequence[str] = ()) -> Launch:
        """The command to exec for a bot (``limits``: ``prlimit`` options, put in front;
        ``join``: the prefix that puts it into its control group, in front of those).
        Each call makes a fresh scratch dir; call ``Launch.cleanup`` after the process
        ended (and was reaped)."""
        mode = self.mode if self.mode != "auto" else self.resolve().mode
        _check_program(argv, cwd, env)
        base_env = dict(os.environ if env is None else env)
        prefix = list(join)
        if limits:
            prefix += [shutil.which("prlimit") or "prlimit", *limits, "--"]
        if mode == "none":
            scratch = tempfile.mkdtemp(prefix="durak-bot-")
            base_env.update(HOME=scratch, TMPDIR=scratch)
            return Launch([*prefix, *argv], base_env, cwd, "none", scratch,
                          lambda: shutil.rmtree(scratch, ignore_errors=True))
        work = os.path.abspath(cwd or os.getcwd())
        args = [shutil.which("bwrap") or "bwrap", *_base_args(self.limits)]
        back: list[str] = []  # paths under a masked root the bot needs: its cwd and program
        if _masked_root(work) not in (None, work):
            back.append(work)  # its working directory, itself only
        for word in _path_words(argv, work):
            root = _masked_root(word)
            if root is not None and word != root:
                # The top directory below the masked root (/tmp/PROJECT): a program there
                # needs more than its own file (a venv's pyvenv.cfg and site-packages, an
                # editable install's source tree). A file right in /tmp is bound alone.
                back.append(os.sep.join(word.split(os.sep)[: len(root.split(os.sep)) + 1]))
        for path in [*dict.fromkeys(back), *(os.path.abspath(b) for b in self.binds)]:
            args += ["--ro-bind", path, path]
        hidden_dirs = [h for h in self.hide if os.path.isdir(h)]
        for path in self.hide:  # last: nothing bound above can expose them again
            if any(path != d and path.startswith(d.rstrip("/") + "/") for d in hidden_dirs):
                # Inside a directory already hidden by an empty read-only tmpfs (the store
                # in the log dir, the default): it is not there to hide, and bwrap cannot
                # create a mount point in that tmpfs (the bot would fail to start).
                continue
            if os.path.isdir(path):
                args += ["--tmpfs", path, "--remount-ro", path]
            elif os.path.exists(path):
                args += ["--ro-bind", "/dev/null", path]
        args += ["--chdir", work, "--"]
        base_env.update(HOME="/tmp", TMPDIR="/tmp")
        return Launch([*prefix, *args, *argv], base_env, None, "bwrap", "/tmp")


def _path_words(argv: Sequence[str], cwd: str) -> list[str]:
    """The argv words that name existing paths (absolute, resolved against ``cwd``), and
    the program found on PATH."""
    out = []
    for i, word in enumerate(argv):
        if i == 0 and "/" not in word:
            found = shutil.which(word)
            if found:
                out.append(os.path.abspath(found))
            continue
        path = os.path.join(cwd, word)
        if word and os.path.exists(path):
            out.append(os.path.abspath(path))
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
    """``prlimit`` options for the limits (empty when there are none)."""
    out = []
    if max_memory_mb is not None:
        out.append(f"--as={max_memory_mb << 20}")
    if max_cpu_s is not None:
        out.append(f"--cpu={max_cpu_s}:{max_cpu_s + 1}")
    return out


def duplicate_soundness(duplicate: bool, sandbox: str | None, fresh_bots: bool) -> str | None:
    """Whether duplicate deals are sound for these program bots (None: not duplicate, or
    no program bots). "sound": sandboxed and restarted before every game, so nothing of
    the first rotation survives; "memory": sandboxed but kept running between games, so a
    bot could remember a deal in its process memory (use --fresh-bots); "unsound": not
    sandboxed, so a bot could remember it anywhere (files, other processes)."""
    if not duplicate or sandbox is None:
        return None
    if sandbox == "none":
        return "unsound"
    return "sound" if fresh_bots else "memory"


def warn_unsound_duplicates(soundness: str | None) -> None:
    """The one warning line for duplicate deals played by unsandboxed program bots."""
    if soundness == "unsound":
        print("durak-ref: warning: duplicate deals with unsandboxed bots: a bot could remember "
              "the first seat rotation of a deal and know its opponents' hands in the second",
              file=sys.stderr, flush=True)
