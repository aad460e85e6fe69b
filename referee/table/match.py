"""One game and one match between players, in trio.

The referee owns the only true game state (``referee.rules.Game``). For each decision
it sends the seat to move a ``request`` holding that seat's observation, the complete
legal action list and its clock, and it forwards every public event to the bots that
want events. Every decision is asked, a lone pass or take included; only with the
rules' ``ask_forced`` off (an opt-out for speed) are such forced moves applied without
asking, which the other seats can tell by how soon the next event follows.

A bot's failure is a game result, never a referee crash: a timeout, a crash, a
protocol error or an illegal action ends the game as that seat's forfeit (with
``--on-illegal retry:N`` an illegal action is first answered with an error and asked
again, up to N times). The record of the game keeps the evidence.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from protocol import messages as msg

from .clock import Clock, TimeControl
from .framelane import (Decision, EventFrames, FrameTable, SeatKinds, all_seconds, ask_fast,
                        charge_bots, play_frames, queue_events)
from .requests import ACTIONS_BY_BYTES, RequestFrames, game_end_frame, game_start_frame
from .failfast import all_forfeit_warning, forfeited_all
from ..seats.pipelane import flush_now, queue_frame
from ..seats.cgroups import share_turns
from ..seats.players import BotFailure, Player
from ..rules import Game, Rules
from ..rules.game import OVER
from ..rules.actions import MalformedAction, action_from_wire, action_str, shared_wire
from ..rules.cards import card_str, mask_str
from ..rules.deal import check_seed, deal_deck, deal_id
from ..rules.match import first_dealer, next_dealer
from .seeds import new_seed
from . import spectator
from ..errors import UserError

#: A spectator's hook on one game (``play_game(watch=...)``): awaited with each public
#: message of the game, in order (``referee/table/spectator.py`` says which).
Watch = Callable[[dict[str, Any]], Awaitable[None]]

#: Terminations where a seat forfeited (it is the durak).
FORFEITS = ("timeout", "crash", "protocol", "illegal", "disconnect")


class OnIllegalError(UserError, ValueError):
    """The user's --on-illegal value is not ``forfeit`` or ``retry:N``."""

    hint = "give --on-illegal forfeit or retry:N"


def parse_on_illegal(text: str) -> int:
    """``forfeit`` -> 0 retries; ``retry:N`` -> N. Raises OnIllegalError."""
    t = text.strip().lower()
    if t == "forfeit":
        return 0
    if t.startswith("retry:") and t[6:].isdigit() and int(t[6:]) >= 1:
        return int(t[6:])
    raise OnIllegalError(f"--on-illegal {text!r}: expected forfeit or retry:N (N >= 1)")


@dataclass(frozen=True)
class MatchConfig:
    """How a match is played (everything but the bots). ``seed`` keys every deck
    (``rules.deal``); it defaults to a fresh secret one."""

    rules: Rules
    games: int = 10
    seed: str = field(default_factory=new_seed)
    tc: TimeControl = field(default_factory=TimeControl)
    illegal_retries: int = 0
    max_restarts: int = 3
    until_durak: int | None = None
    duplicate: bool = False  #: each deal once per seat rotation (see play_match)

    def __post_init__(self) -> None:
        # An int seed (tests, tools) keys the deals as its decimal text.
        object.__setattr__(self, "seed", check_seed(self.seed))


