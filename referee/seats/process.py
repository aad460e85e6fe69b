"""Bots as subprocesses: spawn, handshake, talk frames over stdin/stdout, shut down.

How it works. A ``ProcessPlayer`` owns one bot process at a time for a whole match
and talks to it through ``wire.StreamPlayer`` (frames over stdin/stdout, read only
while an answer is due, under its deadline). Two long-lived tasks per process run in
the match's nursery: a stderr drain that copies the bot's stderr to a capped file and
keeps the last lines as evidence, so the bot never blocks on a full stderr pipe; and
an exit watcher that kills what is left of the bot's process group a grace period
after the bot itself exited, so a forked child holding stdout cannot hang the match.

Process hygiene. The bot runs in a session of its own (its own process group).
Closing sends ``bye`` and closes stdin, waits a grace period, then SIGTERM and, after
another grace period, SIGKILL for the whole group, so children it forked die too;
the process is always reaped. Cleanup is shielded from cancellation, so Ctrl-C
still closes every bot. A bot that failed (crash, timeout, protocol error) is
restarted before its next game, up to ``max_restarts`` times per match.

Failures never escape as exceptions of the referee: every bot fault is a
``BotFailure`` with a kind from the failure taxonomy and the evidence.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import trio

from protocol import messages as msg

from .cgroups import Group, Turns, confinement
from .players import BotFailure, BotSpec, BotStartError
from .sandbox import SIGPENDING, Launch, Sandbox, limit_args
from .spawn import BotProcess, spawn
from .uids import UidLease
from .wire import StreamPlayer

STDERR_TAIL = 4096
READ_CHUNK = 65536
#: Bot processes this process has started, restarts included (``bench match`` reports them).
PROCESSES_STARTED = [0]


class _Connection:
    """One running bot process."""

    def __init__(self, process: BotProcess, launch: Launch, group: Group | None) -> None:
        self.process = process
        self.launch = launch  #: its cleanup wipes the scratch dir once the process is reaped
        self.group = group  #: its control group (None: no resource walls here)
        self.oom = False  #: the referee killed the group at its memory limit (v1)
        self.stderr_done = trio.Event()
        #: The last STDERR_TAIL bytes this process wrote: evidence of its own failure only
        #: (a restarted bot's tail must not repeat what the processes before it said).
        self.stderr_tail = bytearray()
        #: The deal ids this process has been prepared for: it must never play another
        #: seat rotation of one of them (it would know the hands: ``prepare_game``).
        self.deals: set[str] = set()


class ProcessPlayer(StreamPlayer):
    """A bot program run as a subprocess, one process at a time for the whole match.
    ``env``: variables the organiser set for this bot; it gets them on top of the
    allowlisted part of the referee's environment (see ``Sandbox.launch``)."""

    #: Whether killing the bot kills its whole control group and a stopped process's
    #: group is removed at once. check-bot sets it False to see, as on a host without
    #: cgroups, which processes would outlive the bot's process group, then calls
    #: ``sweep_groups``.
    sweep_group = True

    def __init__(self, name: str, spec: BotSpec, *, startup_time: float = 10.0,
                 grace: float = 1.0, stderr_path: Path | None = None,
                 stderr_cap: int = 1 << 20, max_memory_mb: int | None = None,
                 max_cpu_s: int | None = None, cwd: str | None = None,
                 env: dict[str, str] | None = None, sandbox: Sandbox | None = None) -> None:
        super().__init__(name, spec, wants_events=True)
        # Resolved once per run by the caller (which also warns); ``auto`` is resolved here.
        sandbox = sandbox or Sandbox()
        self.sandbox = sandbox.resolve() if sandbox.mode == "auto" else sandbox
        #: The run's resource walls (detected once per process; the line is said once,
        #: when a bot has started: a command that cannot start is one error line).
        self.confinement = confinement(self.sandbox.limits, announce=False)
        self.startup_time = startup_time
        self.grace = grace
        self.stderr_path = stderr_path
        self.stderr_cap = stderr_cap
        self.max_memory_mb = max_memory_mb
        self.max_cpu_s = max_cpu_s
        self.cwd, self.env = cwd, env
        self.conn: _Connection | None = None
        self.failure: BotFailure | None = None
        self.starts = 0
        self.restarts = 0  #: restarts after a failure (fresh restarts do not count)
        #: Whether any process of this bot completed its handshake. One that never did is
        #: a broken configuration, not a bot having a bad game: it is not restarted (with
        #: --recover its games are forfeits at once, instead of each restart waiting out
        #: the start-up limit again).
        self.ever_ready = False
        self._nursery: trio.Nursery | None = None
        self._stderr_file: BinaryIO | None = None
        self._stderr_written = 0
        self._stderr_dropped = 0
        #: Stopped processes' groups, not swept yet, with the uid lease each keeps until then.
        self._kept_groups: list[tuple[Group, UidLease | None]] = []

    @property
    def pid(self) -> int | None:
        return self.conn.process.pid if self.conn else None

    @property
    def group(self) -> Group | None:
        """The control group of the running bot process (None: none)."""
        return self.conn.group if self.conn else None

    def cpu_time_why_not(self) -> str | None:
        """None when its control group counts its CPU time (cgroups.Group.cpu_meter): the
        cpu clock refuses a bot program it cannot measure rather than time it on the wall
        clock unannounced."""
        why = self.confinement.cpu_time_why_not()
        return None if why is None else f"{why} (so its CPU time cannot be read)"

    def take_turns(self, turns: Turns) -> None:
        """Be frozen while another seat of ``turns`` is waited for (not with --ponder, nor
        where no cgroup can be had)."""
        if self.confinement.backend is not None and not self.confinement.limits.ponder:
            super().take_turns(turns)

    def wake_up(self) -> None:
        """Thaw the bot (its request is about to be written)."""
        self._lane.wake = None
        group = self.group
        if group is not None:
            group.thaw()

    def _release(self, conn: _Connection) -> None:
        """Thaw the bot for good: it is to exit or be killed (a frozen process can do
        neither)."""
        if conn is self.conn:
            # Only the running process's: a replaced process's exit watcher comes here a
            # grace period after it ended, and must not forget that its successor was
            # frozen (its next request would find it still frozen and time out).
            self._lane.wake = None
        if conn.group is not None:
            conn.group.thaw()

    def _kill_all(self, conn: _Connection) -> None:
        """SIGKILL the bot and everything it started (its whole group, where it has one)."""
        self._release(conn)
        conn.process.send_signal(signal.SIGKILL)
        if conn.group is not None and self.sweep_group:
            conn.group.kill_all()

    async def sweep_groups(self) -> None:
        """Kill what is left in the groups of stopped processes and remove them (see
        ``sweep_group``)."""
        while self._kept_groups:
            group, lease = self._kept_groups.pop()
            if await _remove_group(group, self.grace) and lease is not None:
                lease.release()

    # -- lifecycle

    async def start(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        if self.stderr_path is not None and self._stderr_file is None:
            from ..records.private import private_mkdir, private_open
            private_mkdir(self.stderr_path.parent)
            self._stderr_file = private_open(self.stderr_path, "wb")  # closed in close()
        await self._spawn()

    async def _spawn(self) -> None:
        assert self._nursery is not None
        self.starts += 1
        PROCESSES_STARTED[0] += 1
        if self._stderr_file is not None and self.starts > 1:
            self._write_stderr(f"\n[durak-ref: bot restarted (start {self.starts})]\n".encode())
        # prlimit sets the limits before bwrap and the bot exist; a pre-exec function
        # (which forces fork instead of vfork) only where prlimit is missing.
        has_prlimit = shutil.which("prlimit") is not None
        limits = limit_args(self._rlimit_memory_mb(), self.max_cpu_s) if has_prlimit else []
        launch: Launch | None = None
        # Its own group, joined by the command's first process (as the referee's user,
        # before prlimit and bwrap), so everything it forks is inside.
        group = self.confinement.open_group()
        try:
            # Building the sandbox's view reads many files (milliseconds): in a worker
            # thread, off the event loop that other tables and connections share.
            launch = await trio.to_thread.run_sync(partial(
                self.sandbox.launch, self.spec.argv, self.cwd, self.env, limits,
                join=group.join_argv() if group else ()))
            # In the trio thread, not a worker thread: see referee/seats/spawn.py (die-with-parent).
            process = spawn(launch.argv, cwd=launch.cwd, env=launch.env,
                            preexec_fn=None if has_prlimit else self._limits(),
                            sandboxed=launch.mode == "bwrap", relay_at=launch.relay_at,
                            pass_fds=launch.pass_fds)
        except OSError as exc:
            if launch is not None:
                launch.cleanup()
                if launch.lease is not None:
                    launch.lease.release()
            if group is not None:
                group.remove()
            raise BotStartError(f"bot {self.name}: cannot start {self.spec.argv[0]!r}: "
                                f"{exc.strerror or exc}") from None
        if self.sandbox.warn:
            self.confinement.announce()
        await trio.lowlevel.checkpoint()
        conn = self.conn = _Connection(process, launch, group)
        self._lane.wake = None
        # Seated at no table until its next game's ``take_turns``: its handshake must not
        # freeze the seats of the game before.
        self._turns = None
        assert process.stdin is not None and process.stdout is not None
        self._attach(process.stdin, process.stdout)
        self._meter(group)
        self._nursery.start_soon(self._drain_stderr, conn)
        self._nursery.start_soon(self._watch_exit, conn)
        if group is not None and group.oom_fd is not None:
            self._nursery.start_soon(self._watch_oom, conn)
        await self._handshake(self.startup_time)
        self.ever_ready = True

    def _meter(self, group: Group | None) -> None:
        """Give the lane the group's CPU counter (read only under the cpu clock) and the
        most CPUs the group can use at once: its quota, else the machine's."""
        lane = self._lane
        lane.meter = None if group is None else group.cpu_meter()
        cpus = float(os.cpu_count() or 1)
        limit = self.confinement.limits.cpus
        backend = self.confinement.backend
        if limit is not None and backend is not None and backend.enforced["cpu"]:
            cpus = min(cpus, limit)
        lane.cpu_rate = cpus

    def _rlimit_memory_mb(self) -> int | None:
        """The address-space rlimit: only where no memory cgroup holds the bot (an
        rlimit counts reserved address space, not memory, and misses tmpfs and shm)."""
        return None if self.confinement.memory_enforced else self.max_memory_mb

    def _limits(self) -> Any:
        mem, cpu = self._rlimit_memory_mb(), self.max_cpu_s

        def apply() -> None:  # runs in the child between fork and exec
            if mem is not None:
                resource.setrlimit(resource.RLIMIT_AS, (mem << 20, mem << 20))
            if cpu is not None:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_SIGPENDING, (SIGPENDING, SIGPENDING))
        return apply

    async def prepare_game(self, max_restarts: int, fresh: bool = False,
                           deal: str | None = None) -> None:
        """Before a game: restart a failed bot if it has restarts left (if not, it stays
        failed and forfeits the game at its first message). ``fresh``: restart a healthy
        bot too (after a bye), so it carries nothing over from earlier games; that does
        not count as a restart. ``deal``: the coming game's deal id; a process that was
        prepared for it before (another seat rotation of a duplicate deal, whose hands it
        saw) is replaced by a fresh one the same way, so no process plays two rotations
        of one deal (None: no such check, the process may remember)."""
        conn = self.conn
        fresh = fresh or (deal is not None and conn is not None and deal in conn.deals)
        if self.failure is not None or fresh:
            await self._restart(max_restarts)
        if deal is not None and self.conn is not None:
            self.conn.deals.add(deal)

    async def _restart(self, max_restarts: int) -> None:
        """Replace the process with a new one (a new scratch dir, a new group); after a
        failure only while restarts are left (those count)."""
        if self.failure is not None:
            if self.restarts >= max_restarts or not self.ever_ready:
                return
            self.restarts += 1
        await self._stop_process(say_bye=self.failure is None)
        try:
            await self._spawn()
        except BotFailure:
            pass  # stays failed; the game records the forfeit

    async def close(self) -> None:
        # Shielded: this runs on Ctrl-C and on errors too, and must finish the job.
        with trio.CancelScope(shield=True):
            await self._stop_process(say_bye=True)
            if self._stderr_file is not None:
                if self._stderr_dropped:
                    self._stderr_file.write(
                        f"\n[durak-ref: stderr capped at {self.stderr_cap} bytes; "
                        f"{self._stderr_dropped} more bytes were discarded]\n".encode())
                self._stderr_file.close()
                self._stderr_file = None

    async def _stop_process(self, say_bye: bool = False) -> None:
        conn = self.conn
        if conn is None:
            return
        p = conn.process
        with trio.CancelScope(shield=True):
            self._release(conn)
            if say_bye and p.returncode is None and self.failure is None:
                await self._try_send(msg.bye_msg())
            await self._end_stdin_and_wait(conn)
            if p.returncode is None:
                p.send_signal(signal.SIGTERM)
                with trio.move_on_after(self.grace):
                    await p.wait()
            # Whatever is left of the group (children the bot forked) gets killed too.
            p.send_signal(signal.SIGKILL)
            if p.returncode is None and p.sandboxed:
                # bwrap exits once its namespace is gone; kill it only if it does not.
                with trio.move_on_after(self.grace):
                    await p.wait()
                if p.returncode is None:
                    _signal_group(p.pid, signal.SIGKILL)
            if p.returncode is None:
                await p.wait()
            for stream in (p.stdout, p.stderr):
                if stream is not None:
                    await stream.aclose()
            await trio.to_thread.run_sync(conn.launch.cleanup)  # (removing a tree: milliseconds)
            lease = conn.launch.lease
            if conn.group is not None:
                if not self.sweep_group:
                    self._kept_groups.append((conn.group, lease))
                    lease = None  # kept with the group until it is gone (sweep_groups)
                elif not await _remove_group(conn.group, self.grace):
                    lease = None  # a member still exiting: the uid stays leased (until exit)
            if lease is not None:
                lease.release()

    # -- what the stream means (see wire.StreamPlayer)

    async def _stream_failure(self) -> BotFailure:
        assert self.conn is not None
        return await self._eof_failure(self.conn)

    def _write_failure(self) -> BotFailure:
        assert self.conn is not None
        return BotFailure("crash", "the bot closed its stdin (the referee could not write)",
                          {"exit_code": self.conn.process.returncode})

    def _evidence(self) -> dict[str, Any]:
        return {"stderr_tail": self.stderr_tail()}

    # -- background tasks

    async def _eof_failure(self, conn: _Connection) -> BotFailure:
        with trio.move_on_after(self.grace):
            await conn.process.wait()
            # The last words of a dying bot are evidence: let the drain read them first.
            await conn.stderr_done.wait()
        code = conn.process.returncode
        if code is None:
            return BotFailure("crash", "the bot closed its stdout (still running)",
                              {"exit_code": None, "stderr_tail": self.stderr_tail()})
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        evidence: dict[str, Any] = {"exit_code": code, "stderr_tail": self.stderr_tail()}
        kills = conn.group.oom_kills() if conn.group is not None else 0
        if conn.oom or kills:
            limit = self.confinement.limits.memory_mb
            how = (f"was killed at its memory limit ({limit} MB, tmpfs and shm included): "
                   f"the bot {how}")
            evidence.update(memory_limit_mb=limit, oom_kills=kills)
        return BotFailure("crash", f"the bot {how}", evidence)

    async def _watch_oom(self, conn: _Connection) -> None:
        """v1 (no memory.oom.group): when the kernel reports an OOM in the bot's group,
        kill the whole group, so a bot whose child hit the limit dies as the bot that
        hit it (a crash at the memory limit), as with v2."""
        group = conn.group
        assert group is not None and group.oom_fd is not None
        try:
            await trio.lowlevel.wait_readable(group.oom_fd)
        except (trio.ClosedResourceError, OSError):
            return
        if conn.process.returncode is None or group.pids():
            conn.oom = True
            self._kill_all(conn)

    async def _drain_stderr(self, conn: _Connection) -> None:
        stream = conn.process.stderr
        assert stream is not None
        try:
            while True:
                try:
                    chunk = await stream.receive_some(READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return
                if not chunk:
                    return
                conn.stderr_tail += chunk
                if len(conn.stderr_tail) > STDERR_TAIL:
                    del conn.stderr_tail[:-STDERR_TAIL]
                self._write_stderr(chunk)
        finally:
            conn.stderr_done.set()

    async def _watch_exit(self, conn: _Connection) -> None:
        """A bot that exits while a child it forked still holds its stdout would leave
        a read waiting forever (with no time limit, the referee would hang): a grace
        period after the bot itself has exited, kill what is left of its process group,
        which closes the pipes. The pending read then reports the exit as a crash.
        A pipe still open a grace period after that is held by a process that left the
        group (unsandboxed, a ``setsid`` child; a sandbox kills those with the bot): close
        our ends of stdout and stderr, so the read and the stderr drain end all the same
        instead of the read waiting for its time limit and reporting a timeout."""
        await conn.process.wait()
        await trio.sleep(self.grace)
        self._kill_all(conn)
        with trio.move_on_after(self.grace):
            await conn.stderr_done.wait()  # the killed group's last words, read to EOF
        for stream in (conn.process.stdout, conn.process.stderr):
            if stream is not None:
                await stream.aclose()

    def _write_stderr(self, chunk: bytes | bytearray) -> None:
        f = self._stderr_file
        if f is None:
            return
        room = self.stderr_cap - self._stderr_written
        if room > 0:
            f.write(chunk[:room])
            f.flush()
            self._stderr_written += min(room, len(chunk))
        self._stderr_dropped += max(0, len(chunk) - max(room, 0))

    async def _end_stdin_and_wait(self, conn: _Connection) -> None:
        """Close the bot's stdin (the end of the referee's frames) and give it ``grace``
        seconds to exit by itself (SPEC sections 11 and 12)."""
        p = conn.process
        try:
            assert p.stdin is not None
            await p.stdin.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        with trio.move_on_after(self.grace):
            await p.wait()

    async def last_words(self, lines: int = 10) -> list[str]:
        """The tail of the stderr of a bot whose failure is already decided, read to the
        end. The bot is ended as SPEC section 11 ends a failed bot: its stdin closed and
        ``grace`` seconds to exit by itself, so a bot that reads the referee's fatal
        ``error`` (a version mismatch, say) and says why on stderr before it exits is
        heard (killed at once, it was cut off: "(nothing on stderr)" beside a stderr log
        that had its lines). Then what is left of it is killed, and the drain reads its
        stderr to EOF (at most ``grace`` seconds more, for a child that still holds the
        pipe): without that wait the tail would depend on whether the scheduler ran the
        drain before the read that failed."""
        conn = self.conn
        if conn is not None:
            with trio.CancelScope(shield=True):
                self._release(conn)  # thawed: a frozen bot can neither exit nor be killed
                await self._end_stdin_and_wait(conn)
                self._kill_all(conn)
                with trio.move_on_after(self.grace):
                    await conn.stderr_done.wait()
        return self.stderr_tail(lines)

    def stderr_tail(self, lines: int = 10) -> list[str]:
        if self.conn is None:
            return []
        text = self.conn.stderr_tail.decode("utf-8", "replace")
        return text.splitlines()[-lines:]


async def _remove_group(group: Group, grace: float) -> bool:
    """Kill what is left in a reaped bot's group and remove it: a member that is still
    exiting keeps it for a moment (the subtree's removal at exit catches a group that
    outlives ``grace``). True when it is gone."""
    if group.oom_fd is not None:
        trio.lowlevel.notify_closing(group.oom_fd)
    group.kill_all()
    with trio.move_on_after(grace):
        while not group.remove():
            await trio.sleep(0.005)
        return True
    return False


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
