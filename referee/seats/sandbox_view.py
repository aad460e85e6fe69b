"""What a sandboxed bot sees: the allowlist root, the uid it runs as, its environment.

The sandbox's root is an empty tmpfs (bubblewrap's own); into it go, read-only:

- the system's runtime, ``SYSTEM_DIRS`` (a merged-usr symlink such as ``/bin -> usr/bin``
  becomes the same symlink);
- the parts of ``/etc`` programs need, ``ETC_ENTRIES`` (the dynamic loader's cache and
  config, time zone, name-service switch, alternatives, CA certificates, the runtimes'
  own config such as ``/etc/java-*`` and ``/etc/python3*``), plus a minimal ``passwd``,
  ``group`` and ``hosts`` written by us that name only root and the sandbox uid;
- what the bot's command needs (``command_paths``): its program as found on PATH (and
  its symlink targets), the prefix that program lives in (``PREFIX/bin/prog`` brings
  ``PREFIX``: a venv, a pyenv root, a JDK), the interpreter of a ``#!`` script, a venv's
  base interpreter (``home`` in ``pyvenv.cfg``) and the source trees its ``.pth`` files
  and editable-install finders name, and for every argv word naming an existing file
  its project root (the nearest directory above it holding a project marker,
  ``PROJECT_MARKERS``, never a home directory or a masked root; else its own directory);
- an explicit cwd (a tournament bot's ``cwd``), and the ``--bind`` paths.

Nothing else exists: no ``/root``, ``/home``, ``/srv``, ``/mnt``, ``/opt``, ``/var``,
``/run``, ``/sys``, no other bot's program and no socket of another program. Directories
leading to a bound path are made by us, empty and mode 0755, so only the bound paths'
own permissions count. ``/proc`` is the sandbox's own, with ``PROC_READ_ONLY`` bound
read-only over it; ``/dev`` is bubblewrap's minimal one.

Bots get only ``BOT_ENVIRONMENT`` from the referee's environment (plus what a tournament
config sets for that bot, and ``HOME``/``TMPDIR`` pointing at the scratch dir).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import shutil
import stat
from collections.abc import Iterable, Mapping, Sequence

#: The system's runtime, bound read-only (symlinks, as on merged-usr systems, are copied).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: What of /etc a bot sees (glob patterns below /etc); passwd, group and hosts are ours.
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone",
               "nsswitch.conf", "alternatives", "ssl/certs", "ssl/openssl.cnf",
               "ca-certificates", "ca-certificates.conf", "java-*", "python3*", "os-release",
               "locale.alias", "mime.types", "fonts", "mtab")
#: Entries of the sandbox's /proc bound read-only over it: kernel settings and the old
#: interfaces that change the machine (bubblewrap covers only some, and /proc/sys not at
#: all when the directory itself is not writable, which is how procfs shows it).
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "scsi", "driver", "mtrr")
#: The referee's environment variables a bot inherits (shell patterns): the locale, the
#: time zone, PATH, and ``DURAK_BOT_*``, the names an organiser gives what all bots may
#: see. No other DURAK_* variable: DURAK_DB is the store, DURAK_TOKEN a TCP bot's secret.
BOT_ENVIRONMENT = ("PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "DURAK_BOT_*")
#: Files in a directory that make it a program's project root (an argv word's file brings it).
PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "package.json",
                   "Cargo.toml", "go.mod", "pom.xml", "build.gradle", "Makefile")
#: Never bound as a whole, whatever marker they hold (a program inside brings less).
_NEVER_WHOLE = ("/", "/home", "/root", "/tmp", "/var/tmp", "/dev/shm", "/run", "/var",
                "/srv", "/mnt", "/opt", "/media", "/etc", "/proc", "/sys", "/dev")
_BIN_DIRS = ("bin", "sbin", "shims")  #: a program here is an installation's, not a project's
_PATH_LITERAL = re.compile(r"""['"](/[^'"\n]+)['"]""")


def bot_environment(extra: Mapping[str, str] | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a bot: the allowlisted variables of ``base`` (default: ours),
    then ``extra`` (what the organiser set for this bot), as given."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if any(fnmatch.fnmatchcase(k, p) for p in BOT_ENVIRONMENT)}
    env.update(extra or {})
    return env


def is_system(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS)


def _home_like(path: str) -> bool:
    home = os.path.expanduser("~")
    parent = os.path.dirname(path)
    return (path in _NEVER_WHOLE or path == home or parent == "/home"
            or path.count("/") < 2 and parent == "/")


def _prefix(program: str) -> str:
    """The directory a program's installation occupies: PREFIX for PREFIX/bin/prog (a
    venv, a pyenv root, a JDK), else the program's own directory."""
    d = os.path.dirname(program)
    if os.path.basename(d) in _BIN_DIRS:
        up = os.path.dirname(d)
        if not _home_like(up):
            return up
    return d


