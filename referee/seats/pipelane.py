"""The synchronous fast lane of a bot over pipes: one decision without trio.

``decide_now(lane, player, frame, request_id, budget, answers)`` is the body of
``wire.StreamPlayer.attempt`` (its docstring is the contract): for a bot whose
last answer came quickly, it looks (a zero-timeout poll) that the bot sent nothing since
its last answer, writes the queued bytes and the request in one ``os.write``, waits for
the answer in the pipe's own poll for at most QUICK_WAIT_MS, reads it, and returns the
value ``answers`` maps it to when it is exactly the canonical answer to this request.
Everything else (a write that would block, a slow, partial, unknown or malformed answer,
a failure) is left open for the awaited ``StreamPlayer.finish`` to finish and judge
(``_leave_open``), exactly as it finishes any request.

``flush_now(lane)`` writes what is queued (a game's end) the same way, without a
coroutine; what the pipe does not take is left to the awaited ``StreamPlayer.flush``.

It reads and writes the connection's state, which lives in one ``Lane`` per player
(``StreamPlayer._lane``), read and written there by both. This module imports no trio (a test enforces that): it is compiled by mypyc (setup.py), so a
decision of a quick program bot runs no interpreted code between the request frame and
the answer. Bot data is typed ``object``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from time import perf_counter
from typing import Any, Final, cast

from protocol.codec import HEADER_SIZE, FrameDecoder, encode

# (Final, bound once: compiled, a module attribute that is not Final is looked up in its
# module's dict at each use; these are C constants or statics. Tests empty _HEADS in place.)
_write: Final = os.write
_writev: Final = os.writev
_read: Final = os.read
_clock: Final = perf_counter
_HEADER: Final = HEADER_SIZE

#: Bytes read from a bot's pipe or socket at a time.
READ_CHUNK: Final = 65536
#: Decisions in a row that never waited in trio, after which the bot is due a yield to
#: trio (``StreamPlayer.yield_due``): its stderr drains, exit watchers and Ctrl-C are
#: served however quickly it answers. A quick decision takes some tens of microseconds,
#: so that is a yield every few milliseconds; each costs about as much as a decision.
YIELD_EVERY: Final = 64
#: Milliseconds the referee may wait for a quick bot's answer in the pipe's own poll,
#: blocking, before it waits in trio. Other tasks of the run wait at most this long, and
#: only while a quick bot is deciding.
QUICK_WAIT_MS: Final = 1
#: A bot whose last answer came this soon after its request counts as quick.
QUICK_ANSWER_S: Final = QUICK_WAIT_MS / 1000

def _no_clock() -> float:
    raise RuntimeError("no stream attached yet")


class Request:
    """The fields of one decision that a seat's ``attempt`` reads at every decision, in
    compiled form: the base of the loop's ``framelane.Ask`` (the whole contract:
    ``players.Ask``), so the lane reads them without an attribute lookup by name. Made
    as it is (its frame given), it is a request as a tool or a test asks it."""

    def __init__(self, request_id: int, budget: float | None, answers: dict[bytes, Any],
                 frame: bytes | None = None, cpu_budget: float | None = None) -> None:
        self.id = request_id  #: the request id
        #: Seconds of wall time the answer may take (None: no limit): the seat is waited
        #: for so long (under the cpu clock: the backstop, table/clock.py ``Clock.wait``).
        self.budget = budget
        #: Under the cpu clock, the CPU seconds the answer may use (None: the wall clock
        #: rules, or no limit): a seat that can read its CPU stops waiting past it.
        self.cpu_budget = cpu_budget
        self.answers = answers  #: canonical packed action maps -> the action they name
        #: (written, answered): run-clock times of the request fully written and of the
        #: answer complete, set by a player that knows them; None: the loop times the call.
        self.timing: tuple[float, float] | None = None
        #: The CPU seconds the seat spent on the answer, as the seat measured them (a
        #: program bot's control group, an in-process built-in's thread); -1: not measured.
        self.cpu = -1.0
        self._frame = frame

    def frame(self) -> bytes:
        """The request's frame (``encode`` of the request message)."""
        frame = self._frame
        if frame is None:
            raise ValueError("a request made without its frame")
        return frame


