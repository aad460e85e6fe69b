"""The decision loop of a game: every seat asked one way, every answer judged in one place.

A decision: the loop makes an ``Ask`` (the seat, its request id, the legal list, the
budget) and calls the seat's ``Player.attempt(ask)``, which may finish the decision at
once (a built-in choosing from the engine, a pipe bot that answers within a
millisecond) or say "not yet" (None). ``play`` goes on so, decision after decision,
without a coroutine, until a seat says "not yet" (it returns that ``Ask``), a spectator
has messages to see, or the game is over (or adjudicated). ``match.play_game`` then
awaits the seat's ``Player.finish(ask)`` and hands the answer to ``conclude``, exactly
where ``play`` hands its own: one judge (``settle``: the clock, the budget, the answer's
form, its legality, the retries) and one point where an applied decision is recorded,
its events go out and the game may be adjudicated (``record``; table/adjudicator.py).
Only ``finish`` and the spectator's hook are awaited.

This module imports no trio (a test enforces that): it is compiled by mypyc (setup.py),
and correct and tested as plain Python too. Bot data is typed ``object``: a compiled
function checks the types of its arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter
from typing import Any, Final

from protocol import messages as msg
from protocol.codec import encode

from ..rules.actions import MalformedAction, action_from_wire, action_str, shared_wire
from ..rules.game import OVER, Game
from ..rules.options import Rules
from ..seats.pipelane import Request, Seat, seat_of
from ..seats.players import BotFailure
from .clock import Clock
from .forfeit import Forfeit, failed, illegal_message, late
from .observer import SPECTATOR, sees_decision
from .requests import ACTIONS_BY_BYTES, EventFrames, RequestFrames
from .spectator import public_message

_clock: Final = perf_counter


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


class Table:
    """One game in play, as the loop reads it at every decision: the players, their
    clocks and request ids, the game's frames, what the loop has counted. Made by
    ``match.play_game`` for one game (``start`` binds it to the game); every table the
    frames fill is this game's own. It holds no reference to the interpreted caller."""

    def __init__(self, players: Sequence[Any], clocks: list[Clock], index: int,
                 illegal_retries: int, now: Any, clock_offset: float | None, watching: bool) -> None:
        self.players: list[Any] = list(players)
        self.clocks = clocks
        self.index = index
        self.illegal_retries = illegal_retries
        #: The run's clock (trio's current_time), and the offset that makes
        #: ``perf_counter() + offset`` read it without an interpreted call (None: ask ``now``).
        self.now = now
        self.clock_offset = clock_offset
        #: Request ids count per seat per game (1, 2, 3, ...): a seat's ids say nothing
        #: about how often other seats, or other tables, were asked.
        self.ids = [0] * len(self.players)
        #: Per seat: the player decides in the referee's process (``Player.in_process``):
        #: its time is counted as its own CPU, not the referee's (``inprocess_cpu_s``).
        self.in_process: list[bool] = [bool(p.in_process) for p in self.players]
        #: The seats that are sent the game's messages (``Player.wants_events``).
        self.listeners: list[int] = [s for s in range(len(self.players)) if self.players[s].wants_events]
        #: Per seat, its player's ``attempt`` and ``hear`` as one ``Seat``, looked up once
        #: for the game (the loop calls them at every decision and every event; a pipe
        #: bot's lane is called natively).
        self.seats: list[Seat] = [seat_of(p) for p in self.players]
        self.watching = watching  #: a spectator watches: its messages are kept in ``seen``
        self.seen: list[dict[str, Any]] = []  #: spectator messages not shown yet
        self.retries: list[dict[str, Any]] = []  #: every illegal answer asked again
        self.inprocess_cpu_s = 0.0  #: see match.GameRecord.inprocess_cpu_s
        self.charged = 0.0  #: seconds charged to the decision being asked (over its retries)
        self.attempt = 0  #: illegal answers to the decision being asked
        self.game: Game | None = None
        self.events: EventFrames | None = None
        self.requests: RequestFrames | None = None  #: made at the first request frame
        #: The game's ``adjudicator.Adjudicator`` (None: adjudication off): asked after
        #: every applied decision whether the solver has proved the outcome.
        self.adjudicator: Any = None

    def start(self, game: Game, rules: Rules) -> None:
        """Bind the table to its freshly dealt ``game``."""
        self.game = game
        if self.listeners:
            self.events = EventFrames(rules, self.index, self.listeners)

    def time(self) -> float:
        """The run's clock now (trio.current_time)."""
        offset = self.clock_offset
        if offset is not None:
            return _clock() + offset
        now: Any = self.now
        return float(now())

    def request_frames(self) -> RequestFrames:
        """The game's request frames, made on first use (a game of built-ins makes none)."""
        frames = self.requests
        if frames is None:
            assert self.game is not None, "start the table first"
            frames = self.requests = RequestFrames(self.game, self.index)
        return frames