def project_root(path: str) -> str:
    start = path if os.path.isdir(path) else os.path.dirname(path)
    d = start
    while not _home_like(d):
        if any(os.path.lexists(os.path.join(d, m)) for m in PROJECT_MARKERS):
            return d
        d = os.path.dirname(d)
    return start


def _shebang(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    return head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _venv_paths(prefix: str) -> list[str]:
    """A venv's base interpreter prefix and the trees its site-packages point at."""
    out: list[str] = []
    if not os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        return out
    for line in _read(os.path.join(prefix, "pyvenv.cfg")).splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            out.append(_prefix(os.path.join(value.strip(), "python")))
    for site in glob.glob(os.path.join(prefix, "lib", "python*", "site-packages")):
        for pth in glob.glob(os.path.join(site, "*.pth")):
            text = _read(pth)
            for entry in text.splitlines():
                entry = entry.strip()
                if entry and not entry.startswith(("#", "import ", "import\t")):
                    where = os.path.abspath(os.path.join(site, entry))
                    if os.path.isdir(where):
                        out.append(where)
        for finder in glob.glob(os.path.join(site, "__editable__*finder*.py")):
            text = _read(finder)
            out += [p for p in _PATH_LITERAL.findall(text) if os.path.exists(p)]
    return out


class CommandView:
    """What one bot command needs to see (``binds``) and the files it must be able to
    read or run (``files``: (path, needs) with needs "x" for a program, "r" for a file
    it reads, "rx" for a script run through its ``#!`` interpreter)."""

    def __init__(self, argv: Sequence[str], cwd: str, search_path: str | None) -> None:
        self.cwd = cwd
        self.search_path = search_path
        self.binds: list[str] = []
        self.files: list[tuple[str, str]] = []
        self._seen: set[str] = set()
        self._script_seen = False
        if not argv:
            return
        first = argv[0]
        if "/" in first:
            path = os.path.join(cwd, first)
            if os.path.exists(path):
                if os.path.basename(os.path.dirname(os.path.abspath(path))) not in _BIN_DIRS:
                    self._bind(project_root(os.path.abspath(path)))  # ./mybot: its project
                self._program(path)
        else:
            found = shutil.which(first, path=search_path)
            if found:
                self._program(found)
        rest = list(argv[1:])
        if os.path.basename(first) == "env":  # env NAME=VALUE prog ...: prog is the program
            while rest and (rest[0].startswith("-") or "=" in rest[0]):
                rest.pop(0)
            if rest and "/" not in rest[0]:
                found = shutil.which(rest.pop(0), path=search_path)
                if found:
                    self._program(found)
        for word in rest:
            path = os.path.join(cwd, word)
            if word and os.path.exists(path):
                self._named(path)

    def _bind(self, path: str) -> None:
        if not is_system(path):
            self.binds.append(path)

    def _program(self, path: str, depth: int = 0) -> None:
        """An executable: itself and its real file, their prefixes (and a venv's base and
        sources), and a #! script's interpreter."""
        spellings = list(dict.fromkeys((os.path.abspath(path), os.path.realpath(path))))
        for p in spellings:
            if p in self._seen:
                continue
            self._seen.add(p)
            self._bind(_prefix(p))
            for extra in _venv_paths(_prefix(p)):
                self._bind(extra)
        words = _shebang(spellings[-1])
        self.files.append((spellings[0], "rx" if words else "x"))
        if words and depth < 4:
            interp = words[0]
            if os.path.basename(interp) == "env":
                rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
                found = shutil.which(rest[0], path=self.search_path) if rest else None
                self._program(interp, depth + 1)
                if found:
                    self._program(found, depth + 1)
            elif os.path.isabs(interp):
                self._program(interp, depth + 1)

    def _named(self, path: str) -> None:
        """A file or directory named in the command (a script, a class path)."""
        for p in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
            if os.path.isdir(p):
                self._bind(p)
            else:
                self._bind(project_root(p))
                if not self._script_seen:  # the script an interpreter runs (later files: data)
                    self.files.append((p, "r"))
        self._script_seen = self._script_seen or os.path.isfile(path)


def program_files(argv: Sequence[str], cwd: str) -> list[str]:
    """The files and directories that are a command's own program, as opposed to a
    shared interpreter or runtime: the argv words after the first that name existing
    paths, and a first word given as a path outside any ``bin`` directory (``./mybot``,
    ``examples/c/bot``; not ``.venv/bin/python``)."""
    out = []
    for i, word in enumerate(argv):
        if not word or (i == 0 and ("/" not in word or
                                    os.path.basename(os.path.dirname(word)) in _BIN_DIRS)):
            continue
        path = os.path.abspath(os.path.join(cwd, word))
        if os.path.exists(path) and not is_system(path):
            out.append(path)
    return out


def merge_binds(paths: Iterable[str]) -> list[str]:
    """``paths`` without duplicates and without those inside another one (the outer bind
    shows them already, at the same place)."""
    unique = sorted({os.path.normpath(p) for p in paths}, key=lambda p: (p.count("/"), p))
    kept: list[str] = []
    for p in unique:
        if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(p)
    return kept


def inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def system_args() -> list[str]:
    """bwrap options that put the system's runtime and our part of /etc into the root."""
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    args += ["--perms", "0755", "--dir", "/etc"]
    for pattern in ETC_ENTRIES:
        for path in sorted(glob.glob(os.path.join("/etc", pattern))):
            if os.path.dirname(path) != "/etc":
                args += ["--perms", "0755", "--dir", os.path.dirname(path)]
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            else:
                args += ["--ro-bind", path, path]
    return args


def identity_args(where: str, uid: int, gid: int) -> list[str]:
    """bwrap options for our /etc/passwd, group and hosts (written into ``where``, a
    directory of ours removed after the process): root and the sandbox uid only."""
    name = "nobody" if uid == 65534 else "durak-bot"
    group = "nogroup" if gid == 65534 else "durak-bot"
    files = {"passwd": f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
                       f"{name}:x:{uid}:{gid}:durak-ref bot:/tmp:/usr/sbin/nologin\n",
             "group": f"root:x:0:\n{group}:x:{gid}:\n",
             "hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost\n"}
    args = []
    for fname, text in files.items():
        src = os.path.join(where, fname)
        with open(src, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(src, 0o644)
        args += ["--ro-bind", src, f"/etc/{fname}"]
    return args


def bind_args(binds: Sequence[str]) -> list[str]:
    """bwrap options for the read-only ``binds`` (disjoint: see ``merge_binds``) and the
    directories leading to them, made by us with mode 0755."""
    args: list[str] = []
    made: set[str] = set()
    for path in binds:
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            d = "/" + "/".join(parts[:i])
            if d not in made and not is_system(d) and d not in ("/tmp", "/dev", "/proc", "/etc"):
                made.add(d)
                args += ["--perms", "0755", "--dir", d]
        args += ["--ro-bind", path, path]
    return args


def proc_args() -> list[str]:
    """A fresh /proc, with ``PROC_READ_ONLY`` read-only over it."""
    args = ["--proc", "/proc"]
    for name in PROC_READ_ONLY:
        if os.path.exists(f"/proc/{name}"):
            args += ["--ro-bind", f"/proc/{name}", f"/proc/{name}"]
    return args


def drop_args(uid: int, gid: int) -> list[str]:
    """The command that, run as root inside the sandbox, becomes ``uid``/``gid`` with no
    supplementary groups, no capabilities (bounding and inheritable sets emptied) and
    no_new_privs, then execs the rest of the command (which stays PID 1)."""
    return [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={gid}",
            "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def _allows(st: os.stat_result, uid: int, gid: int, bits: int) -> bool:
    """Whether ``uid``/``gid`` (no supplementary groups, no capabilities) has ``bits``
    (a combination of 4 r, 2 w, 1 x) on a file with this stat."""
    if st.st_uid == uid:
        have = st.st_mode >> 6
    elif st.st_gid == gid:
        have = st.st_mode >> 3
    else:
        have = st.st_mode
    return (have & bits) == bits


def unreadable(files: Sequence[tuple[str, str]], binds: Sequence[str], uid: int,
               gid: int) -> str | None:
    """Why the sandbox uid cannot run or read one of ``files`` inside the sandbox (None:
    it can). The directories we make are 0755, so what counts is the bound path and
    everything below it on the way to the file."""
    for path, needs in files:
        roots = [b for b in binds if inside(path, [b])]
        if is_system(path) or not roots:
            continue
        top = max(roots, key=len)
        parts = os.path.relpath(path, top).split("/")
        chain = [top] + [os.path.join(top, *parts[:i]) for i in range(1, len(parts) + 1)]
        for i, p in enumerate(chain):
            try:
                st = os.stat(p)
            except OSError:
                break
            is_last = i == len(chain) - 1
            bits = (4 * ("r" in needs) + 1 * ("x" in needs)) if is_last else 1
            if not _allows(st, uid, gid, bits):
                what = ("run" if needs == "x" else "read" if needs == "r" else "read and run")
                return (f"the sandboxed bot runs as uid {uid}, which cannot {what} {path}: "
                        f"{p} has mode {stat.filemode(st.st_mode)[1:]} "
                        f"({st.st_mode & 0o7777:04o}, owner uid {st.st_uid}); make it "
                        f"readable (chmod o+rx on it and its directories, o+r on the files "
                        f"it reads) or move the program where others may read it")
    return None
