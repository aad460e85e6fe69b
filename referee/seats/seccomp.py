"""The seccomp filter for sandboxed bots: the system calls no bot needs, refused.

bubblewrap loads it (``--seccomp FD``) as the last step before it execs the bot, so it
binds the bot and everything the bot starts; bwrap itself is not under it. The filter
is built with libseccomp (through ``pyseccomp``, a ctypes binding with the official
bindings' API) once per process; each launch gets its own memfd holding the BPF
program (bwrap reads it and closes it).

What is refused, and why, is ``RULES`` (one place: the filter, its tests and the
README's list are made from it). Refused calls fail with EPERM, so a bot that tries
one gets a clean error instead of a kill; ``clone3`` fails with ENOSYS so that libc
falls back to ``clone``, whose namespace flags the filter can see (``clone3`` passes
them in memory, which seccomp cannot read). Every architecture the kernel can run the
bot's code in is covered: on x86_64 the same rules are compiled for i386 and x32 too
(a 64-bit bot can make 32-bit system calls), on aarch64 for arm; a call from any other
architecture kills the process (libseccomp's bad-arch action; none can occur on those
kernels).

What seccomp cannot close: the channels that need no refusable call. The page cache is
shared with the host and every other bot: which pages of a file are cached still shows
in how long a read takes and in the major-fault count a bot reads from ``getrusage``;
CPU caches likewise. ``mincore``, ``cachestat``, ``preadv2(RWF_NOWAIT)`` and io_uring,
which report residency outright, are refused.

Without pyseccomp or libseccomp, or where bwrap cannot load the filter, sandboxed bots
run without it: ``unavailable()`` says why (the sandbox prints it once, and the log
header's ``seccomp`` is ``"off"``).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

# Constants from the kernel's uapi headers (sched.h, ioctls.h, fs.h).
CLONE_NEW = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000,
             "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000,
             "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
             "CLONE_NEWNET": 0x40000000}  # CLONE_NEWTIME (0x80) is clone3/unshare only
TIOCSTI = 0x5412  #: push a byte into a terminal's input: typing into the organiser's shell
TIOCLINUX = 0x541C  #: the console's selection paste, same effect
RWF_NOWAIT = 0x00000008  #: preadv2: fail instead of reading from disk, i.e. "is it cached?"
PER_QUERY = 0xFFFFFFFF  #: personality(0xffffffff) asks, changing nothing


@dataclass(frozen=True)
class Rule:
    """One rule: ``syscall`` fails with ``errno`` (0: succeeds without running), for
    every call or, with ``arg``, for the calls whose argument ``arg`` compares so:
    ``(index, op, value)`` with op ``"=="``/``"!="``, or ``(index, "&", mask)``: any
    of ``mask``'s bits set. Arguments compare as the kernel reads them: ``ioctl``'s
    request is 32 bits (the upper half is ignored by the kernel, so it is masked off
    here, or a bot could set it and slip past the comparison)."""

    syscall: str
    why: str
    errno: int = errno.EPERM
    arg: tuple[int, str, int] | None = None


def _always(why: str, *names: str) -> list[Rule]:
    return [Rule(name, why) for name in names]


RULES: tuple[Rule, ...] = (
    # The shared page cache as a message board (a bot marking a file's pages in one game
    # and reading the marks in its duplicate twin): every call that reports residency.
    *_always("reports which pages of a shared file are cached", "mincore", "cachestat"),
    Rule("preadv2", "RWF_NOWAIT reports whether file data is cached", arg=(5, "&", RWF_NOWAIT)),
    # io_uring's operations (socket, connect, read with NOWAIT...) are not system calls:
    # seccomp never sees them, so allowing it would undo every rule here.
    *_always("runs operations seccomp cannot see", "io_uring_setup", "io_uring_enter",
             "io_uring_register"),
    *_always("kernel keyrings are shared per uid, beyond the sandbox", "keyctl", "add_key",
             "request_key"),
    *_always("reads or changes another process", "ptrace", "process_vm_readv",
             "process_vm_writev"),
    *_always("changes mounts", "mount", "umount2", "pivot_root", "fsopen", "fsconfig",
             "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"),
    # A new user namespace gives its creator every capability inside it: the door to
    # the kernel's less-exercised code (and to mounts, above). Nested namespaces of any
    # kind are refused, however they are asked for.
    *_always("creates or enters namespaces", "unshare", "setns"),
    *(Rule("clone", f"{flag}: creates a namespace", arg=(0, "&", bit))
      for flag, bit in CLONE_NEW.items()),
    Rule("clone3", "passes its flags in memory seccomp cannot read (libc falls back to "
         "clone on ENOSYS)", errno=errno.ENOSYS),
    *_always("kernel attack surface no bot needs", "perf_event_open", "bpf", "userfaultfd"),
    *_always("administers the machine", "kexec_load", "kexec_file_load", "init_module",
             "finit_module", "delete_module", "iopl", "ioperm", "swapon", "swapoff", "reboot",
             "acct", "quotactl", "quotactl_fd", "lookup_dcookie", "fanotify_init"),
    *_always("opens files by handle, around the mounts", "open_by_handle_at",
             "name_to_handle_at"),
    Rule("ioctl", "TIOCSTI: types into a terminal", arg=(1, "==", TIOCSTI)),
    Rule("ioctl", "TIOCLINUX: pastes into a console", arg=(1, "==", TIOCLINUX)),
    # personality: the default only (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO
    # weaken the bot's own process for an exploit). The query is answered "PER_LINUX"
    # without running (errno 0), which is what every bot here has.
    Rule("personality", "query: answered PER_LINUX", errno=0, arg=(0, "==", PER_QUERY)),
    Rule("personality", "anything but the default", arg=(0, "!=", 0)),
    # Pipe bots talk over stdin/stdout and have no network; a socket could reach a unix
    # socket file of the host. socketpair (an AF_UNIX pair between the bot's own
    # processes: asyncio, node) stays allowed.
    Rule("socket", "every address family"),
)

#: For each native architecture, the others its kernel runs code of (libseccomp's names).
COMPAT_ARCHES = {"X86_64": ("X86", "X32"), "AARCH64": ("ARM",)}


@cache
def _library() -> Any:
    """The pyseccomp module, or the reason it cannot be used (a str)."""
    try:
        import pyseccomp
    except Exception as exc:  # ImportError, or RuntimeError/OSError: no libseccomp.so
        return f"pyseccomp/libseccomp not importable ({type(exc).__name__}: {exc}); " \
               f"install libseccomp2 (apt-get install libseccomp2) and pip install pyseccomp"
    return pyseccomp


def build(lib: Any) -> Any:
    """A libseccomp filter (``lib.SyscallFilter``) with ``RULES`` for the native
    architecture and its compatible ones. Syscalls the native architecture lacks (iopl
    on aarch64) are left out."""
    native = lib.system_arch()
    f = lib.SyscallFilter(lib.ALLOW)
    f.set_attr(lib.Attr.ACT_BADARCH, lib.KILL_PROCESS)
    names = {getattr(lib.Arch, n): n for n in dir(lib.Arch) if n.isupper() and n != "NATIVE"}
    for compat in COMPAT_ARCHES.get(names.get(native, ""), ()):
        f.add_arch(getattr(lib.Arch, compat))
    ops = {"==": lib.EQ, "!=": lib.NE}
    for rule in RULES:
        try:
            number = lib.resolve_syscall(lib.Arch.NATIVE, rule.syscall)
        except Exception:  # unknown to this architecture (or this libseccomp)
            continue
        if number < 0:
            continue
        args = []
        if rule.arg is not None:
            index, op, value = rule.arg
            if op == "&":
                args.append(lib.Arg(index, lib.MASKED_EQ, value, value))
            elif rule.syscall == "ioctl":  # 32-bit request number: mask the upper half
                args.append(lib.Arg(index, lib.MASKED_EQ, 0xFFFFFFFF, value))
            else:
                args.append(lib.Arg(index, ops[op], value))
        f.add_rule(lib.ERRNO(rule.errno), number, *args)
    return f


def export(kind: str = "bpf") -> bytes:
    """The filter as a BPF program (what bwrap loads) or as libseccomp's pseudo-code
    (``kind="pfc"``, for reading and tests). Raises RuntimeError when libseccomp is
    not usable (``unavailable()`` says why)."""
    lib = _library()
    if isinstance(lib, str):
        raise RuntimeError(lib)
    f = build(lib)
    fd = os.memfd_create(f"durak-seccomp-{kind}")
    try:
        with open(fd, "w+b", closefd=False) as out:
            (f.export_bpf if kind == "bpf" else f.export_pfc)(out)
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@cache
def program() -> bytes | str:
    """The BPF program, built once per process, or why it cannot be built."""
    lib = _library()
    if isinstance(lib, str):
        return lib
    try:
        return export("bpf")
    except Exception as exc:  # a libseccomp too old for a rule's form: say so, run without
        return f"libseccomp could not build the filter: {type(exc).__name__}: {exc}"


def program_fd() -> int:
    """A fresh memfd holding the BPF program at offset 0 (the caller closes it; it is
    close-on-exec: pass it with ``pass_fds``). Only when ``program()`` is bytes."""
    data = program()
    assert isinstance(data, bytes)
    fd = os.memfd_create("durak-seccomp")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@dataclass(frozen=True)
class Support:
    """What this host's bwrap enforces beyond its namespaces (probed once per process)."""

    seccomp_off: str | None  #: None: the filter is loaded; else why not
    disable_userns: bool  #: bwrap's ``--disable-userns`` is used (bwrap >= 0.8)