class Ask(Request):
    """One decision asked of one seat: what ``Player.attempt`` and ``Player.finish`` read
    (their contract: ``referee/seats/players.py``). Valid while the decision is open:
    its frame and message read the game as it is then. (Its ``Request`` fields are
    read by the compiled pipe lane natively.)"""

    def __init__(self, table: Table, game: Game, seat: int, legal: list[int]) -> None:
        request_id = table.ids[seat] + 1
        table.ids[seat] = request_id
        clock = table.clocks[seat]
        # (answers: every action's canonical bytes; the frame is made on first use; under
        # the cpu clock the seat is waited for the backstop, and may use its budget of CPU)
        super().__init__(request_id, clock.wait(), ACTIONS_BY_BYTES, None,
                         clock.budget() if clock.cpu else None)
        self.game = game
        self.seat = seat
        self.index = table.index  #: the game's number in its match
        self.legal = legal  #: the legal actions (ints)
        self.clock = clock
        self.asked = table.time()  #: when the loop asked (the start of an untimed answer)
        self.used = 0.0  #: the seconds charged for the answer (set by ``settle``)
        self._table = table
        self._message: dict[str, Any] | None = None

    def frame(self) -> bytes:
        """The request's frame: ``encode(self.message())``, joined from packed parts."""
        frame = self._frame
        if frame is None:
            frame = self._frame = self._table.request_frames().frame(
                self.seat, self.id, self.legal, self.clock)
        return frame

    def legal_wire(self) -> list[dict[str, Any]]:
        """The legal actions as protocol maps (shared, read-only: compare or copy them)."""
        return [shared_wire(a) for a in self.legal]

    def message(self, observation: Any = None) -> dict[str, Any]:
        """The request message. ``observation``: what to put in place of
        ``game.observe(seat)`` (a view computed on first use, for a reader in this
        process); without it the message is built once and shared by the callers."""
        if observation is None and self._message is not None:
            return self._message
        view = self.game.observe(self.seat) if observation is None else observation
        request = msg.request_msg(id=self.id, game=self.index, observation=view,
                                  legal=self.legal_wire(), clock=self.clock.wire())
        if observation is None:
            self._message = request
        return request


def play(t: Table, game: Game, decisions: list[Decision]) -> Ask | None:
    """Play ``game`` on ``t`` for as long as every decision finishes synchronously:
    forced actions applied unasked (``Rules.ask_forced`` off), every other decision asked
    (``Player.attempt``) and its answer concluded, each appended to ``decisions``.
    Returns the ``Ask`` a seat has not answered yet (the caller awaits its
    ``Player.finish`` and calls ``conclude``), or None: the game is over or adjudicated,
    or a spectator has messages to see (``t.seen``). Raises Forfeit."""
    seats = t.seats
    while game.phase != OVER:
        legal = game.legal_actions()
        seat = game.seat_to_move()
        # (forced_action says no to any choice; asked only when there is none)
        action = game.forced_action(legal) if len(legal) == 1 else None
        if action is not None:
            game.apply_legal(action)
            if record(t, game, decisions, Decision(seat, action, True, 0.0)):
                return None
            continue
        ask = Ask(t, game, seat, legal)
        try:
            answer = seats[seat].attempt(ask)
        except BotFailure as exc:
            raise failed(seat, exc, ask.id) from None
        if answer is None:
            return ask
        if conclude(t, game, ask, answer, decisions):
            return None
    return None


def conclude(t: Table, game: Game, ask: Ask, answer: object, decisions: list[Decision]) -> bool:
    """Judge ``answer`` to ``ask`` (``settle``), count an in-process seat's time, and
    record the decision if it was applied. Returns whether the loop stops (``record``).
    Raises Forfeit."""
    decision = settle(t, game, ask, answer)
    if t.in_process[ask.seat]:
        t.inprocess_cpu_s += ask.used if ask.cpu < 0.0 else ask.cpu
    return decision is not None and record(t, game, decisions, decision)