@dataclass
class GameRecord:
    """Everything needed to replay and verify one game. ``seed`` is the public deal id
    (``"match:3"``): the deck was derived from it and the run's secret seed, and is
    recorded in ``deck``, so a replay needs neither."""

    index: int
    seed: str
    dealer: int
    deck: list[int]
    players: list[str]
    decisions: list[Decision]
    termination: str
    durak: int | None
    last_out: tuple[int, ...]
    reason: str
    bouts: int
    wall_s: float
    forfeit: dict[str, Any] | None = None
    retries: list[dict[str, Any]] = field(default_factory=list)
    #: CPU seconds in-process (builtin) bots spent deciding in this game: they run in the
    #: referee's process, so the referee's own CPU is its process CPU minus this. Not logged.
    #: For players that ``decides_now``: the time of their decisions on the run's clock (wall
    #: time under trio's default clock; see _Table.ask_now).
    inprocess_cpu_s: float = 0.0
    #: For a game played in a worker process: that worker's own CPU seconds since its
    #: previous game (in-process bots excluded). Not logged.
    worker_cpu_s: float | None = None

    @property
    def drawn_seats(self) -> tuple[int, ...]:
        """The seats that share a draw: those that went out in the final bout of a
        ``last_two_out`` draw, the whole table after a stalemate or the action cap; empty
        when there is a durak. (docs/RULES.md, decision 7: one rule for every score.)"""
        if self.durak is not None:
            return ()
        return self.last_out or tuple(range(len(self.players)))

    def score(self, seat: int) -> float:
        """The game score of ``seat``: 1 safe, 1/2 sharing a draw, 0 the durak."""
        if seat == self.durak:
            return 0.0
        return 0.5 if seat in self.drawn_seats else 1.0

    @property
    def overhead_s(self) -> float:
        """Referee time not charged to any bot (wall time minus decision times)."""
        return max(0.0, self.wall_s - sum(all_seconds(self.decisions)))

    def as_dict(self) -> dict[str, Any]:
        """The log record of this game."""
        return {
            "type": "game", "game": self.index, "seed": self.seed, "dealer": self.dealer,
            "players": self.players,
            "deck": [card_str(c) for c in self.deck],
            "decisions": [[d.seat, action_str(d.action), d.forced, round(d.seconds * 1000, 3)]
                          for d in self.decisions],
            "termination": self.termination, "durak": self.durak,
            "last_out": list(self.last_out), "reason": self.reason, "bouts": self.bouts,
            "wall_ms": round(self.wall_s * 1000, 3), "forfeit": self.forfeit,
            "retries": self.retries,
        }


def record_from_dict(data: dict[str, Any]) -> GameRecord:
    """A GameRecord back from its log form (``GameRecord.as_dict``)."""
    from ..rules.actions import parse_action
    from ..rules.cards import parse_card

    return GameRecord(
        data["game"], data["seed"], data["dealer"], [parse_card(c) for c in data["deck"]],
        list(data["players"]),
        [Decision(seat, parse_action(text), forced, ms / 1000) for seat, text, forced, ms in data["decisions"]],
        data["termination"], data["durak"], tuple(data["last_out"]), data["reason"], data["bouts"],
        data["wall_ms"] / 1000, data["forfeit"], list(data.get("retries", [])))


class Forfeit(Exception):
    """A seat lost the game by its own fault (bad message, illegal action, ...)."""

    def __init__(self, seat: int, kind: str, reason: str, evidence: dict[str, Any]) -> None:
        super().__init__(reason)
        self.seat, self.kind, self.reason, self.evidence = seat, kind, reason, evidence


