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

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final, cast

from protocol import messages as msg
from protocol.codec import map_head, pack

from ..rules.game import OVER, Game
from ..rules.options import Rules
from ..seats.pipelane import Lane, decide_now, queue_frame, yield_due
from ..seats.players import BotFailure
from .clock import Clock
from .requests import (_ARRAY as ARRAY_HEADS, _CARD as CARD_BYTES, _int as packed_int, ACTIONS_BY_BYTES,
                       RequestFrames, frame_body)


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


#: Packed shared events (``EventFrames``), one map per rules: event tuple (hashable:
#: names, seats, action ints, card ints) -> ``pack(public_event(event, any seat))``.
#: Least recently used rules first: only the last EVENT_BODIES_RULES rule sets are kept.
_EVENT_BODIES: OrderedDict[Rules, dict[tuple, bytes]] = OrderedDict()
#: Rule sets whose packed events are kept: a process that plays under many (a test
#: run, a long-lived server) holds at most this many maps.
EVENT_BODIES_RULES = 8
#: Packed events kept per rules: every distinct shared event of a six-seat table (kinds x
#: cards x slots x seats) is some tens of thousands; beyond this, events are packed anew.
EVENT_BODIES_MAX = 100_000
#: (drawing seat, cards drawn, whether the receiver is the drawer) -> the packed draw
#: event up to its card list (the whole event for the others, who see only the count).
#: At most 6 seats x 53 counts x 2 entries.
_DRAW_HEADS: Final[dict[tuple[int, int, bool], bytes]] = {}  # (Final: a C static; emptied in place)


def _event_bodies(rules: Rules) -> dict[tuple, bytes]:
    """The packed shared events of ``rules`` (public_event may read the rules), made the
    most recently used; the least recently used rules' map goes past EVENT_BODIES_RULES."""
    bodies = _EVENT_BODIES.get(rules)
    if bodies is None:
        bodies = _EVENT_BODIES[rules] = {}
        while len(_EVENT_BODIES) > EVENT_BODIES_RULES:
            _EVENT_BODIES.popitem(last=False)
    else:
        _EVENT_BODIES.move_to_end(rules)
    return bodies


def _draw_head(seat: int, count: int, drawer: bool) -> bytes:
    """``_DRAW_HEADS``' entry, packed on first use: the bytes of ``public_event``'s draw
    map (type, seat, count, and for the drawer its cards) up to the card list."""
    key = (seat, count, drawer)
    head = _DRAW_HEADS.get(key)
    if head is None:
        wire: dict[str, object] = {"type": "draw", "seat": seat, "count": count}
        if drawer:
            wire["cards"] = None
            head = pack(wire)[:-1]  # less the nil (0xc0): the card list follows
        else:
            head = pack(wire)
        _DRAW_HEADS[key] = head
    return head


#: ``msg.event_head``'s map (type, game, event) up to the game's value, and the key after it.
_EVENT_HEAD: Final = map_head(3) + pack("type") + pack("event") + pack("game")
_K_EVENT: Final = pack("event")


class EventFrames:
    """The event frames of one game for the seats that want events (``listeners``): the
    bytes of ``encode(event_msg(game=index, event=game.public_event(event, seat)))``,
    joined from packed parts (``codec.pack``). Most events read the same for every seat:
    they are packed once per rules (``_EVENT_BODIES``) and framed once for the table. A
    draw is joined from its packed head and the drawer's cards (only the drawer sees
    them); a decline (only the decliner sees it) and a forced action (only the seat
    that "made" it is told it had no choice: to others that is a hidden fact about its
    hand) are built per seat."""

    def __init__(self, rules: Rules, index: int, listeners: list[int]) -> None:
        self.index = index
        self.listeners = listeners
        #: ``msg.event_head(index)``, joined from packed parts (a spec compares the two).
        self.head = _EVENT_HEAD + packed_int(index) + _K_EVENT
        self.bodies = _event_bodies(rules)

    def frames(self, game: Game, forced: bool) -> list[tuple[int, bytes]]:
        """(seat, frame) for each event recorded since the last broadcast (``game.events``)
        and each listener that sees it, in order. ``forced``: the first event is the
        forced action just applied."""
        out: list[tuple[int, bytes]] = []
        listeners = self.listeners
        events = game.events
        if not listeners or not events:
            return out
        bodies, head = self.bodies, self.head
        first = True
        for ev in events:
            name = ev[0]
            if forced and first:
                for seat in listeners:
                    self._add(out, game, ev, seat, seat == ev[1])
            elif name == "draw":
                drawer: int = ev[1]
                cards: list[int] = ev[2]
                count = len(cards)
                for seat in listeners:
                    if seat == drawer:
                        body = (_draw_head(drawer, count, True) + ARRAY_HEADS[count]
                                + b"".join([CARD_BYTES[c] for c in cards]))
                    else:
                        body = _draw_head(drawer, count, False)
                    out.append((seat, frame_body(head + body)))
            elif name == "decline":
                for seat in listeners:
                    self._add(out, game, ev, seat, False)
            else:
                shared = bodies.get(ev)
                if shared is None:
                    shared = self._shared_body(game, ev, listeners[0])
                frame = frame_body(head + shared)
                for seat in listeners:
                    out.append((seat, frame))
            first = False
        return out

    def _add(self, out: list[tuple[int, bytes]], game: Game, event: tuple, seat: int,
             forced: bool) -> None:
        """Append (seat, the frame of ``event`` as ``seat`` sees it) to ``out``, packed
        whole (``forced``: marked so); nothing when the seat does not see it."""
        wire = game.public_event(event, seat)
        if wire is None:
            return
        if forced:
            wire["forced"] = True
        msg.event_msg(game=self.index, event=wire)  # its checks, for the bytes joined here
        out.append((seat, frame_body(self.head + pack(wire))))

    def _shared_body(self, game: Game, event: tuple, seat: int) -> bytes:
        """The packed form of an event that reads the same for every seat (``seat``: any
        of them), packed and kept in this rules' map (up to EVENT_BODIES_MAX): the same
        events recur in every game (an attack with a card by a seat)."""
        wire = game.public_event(event, seat)
        assert wire is not None, f"{event[0]} events are seen by every seat"
        msg.event_msg(game=self.index, event=wire)  # its checks
        body = pack(wire)
        bodies = self.bodies
        if len(bodies) < EVENT_BODIES_MAX:
            bodies[event] = body
        return body
