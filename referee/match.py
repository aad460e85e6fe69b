"""One game and one match between players, in trio.

The referee owns the only true game state (``referee.rules.Game``). Each decision it
sends the seat to move a ``request`` holding that seat's observation and the complete
legal action list, and forwards every public event to the bots that want events.
Forced moves (a lone pass or take) are applied without asking, unless the rules say
``ask_forced``. A bot's bad answer ends the game as a forfeit: it is a game result,
never a referee crash.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from protocol import messages as msg
from .rules import Game, Rules
from .rules.actions import MalformedAction, action_from_wire, action_str, action_to_wire
from .rules.cards import card_str
from .rules.match import first_dealer, game_seed, next_dealer
from .players import BotFailure, Player

#: Terminations where a seat forfeited (it is the durak).
FORFEITS = ("timeout", "crash", "protocol", "illegal", "disconnect")


@dataclass
class Decision:
    seat: int
    action: int
    forced: bool
    seconds: float


@dataclass
class GameRecord:
    """Everything needed to replay and verify one game."""

    index: int
    seed: str
    dealer: int
    deck: list[int]
    decisions: list[Decision]
    termination: str
    durak: int | None
    last_out: tuple[int, ...]
    reason: str
    bouts: int
    forfeit: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "game": self.index, "seed": self.seed, "dealer": self.dealer,
            "deck": [card_str(c) for c in self.deck],
            "decisions": [[d.seat, action_str(d.action), d.forced, round(d.seconds, 6)]
                          for d in self.decisions],
            "termination": self.termination, "durak": self.durak,
            "last_out": list(self.last_out), "reason": self.reason, "bouts": self.bouts,
            "forfeit": self.forfeit,
        }


class Forfeit(Exception):
    """A seat lost the game by its own fault (bad message, illegal action, ...)."""

    def __init__(self, seat: int, kind: str, reason: str, evidence: Any = None) -> None:
        super().__init__(reason)
        self.seat, self.kind, self.reason, self.evidence = seat, kind, reason, evidence


async def play_game(players: Sequence[Player], rules: Rules, *, index: int, seed: str,
                    dealer: int, next_request_id: Callable[[], int]) -> GameRecord:
    """Play one game; return its record. Bot failures become forfeits in the record."""
    n = len(players)
    wants = [p.wants_events for p in players]
    game = Game.new(rules, n, seed=seed, dealer=dealer, record_events=any(wants))
    deck = list(game.deck)
    names = [p.name for p in players]
    decisions: list[Decision] = []
    forfeit = None
    try:
        for seat, p in enumerate(players):
            if wants[seat]:
                await _send(p, seat, msg.game_start_msg(
                    game=index, seat=seat, players=n, names=names, rules=rules.as_dict(),
                    dealer=dealer, trump=card_str(game.trump_card),
                    hand=game.observe(seat)["hand"], attacker=game.attacker))
        await _broadcast(game, players, wants, index, None)
        while not game.is_over:
            seat = game.current_seat
            assert seat is not None
            action = game.forced_action()
            forced = action is not None
            elapsed = 0.0
            if action is None:
                action, elapsed = await _ask(game, players[seat], seat, index, next_request_id())
            else:
                game.apply_legal(action)
            decisions.append(Decision(seat, action, forced, elapsed))
            await _broadcast(game, players, wants, index, forced)
    except Forfeit as f:
        forfeit = {"seat": f.seat, "bot": names[f.seat], "kind": f.kind, "reason": f.reason,
                   "decision": len(decisions), "evidence": f.evidence}
        termination, durak, last_out, reason = f.kind, f.seat, (), f"{names[f.seat]}: {f.reason}"
    else:
        o = game.outcome
        assert o is not None
        termination, durak, last_out, reason = o.termination, o.durak, o.last_out, o.reason
    record = GameRecord(index, seed, dealer, deck, decisions, termination, durak, last_out,
                        reason, game.bout, forfeit)
    end = msg.game_end_msg(game=index, durak=durak, termination=termination, reason=reason)
    for seat, p in enumerate(players):
        if wants[seat]:
            try:
                await p.send(end)
            except BotFailure:
                pass  # the game is decided; a bot that is gone now fails its next game
    return record


async def _send(player: Player, seat: int, message: dict[str, Any]) -> None:
    try:
        await player.send(message)
    except BotFailure as exc:
        raise Forfeit(seat, exc.kind, exc.reason, exc.evidence) from None


async def _ask(game: Game, player: Player, seat: int, index: int, request_id: int) -> tuple[int, float]:
    legal = game.legal_actions()
    request = msg.request_msg(id=request_id, game=index, observation=game.observe(seat),
                              legal=[action_to_wire(a) for a in legal])
    start = time.perf_counter()
    try:
        answer = await player.decide(request)
    except BotFailure as exc:
        raise Forfeit(seat, exc.kind, f"{exc.reason} (request {request_id})", exc.evidence) from None
    elapsed = time.perf_counter() - start
    try:
        action = action_from_wire(answer)
    except MalformedAction as exc:
        raise Forfeit(seat, "protocol", f"malformed action: {exc}", {"received": answer}) from None
    if action not in legal:
        reason = game.illegal_reason(action) or "not legal now"
        raise Forfeit(seat, "illegal", f"illegal action {action_str(action)} (request {request_id}): "
                      f"{reason}", {"received": answer}) from None
    game.apply_legal(action)
    return action, elapsed


async def _broadcast(game: Game, players: Sequence[Player], wants: list[bool], index: int,
                     forced: bool | None) -> None:
    """Send the events recorded since the last call to every bot that wants them."""
    events = game.events
    if not events:
        return
    for seat, p in enumerate(players):
        if not wants[seat]:
            continue
        for i, ev in enumerate(events):
            wire = game.public_event(ev, seat)
            if forced and i == 0:
                wire["forced"] = True
            await _send(p, seat, msg.event_msg(game=index, event=wire))
    events.clear()


@dataclass
class BotStats:
    name: str
    durak: int = 0
    draws: int = 0
    forfeits: dict[str, int] = field(default_factory=dict)
    decisions: int = 0
    seconds: float = 0.0

    def as_dict(self, games: int) -> dict[str, Any]:
        return {"name": self.name, "games": games, "durak": self.durak, "draws": self.draws,
                "forfeits": dict(self.forfeits), "decisions": self.decisions,
                "mean_decision_ms": round(1000 * self.seconds / self.decisions, 3)
                if self.decisions else None}


@dataclass
class MatchResult:
    rules: Rules
    seed: int
    bots: list[BotStats]
    games: list[GameRecord] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def draws(self) -> int:
        return sum(1 for g in self.games if g.durak is None)

    def summary(self) -> dict[str, Any]:
        """The match result as one JSON-ready map (the CLI's ``--json`` form)."""
        n = len(self.games)
        return {
            "games": n,
            "draws": self.draws,
            "rules": self.rules.as_dict(),
            "preset": self.rules.preset,
            "seed": self.seed,
            "bots": [b.as_dict(n) for b in self.bots],
            "terminations": _count(g.termination for g in self.games),
            "bouts_mean": round(sum(g.bouts for g in self.games) / n, 3) if n else 0.0,
            "decisions": sum(1 for g in self.games for d in g.decisions if not d.forced),
            "actions": sum(len(g.decisions) for g in self.games),
            "wall_s": round(self.wall_s, 3),
        }


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


async def play_match(players: Sequence[Player], rules: Rules, *, games: int, seed: int,
                     until_durak: int | None = None,
                     on_game: Callable[[GameRecord, MatchResult], None] | None = None) -> MatchResult:
    """Play a match: ``games`` games, or until some bot has been the durak ``until_durak``
    times (whichever comes first). Game 1 is dealt by the last seat; the durak deals the
    next game; after a draw the dealer stays. Players must already be started."""
    rules.check_table(len(players))
    result = MatchResult(rules, seed, [BotStats(p.name) for p in players])
    counter = iter(range(1, 1 << 62))
    dealer = first_dealer(len(players))
    start = time.perf_counter()
    for index in range(games):
        record = await play_game(players, rules, index=index, seed=game_seed(seed, index),
                                 dealer=dealer, next_request_id=counter.__next__)
        _tally(result, record)
        result.games.append(record)
        result.wall_s = time.perf_counter() - start
        if on_game is not None:
            on_game(record, result)
        dealer = next_dealer(dealer, record.durak)
        if until_durak and any(b.durak >= until_durak for b in result.bots):
            break
    result.wall_s = time.perf_counter() - start
    return result


def _tally(result: MatchResult, record: GameRecord) -> None:
    for d in record.decisions:
        if not d.forced:
            stats = result.bots[d.seat]
            stats.decisions += 1
            stats.seconds += d.seconds
    if record.durak is None:
        for seat in record.last_out:
            result.bots[seat].draws += 1
        if not record.last_out:  # stalemate or action cap: a draw for the whole table
            for b in result.bots:
                b.draws += 1
    else:
        result.bots[record.durak].durak += 1
    if record.forfeit is not None:
        b = result.bots[record.forfeit["seat"]]
        b.forfeits[record.forfeit["kind"]] = b.forfeits.get(record.forfeit["kind"], 0) + 1