class _Table:
    """The state of one game in play: the engine, clocks, and the players."""

    def __init__(self, players: Sequence[Player], config: MatchConfig, index: int,
                 watch: Watch | None = None) -> None:
        self.players = players
        self.watch = watch
        self.config = config
        self.index = index
        # Request ids count per seat per game (1, 2, 3, ...): a seat's ids say nothing
        # about how often other seats, or other tables, were asked.
        self.request_ids = [0] * len(players)
        kinds = SeatKinds(players)
        self.wants = kinds.wants
        self.listeners = kinds.listeners
        self.decides_now = kinds.decides_now
        tc = config.tc
        self.clocks = [Clock(tc) for _ in players]
        self.retries: list[dict[str, Any]] = []
        self.inprocess_cpu_s = 0.0  #: see GameRecord.inprocess_cpu_s
        #: trio.current_time, read straight from the run's clock (it is what that reads).
        self.now = trio.lowlevel.current_clock().current_time
        self.event_frames = EventFrames(config.rules, index, self.listeners)
        #: Seats whose player takes request frames: asked with frames joined from packed
        #: parts (set up by ``start_game``), and first through ``framelane.ask_fast``.
        self.takes_frames = kinds.takes_frames
        #: Per seat, its player's ``lane`` (Player.lane) or None: the frame lane calls
        #: pipelane with it directly.
        self.lanes = kinds.lanes
        self.requests: RequestFrames | None = None
        #: Events go out without a coroutine (broadcast_now) when no spectator watches and
        #: every seat that wants them queues frames.
        self.events_now = watch is None and kinds.listeners_take_frames
        #: Every decision goes first through the synchronous ``framelane.play_frames``:
        #: every seat takes frames and events go out queued.
        self.frames_now = self.events_now and kinds.all_take_frames

    def start_game(self, game: Game) -> None:
        """Bind the table to its game (the request frames read it)."""
        # (Only seats that take frames are sent them: a game of in-process bots joins none.)
        self.requests = RequestFrames(game, self.index) if any(self.takes_frames) else None
        self.frame_table = FrameTable(self, self.requests)

    async def send(self, seat: int, message: dict[str, Any]) -> None:
        try:
            await self.players[seat].send(message)
        except BotFailure as exc:
            raise Forfeit(seat, exc.kind, exc.reason, exc.evidence) from None

    def broadcast_now(self, game: Game, forced: bool) -> None:
        """``broadcast`` for a table whose ``events_now`` holds: the same frames, queued
        to each seat's stream (written with its next request) without a coroutine
        (``framelane.queue_events``)."""
        queue_events(self.frame_table, game, forced)

    @staticmethod
    def forfeit(seat: int, failure: BotFailure) -> Forfeit:
        """The forfeit of ``seat`` for its bot's ``failure``."""
        return Forfeit(seat, failure.kind, failure.reason, failure.evidence)

    async def broadcast(self, game: Game, forced: bool) -> None:
        """Send the events recorded since the last call to every bot that wants them
        (``EventFrames``), and show them to the spectator if one watches."""
        events = game.events
        if not events:
            return
        if self.events_now:
            self.broadcast_now(game, forced)
            return
        if self.watch is not None:
            # A spectator sees each event as public_event shows it to no seat at all.
            for ev in events:
                message = spectator.public_message(game, self.index, ev)
                if message is not None:
                    await self.watch(message)
        for seat, frame in self.event_frames.frames(game, forced):
            try:
                await self.players[seat].send_frame(frame)
            except BotFailure as exc:
                raise Forfeit(seat, exc.kind, exc.reason, exc.evidence) from None
        events.clear()

    async def ask(self, game: Game, seat: int, legal: list[int]) -> tuple[int, float]:
        """Ask ``seat`` to choose from ``legal``; apply it; return (action, seconds charged).
        Finishes the request ``framelane.ask_fast`` left open, if it did."""
        legal_wire: list[dict[str, Any]] | None = None  # read-only maps: encoded, compared
        clock = self.clocks[seat]
        charged = 0.0
        attempt = 0
        frames = self.frame_table
        opened, frames.open_request = frames.open_request, None
        while True:
            player = self.players[seat]
            answer = None
            if opened is not None:
                _, request_id, frame, budget, answer = opened
                opened = None
            else:
                self.request_ids[seat] += 1
                request_id = self.request_ids[seat]
                budget = clock.budget()
                if player.takes_frames:
                    assert self.requests is not None, "start_game first"
                    frame = self.requests.frame(seat, request_id, legal, clock)
                else:
                    if legal_wire is None:
                        legal_wire = [shared_wire(a) for a in legal]
                    view = ObservationOnDemand(game, seat) if player.lazy_view else game.observe(seat)
                    request = msg.request_msg(id=request_id, game=self.index, observation=view,
                                              legal=legal_wire, clock=clock.wire())
            asked = self.now()
            in_process = player.in_process
            cpu = time.process_time() if in_process else 0.0
            try:
                if answer is None:
                    if player.takes_frames:
                        answer = await player.decide_frame(  # type: ignore[attr-defined]
                            frame, request_id, budget, ACTIONS_BY_BYTES)
                    else:
                        if in_process:
                            # An in-process bot decides without ever yielding to trio: a
                            # Ctrl-C or SIGTERM pending (trio delivers them at checkpoints)
                            # or a cancelled run is seen here, not after the whole match.
                            # (Cheap: it yields only when one is pending.)
                            await trio.lowlevel.checkpoint_if_cancelled()
                        answer = await player.decide(request, budget)
            except BotFailure as exc:
                raise Forfeit(seat, exc.kind, f"{exc.reason} (request {request_id})",
                              exc.evidence) from None
            if type(answer) is int:  # a known action's canonical bytes (ACTIONS_BY_BYTES)
                action, answer = answer, dict(shared_wire(answer))
            else:
                action = None
            if in_process:  # its CPU is not the referee's
                self.inprocess_cpu_s += time.process_time() - cpu
            # The bot's time: from its request fully written to its answer's frame
            # complete (Player.timing); encoding, writing and decoding are ours.
            written, answered = player.timing or (asked, self.now())
            clock.start(written)
            used, in_time = clock.stop(answered)
            charged += used
            if not in_time:
                await self._late(seat, request_id, used, budget, answer)
            # An answer equal to an element of the legal list (the usual case: bots copy
            # one, and the protocol layer returns actions in canonical form) needs no
            # second parse.
            if action is None:
                if legal_wire is None:
                    legal_wire = [shared_wire(a) for a in legal]
                try:
                    action = legal[legal_wire.index(answer)]
                except ValueError:
                    try:
                        action = action_from_wire(answer)
                    except MalformedAction as exc:
                        malformed = f"malformed action for request {request_id}: {exc}"
                        await player.tell(msg.error_msg("protocol", malformed, True))
                        raise Forfeit(seat, "protocol", malformed, {"received": answer}) from None
            if action in legal:
                game.apply_legal(action)
                return action, charged
            reason = illegal_message(game, action, request_id)
            if attempt >= self.config.illegal_retries:
                await player.tell(msg.error_msg("illegal", reason, True))
                raise Forfeit(seat, "illegal", reason, {"received": answer,
                              "legal": [action_str(a) for a in legal]})
            attempt += 1
            self.retries.append({"seat": seat, "request": request_id, "reason": reason})
            await self.send(seat, msg.error_msg("illegal", reason, False))

    async def _late(self, seat: int, request_id: int, used: float, budget: float | None,
                    answer: Any) -> None:
        """The seat answered over its time budget: tell it, and forfeit the game."""
        forfeit = _late_forfeit(seat, request_id, used, budget, answer)
        await self.players[seat].tell(msg.error_msg("timeout", forfeit.reason, True))
        raise forfeit

    def ask_now(self, game: Game, seat: int, legal: list[int]) -> tuple[int, float]:
        """``ask`` for a player that ``decides_now``: the same choice, request id, clock and
        CPU accounting and timeout forfeit (untold: in-process bots need no telling),
        without building the request it would not read. Synchronous: nothing to wait for."""
        self.request_ids[seat] += 1
        now = self.now
        # The run's clock, read once on each side, times the decision for the seat's clock
        # and stands for its CPU (see GameRecord.inprocess_cpu_s): such a decision takes a
        # few microseconds, less than reading the process CPU clock costs (a system call:
        # 2.4 µs in a Firecracker VM); a preemption inside one counts toward the bot.
        asked = now()
        action = self.players[seat].decide_now(game, seat, legal, self.index)
        used = max(0.0, now() - asked)
        self.inprocess_cpu_s += used
        overran = self.clocks[seat].charge(used)
        if overran is not None:
            raise _late_forfeit(seat, self.request_ids[seat], used, overran, shared_wire(action))
        game.apply(action)  # checked: a built-in's bug would raise here, not corrupt the game
        return action, used

    def play_now(self, game: Game, decisions: list[Decision]) -> None:
        """The decision loop of ``play_game`` for a game where every seat ``decides_now``
        and nothing listens (no events recorded, no spectator): play ``game`` to its end,
        appending every action to ``decisions``. Forced actions are applied unasked, every
        other decision is ``ask_now``'s, inlined: the same choices, request ids, clock
        charges and timeout forfeits (raised as Forfeit). Synchronous: no coroutine and no
        event bookkeeping per decision."""
        now, clocks, ids, index = self.now, self.clocks, self.request_ids, self.index
        decide = [p.decide_now for p in self.players]
        legal_actions, forced_action = game.legal_actions, game.forced_action
        apply, apply_legal = game.apply, game.apply_legal
        append = decisions.append
        spent = 0.0
        try:
            while game.phase != OVER:
                legal = legal_actions()
                seat = game.seat_to_move()
                # (forced_action says no to any choice; asked only when there is none)
                action = forced_action(legal) if len(legal) == 1 else None
                if action is not None:
                    apply_legal(action)
                    append(Decision(seat, action, True, 0.0))
                    continue
                ids[seat] += 1
                asked = now()
                action = decide[seat](game, seat, legal, index)
                used = now() - asked
                if used < 0.0:
                    used = 0.0
                spent += used
                overran = clocks[seat].charge(used)
                if overran is not None:
                    raise _late_forfeit(seat, ids[seat], used, overran, shared_wire(action))
                # Checked, as in ask_now: an answer in the legal list (apply's own first
                # test) applies at once; anything else goes to apply, which raises.
                if type(action) is int and action in legal:
                    apply_legal(action)
                else:
                    apply(action)
                append(Decision(seat, action, False, used))
        finally:
            self.inprocess_cpu_s += spent


