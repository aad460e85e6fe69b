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

A request may come as a map (``decide``) or as its frame's bytes (``decide_frame``, for
the match loop, which joins them from packed parts). For a pipe whose bot answers
quickly, ``decide_frame_now`` does the whole decision synchronously (early-frame check,
write, a poll of at most QUICK_WAIT_MS, read); whatever it cannot finish it leaves open
for the awaited ``decide_frame``, which continues it under the same deadline.

Subclasses say what the stream is (``_stream_failure`` names an end of stream: a
``crash`` for a process, a ``disconnect`` for a socket) and add the lifecycle.
"""

from __future__ import annotations

import json
import os
import select
import time
from collections.abc import Mapping, Sequence
from typing import Any

import trio

from protocol import messages as msg
from protocol.codec import HEADER_SIZE, FrameDecoder, encode
from protocol.errors import RemoteProtocolError, UnsupportedVersionError

from .. import __version__
from .pipelane import (QUICK_ANSWER_S, QUICK_WAIT_MS, READ_CHUNK, YIELD_EVERY, Lane,  # noqa: F401
                       answer_head as _answer_head, decide_now, flush_now, pending, queue_frame, yield_due)
from .players import BotFailure, Player

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
    """A bot at the far end of a trio byte stream (send + receive halves)."""

    failure: BotFailure | None  #: (on the lane: LANE_FIELDS)
    takes_frames = True  #: see Player.takes_frames
    _lane: Lane
    #: The seats frozen while this one is waited for (referee/seats/cgroups.py; None:
    #: not seated with any), and this seat's own bot group (None: none).
    _turns: Any = None
    group: Any = None

    @property
    def lane(self) -> Lane:
        """See Player.lane."""
        return self._lane

    def __new__(cls, *args: Any, **kwargs: Any) -> StreamPlayer:
        # The lane holds the connection's fields (LANE_FIELDS) from the start (a subclass
        # may set ``failure`` before any stream is attached), for the player's whole life.
        self = super().__new__(cls)
        self._lane = Lane()
        return self

    def _attach(self, send_stream: trio.abc.SendStream, receive_stream: trio.abc.ReceiveStream,
                max_frame: int = 1 << 20) -> None:
        """Start talking over a (new) stream: fresh decoder, empty buffers, no failure."""
        self._send_stream = send_stream
        self._receive_stream = receive_stream
        # The lane object stays (a table holds it for the game, and a TCP seat may
        # reconnect mid-game); every field of it is set anew below, so nothing of the
        # last connection carries over.
        self.timing = None
        self._decoder = FrameDecoder(max_frame)
        self._out = bytearray()
        self.failure = None
        self._answered: int | None = None  #: the id of the last request answered
        #: The ping written and not yet answered (its id): the one pong the bot may send.
        self._ping_open: int | None = None
        self._ping_answered: int | None = None  #: the id of the last ping answered
        self._frame_at = 0.0  #: trio time at which the latest chunk was read
        # One poller per connection (not one per request): the early-frame check polls
        # it before every request. None for streams without a file descriptor.
        self._quiet_poll = _poller(receive_stream)
        # Pipes (trio FdStreams, non-blocking fds) are written and read with os.write and
        # os.read first; the referee waits in trio only when the pipe would block. The fd
        # is asked for each time: a closed FdStream answers -1, never a reused number.
        self._out_fileno = send_stream.fileno if isinstance(send_stream, trio.lowlevel.FdStream) else None
        self._in_fileno = (receive_stream.fileno if isinstance(receive_stream, trio.lowlevel.FdStream)
                           else None)
        #: Both halves are pipes, with a poller: decide_frame_now's lane is open.
        self._pipes = (self._out_fileno is not None and self._in_fileno is not None
                       and self._quiet_poll is not None)
        self._unyielded = 0  #: decisions in a row that never waited in trio (see decide)
        self._quick = False  #: the last answer came within QUICK_ANSWER_S (see _receive)
        # The run's clock, read directly: trio.current_time() costs three calls, and a
        # decision reads the time two or three times. A stream belongs to the trio run it
        # was attached in (its fds are registered there), so the clock cannot go stale.
        try:
            clock = trio.lowlevel.current_clock()
            self._now = clock.current_time
        except RuntimeError:  # attached outside a trio run: ask the run in use each time
            clock, self._now = None, trio.current_time
        #: For the compiled lane (pipelane): the offset that trio's default clock adds to
        #: time.perf_counter (its current_time), so the lane reads the same time without
        #: an interpreted call; None for any other clock (tests' MockClock), which the
        #: lane asks through ``_now``. The fds' holders likewise: ``holder.fd`` is what
        #: ``fileno()`` returns (-1 once closed).
        self._clock_offset = _perf_counter_offset(clock)
        self._out_fd_holder = _fd_holder(send_stream)
        self._in_fd_holder = _fd_holder(receive_stream)
        self._expect: bytes | None = None  #: see _known_answer
        self._answers: Mapping[bytes, Any] = _KNOWN_ACTIONS  #: see _known_answer
        self._known_hit = False
        self._known = self._known_answer
        #: A request decide_frame_now wrote and left open: (request id, the trio time its
        #: write completed, or None while part of it is still queued in _out).
        self._open: tuple[int, float | None] | None = None
        #: What decide_frame_now read for that request and left to decide_frame to judge:
        #: a message, or the bot's failure.
        self._stash: dict[str, Any] | BotFailure | None = None

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

    def wake_up(self) -> None:
        """Thaw this seat's bot before a request is written (see Lane.wake)."""
        self._lane.wake = None

    # -- handshake

    async def _handshake(self, timeout: float) -> msg.BotHello:
        """Send our hello, read theirs within ``timeout`` seconds, check the version."""
        self._out += encode(msg.hello_msg(f"durak-ref {__version__}"))
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
        self._out += encode(message)
        if message["type"] in ("game_end", "error", "bye"):
            await self._flush()

    async def send_frame(self, frame: bytes) -> None:
        self.queue_frame(frame)

    async def flush(self) -> None:
        """Write everything queued now, as ``send`` writes a game_end (after
        ``pipelane.flush_now`` left some of it: a full pipe, a failed write, a stream that
        is not a pipe). A bot that stops reading is failed after WRITE_TIMEOUT seconds;
        raises the bot's failure (BotFailure)."""
        await self._flush()

    def queue_frame(self, frame: bytes) -> None:
        """``send_frame`` without a coroutine: the frame is queued (written with the next
        request), so nothing here waits. Raises the bot's failure, if it has one."""
        queue_frame(self._lane, frame)

    async def decide(self, request: dict[str, Any], budget: float | None = None) -> dict[str, Any]:
        """Write ``request`` (after anything queued), then read the bot's action within
        ``budget`` seconds of the write completing. The bot's time is set in ``timing``:
        it runs from the moment the request is fully written to the moment the answer's
        frame is complete, so encoding, writing, scheduling and decoding are the
        referee's. A bot that does not read its input is failed when the write has not
        finished within ``budget`` (or WRITE_TIMEOUT) seconds."""
        if self.failure is not None:
            raise self.failure
        frame, request_id = encode(request), request["id"]
        known = self.decide_frame_now(frame, request_id, budget, _KNOWN_ACTIONS)
        if known is not None:
            return dict(known)  # (the map in _KNOWN_ACTIONS is shared)
        return await self._decide_told(frame, request_id, budget, _KNOWN_ACTIONS,
                                       request.get("legal", ()))

    async def decide_frame(self, frame: bytes, request_id: int, budget: float | None,
                           answers: Mapping[bytes, Any]) -> Any:
        """``decide`` for a request given as its frame (``frame``: the bytes of
        ``encode(request)``, ``request_id`` its id), continuing the request if
        ``decide_frame_now`` left it open. ``answers``: the canonical packed bytes of
        action maps -> what to return for them; an answer frame that is exactly the
        canonical action message for this request holding such bytes skips the decoder
        and returns the mapped value (the caller still judges its legality). Any other
        answer is decoded and checked, and its action map returned."""
        return await self._decide_told(frame, request_id, budget, answers, ())

    async def _decide_told(self, frame: bytes, request_id: int, budget: float | None,
                           answers: Mapping[bytes, Any], legal: Sequence[Any]) -> Any:
        """``_decide``, continuing the request decide_frame_now left open if it is this
        one; a failure the bot is to be told of (TOLD_FAILURES) is told before it is raised."""
        resumed = self._open is not None and self._open[0] == request_id
        if not resumed:
            self._open = self._stash = None
            if self.failure is not None:
                raise self.failure
        try:
            return await self._decide(frame, request_id, budget, answers, legal)
        except BotFailure as exc:
            if exc.kind in TOLD_FAILURES:
                await self.tell(msg.error_msg(exc.kind, exc.reason, True))
            raise

    def yield_due(self) -> bool:
        """Whether this bot's next decision is due the periodic yield to trio: it would be
        the YIELD_EVERY-th in a row that never waited in trio, so ``decide_frame_now``
        would refuse it. A caller that awaits ``pause`` first keeps it in the fast lane."""
        return yield_due(self._lane)

    async def pause(self) -> None:
        """The periodic yield to trio, taken between decisions: one checkpoint (stderr
        drains, exit watchers and Ctrl-C are served), after which the count restarts.
        Far cheaper than taking it inside a decision, which then goes all the way
        through the awaited path."""
        self._unyielded = 0
        await trio.lowlevel.checkpoint()

    def decide_frame_now(self, frame: bytes, request_id: int, budget: float | None,
                         answers: Mapping[bytes, Any]) -> Any:
        """The synchronous fast lane of ``decide_frame``, for a pipe whose bot answered
        its last request quickly: write the request (after anything queued) without
        waiting, wait for the answer in the pipe's own poll for at most QUICK_WAIT_MS
        (only when the budget is well above that), and return the value ``answers``
        maps the answer to when it is a canonical known answer to this request.

        Returns None when it cannot finish the decision by itself. Then either nothing
        was written (the bot was not quick, has a failure, sent something unasked that
        must be judged, or is due its periodic yield to trio), or the request is open:
        written (or partly queued), maybe with a message read for it. The caller then
        awaits ``decide_frame`` with the same arguments, which continues from there
        under the same deadline and judges what was read exactly as it always does.
        ``timing`` is set as ``decide`` sets it."""
        return decide_now(self._lane, self, frame, request_id, budget, answers)

    def _read_now(self, chunk: bytes, request_id: int, written: float, answered: float) -> Any:
        """The rest of ``decide_frame_now`` (pipelane.decide_now) when the chunk read for
        the open request is not exactly its canonical known answer: decode it; a known
        answer to the request is returned, anything else (part of a frame, another
        message, a failure) is left with the open request for decide_frame to judge."""
        self._open = (request_id, written)
        self._frame_at = answered
        try:
            try:
                self._decoder.feed(chunk)
            except RemoteProtocolError as exc:
                raise self._fail("protocol", str(exc), bytes=exc.evidence) from None
            message = self._message_now()
        except BotFailure as failure:
            self._stash = failure
            return None
        if message is None:  # part of a frame: decide_frame reads the rest
            return None
        if not self._known_hit:
            self._stash = message
            return None
        self._known_hit, self._expect, self._open = False, None, None
        self._answered = request_id
        self.timing = (written, self._frame_at)
        self._quick = self._frame_at - written <= QUICK_ANSWER_S
        return message["action"]

    async def tell(self, message: dict[str, Any]) -> None:
        before = self.failure
        self._out += encode(message)
        data, self._out = bytes(self._out), bytearray()
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
                      answers: Mapping[bytes, Any], legal: Sequence[Any]) -> Any:
        """Write the request ``frame`` (or continue the one decide_frame_now left open)
        and wait for its answer. ``legal``: the request's legal action maps, whose
        answered ones are remembered for _KNOWN_ACTIONS (empty: remember none)."""
        self.timing = None
        opened, self._open = self._open, None
        stash, self._stash = self._stash, None
        if opened is None:
            # A decision whose pipes never block never enters trio's scheduler; every
            # YIELD_EVERY such decisions in a row yield once, so that the stderr drains,
            # the exit watchers and a Ctrl-C are served however fast the bot answers.
            self._unyielded += 1
            if self._unyielded >= YIELD_EVERY:
                self._unyielded = 0
                await trio.lowlevel.checkpoint()
            if self._decoder.buffered or self._readable_now():  # else nothing came: nothing to check
                await self._check_quiet(f"before request {request_id} was sent")
            self._out += frame
            self._expect, self._answers = _answer_head(request_id), answers
            if self._lane.wake is not None:  # frozen while another seat was waited for
                self.wake_up()
            written = await self._flush(None if budget is None else self._now() + budget)
        elif opened[1] is None:  # part of the request is still queued
            written = await self._flush(None if budget is None else self._now() + budget)
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
                self._expect = None
                if stale:
                    exc.evidence["stale_answers"] = stale
                raise
            if self._known_hit:  # the canonical bytes of an answer to this request
                self._known_hit, self._expect = False, None
                self._answered = request_id
                self.timing = (written, self._frame_at)
                self._quick = self._frame_at - written <= QUICK_ANSWER_S
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
                self._expect = None
                self._answered = parsed.id
                self.timing = (written, self._frame_at)
                self._quick = self._frame_at - written <= QUICK_ANSWER_S
                if parsed.action in legal:
                    _remember_action(parsed.action)
                return parsed.action
            # SPEC: an action for another request is ignored (error "stale", not fatal)
            # and the open request still waits for its answer. The error is queued, not
            # written now: the bot may not be reading, and we must not block.
            stale += 1
            if stale > STALE_MAX:
                self._expect = None
                raise self._fail("protocol", f"sent {stale} actions for other requests while "
                                 f"request {request_id} was open (at most {STALE_MAX} are "
                                 f"ignored as stale)", answer, stale_answers=stale)
            if len(self._out) < STALE_NOTES_MAX:
                self._out += encode(msg.error_msg(
                    "stale", f"action for request {parsed.id} ignored: request {request_id} "
                    f"is open", False))

    def _known_answer(self, body: bytearray) -> dict[str, Any] | None:
        """The answer to the open request if ``body`` is exactly the canonical encoding
        of an action message for it holding action bytes the request's ``answers`` know
        (for ``decide``: an action some bot answered with before and that was legal
        then), else None: the frame is then decoded and checked as usual. Most answers
        are such copies of a legal action: they skip the decoder."""
        head = self._expect
        if head is None or body[:len(head)] != head:
            return None
        action = self._answers.get(bytes(body[len(head):]))
        if action is None:
            return None
        self._known_hit = True
        return {"type": "action", "action": dict(action) if type(action) is dict else action}

    async def _check_quiet(self, when: str) -> None:
        """Fail the bot (``protocol``) if it sent any frame while no request was open, but
        the pong of the ping open (``_unasked``). Never waits: looks only at frames
        already received and at bytes the stream can deliver right now. ``when`` says when
        the check ran, for the reason."""
        decoder = self._decoder
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
            if parsed.id == self._answered:
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
        if self._in_fileno is not None:
            # Usually nothing is there: a zero-timeout poll says so for less than half
            # the cost of a read that fails with EAGAIN (an exception in Python).
            if not self._readable_now():
                return None
            try:
                return os.read(self._in_fileno(), READ_CHUNK)
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
        fileno = self._in_fileno
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
            self._unyielded = 0
            try:
                await trio.lowlevel.wait_readable(fd)
            except _WRITE_ERRORS:  # closed under us
                return b""

    def _readable_now(self) -> bool:
        """Whether the bot's stream can deliver bytes (or its end) without waiting: a zero
        timeout poll of its file descriptor (pipes and sockets alike); streams without
        one (in-memory ones in tests) are never ready."""
        if self._quiet_poll is None:
            return False
        try:
            return bool(self._quiet_poll.poll(0))
        except (OSError, ValueError):
            return False

    async def _flush(self, deadline: float | None = None) -> float:
        """Write everything queued; return the trio time at which the write completed.
        A bot that stops reading cannot stall the referee: the write fails the bot at
        ``deadline`` or after WRITE_TIMEOUT seconds."""
        total = len(self._out)
        # Usually it fits the pipe's buffer: one write, no trio round (the compiled lane's
        # own write; what it leaves, or a stream that is not a pipe, is written below).
        if flush_now(self._lane):
            return self._now()
        data, self._out = self._out, bytearray()
        self._unyielded = 0
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
        self._out += encode(message)
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
        if self._quick and self._in_fileno is not None and self._quiet_poll is not None and (
                deadline is None or deadline - self._now() > 2 * QUICK_ANSWER_S):
            # A bot that answered its last request within QUICK_ANSWER_S is first waited
            # for in the pipe's poll, blocking, for at most QUICK_WAIT_MS: as a plain
            # blocking parent reads, the kernel wakes the referee when the answer lands.
            # A round through trio's scheduler (cancel scope, epoll registration, two
            # task switches) costs more CPU than such a bot takes to answer. Well before
            # the deadline only: the deadline stays trio's. A bot slower than that is
            # waited for in trio, and is quick again only once it answers in time.
            try:
                ready = self._quiet_poll.poll(QUICK_WAIT_MS)
            except (OSError, ValueError):
                ready = []
            if ready:
                message = self._message_now()
                if message is not None:
                    return message
            self._quick = False
        # _message_now found the pipe empty (or this stream has no fd: nothing to skip).
        if self._turns is not None:
            # Waited for beyond the quick lane: the table's other bots are frozen now,
            # so none of them thinks on this one's time.
            self._turns.hold(self)
        if deadline is None:  # no clock: skip the cancel scope (it is per decision)
            return await self._read_message(wait_first=True)
        start = self._now()
        with trio.move_on_at(deadline):
            return await self._read_message(wait_first=True)
        waited = self._now() - start
        raise self._fail("timeout", f"no answer to {what} within {budget:.3f} s",
                         waited_s=round(waited, 3), budget_s=round(budget or 0.0, 3))

    def _message_now(self) -> dict[str, Any] | None:
        """The next message if it is already buffered or a pipe delivers it without
        waiting, else None (then ``_read_message`` waits for it). Raises as
        ``_read_message`` does, except at the end of the stream, which it leaves to it."""
        decoder = self._decoder
        try:
            while True:
                message = decoder.next_message(self._known)
                if message is not None or self._in_fileno is None:
                    return message
                try:
                    chunk = os.read(self._in_fileno(), READ_CHUNK)
                except OSError:  # would block, or the pipe is gone: _read_message says which
                    return None
                if not chunk:
                    return None
                self._frame_at = self._now()  # see _read_message
                decoder.feed(chunk)
        except RemoteProtocolError as exc:
            raise self._fail("protocol", str(exc), bytes=exc.evidence) from None

    async def _read_message(self, wait_first: bool = False) -> dict[str, Any]:
        """The next message, waiting in trio as long as it takes (the caller bounds it).
        ``wait_first``: see ``_read_chunk``."""
        decoder = self._decoder
        try:
            while True:
                message = decoder.next_message(self._known)
                if message is not None:
                    return message
                chunk = await self._read_chunk(wait_first)
                wait_first = False
                # Frames are returned as soon as they are complete, so the frame returned
                # next was completed by the latest chunk: its arrival is the answer's time.
                self._frame_at = self._now()
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