class Seat:
    """The synchronous half of ``players.Player``'s interface as the loop calls it: its
    ``attempt`` and ``hear``. ``Lane`` is one (a pipe bot's, called natively); ``seat_of``
    wraps any other player's two methods in ``Forwarding``."""

    def attempt(self, ask: Request) -> object:
        """``Player.attempt`` (its contract)."""
        return None

    def hear(self, frame: bytes) -> None:
        """``Player.hear`` (its contract)."""


class Forwarding(Seat):
    """A player's own ``attempt`` and ``hear``, called as they are."""

    def __init__(self, attempt: Any, hear: Any) -> None:
        self._attempt = attempt
        self._hear = hear

    def attempt(self, ask: Request) -> object:
        result: object = self._attempt(ask)
        return result

    def hear(self, frame: bytes) -> None:
        self._hear(frame)


def seat_of(player: Any) -> Seat:
    """The ``Seat`` the loop calls for ``player``: the ``Seat`` both its ``attempt`` and
    its ``hear`` are bound to (a ``StreamPlayer``'s lane), else its methods forwarded."""
    attempt = player.attempt
    hear = player.hear
    owner = getattr(attempt, "__self__", None)
    if isinstance(owner, Seat) and getattr(hear, "__self__", None) is owner:
        return cast(Seat, owner)
    return Forwarding(attempt, hear)


class Lane(Seat):
    """The state of one bot connection that a decision reads and writes, kept in a
    compiled object so that the lane reaches it without an attribute lookup on the
    player (each costs hundreds of instructions). ``StreamPlayer`` keeps its connection
    here and nowhere else (``StreamPlayer._lane``), so there is one copy."""

    def __init__(self, player: Any = None) -> None:
        #: The ``StreamPlayer`` whose connection this is (its interpreted slow path reads
        #: an answer that is not the canonical one: ``_read_now``).
        self.player: Any = player
        self.out = bytearray()  #: bytes queued for the bot, written before the next request
        #: Frames queued after ``out`` (``queue_frame``), written after it in this order:
        #: kept apart, not copied into ``out``, and written with the request in one
        #: ``os.writev``. ``pending`` joins them onto ``out`` for the awaited path.
        self.queued: list[bytes] = []
        self.failure: Any = None  #: the bot's BotFailure, once it has one
        self.quick = False  #: its last answer came within QUICK_ANSWER_S
        self.unyielded = 0  #: decisions in a row that never waited in trio
        self.open: tuple[int, float | None] | None = None  #: the request left open: (id, written)
        self.stash: Any = None  #: what was read for the open request (a map or a BotFailure)
        self.expect: bytes | None = None  #: the answer head of the open request (known answers)
        self.answers: Any = None  #: the open request's known answer bytes -> values
        self.answered: int | None = None  #: the id of the last request answered
        self.timing: tuple[float, float] | None = None  #: (written, answered) of the last answer
        self.pipes = False  #: both halves are pipes with a poller: the lane is open
        self.poll: Any = None  #: the poller of the bot's output (early frames, answers)
        self.decoder = FrameDecoder()  #: the connection's (replaced for each stream)
        self.now: Callable[[], float] = _no_clock  #: the run's clock (its current_time)
        self.clock_offset: float | None = None  #: see clock_offset
        #: The halves' fileno methods (None: not pipes).
        self.out_fileno: Callable[[], int] | None = None
        self.in_fileno: Callable[[], int] | None = None
        self.out_holder: Any = None  #: see console/trio_internals.py
        self.in_holder: Any = None
        #: What to call before a request is written (None: nothing): thaws a bot that
        #: was frozen while another was waited for (referee/seats/cgroups.py, Turns).
        self.wake: Callable[[], None] | None = None
        #: The bot's CPU seconds so far (its control group's counter: cgroups.Group.
        #: cpu_meter), None: not readable. Read only under the cpu clock (``cpu_limit``).
        self.meter: Callable[[], float] | None = None
        self.cpu_rate = 1.0  #: the most CPUs the bot can use at once (its quota)
        #: The open request's CPU budget (``Request.cpu_budget``; None: the wall clock).
        self.cpu_limit: float | None = None
        self.cpu_written = -1.0  #: ``meter`` as the open request was written (-1: unread)
        self.cpu_used = -1.0  #: the CPU seconds of the last answer (-1: not measured)

    def attempt(self, ask: Request) -> object:
        """``StreamPlayer.attempt`` (its contract), compiled: ``decide_now`` for the
        request of ``ask`` (a ``framelane.Ask``), with the answer's timing (and under
        the cpu clock its CPU seconds) on it."""
        self.cpu_limit = ask.cpu_budget
        answer = decide_now(self, self.player, ask.frame(), ask.id, ask.budget, ask.answers)
        if answer is not None:
            ask.timing = self.timing
            ask.cpu = self.cpu_used
        return answer

    def hear(self, frame: bytes) -> None:
        """``StreamPlayer.hear`` (its contract), compiled: ``queue_frame``."""
        queue_frame(self, frame)