def _late_forfeit(seat: int, request_id: int, used: float, budget: float | None,
                  answer: Any) -> Forfeit:
    """The forfeit of a seat that answered request ``request_id`` over its time budget."""
    late = f"answered request {request_id} after {used:.3f} s, over its budget of {budget:.3f} s"
    return Forfeit(seat, "timeout", late, {"used_s": round(used, 4), "budget_s": budget,
                                           "received": answer})


def illegal_message(game: Game, action: int, request_id: int) -> str:
    """The ``error`` message (code ``illegal``) for a well-formed action that is not legal."""
    return (f"illegal action {action_str(action)} for request {request_id}: "
            f"{game.illegal_reason(action) or 'not legal now'}")
class ObservationOnDemand(Mapping[str, Any]):
    """``game.observe(seat)`` as a read-only Mapping, computed on first use: for an
    in-process bot (``Player.lazy_view``) that may decide without looking at it. It
    reads the game when first used, so it is valid only while the request is open."""

    __slots__ = ("_game", "_seat", "_view")

    def __init__(self, game: Game, seat: int) -> None:
        self._game, self._seat = game, seat
        self._view: dict[str, Any] | None = None

    def _full(self) -> dict[str, Any]:
        view = self._view
        if view is None:
            view = self._view = self._game.observe(self._seat)
        return view

    def __getitem__(self, key: str) -> Any:
        return self._full()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._full().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._full())

    def __len__(self) -> int:
        return len(self._full())


