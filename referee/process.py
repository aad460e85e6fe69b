"""Bots as subprocesses: spawn, handshake, talk frames over stdin/stdout, shut down.

How it works. A ``ProcessPlayer`` owns one bot process at a time for a whole match
(a ``_Connection``). Two long-lived tasks per process run in the match's nursery: a
reader that feeds stdout bytes into one buffered ``FrameDecoder`` and hands whole
messages over a small channel, and a stderr drain that copies the bot's stderr to a
capped file and keeps the last lines as evidence, so the bot never blocks on a full
stderr pipe. Outgoing frames are buffered and written in one go before each request,
so a decision costs one write and one read. Every receive has a deadline.

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

import json
import os
import resource
import signal
from pathlib import Path
from typing import Any, BinaryIO

import trio

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
from protocol.errors import RemoteProtocolError, UnsupportedVersionError

from . import __version__
from .players import BotFailure, BotSpec, BotStartError, Player

STDERR_TAIL = 4096
READ_CHUNK = 65536
_NOTHING = object()
#: Messages a bot may have in flight unread by the referee; bounds the referee's memory.
INBOX = 4
#: "stale" errors are queued for the bot only while its outgoing buffer is below this.
STALE_NOTES_MAX = 65536


class _Connection:
    """One running bot process and its pipes' state."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.decoder = FrameDecoder()
        self.send_ch, self.recv_ch = trio.open_memory_channel[dict](INBOX)
        self.reader_failure: BotFailure | None = None
        self.reader_done = trio.Event()
        self.stderr_done = trio.Event()