#: Request id -> the canonical bytes of an action message for it, up to its action map: a
#: pure function of the id (no game's or bot's state), so one table serves every
#: connection; bounded, as ids count per seat per game.
_HEADS: Final[dict[int, bytes]] = {}
_HEADS_MAX: Final = 10000  #: ids count per seat per game: small ids repeat all the time


def clock_offset(clock: Any) -> float | None:
    """The constant offset of the run's ``clock`` over time.perf_counter when it is trio's
    default clock (``current_time() == offset + perf_counter()``, checked here), else None
    (tests' MockClock): the compiled loop and lane then read the run's time as
    ``perf_counter() + offset``, without an interpreted call."""
    offset = getattr(clock, "offset", None)
    if type(clock).__name__ != "SystemClock" or type(offset) is not float:
        return None
    return offset if abs(clock.current_time() - (offset + perf_counter())) < 1e-3 else None


def answer_head(request_id: int) -> bytes:
    """The canonical encoding (codec.encode's) of ``{"type": "action", "id": request_id,
    "action": ...}`` up to the action map."""
    head = _HEADS.get(request_id)
    if head is None:
        # The body of the message with a nil action (one byte, 0xc0) less that byte.
        head = encode({"type": "action", "id": request_id, "action": None})[_HEADER:-1]
        if len(_HEADS) < _HEADS_MAX:
            _HEADS[request_id] = head
    return head


def cpu_open(lane: Lane) -> None:
    """A request is about to be written: read the bot's CPU counter (under the cpu clock,
    where it has one; else mark it unread), the start of the answer's CPU time."""
    meter = lane.meter
    lane.cpu_used = -1.0
    lane.cpu_written = meter() if meter is not None and lane.cpu_limit is not None else -1.0


def cpu_close(lane: Lane) -> None:
    """The answer is complete: its CPU seconds (``cpu_used``), from ``cpu_open`` to now."""
    meter = lane.meter
    start = lane.cpu_written
    lane.cpu_used = meter() - start if meter is not None and start >= 0.0 else -1.0


def yield_due(lane: Lane) -> bool:
    """Whether the lane's next decision would be the YIELD_EVERY-th in a
    row that never waited in trio, which ``decide_now`` refuses."""
    return lane.unyielded + 1 >= YIELD_EVERY


#: Frames ``queue_frame`` keeps as separate buffers; more are joined onto ``out`` first
#: (a seat that is out of the game hears every event until the game ends, and writev
#: takes at most IOV_MAX, 1024, buffers).
QUEUED_MAX: Final = 64


