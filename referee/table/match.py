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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from protocol import messages as msg

from ..errors import UserError
from ..rules import Game, Rules
from ..rules.actions import action_str
from ..rules.cards import card_str
from ..rules.deal import check_seed, deal_deck, deal_id
from ..rules.game import OVER
from ..rules.match import first_dealer, next_dealer
from ..seats.cgroups import share_turns
from ..seats.pipelane import clock_offset
from ..seats.players import BotFailure, Player
from . import spectator
from .adjudicator import ADJUDICATED, Adjudicator, Budget
from .clock import Clock, TimeControl
from .failfast import all_forfeit_warning, forfeited_all

# (FORFEITS, forfeit_reason and illegal_message are read from here by the replay and the
# tests: `X as X` re-exports them, for mypy's no-implicit-reexport.)
from .forfeit import FORFEITS as FORFEITS
from .forfeit import Forfeit, failed
from .forfeit import forfeit_reason as forfeit_reason
from .forfeit import illegal_message as illegal_message
from .framelane import Decision, Table, all_seconds, charge_bots, conclude, deliver, play
from .requests import game_end_frame, game_start_frame
from .seeds import new_seed

#: A spectator's hook on one game (``play_game(watch=...)``): awaited with each public
#: message of the game, in order (``referee/table/spectator.py`` says which).
Watch = Callable[[dict[str, Any]], Awaitable[None]]


class CpuClockError(UserError, ValueError):
    """``--clock cpu`` with a seat whose CPU time the referee cannot read."""

    hint = ("use --clock wall (the wall clock), or seat only built-ins and bot programs in "
            "control groups with CPU accounting")


def check_cpu_clock(players: Sequence[Player], tc: TimeControl) -> None:
    """Under the cpu clock, refuse a table with a seat that cannot measure its CPU time
    (``Player.cpu_time_why_not``): charging it its wall time would change its clock
    unannounced. Raises CpuClockError naming the seat and why."""
    if not tc.cpu:
        return
    for p in players:
        why = p.cpu_time_why_not()
        if why is not None:
            raise CpuClockError(f"--clock cpu: seat {p.name}: {why}")


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
    #: Let a program bot's process play more than one seat rotation of a deal (it can
    #: remember the hands: unsound duplicates; ``twin_guard``). Off: a twin gets a
    #: fresh process.
    keep_bots_across_twins: bool = False
    #: The solver's budget per game once the talon is empty (None: no adjudication;
    #: referee/table/adjudicator.py).
    adjudicate: Budget | None = None

    def __post_init__(self) -> None:
        # An int seed (tests, tools) keys the deals as its decimal text.
        object.__setattr__(self, "seed", check_seed(self.seed))