#: StreamPlayer attribute -> the Lane field that holds it (pipelane.Lane): each
#: attribute reads and writes that field, so the compiled lane and this code share
#: one copy of the connection's state.
LANE_FIELDS = {
    "_out": "out", "failure": "failure", "_quick": "quick", "_unyielded": "unyielded",
    "_open": "open", "_stash": "stash", "_expect": "expect", "_answers": "answers",
    "_answered": "answered", "timing": "timing", "_pipes": "pipes", "_quiet_poll": "poll",
    "_decoder": "decoder", "_now": "now", "_clock_offset": "clock_offset",
    "_out_fileno": "out_fileno", "_in_fileno": "in_fileno",
    "_out_fd_holder": "out_holder", "_in_fd_holder": "in_holder",
}


def _lane_property(field: str) -> property:
    def get(self: StreamPlayer) -> Any:
        return getattr(self._lane, field)

    def put(self: StreamPlayer, value: Any) -> None:
        setattr(self._lane, field, value)
    return property(get, put, doc=f"(pipelane.Lane.{field})")


def _get_out(self: StreamPlayer) -> bytearray:
    return pending(self._lane)  # (the frames queue_frame kept apart, joined on in order)


def _set_out(self: StreamPlayer, value: bytearray) -> None:
    lane = self._lane
    lane.out = value
    lane.queued.clear()