def queue_frame(lane: Lane, frame: bytes) -> None:
    """``StreamPlayer.hear``: queue ``frame`` (written with the next request, after
    everything queued before it); raises the bot's failure, if it has one."""
    failure = lane.failure
    if failure is not None:
        raise failure  # (a BotFailure)
    queued = lane.queued
    if len(queued) >= QUEUED_MAX:
        lane.out += b"".join(queued)
        queued.clear()
    queued.append(frame)


def pending(lane: Lane) -> bytearray:
    """Every byte queued for the bot, in order, as ``lane.out`` (the queued frames joined
    onto it): what the awaited path of ``StreamPlayer`` writes. The caller may append to
    it or replace it (``lane.out = ...``: ``lane.queued`` is empty then)."""
    queued = lane.queued
    if queued:
        lane.out += b"".join(queued)
        queued.clear()
    return lane.out


def decide_now(lane: Lane, player: Any, frame: bytes, request_id: int, budget: float | None,
               answers: Mapping[bytes, object]) -> object:
    """``StreamPlayer.attempt`` for ``player``, whose lane is ``lane`` (see its contract),
    for the request ``frame`` with id ``request_id``."""
    if lane.open is not None or lane.stash is not None:
        lane.open = lane.stash = None
    decoder: Any = lane.decoder
    # (``decoder.buffered`` is ``len(_buf) - _pos``: read as the FrameDecoder's two fields,
    # not through its property, an interpreted call at every decision: about 1% of a
    # quick decision's referee time. tests/referee/test_pipe_lane.py holds the two equal.)
    if (not lane.pipes or lane.failure is not None or not lane.quick
            or lane.unyielded + 1 >= YIELD_EVERY or len(decoder._buf) != decoder._pos):
        return None  # finish does it all (the early-frame check, a yield, ...)
    poller: Any = lane.poll
    try:
        if poller.poll(0):  # the bot sent something since its last answer: to be judged
            return None
    except (OSError, ValueError):
        pass
    lane.unyielded += 1
    head = answer_head(request_id)
    # (``timing``, ``expect`` and ``answers`` are set only where the request is left
    # open: the awaited path reads them, and a known answer taken here needs none.)
    if not _write_request(lane, frame, request_id, head, answers):
        return None
    offset = lane.clock_offset
    now: Any = lane.now
    written: float = now() if offset is None else _clock() + cast(float, offset)
    if budget is not None and budget <= 2 * QUICK_ANSWER_S:
        _leave_open(lane, request_id, written, head, answers)  # trio's to keep
        return None
    # Read first: on one CPU the bot usually runs as soon as the write wakes it, and
    # has answered by the time the write returns; otherwise wait in the pipe's poll.
    try:
        chunk = _read(_fd(lane.in_holder, lane.in_fileno), READ_CHUNK)
    except BlockingIOError:
        chunk = _read_within(lane, QUICK_WAIT_MS)
    except OSError:  # the pipe is gone: StreamPlayer.finish says so
        chunk = b""
    if not chunk:  # no answer within QUICK_WAIT_MS (or the end of the stream)
        lane.quick = False  # StreamPlayer.finish waits in trio (no second quick wait)
        _leave_open(lane, request_id, written, head, answers)
        return None
    answered: float = now() if offset is None else _clock() + cast(float, offset)
    # Usually the chunk is exactly one frame, the canonical answer to this request with
    # a known action: taken without the decoder (which held nothing before the request,
    # and has been fed nothing since).
    start = _HEADER + len(head)
    size = len(chunk)
    # (A slice compared, not bytes.startswith: its argument parsing costs more than the
    # slice, compiled.)
    if (size > start
            and (chunk[0] << 24 | chunk[1] << 16 | chunk[2] << 8 | chunk[3]) == size - _HEADER
            and chunk[_HEADER:start] == head):
        action = cast("dict[bytes, object]", answers).get(chunk[start:])
        if action is not None:
            lane.answered = request_id
            lane.timing = (written, answered)
            if lane.cpu_written >= 0.0:
                cpu_close(lane)
            if answered - written > QUICK_ANSWER_S:
                lane.quick = False
            return action
    _leave_open(lane, request_id, written, head, answers)
    return player._read_now(chunk, request_id, written, answered)