_probed: dict[tuple[str, ...], Support] = {}


def support(bwrap_prefix: Sequence[str]) -> Support:
    """Probe (once per process and prefix) what bwrap can add to ``bwrap_prefix`` (bwrap
    and its sandbox options, a working command without ``--``): the seccomp filter, and
    ``--disable-userns`` (which needs ``--unshare-user`` in the prefix: a bot cannot
    create a user namespace below its own, so none of its processes ever holds a
    capability; the filter refuses the same calls, this is the second wall)."""
    key = tuple(bwrap_prefix)
    if key in _probed:
        return _probed[key]
    data = program()
    userns = "--unshare-user" in key and _bwrap_has("--disable-userns", key[0])
    why = data if isinstance(data, str) else None  # None: the filter is built
    tries = [(True, userns), (True, False)] if why is None else []
    result = Support(why or "bwrap cannot run", False)
    for with_filter, with_userns in dict.fromkeys([*tries, (False, userns), (False, False)]):
        error = _run_true(key, with_filter, with_userns)
        if error is None:
            result = Support(None if with_filter else why, with_userns)
            break
        if with_filter and why is None:
            why = f"bwrap cannot load a seccomp filter here: {error}"
    _probed[key] = result
    return result


def _bwrap_has(option: str, exe: str) -> bool:
    try:
        res = subprocess.run([exe, "--help"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option.encode() in res.stdout + res.stderr


def _run_true(prefix: Sequence[str], with_filter: bool, with_userns: bool) -> str | None:
    """None if ``prefix`` with these additions runs ``true``, else bwrap's complaint."""
    args, fds = _additions(with_filter, with_userns)
    try:
        res = subprocess.run([*prefix, *args, "--", shutil.which("true") or "/bin/true"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, pass_fds=fds, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        for fd in fds:
            os.close(fd)
    return None if res.returncode == 0 else (
        res.stderr.decode("utf-8", "replace").strip() or f"exit code {res.returncode}")


def _additions(with_filter: bool, with_userns: bool) -> tuple[list[str], tuple[int, ...]]:
    args = ["--disable-userns"] if with_userns else []
    if not with_filter:
        return args, ()
    fd = program_fd()
    return [*args, "--seccomp", str(fd)], (fd,)


def unavailable(bwrap_prefix: Sequence[str]) -> str | None:
    """None if sandboxed bots run under the filter here, else why not."""
    return support(bwrap_prefix).seccomp_off


def bwrap_args(bwrap_prefix: Sequence[str]) -> tuple[list[str], tuple[int, ...]]:
    """The bwrap options to add to ``bwrap_prefix`` (the filter, ``--disable-userns``),
    and the fds to pass to the child (the filter's new memfd; the spawner closes it in
    the parent once the child has started). Empty where neither works here."""
    found = support(bwrap_prefix)
    return _additions(found.seccomp_off is None, found.disable_userns)