def forfeit_reason(name: str, kind: str, detail: str | None = None) -> str:
    """The ``reason`` of a game lost by forfeit. ``detail`` (what the bot did wrong, which
    may name a card it holds) goes only to the log and to the forfeiting seat; the other
    seats get the reason without it."""
    return f"{name} forfeited ({kind})" + (f": {detail}" if detail is not None else "")


async def play_game(players: Sequence[Player], config: MatchConfig, *, index: int, seed: str,
                    dealer: int, watch: Watch | None = None) -> GameRecord:
    """Play one game; return its record. Bot failures become forfeits in the record.

    ``seed`` is the deal id (``rules.deal.deal_id``): the deck is
    ``deal_deck(config.seed, seed, deck size)``, the same for every game given that id.
    ``watch``: a spectator's hook, awaited with the game's public messages only (its
    start, every public event, its end; see referee/table/spectator.py); None costs nothing."""
    started = trio.current_time()
    rules = config.rules
    n = len(players)
    table = _Table(players, config, index, watch)
    game = Game.new(rules, n, deck=deal_deck(config.seed, seed, rules.deck), dealer=dealer,
                    record_events=any(table.wants) or watch is not None)
    table.start_game(game)
    names = [p.name for p in players]
    if watch is not None:
        await watch(spectator.start_message(game, index, names))
    decisions: list[Decision] = []
    forfeit = None
    termination: str
    durak: int | None
    last_out: tuple[int, ...]
    share_turns(players)  # only the seat asked to decide runs (unless --ponder)
    was_busy = [p.busy for p in players]
    for p in players:
        p.busy = True  # in a game: a TCP seat's connection is not swapped under it
    try:
        for seat in range(n):
            if table.wants[seat]:
                lane = table.lanes[seat]
                if lane is not None:  # queued (written with the first request), as send does
                    try:
                        queue_frame(lane, game_start_frame(
                            index, seat, names, rules, dealer, game.trump_card,
                            game.hands[seat], game.attacker))
                    except BotFailure as exc:
                        raise table.forfeit(seat, exc) from None
                else:
                    await table.send(seat, msg.game_start_msg(
                        game=index, seat=seat, players=n, names=names, rules=rules.as_dict(),
                        dealer=dealer, trump=card_str(game.trump_card),
                        hand=mask_str(game.hands[seat]), attacker=game.attacker))  # observe's hand
        await table.broadcast(game, False)
        if game.events is None and all(table.decides_now):
            # Such a game never waits for anything: without this checkpoint a match of
            # built-ins never yields, so Ctrl-C and SIGTERM could not stop it.
            await trio.lowlevel.checkpoint()
            table.play_now(game, decisions)  # the whole game in one call (is_over after it)
        while not game.is_over:
            if table.frames_now:
                # As many decisions as finish synchronously; the first that does not is
                # open, and finished below by ``ask`` (None: the game is over).
                pending = play_frames(table.frame_table, game, decisions)
                if pending is None:
                    break
                seat, open_legal = pending
                if open_legal is None:  # the seat's periodic yield to trio, then go on
                    await players[seat].pause()
                    continue
                legal = open_legal
                action, used = await table.ask(game, seat, legal)
                forced = False
            else:
                seat = game.seat_to_move()
                legal = game.legal_actions()
                unasked = game.forced_action(legal)
                forced = unasked is not None
                used = 0.0
                if unasked is None:
                    if table.decides_now[seat]:  # synchronous: no coroutine per decision
                        action, used = table.ask_now(game, seat, legal)
                    else:
                        done = (ask_fast(table.frame_table, game, seat, legal) if table.takes_frames[seat]
                                else None)
                        if done is None:
                            done = await table.ask(game, seat, legal)
                        action, used = done
                else:
                    action = unasked
                    game.apply_legal(action)
            decisions.append(Decision(seat, action, forced, used))
            if game.events:  # (broadcast has nothing to do otherwise)
                if table.events_now:
                    table.broadcast_now(game, forced)
                else:
                    await table.broadcast(game, forced)
    except Forfeit as f:
        forfeit = {"seat": f.seat, "bot": names[f.seat], "kind": f.kind, "reason": f.reason,
                   "decision": len(decisions), "evidence": f.evidence}
        termination, durak, last_out = f.kind, f.seat, ()
        reason = forfeit_reason(names[f.seat], f.kind, f.reason)
    else:
        o = game.outcome
        assert o is not None
        termination, durak, last_out, reason = o.termination, o.durak, o.last_out, o.reason
    # The durak of a forfeit is told why (the detail may name its cards); the others,
    # and a spectator, get the reason without it.
    public_reason = reason
    if forfeit is not None and durak is not None:
        public_reason = forfeit_reason(names[durak], termination)
    if watch is not None:
        await watch(spectator.end_message(index, msg.game_end_msg(
            game=index, durak=durak, termination=termination, reason=public_reason)))
    for seat, p in enumerate(players):
        if table.wants[seat]:
            seat_reason = reason if seat == durak else public_reason
            lane = table.lanes[seat]
            try:
                if lane is None:
                    await p.send(msg.game_end_msg(game=index, durak=durak,
                                                  termination=termination, reason=seat_reason))
                else:
                    # Written at once, as send writes a game_end: without a coroutine when
                    # the pipe takes it all (nearly always), else awaited under WRITE_TIMEOUT.
                    queue_frame(lane, game_end_frame(index, durak, termination, seat_reason))
                    if not flush_now(lane):
                        await p.flush()  # type: ignore[attr-defined]
            except BotFailure:
                pass  # the game is decided; a bot that is gone now fails its next game
        p.busy = was_busy[seat]
    return GameRecord(index, seed, dealer, list(game.deck), names, decisions, termination, durak,
                      last_out, reason, game.bout, trio.current_time() - started, forfeit,
                      table.retries, table.inprocess_cpu_s)