class ProcessPlayer(Player):
    """A bot program run as a subprocess, one process at a time for the whole match."""

    def __init__(self, name: str, spec: BotSpec, *, startup_time: float = 10.0,
                 grace: float = 1.0, stderr_path: Path | None = None,
                 stderr_cap: int = 1 << 20, max_memory_mb: int | None = None,
                 max_cpu_s: int | None = None, cwd: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        super().__init__(name, spec, wants_events=True)
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
        self._nursery: trio.Nursery | None = None
        self._out = bytearray()
        self._stderr_tail = bytearray()
        self._stderr_file: BinaryIO | None = None
        self._stderr_written = 0
        self._stderr_dropped = 0

    @property
    def pid(self) -> int | None:
        return self.conn.process.pid if self.conn else None

    # -- lifecycle

    async def start(self, nursery: trio.Nursery) -> None:
        self._nursery = nursery
        if self.stderr_path is not None and self._stderr_file is None:
            self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
            self._stderr_file = open(self.stderr_path, "wb")  # noqa: SIM115 (closed in close())
        await self._spawn()

    async def _spawn(self) -> None:
        assert self._nursery is not None
        self.failure = None
        self._out = bytearray()
        self.starts += 1
        if self._stderr_file is not None and self.starts > 1:
            self._write_stderr(f"\n[durak-ref: bot restarted (start {self.starts})]\n".encode())
        try:
            process = await trio.lowlevel.open_process(
                list(self.spec.argv), stdin=-1, stdout=-1, stderr=-1, start_new_session=True,
                cwd=self.cwd, env=self.env, preexec_fn=self._limits())
        except OSError as exc:
            raise BotStartError(f"bot {self.name}: cannot start {self.spec.argv[0]!r}: "
                                f"{exc.strerror or exc}") from None
        conn = self.conn = _Connection(process)
        self._nursery.start_soon(self._read_stdout, conn)
        self._nursery.start_soon(self._drain_stderr, conn)
        self._nursery.start_soon(self._watch_exit, conn)
        self._out += encode(msg.hello_msg(f"durak-ref {__version__}"))
        await self._flush()
        deadline = trio.current_time() + self.startup_time
        answer = await self._receive(deadline, "the handshake", self.startup_time)
        try:
            hello = msg.parse_bot_message(answer)
            if not isinstance(hello, msg.BotHello):
                raise RemoteProtocolError("expected the bot's hello first, got an action", field="type")
            msg.check_version(hello)
        except UnsupportedVersionError as exc:
            await self._try_send(msg.error_msg("version", str(exc), True))
            raise self._fail("protocol", str(exc), answer) from None
        except RemoteProtocolError as exc:
            raise self._fail("protocol", f"bad hello: {exc}", answer) from None
        self.info = {"name": hello.name, "version": hello.version, "author": hello.author}

    def _limits(self) -> Any:
        mem, cpu = self.max_memory_mb, self.max_cpu_s
        if mem is None and cpu is None:
            return None

        def apply() -> None:  # runs in the child between fork and exec
            if mem is not None:
                resource.setrlimit(resource.RLIMIT_AS, (mem << 20, mem << 20))
            if cpu is not None:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        return apply

    async def prepare_game(self, max_restarts: int) -> None:
        """Before a game: restart a failed bot if restarts are left. If none are left,
        the player stays failed and forfeits the game at its first message."""
        if self.failure is None or self.starts > max_restarts:
            return
        await self._stop_process()
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
            if say_bye and p.returncode is None and self.failure is None:
                await self._try_send(msg.bye_msg())
            try:
                assert p.stdin is not None
                await p.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
            with trio.move_on_after(self.grace):
                await p.wait()
            if p.returncode is None:
                _signal_group(p.pid, signal.SIGTERM)
                with trio.move_on_after(self.grace):
                    await p.wait()
            # Whatever is left of the group (children the bot forked) gets killed too.
            _signal_group(p.pid, signal.SIGKILL)
            if p.returncode is None:
                await p.wait()
            for stream in (p.stdout, p.stderr):
                if stream is not None:
                    await stream.aclose()

    # -- talking

    async def send(self, message: dict[str, Any]) -> None:
        """Queue a message; it is written before the next request (game_end, error and
        bye are written at once)."""
        if self.failure is not None:
            raise self.failure
        self._out += encode(message)
        if message["type"] in ("game_end", "error", "bye"):
            await self._flush()

    async def decide(self, request: dict[str, Any], deadline: float | None = None) -> dict[str, Any]:
        if self.failure is not None:
            raise self.failure
        self._out += encode(request)
        start = trio.current_time()
        await self._flush()
        budget = None if deadline is None else deadline - start
        stale = 0
        while True:
            try:
                answer = await self._receive(deadline, f"request {request['id']}", budget)
            except BotFailure as exc:
                if stale:
                    exc.evidence["stale_answers"] = stale
                raise
            try:
                parsed = msg.parse_bot_message(answer)
            except RemoteProtocolError as exc:
                raise self._fail("protocol", str(exc), answer) from None
            if not isinstance(parsed, msg.ActionMessage):
                raise self._fail("protocol", f"expected an action for request {request['id']}, got a hello", answer)
            if parsed.id == request["id"]:
                return parsed.action
            # SPEC section 11: an action for another request is ignored (error "stale",
            # not fatal) and the open request still waits for its answer. The error is
            # queued, not written now: the bot may not be reading, and we must not block.
            stale += 1
            if len(self._out) < STALE_NOTES_MAX:
                self._out += encode(msg.error_msg(
                    "stale", f"action for request {parsed.id} ignored: request {request['id']} "
                    f"is open", False))

    async def _flush(self) -> None:
        if not self._out:
            return
        data, self._out = bytes(self._out), bytearray()
        conn = self.conn
        assert conn is not None and conn.process.stdin is not None
        try:
            await conn.process.stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            raise self._fail("crash", "the bot closed its stdin (the referee could not write)",
                             exit_code=conn.process.returncode) from None

    async def _try_send(self, message: dict[str, Any]) -> None:
        self._out += encode(message)
        try:
            with trio.move_on_after(self.grace):
                await self._flush()
        except BotFailure:
            pass

    async def _receive(self, deadline: float | None, what: str, budget: float | None) -> Any:
        conn = self.conn
        assert conn is not None
        start = trio.current_time()
        with trio.move_on_at(float("inf") if deadline is None else deadline):
            try:
                return await conn.recv_ch.receive()
            except trio.EndOfChannel:
                assert conn.reader_failure is not None
                failure = conn.reader_failure
                failure.evidence.setdefault("stderr_tail", self.stderr_tail())
                self.failure = failure
                raise failure from None
        waited = trio.current_time() - start
        raise self._fail("timeout", f"no answer to {what} within {budget:.3f} s",
                         waited_s=round(waited, 3), budget_s=round(budget or 0.0, 3))

    # -- background tasks

    async def _read_stdout(self, conn: _Connection) -> None:
        stream = conn.process.stdout
        assert stream is not None
        failure = None
        try:
            while failure is None:
                try:
                    chunk = await stream.receive_some(READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    chunk = b""
                try:
                    conn.decoder.feed(chunk)
                    for m in conn.decoder.messages():
                        await conn.send_ch.send(m)
                    if not chunk:
                        conn.decoder.at_eof()
                        failure = await self._eof_failure(conn)
                except RemoteProtocolError as exc:
                    failure = BotFailure("protocol", str(exc), {"bytes": exc.evidence})
        finally:
            # Closing the channel wakes a waiting receiver, which then reads the failure.
            conn.reader_failure = failure or BotFailure("crash", "the bot's stdout was closed")
            conn.send_ch.close()
            conn.reader_done.set()

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
        return BotFailure("crash", f"the bot {how}",
                          {"exit_code": code, "stderr_tail": self.stderr_tail()})

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
                self._stderr_tail += chunk
                if len(self._stderr_tail) > STDERR_TAIL:
                    del self._stderr_tail[:-STDERR_TAIL]
                self._write_stderr(chunk)
        finally:
            conn.stderr_done.set()

    async def _watch_exit(self, conn: _Connection) -> None:
        """A bot that exits while a child it forked still holds its stdout would leave
        the reader waiting forever (with no time limit, the referee would hang): once
        the bot has exited, give the reader a grace period to see the end of its
        stdout, then kill what is left of the bot's process group to close the pipes.
        The reader then reports the exit as a crash."""
        await conn.process.wait()
        with trio.move_on_after(self.grace):
            await conn.reader_done.wait()
            return
        _signal_group(conn.process.pid, signal.SIGKILL)

    def _write_stderr(self, chunk: bytes) -> None:
        f = self._stderr_file
        if f is None:
            return
        room = self.stderr_cap - self._stderr_written
        if room > 0:
            f.write(chunk[:room])
            f.flush()
            self._stderr_written += min(room, len(chunk))
        self._stderr_dropped += max(0, len(chunk) - max(room, 0))

    def stderr_tail(self, lines: int = 10) -> list[str]:
        text = self._stderr_tail.decode("utf-8", "replace")
        return text.splitlines()[-lines:]

    def _fail(self, kind: str, reason: str, received: Any = _NOTHING, **evidence: Any) -> BotFailure:
        """Record the bot's failure (it is restarted before its next game) and return it."""
        if received is not _NOTHING:
            evidence["received"] = brief(received)
        evidence.setdefault("stderr_tail", self.stderr_tail())
        failure = BotFailure(kind, reason, evidence)
        self.failure = failure
        return failure


def brief(value: Any, limit: int = 600) -> Any:
    """``value`` for a log's evidence: itself if its JSON form is short, else a cut repr."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
        return text[:limit] + ("..." if len(text) > limit else "")
    return value if len(text) <= limit else text[:limit] + "..."


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
