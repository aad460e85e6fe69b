"""The referee's side of one framed byte stream to a bot: pipes or a TCP socket alike.

``StreamPlayer`` holds one buffered ``FrameDecoder`` and one outgoing buffer per
connection. Messages that need no answer are queued and written in one go with the
next request, so a decision costs one write and, usually, one read. Reading happens
only while the referee waits for an answer, under the decision's deadline; a bot that
writes when nobody asked fills its pipe or socket buffer and then blocks, so the
referee's memory stays bounded without a background reader. Before each request the
referee looks, without waiting, at what the bot has sent since its last answer: any
frame there is a protocol error (an answer written before its request existed, a second
answer, a pong no ping asked for), so an answer can only be taken after its request is
sent. A pong is taken only as the answer to the ping open (``_ping_open``: one pong per
ping, with its id). So whatever a bot sends beyond what the protocol allows, the referee
decodes at most one frame of it before the bot is failed: a flood costs the bot its game,
not the referee its time.

A table asks for a decision through the ``Player`` interface: for a pipe whose bot
answers quickly, ``attempt`` does the whole decision synchronously (early-frame check,
write, a poll of at most QUICK_WAIT_MS, read: ``pipelane.decide_now``); whatever it cannot
finish it leaves open for the awaited ``finish``, which continues it under the same
deadline. There is no other way to ask: a tool or a test that holds a request map asks
with a ``pipelane.Request`` of its encoded frame, as the table does.

Subclasses say what the stream is (``_stream_failure`` names an end of stream: a
``crash`` for a process, a ``disconnect`` for a socket) and add the lifecycle.
"""

from __future__ import annotations

import json
import os
import select
from collections.abc import Mapping
from typing import Any, cast

import trio

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
from protocol.errors import RemoteProtocolError, UnsupportedVersionError

from .. import __version__
from ..console.trio_internals import fd_holder
from .pipelane import (  # noqa: F401
    QUICK_ANSWER_S,
    QUICK_WAIT_MS,
    READ_CHUNK,
    YIELD_EVERY,
    Lane,
    Request,
    clock_offset,
    cpu_close,
    cpu_open,
    flush_now,
    pending,
    queue_frame,
    yield_due,
)
from .pipelane import answer_head as _answer_head
from .players import Ask, BotFailure, Player

