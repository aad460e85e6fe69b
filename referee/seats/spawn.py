"""Start a bot process from the trio thread itself, and wait for it without threads.

Why not ``trio.lowlevel.open_process``. It forks from a trio thread-cache thread, and
Linux delivers a parent-death signal (``PR_SET_PDEATHSIG``, which ``bwrap
--die-with-parent`` sets) when the *thread* that forked the child exits, not the
process. Idle cache threads exit after about ten seconds, so a sandboxed bot spawned that
way would be SIGKILLed about ten seconds after its start. Here ``subprocess.Popen`` runs
in the thread that runs trio, which lives as long as the referee; without a pre-exec
function CPython starts the child with vfork/posix_spawn, so this is quick enough not to
block the event loop noticeably. The pipes are our own (``os.pipe``, wrapped in
``trio.lowlevel.FdStream``) and the exit is awaited on a pidfd with
``trio.lowlevel.wait_readable``: no thread is involved at any point.

``BotProcess`` has the parts of ``trio.Process`` that referee/seats/process.py uses: ``pid``,
``stdin``, ``stdout``, ``stderr``, ``returncode``, ``wait()``, and ``send_signal``, which
knows the shape of a sandboxed bot: our child is bwrap, whose child is the bot, PID 1 of
its namespace. Killing bwrap first would orphan the bot (it dies by its parent-death
signal, but as a zombie of whoever adopts it), so signals go to the bot: SIGKILL of a
namespace's PID 1 kills everything in the namespace, and bwrap reaps the bot and exits
on its own. (As PID 1 the bot gets SIGTERM only if it handles it; SIGKILL always.)
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import trio


class BotProcess:
    """A started child process with trio streams for its stdin, stdout and stderr."""

    def __init__(self, popen: subprocess.Popen[bytes], stdin: trio.lowlevel.FdStream,
                 stdout: trio.lowlevel.FdStream, stderr: trio.lowlevel.FdStream,
                 sandboxed: bool = False) -> None:
        self._popen = popen
        self.sandboxed = sandboxed
        self.pid = popen.pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(popen.pid)
        except (AttributeError, OSError):
            self._pidfd = None  # not Linux >= 5.3: poll instead (see wait)

    @property
    def returncode(self) -> int | None:
        code = self._popen.poll()
        if self.sandboxed and code is not None and code > 128:
            return 128 - code  # bwrap reports "killed by signal N" as 128+N
        return code

    def send_signal(self, sig: int) -> None:
        """Signal the bot and everything it started (see the module docstring). Never
        raises for processes that are already gone."""
        targets: list[int] = []
        if self.sandboxed and self._popen.poll() is None:
            targets = _children(self.pid)
        for pid in targets:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        if not targets:  # unsandboxed, or the sandbox is not set up (yet): the group
            try:
                os.killpg(self.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    async def wait(self) -> int:
        """Wait until the process exited and reap it; its return code (negative: the
        signal that killed it). Any number of tasks may wait."""
        while self._popen.poll() is None:
            if self._pidfd is None:
                await trio.sleep(0.01)
                continue
            # trio lets one task wait per fd: each waiter gets its own duplicate.
            fd = os.dup(self._pidfd)
            try:
                await trio.lowlevel.wait_readable(fd)
            finally:
                trio.lowlevel.notify_closing(fd)
                os.close(fd)
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        code = self.returncode
        assert code is not None
        return code


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            text = f.read()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def spawn(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None,
          preexec_fn: Callable[[], Any] | None = None, sandboxed: bool = False,
          relay_at: int | None = None, pass_fds: Sequence[int] = ()) -> BotProcess:
    """Start ``argv`` in a new session (its own process group) with piped stdin, stdout
    and stderr. ``sandboxed``: ``argv`` is a bwrap command (see ``send_signal``);
    ``relay_at``: the pipes of stdin and stdout are passed as other fds and made the
    bot's by ``sandbox.stdio_relay``, put at that index of ``argv`` (the program's own
    fds 0 and 1 are /dev/null). ``pass_fds``: more fds the child inherits at the same
    numbers (bwrap's seccomp filter); they are the child's: closed here once it started
    or failed to. Call it from the trio thread (see the module docstring).
    Raises OSError if the program cannot be started."""
    pipes = [os.pipe() for _ in range(3)]  # non-inheritable until dup2'ed in the child
    child = (pipes[0][0], pipes[1][1], pipes[2][1])
    ours = (pipes[0][1], pipes[1][0], pipes[2][0])
    stdin: int = child[0]
    stdout: int = child[1]
    passed: tuple[int, ...] = ()
    if relay_at is not None:
        from .sandbox import stdio_relay
        argv = [*argv[:relay_at], *stdio_relay(child[0], child[1]), *argv[relay_at:]]
        stdin = stdout = subprocess.DEVNULL
        passed = child[:2]
    try:
        popen = subprocess.Popen(list(argv), stdin=stdin, stdout=stdout, stderr=child[2],
                                 cwd=cwd, env=None if env is None else dict(env),
                                 start_new_session=True, preexec_fn=preexec_fn,
                                 pass_fds=(*passed, *pass_fds))
    except BaseException:
        for fd in (*child, *ours, *pass_fds):
            os.close(fd)
        raise
    for fd in (*child, *pass_fds):
        os.close(fd)
    return BotProcess(popen, trio.lowlevel.FdStream(ours[0]), trio.lowlevel.FdStream(ours[1]),
                      trio.lowlevel.FdStream(ours[2]), sandboxed)