def _write_request(lane: Lane, frame: bytes, request_id: int, head: bytes,
                   answers: Mapping[bytes, object]) -> bool:
    """Write everything queued, then the request ``frame``, in one writev (the queued
    frames are not copied into one buffer first). True when all of it was written;
    else what the pipe did not take stays queued, in order (the request left open for
    ``StreamPlayer.finish``), or, the bot being gone, only the request is dropped."""
    queued = lane.queued
    out = lane.out
    if len(out) != 0:  # (bytes the awaited path queued: before the frames)
        queued.insert(0, bytes(out))
        out.clear()
    queued.append(frame)
    wake = lane.wake
    if wake is not None:  # (a frozen bot: thawed before its request is written)
        wake()
    if lane.cpu_limit is not None:  # (the cpu clock: its CPU counter read)
        cpu_open(lane)
    else:
        lane.cpu_written = lane.cpu_used = -1.0
    total = 0
    for part in queued:
        total += len(part)
    try:
        sent: int = _writev(_fd(lane.out_holder, lane.out_fileno), queued)
    except BlockingIOError:
        sent = 0
    except OSError:  # the bot is gone: StreamPlayer.finish writes again and says so
        queued.pop()  # the request; what was queued before it stays queued
        lane.unyielded -= 1
        return False
    if sent < total:  # the rest waits in ``out`` for StreamPlayer.finish's awaited write
        rest = b"".join(queued)[sent:]
        queued.clear()
        out += rest
        _leave_open(lane, request_id, None, head, answers)
        return False
    queued.clear()
    return True


def _read_within(lane: Lane, milliseconds: int) -> bytes:
    """What the bot's pipe gives within ``milliseconds`` (its poll, then one read): b""
    when nothing came in time, at the end of the stream, or on an error."""
    poller: Any = lane.poll
    try:
        if not poller.poll(milliseconds):
            return b""
        return _read(_fd(lane.in_holder, lane.in_fileno), READ_CHUNK)
    except (OSError, ValueError):  # would block, or the pipe is gone: finish says which
        return b""


def _fd(holder: Any, fileno: Any) -> int:
    """A pipe's fd as its holder reads it (-1 once the stream is closed, never a number
    reused since: see console/trio_internals.py), or from its ``fileno`` method without a holder."""
    return cast(int, fileno() if holder is None else holder.fd)


def _leave_open(lane: Lane, request_id: int, written: float | None, head: bytes,
                answers: Mapping[bytes, object]) -> None:
    """Leave the request written (``written``: when; None while part of it is still
    queued) open for ``StreamPlayer.finish``, with what it needs to judge the answer."""
    lane.open = (request_id, written)
    lane.timing = None
    lane.expect = head
    lane.answers = answers


def flush_now(lane: Lane) -> bool:
    """Write everything queued (``lane.out``) without waiting: one ``os.write`` of a
    pipe, as ``StreamPlayer._flush`` first tries, without a coroutine (a game_end that
    fits the pipe, which it nearly always does). True when nothing is left queued.
    False when something is (the stream is not a pipe, the pipe is full, or the write
    failed: a bot gone, a closed stream): it stays queued, and the caller awaits
    ``StreamPlayer.flush``, which writes the rest under WRITE_TIMEOUT or raises the
    bot's failure exactly as it always does. Written through the fd's holder, as
    ``decide_now`` writes: a closed stream's fd reads -1, never a number reused since.
    The caller has checked ``lane.failure`` (``queue_frame`` raises it)."""
    out = pending(lane)  # (the frames queued apart, joined on in order)
    if len(out) == 0:
        return True
    if lane.out_fileno is None:
        return False
    try:
        sent: int = _write(_fd(lane.out_holder, lane.out_fileno), out)
    except OSError:  # would block, or the bot is gone: the awaited flush says which
        return False
    if sent < len(out):
        del out[:sent]
        return False
    out.clear()
    return True