#: Seconds a write to a bot may block (the bot not reading its input) before the bot
#: is failed; a request's own deadline applies when it is sooner.
WRITE_TIMEOUT = 30.0
#: "stale" errors are queued for the bot only while its outgoing buffer is below this.
STALE_NOTES_MAX = 65536
#: At most this many chunks are read by the early-frame check before a request. Any
#: complete frame there fails the bot (but the pong of a ping whose wait was cut short),
#: so this bounds only the bytes of one frame trickled in pieces.
QUIET_CHECK_CHUNKS = 16
#: Actions for other requests (SPEC: ignored with a ``stale`` notice) that one open
#: request tolerates; the next is the bot's protocol failure. An honest bot sends at
#: most one or two (a late second answer); a stream of them would make the referee decode
#: frames for as long as the request's budget lasts.
STALE_MAX = 8
#: Seconds the fatal error that tells a bot why it lost may take to write.
TELL_TIMEOUT = 0.5
#: Failures a bot is told about with a fatal ``error`` (code = kind) before it is closed;
#: a crashed or disconnected bot is gone, so nothing is sent to it.
TOLD_FAILURES = ("protocol", "timeout")
_NOTHING = object()
_WRITE_ERRORS = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class StreamPlayer(Player):
    """A bot at the far end of a trio byte stream (send + receive halves).

    The connection's state lives in one ``pipelane.Lane`` (``_lane``), the same object
    for the player's whole life (a new stream resets its fields): the compiled lane and
    this code read and write the same fields there, so there is one copy of it."""

    _lane: Lane  #: the connection's state (see the class docstring)
    #: The seats frozen while this one is waited for (referee/seats/cgroups.py; None:
    #: not seated with any), and this seat's own bot group (None: none).
    _turns: Any = None
    group: Any = None

    def __new__(cls, *args: Any, **kwargs: Any) -> StreamPlayer:
        # The lane holds the connection's fields from the start (a subclass may set
        # ``failure`` before any stream is attached), for the player's whole life.
        self = super().__new__(cls)
        lane = self._lane = Lane(self)
        # The loop calls ``attempt`` for every decision and ``hear`` for every event: where
        # this class's own are in use they are bound to the lane's compiled twins, so such
        # a call runs no interpreted code (a subclass that overrides one keeps its own; the
        # loop calls the lane itself: ``pipelane.seat_of``).
        if cls.attempt is StreamPlayer.attempt:
            self.attempt = lane.attempt  # type: ignore[method-assign, assignment]
        if cls.hear is StreamPlayer.hear:
            self.hear = lane.hear  # type: ignore[method-assign]
        return self

    @property
    def failure(self) -> BotFailure | None:
        """The bot's failure, once it has one (a failed bot is restarted or dropped
        before its next game); None while it is well. Kept on the lane, which refuses
        to queue for a failed bot."""
        return self._lane.failure

    @failure.setter
    def failure(self, failure: BotFailure | None) -> None:
        self._lane.failure = failure

    @property
    def decoder(self) -> FrameDecoder:
        """The connection's frame decoder: what the bot sent that was not read yet."""
        return self._lane.decoder

    def _attach(self, send_stream: trio.abc.SendStream, receive_stream: trio.abc.ReceiveStream,
                max_frame: int = 1 << 20) -> None:
        """Start talking over a (new) stream: fresh decoder, empty buffers, no failure."""
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        # The lane object stays (a TCP seat may reconnect mid-game); every field of it is
        # set anew below, so nothing of the last connection carries over.
        lane = self._lane
        lane.timing = None
        lane.decoder = FrameDecoder(max_frame)
        lane.out = bytearray()
        lane.queued.clear()
        lane.failure = None
        lane.answered = None
        #: The ping written and not yet answered (its id): the one pong the bot may send.
        self._ping_open: int | None = None
        self._ping_answered: int | None = None  #: the id of the last ping answered
        self._frame_at = 0.0  #: trio time at which the latest chunk was read
        # One poller per connection (not one per request): the early-frame check polls
        # it before every request. None for streams without a file descriptor.
        lane.poll = _poller(receive_stream)
        # Pipes (trio FdStreams, non-blocking fds) are written and read with os.write and
        # os.read first; the referee waits in trio only when the pipe would block. The fd
        # is asked for each time: a closed FdStream answers -1, never a reused number.
        lane.out_fileno = send_stream.fileno if isinstance(send_stream, trio.lowlevel.FdStream) else None
        lane.in_fileno = (receive_stream.fileno if isinstance(receive_stream, trio.lowlevel.FdStream)
                          else None)
        lane.pipes = lane.out_fileno is not None and lane.in_fileno is not None and lane.poll is not None
        lane.unyielded = 0
        lane.quick = False
        # The run's clock, read directly: trio.current_time() costs three calls, and a
        # decision reads the time two or three times. A stream belongs to the trio run it
        # was attached in (its fds are registered there), so the clock cannot go stale.
        try:
            clock = trio.lowlevel.current_clock()
            lane.now = clock.current_time
        except RuntimeError:  # attached outside a trio run: ask the run in use each time
            clock, lane.now = None, trio.current_time
        lane.clock_offset = clock_offset(clock)
        lane.out_holder = fd_holder(send_stream)
        lane.in_holder = fd_holder(receive_stream)
        lane.expect = lane.answers = None
        lane.open = lane.stash = None
        self._known_hit = False
        self._known = self._known_answer

    def _queue(self, data: bytes | bytearray) -> None:
        """Queue ``data`` after everything queued (written before the next request)."""
        pending(self._lane).extend(data)

    def _take(self) -> bytes:
        """Everything queued, taken off the queue."""
        lane = self._lane
        data = bytes(pending(lane))
        lane.out = bytearray()
        return data

    # -- what subclasses provide

    async def _stream_failure(self) -> BotFailure:
        """The failure for the bot's end of stream (it exited / disconnected)."""
        raise NotImplementedError

    def _write_failure(self) -> BotFailure:
        """The failure for a write that the stream refused."""
        raise NotImplementedError

    def _evidence(self) -> dict[str, Any]:
        """Extra evidence for every failure (e.g. the last lines of stderr)."""
        return {}

    def take_turns(self, turns: Any) -> None:
        """Join ``turns`` (cgroups.Turns): while this seat is waited for, the other
        members' bots are frozen."""
        self._turns = turns
        turns.add(self)

    def frozen(self) -> None:
        """Its bot was frozen while another seat was waited for (cgroups.Turns): thaw it
        (``wake_up``) before its next request is written (``Lane.wake``)."""
        self._lane.wake = self.wake_up

    def wake_up(self) -> None:
        """Thaw this seat's bot before a request is written (see Lane.wake)."""
        self._lane.wake = None

    # -- handshake

    async def _handshake(self, timeout: float) -> msg.BotHello:
        """Send our hello, read theirs within ``timeout`` seconds, check the version."""
        self._queue(encode(msg.hello_msg(f"durak-ref {__version__}")))
        await self._flush()
        answer = await self._receive(trio.current_time() + timeout, "the handshake", timeout)
        try:
            hello = msg.parse_bot_message(answer)
            if not isinstance(hello, msg.BotHello):
                raise RemoteProtocolError("expected the bot's hello first", field="type")
            msg.check_version(hello)
        except UnsupportedVersionError as exc:
            await self._try_send(msg.error_msg("version", str(exc), True))
            raise self._fail("protocol", str(exc), answer) from None
        except RemoteProtocolError as exc:
            failure = self._fail("protocol", f"bad hello: {exc}", answer)
            await self.tell(msg.error_msg("protocol", failure.reason, True))
            raise failure from None
        self.info = {"name": hello.name, "version": hello.version, "author": hello.author}
        return hello

    # -- talking

    async def send(self, message: dict[str, Any]) -> None:
        """Queue a message; it is written before the next request (game_end, error and
        bye are written at once)."""
        if self.failure is not None:
            raise self.failure
        self._queue(encode(message))
        if message["type"] in ("game_end", "error", "bye"):
            await self._flush()

    def hear(self, frame: bytes) -> None:
        """Queue ``frame`` (written with the next request, or by ``flush``): nothing here
        waits. Raises the bot's failure, if it has one."""
        self._lane.hear(frame)

    async def flush(self) -> None:
        """Write everything queued now: one write when the pipe takes it all (nearly
        always), else awaited. A bot that stops reading is failed after WRITE_TIMEOUT
        seconds; raises the bot's failure (BotFailure)."""
        if self._lane.failure is not None:
            raise self.failure  # type: ignore[misc]
        await self._flush()

    def attempt(self, ask: Ask) -> Any:
        """For a pipe whose bot answered its last request quickly, the whole decision at
        once (``pipelane.decide_now``): write the request (after anything queued)
        without waiting, wait for the answer in the pipe's own poll for at most
        QUICK_WAIT_MS (only when the budget is well above that), and return the action
        ``ask.answers`` maps it to when it is the canonical answer to this request.

        None when it cannot finish the decision by itself: either nothing was written
        (the bot was not quick, has a failure, sent something unasked that must be
        judged, is due its periodic yield to trio, or the stream is not a pipe), or the
        request is open (written or partly queued, maybe with a message read for it),
        for ``finish`` to continue under the same deadline.

        ``ask`` is a ``pipelane.Request`` (the loop's ``framelane.Ask`` is one; a tool or
        a test makes one with its frame): the compiled lane reads its fields natively."""
        return self._lane.attempt(cast(Request, ask))

    async def finish(self, ask: Ask) -> Any:
        """Write the request (or continue the one ``attempt`` left open) and read the
        answer within ``ask.budget`` seconds of the write completing: the action that
        ``ask.answers`` maps a canonical answer to, else the action map the bot sent
        (decoded and checked). ``ask.timing`` runs from the request fully written to the
        answer's frame complete: encoding, writing, scheduling and decoding are the
        referee's. A bot that does not read its input is failed when the write has not
        finished within the budget (or WRITE_TIMEOUT)."""
        lane = self._lane
        lane.cpu_limit = ask.cpu_budget
        if lane.open is None and lane.stash is None and yield_due(lane):
            # The periodic yield to trio (stderr drains, exit watchers and Ctrl-C are
            # served), taken between decisions: then the decision is tried at once again,
            # far cheaper than going all the way through the awaited path.
            lane.unyielded = 0
            await trio.lowlevel.checkpoint()
            answer = self.attempt(ask)
            if answer is not None:
                return answer
        answer = await self._decide_told(ask.frame(), ask.id, ask.budget, ask.answers)
        ask.timing = lane.timing
        ask.cpu = lane.cpu_used
        return answer

    async def _decide_told(self, frame: bytes, request_id: int, budget: float | None,
                           answers: Mapping[bytes, Any]) -> Any:
        """``_decide``, continuing the request ``attempt`` left open if it is this one; a
        failure the bot is to be told of (TOLD_FAILURES) is told before it is raised."""
        lane = self._lane
        resumed = lane.open is not None and lane.open[0] == request_id
        if not resumed:
            lane.open = lane.stash = None
            if self.failure is not None:
                raise self.failure
        try:
            return await self._decide(frame, request_id, budget, answers)
        except BotFailure as exc:
            if exc.kind in TOLD_FAILURES:
                await self.tell(msg.error_msg(exc.kind, exc.reason, True))
            raise

    def _read_now(self, chunk: bytes, request_id: int, written: float, answered: float) -> Any:
        """The rest of ``attempt`` (pipelane.decide_now) when the chunk read for
        the open request is not exactly its canonical known answer: decode it; a known
        answer to the request is returned, anything else (part of a frame, another
        message, a failure) is left with the open request for ``finish`` to judge."""
        self._lane.open = (request_id, written)
        self._frame_at = answered
        try:
            try:
                self._lane.decoder.feed(chunk)
            except RemoteProtocolError as exc:
                raise self._fail("protocol", str(exc), bytes=exc.evidence) from None
            message = self._message_now()
        except BotFailure as failure:
            self._lane.stash = failure
            return None
        if message is None:  # part of a frame: finish reads the rest
            return None
        if not self._known_hit:
            self._lane.stash = message
            return None
        self._known_hit, self._lane.open = False, None
        self._answered(request_id, written)
        return message["action"]

    def _answered(self, request_id: int, written: float) -> None:
        """Close the open request ``request_id``, written at ``written`` (run-clock
        seconds), as answered by the frame completed at ``_frame_at``: its timing, and
        whether the bot stays quick (answered within QUICK_ANSWER_S)."""
        lane = self._lane
        lane.expect = None
        lane.answered = request_id
        lane.timing = (written, self._frame_at)
        lane.quick = self._frame_at - written <= QUICK_ANSWER_S
        cpu_close(lane)

    async def tell(self, message: dict[str, Any]) -> None:
        before = self.failure
        self._queue(encode(message))
        data = self._take()
        written = False
        with trio.move_on_after(TELL_TIMEOUT):
            try:
                await self._send_stream.send_all(data)
                written = True
            except _WRITE_ERRORS:
                pass
        if before is not None:
            self.failure = before  # the failure that caused the telling stays the cause
        elif not written:
            # Part of a frame may be in the stream: the bot cannot play another game on it.
            self._fail("timeout", f"the bot is not reading its input: writing {len(data)} "
                       f"bytes did not finish in time", write_bytes=len(data))

    async def _decide(self, frame: bytes, request_id: int, budget: float | None,
                      answers: Mapping[bytes, Any]) -> Any:
        """Write the request ``frame`` (or continue the one ``attempt`` left open)
        and wait for its answer: the value ``answers`` maps a canonical answer's action
        bytes to, else the action map the bot sent."""
        self._lane.timing = None
        self._lane.cpu_used = -1.0
        opened, self._lane.open = self._lane.open, None
        stash, self._lane.stash = self._lane.stash, None
        if opened is None:
            # A decision whose pipes never block never enters trio's scheduler; every
            # YIELD_EVERY such decisions in a row yield once, so that the stderr drains,
            # the exit watchers and a Ctrl-C are served however fast the bot answers.
            self._lane.unyielded += 1
            if self._lane.unyielded >= YIELD_EVERY:
                self._lane.unyielded = 0
                await trio.lowlevel.checkpoint()
            if self._lane.decoder.buffered or self._readable_now():  # else nothing came: nothing to check
                await self._check_quiet(f"before request {request_id} was sent")
            self._queue(frame)
            self._lane.expect, self._lane.answers = _answer_head(request_id), answers
            if self._lane.wake is not None:  # frozen while another seat was waited for
                self.wake_up()
            cpu_open(self._lane)
            written = await self._flush(None if budget is None else self._lane.now() + budget)
        elif opened[1] is None:  # part of the request is still queued
            written = await self._flush(None if budget is None else self._lane.now() + budget)
        else:
            written = opened[1]
        deadline = None if budget is None else written + budget
        stale = 0
        while True:
            try:
                if isinstance(stash, BotFailure):
                    raise stash
                if stash is not None:
                    answer, stash = stash, None
                else:
                    answer = await self._receive(deadline, f"request {request_id}", budget)
            except BotFailure as exc:
                self._lane.expect = None
                if stale:
                    exc.evidence["stale_answers"] = stale
                raise
            if self._known_hit:  # the canonical bytes of an answer to this request
                self._known_hit = False
                self._answered(request_id, written)
                return answer["action"]
            try:
                parsed = msg.parse_bot_message(answer)
            except RemoteProtocolError as exc:
                raise self._fail("protocol", str(exc), answer) from None
            if isinstance(parsed, msg.Pong):  # only the answer to a ping whose wait was cut short
                self._answer_pong(parsed, f"while request {request_id} was open", answer)
                continue
            if not isinstance(parsed, msg.ActionMessage):
                raise self._fail("protocol", f"expected an action for request {request_id}, "
                                 f"got a {answer.get('type')}", answer)
            if parsed.id == request_id:
                self._answered(request_id, written)
                return parsed.action
            # SPEC: an action for another request is ignored (error "stale", not fatal)
            # and the open request still waits for its answer. The error is queued, not
            # written now: the bot may not be reading, and we must not block.
            stale += 1
            if stale > STALE_MAX:
                self._lane.expect = None
                raise self._fail("protocol", f"sent {stale} actions for other requests while "
                                 f"request {request_id} was open (at most {STALE_MAX} are "
                                 f"ignored as stale)", answer, stale_answers=stale)
            if len(pending(self._lane)) < STALE_NOTES_MAX:
                self._queue(encode(msg.error_msg(
                    "stale", f"action for request {parsed.id} ignored: request {request_id} "
                    f"is open", False)))

    def _known_answer(self, body: bytearray) -> dict[str, Any] | None:
        """The answer to the open request if ``body`` is exactly the canonical encoding
        of an action message for it holding action bytes the request's ``answers`` know,
        else None: the frame is then decoded and checked as usual. Most answers are such
        copies of an action: they skip the decoder."""
        head = self._lane.expect
        if head is None or body[:len(head)] != head:
            return None
        action = self._lane.answers.get(bytes(body[len(head):]))
        if action is None:
            return None
        self._known_hit = True
        return {"type": "action", "action": dict(action) if type(action) is dict else action}

    async def _check_quiet(self, when: str) -> None:
        """Fail the bot (``protocol``) if it sent any frame while no request was open, but
        the pong of the ping open (``_unasked``). Never waits: looks only at frames
        already received and at bytes the stream can deliver right now. ``when`` says when
        the check ran, for the reason."""
        decoder = self._lane.decoder
        try:
            for _ in range(QUIET_CHECK_CHUNKS):
                message = decoder.next_message()
                while message is not None:
                    self._unasked(message, when)
                    message = decoder.next_message()
                chunk = await self._chunk_now()
                if not chunk:
                    return  # nothing there now, or the end of the stream (the next read reports it)
                decoder.feed(chunk)
        except RemoteProtocolError as exc:
            raise self._fail("protocol", str(exc), bytes=exc.evidence) from None

    def _unasked(self, message: dict[str, Any], when: str) -> None:
        """Judge one frame that arrived while no request was open: the pong of the ping
        open is taken (``_answer_pong``); anything else raises the bot's protocol failure."""
        try:
            parsed = msg.parse_bot_message(message)
        except RemoteProtocolError as exc:
            raise self._fail("protocol", f"{exc} (sent {when})", message) from None
        if isinstance(parsed, msg.Pong):
            self._answer_pong(parsed, when, message)
            return
        if isinstance(parsed, msg.ActionMessage):
            if parsed.id == self._lane.answered:
                reason = f"answered request {parsed.id} twice (the second answer was there {when})"
            else:
                reason = f"answered {when} (an action for request {parsed.id})"
        else:
            reason = (f"sent a {message.get('type')} {when}; while no request is open only the "
                      f"pong of a ping may come")
        raise self._fail("protocol", reason, message)

    def _answer_pong(self, pong: msg.Pong, when: str, message: dict[str, Any]) -> None:
        """Take ``pong`` as the answer to the ping open (``_ping_open``), which it closes.
        Any other pong (no ping open, a second pong, another id) raises the bot's
        protocol failure, saying which: a pong answers one ping, once, with its id."""
        open_id = self._ping_open
        if open_id is not None and pong.id == open_id:
            self._ping_open, self._ping_answered = None, open_id
            return
        if open_id is not None:
            reason = (f"answered ping {open_id} with a pong for id {pong.id} (sent {when}); "
                      f"a pong carries the id of the ping it answers")
        elif pong.id == self._ping_answered:
            reason = (f"answered ping {pong.id} twice (the second pong was there {when}); "
                      f"one pong per ping")
        else:
            reason = (f"sent an unsolicited pong (id {pong.id}) {when}: no ping was open; a "
                      f"pong only answers a ping, once, with its id")
        raise self._fail("protocol", reason, message)

    async def _chunk_now(self) -> bytes | bytearray | None:
        """Bytes the stream delivers without waiting: a chunk, ``b""`` at the end of the
        stream (or on a read error: the next read reports it), None when nothing is there."""
        if self._lane.in_fileno is not None:
            # Usually nothing is there: a zero-timeout poll says so for less than half
            # the cost of a read that fails with EAGAIN (an exception in Python).
            if not self._readable_now():
                return None
            try:
                return os.read(self._lane.in_fileno(), READ_CHUNK)
            except BlockingIOError:
                return None
            except OSError:
                return b""
        if not self._readable_now():
            return None
        try:
            return await self._receive_stream.receive_some(READ_CHUNK)
        except _WRITE_ERRORS:
            return b""

    async def _read_chunk(self, wait_first: bool = False) -> bytes | bytearray:
        """The next chunk of the stream, waiting in trio for it if need be; ``b""`` at
        the end of the stream (or a read error). ``wait_first``: the caller has just found
        the pipe empty, so wait before trying to read."""
        fileno = self._lane.in_fileno
        if fileno is None:
            try:
                return await self._receive_stream.receive_some(READ_CHUNK)
            except _WRITE_ERRORS:
                return b""
        while True:
            fd = fileno()
            if wait_first:
                wait_first = False
            else:
                try:
                    return os.read(fd, READ_CHUNK)
                except BlockingIOError:
                    pass
                except OSError:
                    return b""
            self._lane.unyielded = 0
            try:
                await trio.lowlevel.wait_readable(fd)
            except _WRITE_ERRORS:  # closed under us
                return b""

    def _readable_now(self) -> bool:
        """Whether the bot's stream can deliver bytes (or its end) without waiting: a zero
        timeout poll of its file descriptor (pipes and sockets alike); streams without
        one (in-memory ones in tests) are never ready."""
        if self._lane.poll is None:
            return False
        try:
            return bool(self._lane.poll.poll(0))
        except (OSError, ValueError):
            return False

    async def _flush(self, deadline: float | None = None) -> float:
        """Write everything queued; return the trio time at which the write completed.
        A bot that stops reading cannot stall the referee: the write fails the bot at
        ``deadline`` or after WRITE_TIMEOUT seconds."""
        total = len(pending(self._lane))
        # Usually it fits the pipe's buffer: one write, no trio round (the compiled lane's
        # own write; what it leaves, or a stream that is not a pipe, is written below).
        if flush_now(self._lane):
            return self._lane.now()
        data = self._take()
        self._lane.unyielded = 0
        if self._lane.wake is not None:  # a frozen bot cannot read what we wait to write
            self.wake_up()
        limit = trio.current_time() + WRITE_TIMEOUT
        if deadline is not None:
            limit = min(limit, deadline)
        with trio.move_on_at(limit):
            try:
                await self._send_stream.send_all(data)
                return trio.current_time()
            except _WRITE_ERRORS:
                raise self._note(self._write_failure()) from None
        raise self._fail("timeout", f"the bot is not reading its input: writing {total} "
                         f"bytes did not finish in time", write_bytes=total)

    async def _try_send(self, message: dict[str, Any], timeout: float = 1.0) -> None:
        """Best effort: write ``message`` (and anything queued) within ``timeout``."""
        self._queue(encode(message))
        try:
            with trio.move_on_after(timeout):
                await self._flush()
        except BotFailure:
            pass

    async def _receive(self, deadline: float | None, what: str, budget: float | None) -> dict[str, Any]:
        """The next message, read under ``deadline``. Raises BotFailure (timeout, the end
        of the stream, or a protocol error with the offending bytes)."""
        message = self._message_now()
        if message is not None:
            return message
        if self._lane.quick and self._lane.in_fileno is not None and self._lane.poll is not None and (
                deadline is None or deadline - self._lane.now() > 2 * QUICK_ANSWER_S):
            # A bot that answered its last request within QUICK_ANSWER_S is first waited
            # for in the pipe's poll, blocking, for at most QUICK_WAIT_MS: as a plain
            # blocking parent reads, the kernel wakes the referee when the answer lands.
            # A round through trio's scheduler (cancel scope, epoll registration, two
            # task switches) costs more CPU than such a bot takes to answer. Well before
            # the deadline only: the deadline stays trio's. A bot slower than that is
            # waited for in trio, and is quick again only once it answers in time.
            try:
                ready = self._lane.poll.poll(QUICK_WAIT_MS)
            except (OSError, ValueError):
                ready = []
            if ready:
                message = self._message_now()
                if message is not None:
                    return message
            self._lane.quick = False
        # _message_now found the pipe empty (or this stream has no fd: nothing to skip).
        if self._turns is not None:
            # Waited for beyond the quick lane: the table's other bots are frozen now,
            # so none of them thinks on this one's time.
            self._turns.hold(self)
        if deadline is None:  # no clock: skip the cancel scope (it is per decision)
            return await self._read_message(wait_first=True)
        start = self._lane.now()
        if self._lane.cpu_written >= 0.0:
            return await self._receive_cpu(deadline, what, start)
        with trio.move_on_at(deadline):
            return await self._read_message(wait_first=True)
        waited = self._lane.now() - start
        raise self._fail("timeout", f"no answer to {what} within {budget:.3f} s",
                         waited_s=round(waited, 3), budget_s=round(budget or 0.0, 3))

    async def _receive_cpu(self, deadline: float, what: str, start: float) -> dict[str, Any]:
        """``_receive`` under the cpu clock, for a bot whose CPU counter is read
        (``cpu_open``): the next message, waited for until the bot has used its CPU budget
        (``Lane.cpu_limit``) or the wall ``deadline`` (the backstop) has passed. The
        counter is read whenever the bot could first have used up its budget (at
        ``Lane.cpu_rate`` CPUs), so a bot that spins is stopped soon after its budget
        and one that sleeps costs a read per budget's worth of waiting."""
        lane = self._lane
        limit = lane.cpu_limit
        meter = lane.meter
        assert limit is not None and meter is not None
        while True:
            used = meter() - lane.cpu_written
            if used > limit:
                raise self._fail("timeout", f"no answer to {what} within its CPU budget of "
                                 f"{limit:.3f} s (it used {used:.3f} s of CPU)", clock="cpu",
                                 cpu_s=round(used, 3), budget_s=round(limit, 3),
                                 waited_s=round(lane.now() - start, 3))
            now = lane.now()
            if now >= deadline:
                raise self._fail("timeout", f"no answer to {what} within {deadline - start:.3f} s "
                                 f"of wall time, the cpu clock's backstop (it used {used:.3f} s "
                                 f"of its {limit:.3f} s of CPU)", clock="wall backstop",
                                 cpu_s=round(used, 3), budget_s=round(limit, 3),
                                 waited_s=round(now - start, 3))
            with trio.move_on_at(min(deadline, now + max((limit - used) / lane.cpu_rate, 0.001))):
                return await self._read_message(wait_first=True)

    def _message_now(self) -> dict[str, Any] | None:
        """The next message if it is already buffered or a pipe delivers it without
        waiting, else None (then ``_read_message`` waits for it). Raises as
        ``_read_message`` does, except at the end of the stream, which it leaves to it."""
        decoder = self._lane.decoder
        try:
            while True:
                message = decoder.next_message(self._known)
                if message is not None or self._lane.in_fileno is None:
                    return message
                try:
                    chunk = os.read(self._lane.in_fileno(), READ_CHUNK)
                except OSError:  # would block, or the pipe is gone: _read_message says which
                    return None
                if not chunk:
                    return None
                self._frame_at = self._lane.now()  # see _read_message
                decoder.feed(chunk)
        except RemoteProtocolError as exc:
            raise self._fail("protocol", str(exc), bytes=exc.evidence) from None

    async def _read_message(self, wait_first: bool = False) -> dict[str, Any]:
        """The next message, waiting in trio as long as it takes (the caller bounds it).
        ``wait_first``: see ``_read_chunk``."""
        decoder = self._lane.decoder
        try:
            while True:
                message = decoder.next_message(self._known)
                if message is not None:
                    return message
                chunk = await self._read_chunk(wait_first)
                wait_first = False
                # Frames are returned as soon as they are complete, so the frame returned
                # next was completed by the latest chunk: its arrival is the answer's time.
                self._frame_at = self._lane.now()
                decoder.feed(chunk)
                if not chunk:
                    decoder.at_eof()  # raises if the stream ended inside a frame
                    raise self._note(await self._stream_failure())
        except RemoteProtocolError as exc:
            raise self._fail("protocol", str(exc), bytes=exc.evidence) from None

    def _note(self, failure: BotFailure) -> BotFailure:
        for k, v in self._evidence().items():
            failure.evidence.setdefault(k, v)
        self.failure = failure
        return failure

    def _fail(self, kind: str, reason: str, received: Any = _NOTHING, **evidence: Any) -> BotFailure:
        """Record the bot's failure (a failed bot is restarted or dropped before its next
        game) and return it."""
        if received is not _NOTHING:
            evidence["received"] = brief(received)
        return self._note(BotFailure(kind, reason, evidence))


def _poller(stream: Any) -> Any:
    """A ``select.poll`` watching the input of a pipe (trio's FdStream) or socket
    (SocketStream), or None for a stream without a file descriptor."""
    fileno = getattr(stream, "fileno", None) or getattr(getattr(stream, "socket", None),
                                                        "fileno", None)
    if fileno is None:
        return None
    try:
        poller = select.poll()
        poller.register(fileno(), select.POLLIN)
    except (OSError, ValueError):
        return None
    return poller


def brief(value: Any, limit: int = 600) -> Any:
    """``value`` for a log's evidence: itself if its JSON form is short, else a cut repr."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
        return text[:limit] + ("..." if len(text) > limit else "")
    return value if len(text) <= limit else text[:limit] + "..."