@dataclass
class BotStats:
    name: str
    durak: int = 0
    draws: int = 0
    forfeits: dict[str, int] = field(default_factory=dict)
    decisions: int = 0
    seconds: float = 0.0
    max_seconds: float = 0.0

    def as_dict(self, games: int) -> dict[str, Any]:
        return {"name": self.name, "games": games, "durak": self.durak, "draws": self.draws,
                "forfeits": dict(self.forfeits), "decisions": self.decisions,
                "mean_decision_ms": round(1000 * self.seconds / self.decisions, 3)
                if self.decisions else None,
                "max_decision_ms": round(1000 * self.max_seconds, 3) if self.decisions else None}


#: How many forfeits a MatchResult keeps with their evidence (the first ones); the
#: rest are counted (``forfeits_total``), and the match log holds every one.
FORFEIT_DETAILS_KEPT = 100


@dataclass
class MatchResult:
    """A match's counts so far. It keeps counters, not game records, so its size does
    not grow with the number of games (only the first ``FORFEIT_DETAILS_KEPT``
    forfeits are kept with their evidence). A caller that needs the records keeps
    them itself, from ``play_match``'s ``on_game``."""

    config: MatchConfig
    bots: list[BotStats]
    played: int = 0  #: games finished
    wall_s: float = 0.0
    interrupted: bool = False
    log_path: str | None = None
    sandbox: str | None = None  #: the sandbox program bots ran in (bwrap | none; None: no program bots)
    duplicates: str | None = None  #: sandbox.duplicate_soundness of a --duplicate match
    stderr_logs: dict[str, str] = field(default_factory=dict)  #: bot name -> its stderr log
    #: CPU seconds of the referee process while the match played (time.process_time: every
    #: thread of this process; bot processes are not in it), and of in-process bots in it.
    cpu_s: float = 0.0
    inprocess_cpu_s: float = 0.0
    draws: int = 0
    terminations: dict[str, int] = field(default_factory=dict)
    bouts: int = 0
    asked: int = 0  #: decisions a bot was asked for
    actions: int = 0  #: every action, forced ones included
    overhead_s: float = 0.0  #: sum of GameRecord.overhead_s
    forfeits_total: int = 0
    forfeit_details: list[dict[str, Any]] = field(default_factory=list)  #: the first ones

    def leader(self) -> str:
        """The bot that was the durak least often so far, as short text."""
        if not self.bots:
            return ""
        best = min(self.bots, key=lambda b: b.durak)
        return f"{best.name} (durak {best.durak} of {self.played})"

    def progress_text(self) -> str:
        """The standing so far for a progress line. Two bots: the first's wins, losses and
        draws and its Elo difference with the 95% half-width, as cutechess shows a running
        score (``head_to_head``; "no finite Elo yet" while one bot has lost every game, and
        no "± inf" while the 95% interval is unbounded).
        More bots: the leader."""
        duel = head_to_head(self.bots, self.played)
        if duel is None:
            return f"leader: {self.leader()}" if self.bots and self.played else ""
        score = f"{duel['a']} {duel['wins']}-{duel['losses']}-{duel['draws']} vs {duel['b']}"
        elo, err = duel["elo"], duel["error95"]
        if not math.isfinite(elo):
            return f"{score}, no finite Elo yet"
        if not math.isfinite(err):  # the 95% interval reaches a score of 0 or 1
            return f"{score}, Elo {elo:+.0f} (95% interval unbounded yet)"
        return f"{score}, Elo {elo:+.0f} ± {err:.0f}"

    def add(self, record: GameRecord) -> None:
        """Count a finished game for the bots at its seats (by name: in duplicate mode
        the bots change seats from game to game). The record is not kept."""
        self.played += 1
        self.inprocess_cpu_s += record.inprocess_cpu_s
        by_name = {b.name: b for b in self.bots}
        at = [by_name[name] for name in record.players]
        decisions = record.decisions
        self.asked += charge_bots(decisions, at)
        self.actions += len(decisions)
        self.bouts += record.bouts
        self.overhead_s += record.overhead_s
        self.terminations[record.termination] = self.terminations.get(record.termination, 0) + 1
        for seat in record.drawn_seats:
            at[seat].draws += 1
        if record.durak is None:
            self.draws += 1
        else:
            at[record.durak].durak += 1
        if record.forfeit is not None:
            b = at[record.forfeit["seat"]]
            b.forfeits[record.forfeit["kind"]] = b.forfeits.get(record.forfeit["kind"], 0) + 1
            self.forfeits_total += 1
            if len(self.forfeit_details) < FORFEIT_DETAILS_KEPT:
                self.forfeit_details.append(dict(record.forfeit, game=record.index))

    def summary(self) -> dict[str, Any]:
        """The match result as one JSON-ready map (the CLI's ``--json`` form).
        ``forfeit_details`` holds the first ``FORFEIT_DETAILS_KEPT`` forfeits;
        ``forfeits_total`` counts them all."""
        n = self.played
        asked = self.asked
        rules = self.config.rules
        return {
            "games": n,
            "draws": self.draws,
            "preset": rules.preset,
            "rules": rules.as_dict(),
            "rules_text": rules.describe(),
            "time_control": self.config.tc.as_dict(),
            "seed": self.config.seed,
            "bots": [dict(b.as_dict(n), stderr_log=self.stderr_logs.get(b.name),
                          forfeited_all=forfeited_all(n, b.forfeits)) for b in self.bots],
            "warnings": [all_forfeit_warning(b.name, n, b.forfeits) for b in self.bots
                         if forfeited_all(n, b.forfeits)],
            "terminations": dict(self.terminations),
            "bouts_mean": round(self.bouts / n, 3) if n else 0.0,
            "decisions": asked,
            "actions": self.actions,
            "overhead_us_per_decision": round(1e6 * self.overhead_s / asked, 1) if asked else None,
            **referee_cost(self.cpu_s - self.inprocess_cpu_s, self.overhead_s, asked),
            "wall_s": round(self.wall_s, 3),
            "interrupted": self.interrupted,
            "log": self.log_path,
            "sandbox": self.sandbox,
            "duplicates": self.duplicates,
            "forfeit_details": [dict(f) for f in self.forfeit_details],
            "forfeits_total": self.forfeits_total,
            "elo": head_to_head(self.bots, n),
        }


