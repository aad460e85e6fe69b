"""Bots as subprocesses: spawn, handshake, talk frames over stdin/stdout, shut down.

How it works. Each bot process is owned by one ``ProcessPlayer`` for a whole match.
Two long-lived tasks per bot run in the match's nursery: a reader that feeds stdout
bytes into one buffered ``FrameDecoder`` and puts whole messages on a channel, and a
stderr drain that keeps the bot from ever blocking on a full stderr pipe (the last
lines are kept as evidence). Outgoing frames are buffered and written in one go
before each request, so a decision costs one write and one read. Every receive has
a deadline. Shutdown is ``bye``, close stdin, a grace period, then SIGTERM and
SIGKILL to the bot's whole process group (the bot runs in its own session).

Failures never escape as exceptions of the referee: every bot fault becomes a
``BotFailure`` with a kind from the failure taxonomy and the evidence.
"""

from __future__ import annotations

import math
import os
import signal
import time
from typing import Any

import trio

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
from protocol.errors import RemoteProtocolError, UnsupportedVersionError

from . import __version__
from .players import BotFailure, BotSpec, BotStartError, Player

STDERR_TAIL = 4096
READ_CHUNK = 65536


class ProcessPlayer(Player):
    """A bot program run as a subprocess, one process for the whole match."""

    def __init__(self, name: str, spec: BotSpec, *, startup_time: float = 10.0,
                 grace: float = 1.0) -> None:
        super().__init__(name, spec, wants_events=True)
        self.startup_time = startup_time
        self.grace = grace
        self.process: trio.Process | None = None
        self._decoder = FrameDecoder()
        self._send_ch, self._recv_ch = trio.open_memory_channel[Any](64)
        self._out = bytearray()
        self._stderr_tail = bytearray()
        self._stderr_bytes = 0
        self._dead: BotFailure | None = None
        self._reader_failure: BotFailure | None = None

    # -- lifecycle

    async def start(self, nursery: trio.Nursery) -> None:
        try:
            self.process = await trio.lowlevel.open_process(
                list(self.spec.argv), stdin=-1, stdout=-1, stderr=-1, start_new_session=True)
        except OSError as exc:
            raise BotStartError(f"bot {self.name}: cannot start {self.spec.argv[0]!r}: "
                                f"{exc.strerror or exc}") from None
        nursery.start_soon(self._read_stdout)
        nursery.start_soon(self._drain_stderr)
        self._out += encode(msg.hello_msg(f"durak-ref {__version__}"))
        await self._flush()
        answer = await self._receive(self.startup_time, "the handshake")
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

    async def close(self) -> None:
        p = self.process
        if p is None:
            return
        if p.returncode is None and self._dead is None:
            await self._try_send(msg.bye_msg())
        try:
            if p.stdin is not None:
                await p.stdin.aclose()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        with trio.move_on_after(self.grace):
            await p.wait()
        if p.returncode is None:
            self._signal_group(signal.SIGTERM)
            with trio.move_on_after(self.grace):
                await p.wait()
        # Whatever is left of the group (children the bot forked) gets killed too.
        self._signal_group(signal.SIGKILL)
        if p.returncode is None:
            await p.wait()

    def _signal_group(self, sig: int) -> None:
        assert self.process is not None
        try:
            os.killpg(self.process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    # -- talking

    async def send(self, message: dict[str, Any]) -> None:
        """Queue a message; it is written before the next request (or on flush)."""
        self._out += encode(message)
        if message["type"] in ("game_end", "error", "bye"):
            await self._flush()

    async def decide(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        self._out += encode(request)
        await self._flush()
        answer = await self._receive(timeout, f"request {request['id']}")
        try:
            parsed = msg.parse_bot_message(answer)
        except RemoteProtocolError as exc:
            raise self._fail("protocol", str(exc), answer) from None
        if not isinstance(parsed, msg.ActionMessage):
            raise self._fail("protocol", f"expected an action for request {request['id']}, got a hello", answer)
        if parsed.id != request["id"]:
            raise self._fail("protocol", f"request id {request['id']} expected, got {parsed.id}", answer)
        return parsed.action

    async def _flush(self) -> None:
        if not self._out:
            return
        data, self._out = bytes(self._out), bytearray()
        if self._dead is not None:
            raise self._dead
        assert self.process is not None and self.process.stdin is not None
        try:
            await self.process.stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            raise self._fail("crash", "the bot closed its stdin (the referee could not write)") from None

    async def _try_send(self, message: dict[str, Any]) -> None:
        try:
            await self.send(message)
            await self._flush()
        except BotFailure:
            pass

    async def _receive(self, timeout: float | None, what: str) -> Any:
        if self._dead is not None:
            raise self._dead
        start = time.perf_counter()
        with trio.move_on_after(math.inf if timeout is None else timeout):
            try:
                return await self._recv_ch.receive()
            except trio.EndOfChannel:
                assert self._reader_failure is not None
                self._dead = self._reader_failure
                raise self._dead from None
        raise self._fail("timeout", f"no answer to {what} within {timeout:g} s",
                         {"waited_s": round(time.perf_counter() - start, 3)})

    # -- background tasks

    async def _read_stdout(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stream = self.process.stdout
        failure = None
        try:
            while failure is None:
                try:
                    chunk = await stream.receive_some(READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    chunk = b""
                try:
                    self._decoder.feed(chunk)
                    for m in self._decoder.messages():
                        await self._send_ch.send(m)
                    if not chunk:
                        self._decoder.at_eof()
                        failure = await self._eof_failure()
                except RemoteProtocolError as exc:
                    failure = BotFailure("protocol", str(exc), {"bytes": exc.evidence})
        finally:
            # Closing the channel wakes a waiting receiver, which then reads the failure.
            self._reader_failure = failure or BotFailure("crash", "the bot's stdout reader stopped")
            self._send_ch.close()

    async def _eof_failure(self) -> BotFailure:
        assert self.process is not None
        with trio.move_on_after(self.grace):
            await self.process.wait()
        code = self.process.returncode
        what = "exited" if code is not None else "closed its stdout"
        return BotFailure("crash", f"the bot {what}" + (f" with code {code}" if code is not None else ""),
                          {"exit_code": code, "stderr_tail": self.stderr_tail()})

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        stream = self.process.stderr
        while True:
            try:
                chunk = await stream.receive_some(READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                return
            if not chunk:
                return
            self._stderr_bytes += len(chunk)
            self._stderr_tail += chunk
            if len(self._stderr_tail) > STDERR_TAIL:
                del self._stderr_tail[:-STDERR_TAIL]

    def stderr_tail(self, lines: int = 10) -> list[str]:
        text = self._stderr_tail.decode("utf-8", "replace")
        return text.splitlines()[-lines:]

    def _fail(self, kind: str, reason: str, evidence: Any = None) -> BotFailure:
        if isinstance(evidence, dict) and "stderr_tail" not in evidence:
            evidence = dict(evidence, stderr_tail=self.stderr_tail())
        elif not isinstance(evidence, dict):
            evidence = {"received": evidence, "stderr_tail": self.stderr_tail()}
        failure = BotFailure(kind, reason, evidence)
        self._dead = failure
        return failure
