#!/usr/bin/env python3
"""A bot that makes the system calls the seccomp filter refuses, then plays random moves.

    python3 syscall_bot.py [--once]

Before its hello it tries each call with arguments that succeed, or fail with an error
other than EPERM, on a machine without the filter, and reports the outcome of each as
one line ``ATTACK {"mode": "syscalls", "results": {NAME: "ok" | ERRNO_NAME}}`` on its
stderr. ``--once``: print the same JSON on stdout and exit without playing (run under
bwrap directly). Calls that change the process (unshare, clone) run in a child.
x86_64 only (the syscall numbers below).
"""

import ctypes
import errno
import json
import mmap
import os
import random
import socket
import sys
from pathlib import Path

NR = {"mincore": 27, "cachestat": 451, "preadv2": 327, "io_uring_setup": 425, "keyctl": 250,
      "ptrace": 101, "process_vm_readv": 310, "perf_event_open": 298, "bpf": 321,
      "userfaultfd": 323, "unshare": 272, "clone": 56, "clone3": 435, "setns": 308, "ioctl": 16,
      "personality": 135, "mount": 165}
CLONE_NEWUSER, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x40000000, 17
TIOCSTI = 0x5412
RWF_NOWAIT = 8

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def sys_call(name, *args):  # type: ignore[no-untyped-def]
    """The raw system call: "ok" (or its non-negative result when asked), or the errno name."""
    ctypes.set_errno(0)
    res = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(a) if isinstance(a, int) else a
                                                  for a in args])
    if res == -1:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    return "ok"


def in_child(fn):  # type: ignore[no-untyped-def]
    """Run fn() in a forked child (it may change the child's namespaces); its result."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(w, fn().encode())
        finally:
            os._exit(0)
    os.close(w)
    out = os.read(r, 100).decode()
    os.close(r)
    os.waitpid(pid, 0)
    return out


def raw_clone(flags):  # type: ignore[no-untyped-def]
    ctypes.set_errno(0)
    res = libc.syscall(ctypes.c_long(NR["clone"]), ctypes.c_long(flags | SIGCHLD), ctypes.c_long(0),
                       ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
    if res == 0:
        os._exit(0)  # the clone: leave at once
    if res < 0:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    os.waitpid(res, 0)
    return "ok"


def sock(family, kind=socket.SOCK_STREAM):  # type: ignore[no-untyped-def]
    try:
        socket.socket(family, kind).close()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc))


def pair():  # type: ignore[no-untyped-def]
    try:
        a, b = socket.socketpair(socket.AF_UNIX)
        a.sendall(b"x")
        ok = b.recv(1) == b"x"
        a.close()
        b.close()
        return "ok" if ok else "broken"
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, str(exc))


def probe() -> dict:
    lib = Path(os.__file__)  # a file every Python bot has: mapped, then asked about
    fd = os.open(lib, os.O_RDONLY)
    buf = (ctypes.c_char * mmap.PAGESIZE).from_buffer(bytearray(mmap.PAGESIZE))
    # mincore needs the mapping's address: mapped through libc.
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    base = libc.mmap(None, mmap.PAGESIZE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    vec = ctypes.create_string_buffer(1)
    iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), mmap.PAGESIZE)
    out = {
        "mincore": sys_call("mincore", ctypes.c_void_p(base), mmap.PAGESIZE, vec),
        "cachestat": sys_call("cachestat", fd, ctypes.create_string_buffer(16),
                              ctypes.create_string_buffer(64), 0),
        "preadv2_nowait": sys_call("preadv2", fd, iov, 1, 0, 0, RWF_NOWAIT),
        "preadv2": sys_call("preadv2", fd, iov, 1, 0, 0, 0),
        "io_uring_setup": sys_call("io_uring_setup", 1, ctypes.create_string_buffer(120)),
        "keyctl": sys_call("keyctl", 0, -3, 1, 0, 0),  # KEYCTL_GET_KEYRING_ID of the session ring
        "ptrace": sys_call("ptrace", 2, os.getpid(), 0, 0),  # PEEKDATA of a non-tracee: ESRCH
        "process_vm_readv": sys_call("process_vm_readv", os.getpid(), iov, 1, iov, 1, 0),
        "perf_event_open": sys_call("perf_event_open", 0, 0, -1, -1, 0),  # NULL attr: EFAULT
        "bpf": sys_call("bpf", 0, 0, 0),  # BPF_MAP_CREATE, NULL attr
        "userfaultfd": sys_call("userfaultfd", 0x7fff0000),  # bad flags: EINVAL
        "unshare_newuser": in_child(lambda: sys_call("unshare", CLONE_NEWUSER)),
        "clone_newuser": in_child(lambda: raw_clone(CLONE_NEWUSER)),
        "clone_newnet": in_child(lambda: raw_clone(CLONE_NEWNET)),
        "clone_plain": in_child(lambda: raw_clone(0)),
        "clone3": sys_call("clone3", 0, 0),  # size 0: EINVAL
        "setns": sys_call("setns", os.open("/proc/self/ns/user", os.O_RDONLY), 0),
        "socket_unix": sock(socket.AF_UNIX),
        "socket_inet": sock(socket.AF_INET),
        "socket_inet6_udp": sock(socket.AF_INET6, socket.SOCK_DGRAM),
        "socketpair": pair(),
        "tiocsti": sys_call("ioctl", 0, TIOCSTI, ctypes.c_char_p(b"x")),  # stdin: a pipe
        "tiocsti_high_bits": sys_call("ioctl", 0, (1 << 32) | TIOCSTI, ctypes.c_char_p(b"x")),
        "personality_query": sys_call("personality", 0xFFFFFFFF),
        "personality_no_aslr": sys_call("personality", 0x0040000),
        "mount": sys_call("mount", 0, 0, 0, 0, 0),
        "fork_thread": fork_and_thread(),
    }
    os.close(fd)
    return out


def fork_and_thread() -> str:
    """What every runtime does: threads (glibc's clone3, falling back to clone) and fork."""
    import threading
    seen = []
    t = threading.Thread(target=lambda: seen.append(1))
    t.start()
    t.join()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    _, status = os.waitpid(pid, 0)
    return "ok" if seen == [1] and os.WEXITSTATUS(status) == 7 else "broken"


def main() -> None:
    results = probe()
    if "--once" in sys.argv:
        print(json.dumps(results))
        return
    sys.stderr.write("ATTACK " + json.dumps({"mode": "syscalls", "results": results}) + "\n")
    sys.stderr.flush()
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from protocol.bot import run_function

    rng = random.Random(5)
    run_function(lambda observation, legal: rng.choice(legal), name="syscalls", version="1.0")


if __name__ == "__main__":
    main()