def head_to_head(bots: Sequence[BotStats], games: int) -> dict[str, Any] | None:
    """For a two-bot match: the Elo difference of the first bot over the second from its
    wins, losses and draws, with the 95% half-width and the likelihood of superiority
    (as cutechess prints them; ``ratings.elo_from_wdl``). Infinite figures (one bot never
    lost) are None in JSON. None for other tables or before any game."""
    from ..scoring.ratings import elo_from_wdl

    if len(bots) != 2 or games == 0:
        return None
    a, b = bots
    wins, losses = b.durak, a.durak
    draws = games - wins - losses
    est = elo_from_wdl(wins, losses, draws)
    return {"a": a.name, "b": b.name, "wins": wins, "losses": losses, "draws": draws,
            "elo": round(est.elo, 1) if math.isfinite(est.elo) else est.elo,
            "error95": round(est.error95, 1) if math.isfinite(est.error95) else est.error95,
            "los": round(est.los, 4)}


def referee_cost(cpu_s: float, wall_s: float, decisions: int) -> dict[str, float | None]:
    """The referee's own cost per decision asked, in microseconds: ``cpu_s`` of measured
    referee CPU (its process and any workers, in-process bots excluded) and ``wall_s`` of
    game wall time not charged to any bot (None without decisions)."""
    def per(seconds: float) -> float | None:
        return round(1e6 * seconds / decisions, 1) if decisions else None
    return {"referee_cpu_us_per_decision": per(max(0.0, cpu_s)),
            "referee_wall_us_per_decision": per(wall_s)}


