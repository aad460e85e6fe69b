"""The synchronous decision path of a game between program bots that take request frames.

A decision of a bot over a pipe that answers at once needs no coroutine: the request
frame is joined from packed parts (``requests.RequestFrames``), written, and the answer
read by ``pipelane.decide_now`` (``StreamPlayer.decide_frame_now``), without waiting in
trio. ``play_frames`` plays a game's decisions so, one after the other, for as long as every one of them
finishes that way; the first one that does not (a slow bot, a write that would block,
an answer that must be decoded and judged, the periodic yield to trio, a failure) is
left open, and ``play_game`` awaits ``_Table.ask``, which finishes it exactly as it
finishes any request. Every verdict (deadlines, early and second answers, protocol
errors, illegal actions, timeouts) stays with that awaited path: this one takes only
a canonical, legal answer to the open request that came within its budget.

This module imports no trio (a test enforces that: it is written to be compiled by
mypyc, and correct and tested as plain Python too). Bot data is typed ``object``: a
compiled function checks the types of its arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ..rules.game import OVER, Game
from ..seats.pipelane import Lane, decide_now, queue_frame, yield_due
from ..seats.players import BotFailure
from .clock import Clock
from .requests import ACTIONS_BY_BYTES, EventFrames, RequestFrames


class Decision:
    """One action of a game: who, what, whether it was forced, the seconds charged.
    (A plain class, not a dataclass: compiled, its constructor runs no Python code, and
    one is made for every action.)"""

    __slots__ = ("seat", "action", "forced", "seconds")

    def __init__(self, seat: int, action: int, forced: bool, seconds: float) -> None:
        self.seat = seat
        self.action = action
        self.forced = forced
        self.seconds = seconds

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Decision):
            return NotImplemented
        return (self.seat == other.seat and self.action == other.action
                and self.forced == other.forced and self.seconds == other.seconds)

    def __repr__(self) -> str:
        return (f"Decision(seat={self.seat!r}, action={self.action!r}, forced={self.forced!r}, "
                f"seconds={self.seconds!r})")


def seat_seconds(decisions: list[Decision], seats: int) -> list[list[float]]:
    """Per seat (0 to ``seats`` - 1), the seconds charged for each of its unforced
    decisions in ``decisions``, in order: what a match's counts sum (``MatchResult.add``),
    gathered in one compiled pass (the caller sums each list with ``sum``, as before).
    A decision of a seat outside that range (a record read back from a bad log) is in none."""
    out: list[list[float]] = [[] for _ in range(seats)]
    for d in decisions:
        seat = d.seat
        if not d.forced and 0 <= seat < seats:
            out[seat].append(d.seconds)
    return out


def charge_bots(decisions: list[Decision], bots: list[Any]) -> int:
    """``MatchResult.add``'s counts of a game's decisions, in one compiled pass: for each
    seat's bot (``bots[seat]``, a ``match.BotStats``) that made unforced decisions, add
    their number to its ``decisions``, their seconds summed with ``sum`` in the order made
    to its ``seconds``, and raise its ``max_seconds`` to the largest. Returns how many
    decisions were counted."""
    asked = 0
    per_seat = seat_seconds(decisions, len(bots))
    for seat in range(len(bots)):
        times = per_seat[seat]
        if times:
            stats = bots[seat]
            stats.decisions += len(times)
            stats.seconds += sum(times)
            # max(stats.max_seconds, *times), the builtin's own loop (a later item replaces
            # the largest so far only when greater) on unboxed floats
            largest: float = stats.max_seconds
            for seconds in times:
                if seconds > largest:
                    largest = seconds
            stats.max_seconds = largest
            asked += len(times)
    return asked


def all_seconds(decisions: list[Decision]) -> list[float]:
    """The seconds charged for each decision of ``decisions``, in order (forced ones: 0.0)."""
    return [d.seconds for d in decisions]


class SeatKinds:
    """What a table reads of its players at the start of a game (``match._Table``), per
    seat: whether it wants events, decides now, takes request frames, and the lane
    (``Player.lane``) of one that takes frames; the listeners (the seats that want
    events) and whether each listener, and each seat, takes frames. Read anew for every
    game, in one compiled pass (a restarted bot may say otherwise than its predecessor)."""

    def __init__(self, players: Sequence[Any]) -> None:
        self.wants: list[object] = []
        self.listeners: list[int] = []
        self.decides_now: list[object] = []
        self.takes_frames: list[object] = []
        self.lanes: list[Lane | None] = []
        self.listeners_take_frames = True
        self.all_take_frames = True
        for seat in range(len(players)):
            player = players[seat]
            wants = player.wants_events
            takes = player.takes_frames
            self.wants.append(wants)
            self.decides_now.append(player.decides_now)
            self.takes_frames.append(takes)
            self.lanes.append(player.lane if takes else None)
            if not takes:
                self.all_take_frames = False
            if wants:
                self.listeners.append(seat)
                if not takes:
                    self.listeners_take_frames = False


class FrameTable:
    """What the frame lane reads of a ``match._Table`` at every decision, in one compiled
    object: the table's own lists and objects (shared; the players listed anew), so a
    decision needs no attribute lookup on the interpreted table. Made by ``_Table.start_game``. It holds
    no reference to the table itself (the table holds it: a cycle would keep every
    game's tables alive until the cyclic garbage collector ran)."""

    def __init__(self, table: Any, requests: RequestFrames | None) -> None:
        #: ``_Table.forfeit`` (a function of the seat and the failure, not of the table)
        self.forfeit: Any = type(table).forfeit
        #: The request ``ask_fast`` left open for ``_Table.ask`` to finish: (seat, request
        #: id, frame, budget, the answer read or None).
        self.open_request: tuple[int, int, bytes, float | None, Any] | None = None
        self.players: list[Any] = list(table.players)
        self.lanes: list[Lane | None] = table.lanes
        self.ids: list[int] = table.request_ids
        self.clocks: list[Clock] = table.clocks
        self.requests = requests
        self.events: EventFrames = table.event_frames


def ask_fast(t: FrameTable, game: Game, seat: int, legal: list[int]) -> tuple[int, float] | None:
    """Ask ``seat`` of the table (its player takes frames) in one synchronous step: when
    its bot answers at once (``decide_frame_now``) with a canonical legal action within
    its budget, charge the clock, apply the action and return (action, seconds charged).
    Otherwise return None with the request, if it was sent, left open in
    ``t.open_request`` for ``_Table.ask`` (which the caller awaits next) to finish exactly
    as it finishes any request."""
    ids = t.ids
    request_id = ids[seat] + 1
    ids[seat] = request_id
    clock = t.clocks[seat]
    budget = clock.budget()
    requests = t.requests
    assert requests is not None, "a table whose seats take frames has request frames"
    frame = requests.frame(seat, request_id, legal, clock)
    player = t.players[seat]
    answer: object
    lane = t.lanes[seat]
    if lane is not None:
        answer = decide_now(lane, player, frame, request_id, budget, ACTIONS_BY_BYTES)
    else:
        answer = player.decide_frame_now(frame, request_id, budget, ACTIONS_BY_BYTES)
    if type(answer) is int and answer in legal:  # a known action's bytes (ACTIONS_BY_BYTES)
        timing = cast(tuple[float, float], player.timing if lane is None else lane.timing)
        used = timing[1] - timing[0]
        if used < 0.0:
            used = 0.0
        # Charged only when in time: a late answer is left to ``ask``, which charges
        # and judges it as it judges every answer.
        if budget is None or used <= budget:
            clock.charge(used)
            game.apply_legal(answer)
            return answer, used
    t.open_request = (seat, request_id, frame, budget, answer)
    return None


def play_frames(t: FrameTable, game: Game,
                decisions: list[Decision]) -> tuple[int, list[int] | None] | None:
    """Play ``game`` on the table (every seat's player takes frames, and events go out
    queued: ``_Table.frames_now``) for as long as each decision finishes synchronously
    (``ask_fast``): forced actions applied unasked, each action appended to
    ``decisions`` and its events queued to the bots (``queue_events``), as
    ``play_game``'s loop does. Returns None once the game is over; (seat, legal list)
    of the decision ``ask_fast`` left open, for ``_Table.ask`` to finish; or (seat, None)
    before asking a seat whose player is due its periodic yield to trio
    (``yield_due``), for the caller to await its ``pause`` and call again."""
    players = t.players
    lanes = t.lanes
    append = decisions.append
    while game.phase != OVER:
        legal = game.legal_actions()
        seat = game.seat_to_move()
        # (forced_action says no to any choice; asked only when there is none)
        action = game.forced_action(legal) if len(legal) == 1 else None
        if action is not None:
            game.apply_legal(action)
            append(Decision(seat, action, True, 0.0))
            if game.events:
                queue_events(t, game, True)
            continue
        lane = lanes[seat]
        if yield_due(lane) if lane is not None else players[seat].yield_due():
            return seat, None
        done = ask_fast(t, game, seat, legal)
        if done is None:
            return seat, legal
        append(Decision(seat, done[0], False, done[1]))
        if game.events:
            queue_events(t, game, False)
    return None


def queue_events(t: FrameTable, game: Game, forced: bool) -> None:
    """``_Table.broadcast_now``: queue the frames of the events recorded since the last
    call (``game.events``; ``forced``: the first is the forced action just applied) to
    each seat that wants them (``EventFrames``), then forget those events. A seat whose
    player has failed raises its forfeit (``_Table.forfeit``)."""
    events = game.events
    if not events:
        return
    players = t.players
    lanes = t.lanes
    for seat, frame in t.events.frames(game, forced):
        try:
            lane = lanes[seat]
            if lane is not None:
                queue_frame(lane, frame)
            else:
                players[seat].queue_frame(frame)
        except BotFailure as exc:
            raise t.forfeit(seat, exc) from None
    events.clear()