def twin_guard(config: MatchConfig, deal: str) -> str | None:
    """The ``deal`` to give ``Player.prepare_game`` before a game of that deal id: a
    program bot's process that was already prepared for it is replaced by a fresh one,
    so no process plays two seat rotations of one deal (the cost: one start-up per
    such twin and bot; nothing where deals never repeat). None under
    ``keep_bots_across_twins``: processes are kept, and may remember."""
    return None if config.keep_bots_across_twins else deal


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
    #: A decision the built-in measured (``ask.cpu``: an awaited one, and under the cpu
    #: clock every one) counts the CPU time of the thread that decided; another awaited one
    #: the process CPU time of the call; one finished at once under the wall clock its
    #: time on the run's clock (reading a CPU clock would cost more than such a decision).
    inprocess_cpu_s: float = 0.0
    #: For a game played in a worker process: that worker's own CPU seconds since its
    #: previous game (in-process bots excluded). Not logged.
    worker_cpu_s: float | None = None
    #: For an ``adjudicated`` game: the proof (``Adjudication.as_dict``: the solver's line
    #: from the last recorded decision to the end, what it cost); else None.
    adjudication: dict[str, Any] | None = None

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
        """The log record of this game (``adjudication`` only for an adjudicated one)."""
        record = {
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
        if self.adjudication is not None:
            record["adjudication"] = self.adjudication
        return record


def record_from_dict(data: dict[str, Any]) -> GameRecord:
    """A GameRecord back from its log form (``GameRecord.as_dict``)."""
    from ..rules.actions import parse_action
    from ..rules.cards import parse_card

    return GameRecord(
        data["game"], data["seed"], data["dealer"], [parse_card(c) for c in data["deck"]],
        list(data["players"]),
        [Decision(seat, parse_action(text), forced, ms / 1000) for seat, text, forced, ms in data["decisions"]],
        data["termination"], data["durak"], tuple(data["last_out"]), data["reason"], data["bouts"],
        data["wall_ms"] / 1000, data["forfeit"], list(data.get("retries", [])),
        adjudication=data.get("adjudication"))


async def play_game(players: Sequence[Player], config: MatchConfig, *, index: int, seed: str,
                    dealer: int, watch: Watch | None = None) -> GameRecord:
    """Play one game; return its record. Bot failures become forfeits in the record.

    ``seed`` is the deal id (``rules.deal.deal_id``): the deck is
    ``deal_deck(config.seed, seed, deck size)``, the same for every game given that id.
    ``watch``: a spectator's hook, awaited with the game's public messages only (its
    start, every public event, its end; see referee/table/spectator.py); None costs nothing.
    Every decision goes through the one loop of ``framelane`` (see its docstring)."""
    check_cpu_clock(players, config.tc)
    started = trio.current_time()
    rules = config.rules
    table = _table(players, config, index, watch is not None)
    game = Game.new(rules, len(players), deck=deal_deck(config.seed, seed, rules.deck),
                    dealer=dealer, record_events=bool(table.listeners) or watch is not None)
    table.start(game, rules)
    names = [p.name for p in players]
    if config.adjudicate is not None:
        table.adjudicator = Adjudicator(config.adjudicate, names)
    if watch is not None:
        await watch(spectator.start_message(game, index, names))
    decisions: list[Decision] = []
    forfeit = None
    adjudication = None
    durak: int | None
    last_out: tuple[int, ...]
    share_turns(players)  # only the seat asked to decide runs (unless --ponder)
    was_busy = [p.busy for p in players]
    for p in players:
        p.busy = True  # in a game: a TCP seat's connection is not swapped under it
    try:
        _deal(table, game, names, rules, dealer)
        # A game whose seats never wait would not yield to trio at all without this: a
        # match of built-ins could not be stopped by Ctrl-C or SIGTERM.
        await trio.lowlevel.checkpoint()
        await _decisions(table, game, decisions, watch)
    except Forfeit as f:
        if f.tell is not None and not table.in_process[f.seat]:  # (in-process: nobody to tell)
            await players[f.seat].tell(f.tell)
        forfeit = {"seat": f.seat, "bot": names[f.seat], "kind": f.kind, "reason": f.reason,
                   "decision": len(decisions), "evidence": f.evidence}
        termination, durak, last_out = f.kind, f.seat, ()
        reason = forfeit_reason(names[f.seat], f.kind, f.reason)
    else:
        proof = table.adjudicator.result if table.adjudicator is not None else None
        if proof is not None:
            termination, durak, last_out, reason = ADJUDICATED, proof.durak, proof.last_out, proof.reason
            adjudication = proof.as_dict()
        else:
            o = game.outcome
            assert o is not None
            termination, durak, last_out, reason = o.termination, o.durak, o.last_out, o.reason
    await _end(table, watch, durak, termination, reason, forfeit is not None)
    for seat, p in enumerate(players):
        p.busy = was_busy[seat]
    return GameRecord(index, seed, dealer, list(game.deck), names, decisions, termination, durak,
                      last_out, reason, game.bout, trio.current_time() - started, forfeit,
                      table.retries, table.inprocess_cpu_s, adjudication=adjudication)


def _table(players: Sequence[Player], config: MatchConfig, index: int, watching: bool) -> Table:
    """The loop's table for one game of ``players`` under ``config``."""
    clock = trio.lowlevel.current_clock()
    return Table(players, [Clock(config.tc) for _ in players], index, config.illegal_retries,
                 clock.current_time, clock_offset(clock), watching)


def _deal(table: Table, game: Game, names: list[str], rules: Rules, dealer: int) -> None:
    """Tell each listening seat its ``game_start`` (queued: written with its first
    request), then the events of the deal. Raises Forfeit."""
    for seat in table.listeners:
        try:
            table.players[seat].hear(game_start_frame(table.index, seat, names, rules, dealer,
                                                      game.trump_card, game.hands[seat],
                                                      game.attacker))
        except BotFailure as exc:
            raise failed(seat, exc) from None
    deliver(table, game, False)


async def _decisions(table: Table, game: Game, decisions: list[Decision],
                     watch: Watch | None) -> None:
    """Play ``game`` to its end: ``framelane.play`` decides for as long as every seat
    answers at once; a seat that said "not yet" is awaited here (``Player.finish``) and
    its answer concluded as ``play`` concludes its own; a spectator is shown what it may
    see after each decision. Raises Forfeit."""
    while True:
        if table.seen:
            seen, table.seen = table.seen, []
            assert watch is not None
            for message in seen:
                await watch(message)
        if game.phase == OVER or (table.adjudicator is not None and table.adjudicator.result is not None):
            return
        ask = play(table, game, decisions)
        if ask is None:
            continue
        seat = ask.seat
        in_process = table.in_process[seat]
        cpu = time.process_time() if in_process else 0.0
        try:
            answer = await table.players[seat].finish(ask)
        except BotFailure as exc:
            raise failed(seat, exc, ask.id) from None
        if in_process and ask.cpu < 0.0:  # its CPU is not the referee's (unless it said so)
            ask.cpu = time.process_time() - cpu
        conclude(table, game, ask, answer, decisions)


async def _end(table: Table, watch: Watch | None, durak: int | None, termination: str,
               reason: str, forfeited: bool) -> None:
    """Tell the spectator and every listening seat how the game ended: the durak of a
    forfeit is told why (the detail may name its cards); the others, and a spectator,
    get the reason without it. A seat that fails now fails its next game instead."""
    public_reason = reason
    if forfeited and durak is not None:
        public_reason = forfeit_reason(table.players[durak].name, termination)
    index = table.index
    if watch is not None:
        await watch(spectator.end_message(index, msg.game_end_msg(
            game=index, durak=durak, termination=termination, reason=public_reason)))
    for seat in table.listeners:
        player = table.players[seat]
        try:
            player.hear(game_end_frame(index, durak, termination,
                                       reason if seat == durak else public_reason))
            await player.flush()  # written at once
        except BotFailure:
            pass  # the game is decided; a bot that is gone now fails its next game


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
            await p.prepare_game(config.max_restarts, deal=twin_guard(config, seed))
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