async def play_match(players: Sequence[Player], config: MatchConfig, *,
                     on_game: Callable[[GameRecord, MatchResult], None] | None = None,
                     result: MatchResult | None = None) -> MatchResult:
    """Play a match: ``config.games`` games, or until some bot has been the durak
    ``config.until_durak`` times. Players must already be started. Pass ``result`` to
    have it filled in as the match goes (it survives a Ctrl-C).

    A player that has ``left`` the table (a person at ``durak-ref play``) ends the match
    after the game in progress.

    Normal mode: the bots keep their seats; game 1 is dealt by the last seat, the durak
    deals the next game, after a draw the dealer stays; game i is deal ``match:i``.
    Duplicate mode: each deal is played once per seat rotation (n players: n games on
    the same deck, every bot taking every seat of it), always dealt by the last seat so
    the deals are identical; deal d is ``match:d``. Decks: ``play_game``.
    """
    n = len(players)
    config.rules.check_table(n)
    if result is None:
        result = MatchResult(config, [BotStats(p.name) for p in players])
    dealer = first_dealer(n)
    start = trio.current_time()
    cpu_start = time.process_time() - result.cpu_s  # a result filled in before keeps counting
    for index in range(config.games):
        if config.duplicate:
            deal, rotation = divmod(index, n)
            table = list(players[rotation:]) + list(players[:rotation])
            seed = deal_id("match", deal)
        else:
            table, seed = list(players), deal_id("match", index)
        for p in table:
            await p.prepare_game(config.max_restarts)
        record = await play_game(table, config, index=index, seed=seed, dealer=dealer)
        result.cpu_s = time.process_time() - cpu_start
        result.add(record)
        result.wall_s = trio.current_time() - start
        if on_game is not None:
            on_game(record, result)
        if not config.duplicate:
            dealer = next_dealer(dealer, record.durak)
        if config.until_durak and any(b.durak >= config.until_durak for b in result.bots):
            break
        if any(p.left for p in players):
            break
    result.wall_s = trio.current_time() - start
    return result