def settle(t: Table, game: Game, ask: Ask, answer: object) -> Decision | None:
    """The one judge of an answer: charge the seat's clock the answer's time (its
    ``timing``, else from ``ask.asked`` to now; under the cpu clock the CPU the seat
    measured, ``ask.cpu``: ``Clock.charge``), then apply it when in time, well formed
    and legal; return the decision. An illegal answer with retries left
    (``--on-illegal retry:N``) is recorded in ``t.retries``, the seat is sent a
    non-fatal error, and None says the seat is to be asked again. Anything else raises
    the seat's Forfeit: late (``timeout``), not an action (``protocol``), illegal. The
    answer of a seat in the referee's process (``Player.in_process``) that is no legal
    action raises the engine's error instead: a bug of ours, not a game result."""
    seat = ask.seat
    timing = ask.timing
    used = (t.time() - ask.asked) if timing is None else timing[1] - timing[0]
    if used < 0.0:
        used = 0.0
    clock = ask.clock
    cpu = ask.cpu
    overran = clock.charge(used, cpu)
    charged = clock.ruling(used, cpu)  # (under the cpu clock: its CPU, ``Clock.ruling``)
    ask.used = charged
    t.charged += charged
    if overran is not None:
        metered = clock.cpu and cpu >= 0.0
        raise late(seat, ask.id, charged, overran, _received(answer),
                   used if metered else None, metered and charged == cpu)
    legal = ask.legal
    # An action number (a fast reader maps canonical bytes to it; a built-in chooses one)
    # or a map equal to an element of the legal list (bots copy one) needs no parse.
    if type(answer) is int:
        action = answer
    elif t.in_process[seat] and type(answer) is not dict:
        game.apply(answer)  # (raises: see below)
        raise AssertionError("apply took an answer that is no action")
    else:
        action = _parse(ask, answer)
    if action in legal:
        game.apply_legal(action)
        if t.watching and not sees_decision(game, SPECTATOR):
            # A decision the spectator does not see (a declined trump exchange) leaves
            # no trace on the clock it is shown (``Clock.hide``; ``deliver``).
            ask.clock.hide(t.charged, t.attempt + 1)
        decision = Decision(seat, action, False, t.charged)
        t.charged, t.attempt = 0.0, 0
        return decision
    if t.in_process[seat]:
        # A bot in the referee's process is the referee's own code: its wrong answer is
        # our bug, raised with the engine's error (never a game played on, nor a forfeit).
        game.apply(action)
        raise AssertionError("apply took an illegal action")
    reason = illegal_message(game, action, ask.id)
    if t.attempt >= t.illegal_retries:
        raise Forfeit(seat, "illegal", reason, {"received": _received(answer),
                      "legal": [action_str(a) for a in legal]}, msg.error_msg("illegal", reason, True))
    t.attempt += 1
    t.retries.append({"seat": seat, "request": ask.id, "reason": reason})
    try:
        t.seats[seat].hear(encode(msg.error_msg("illegal", reason, False)))
    except BotFailure as exc:
        raise failed(seat, exc) from None
    return None


def _parse(ask: Ask, answer: object) -> int:
    """The action an answer's map names. Raises the seat's Forfeit (``protocol``) for a
    map that is not an action."""
    legal_wire = ask.legal_wire()
    if answer in legal_wire:
        return ask.legal[legal_wire.index(answer)]
    try:
        return action_from_wire(answer)
    except MalformedAction as exc:
        malformed = f"malformed action for request {ask.id}: {exc}"
        raise Forfeit(ask.seat, "protocol", malformed, {"received": answer},
                      msg.error_msg("protocol", malformed, True)) from None


def _received(answer: object) -> object:
    """An answer as evidence: its action map."""
    return dict(shared_wire(answer)) if type(answer) is int else answer


def record(t: Table, game: Game, decisions: list[Decision], decision: Decision) -> bool:
    """The one point where an applied decision (forced ones too) is recorded: appended to
    ``decisions``, and the events it caused sent to the seats that listen and kept for a
    spectator (``deliver``); then, with adjudication on, the solver gets its slice
    (between decisions: no seat's clock runs). Returns whether the loop stops here: a
    spectator has messages to see, or the game's outcome is proved
    (``t.adjudicator.result``)."""
    decisions.append(decision)
    seen = False
    if game.events:
        deliver(t, game, decision.forced)
        seen = len(t.seen) != 0
    adjudicator = t.adjudicator
    if adjudicator is not None and adjudicator.settles(game):
        return True
    return seen


def deliver(t: Table, game: Game, forced: bool) -> None:
    """Hand the events recorded since the last call (``game.events``; ``forced``: the first
    is the forced action just applied) to each listening seat as frames
    (``Player.hear``; ``EventFrames``) and, when a spectator watches, to ``t.seen``,
    each with every seat's public clock after them (``Clock.public_remaining_ms``);
    then forget them. A seat whose player has failed raises its Forfeit."""
    events = game.events
    if not events:
        return
    frames = t.events
    if frames is not None:
        seats = t.seats
        for seat, frame in frames.frames(game, forced):
            try:
                seats[seat].hear(frame)
            except BotFailure as exc:
                raise failed(seat, exc) from None
    if t.watching:
        shown: list[int | None] | None = None
        for ev in events:
            message = public_message(game, t.index, ev)
            if message is not None:
                if shown is None:
                    shown = [c.public_remaining_ms() for c in t.clocks]
                message["clocks"] = shown
                t.seen.append(message)
    events.clear()