for _name, _field in LANE_FIELDS.items():
    setattr(StreamPlayer, _name, _lane_property(_field))
#: ``_out`` is every byte queued, in order: the lane's ``out`` with its separately queued
#: frames (``Lane.queued``) joined on; setting it replaces both.
setattr(StreamPlayer, "_out", property(_get_out, _set_out, doc="(pipelane.pending: Lane.out + Lane.queued)"))


#: Canonical msgpack bytes of an action map -> the map, for the actions bots answered
#: with that were legal then: at most one entry per distinct action (some thousands).
_KNOWN_ACTIONS: dict[bytes, dict[str, Any]] = {}


def _perf_counter_offset(clock: Any) -> float | None:
    """The constant offset of ``clock`` over time.perf_counter when it is trio's default
    clock (``current_time() == offset + perf_counter()``, checked here), else None."""
    offset = getattr(clock, "offset", None)
    if type(clock).__name__ != "SystemClock" or type(offset) is not float:
        return None
    return offset if abs(clock.current_time() - (offset + time.perf_counter())) < 1e-3 else None


def _fd_holder(stream: Any) -> Any:
    """The object whose ``fd`` is ``stream.fileno()`` (a trio FdStream's holder: -1 once
    closed), when there is one and it says the same now; else None."""
    holder = getattr(stream, "_fd_holder", None)
    if not isinstance(stream, trio.lowlevel.FdStream) or type(getattr(holder, "fd", None)) is not int:
        return None
    return holder if holder is not None and holder.fd == stream.fileno() else None


def _remember_action(action: dict[str, Any]) -> None:
    """Note the canonical bytes of a legal action a bot answered with (see _known_answer)."""
    body = encode({"type": "action", "id": 1, "action": action})[HEADER_SIZE:]
    _KNOWN_ACTIONS.setdefault(body[len(_answer_head(1)):], dict(action))


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
