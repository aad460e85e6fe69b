"""The endgame solver: exact play once a game is down to perfect information.

Once the talon is empty and only two seats still hold cards, each of them can name the
other's hand by counting (the deck minus its own hand, the table and the discard pile),
so the rest of the game is a finite two-player game of perfect information. Its value
for each seat is exactly one of durak / draw / the other seat is the durak.

How the search works:

- It plays the engine itself (``Game.legal_actions``, ``copy``, ``apply_legal``): there is
  one implementation of the rules, every option included (transfers, throw-in limits,
  ``last_two_out``, the stalemate guard, the action cap).
- Values are from the point of view of one fixed seat, the lower of the two still in
  (``Solver.side``): +1 it is safe (the other is the durak), 0 a draw, -1 it is the
  durak. Minimax with alpha-beta over these three values: a seat that can force a win
  stops looking at its other actions.
- A transposition table maps a position (``state_key``: every field of ``Game`` that
  the rules read when choosing or applying an action, the action count too where the
  action cap is in reach, so the cap stays exact) to the bounds proved for it, and the action that proved them,
  which is tried first when the position comes again. A seat with a single legal action
  takes it without a table entry.
- The greedy heuristic's action is tried first elsewhere: it often wins at once.
- A budget (``max_nodes`` and/or a ``time.perf_counter`` deadline) ends a search that
  takes too long with ``SolverLimit``; every table entry written before it stays true,
  so a later search of the same game starts from what was proved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..rules.actions import action_str
from ..rules.game import EXCHANGE_PHASE, OVER, Game
from .fastchoice import greedy_action

WIN, DRAW, LOSS = 1, 0, -1
VALUE_NAMES = {WIN: "win", DRAW: "draw", LOSS: "loss"}

#: ``Game`` fields that ``state_key`` holds: together with the rules they decide every
#: legal action and every result from here on.
KEY_FIELDS = (
    "hands", "attacks", "covers", "phase", "attacker", "defender", "taking", "asker",
    "passes", "transfers", "shown", "limit", "first_bout", "pickup_streak", "direction",
    "action_count", "trump_suit", "out",
)
#: Every other ``Game`` field, and why it can be left out of a solved position's key:
#: constant while the talon is empty and two seats are in, derived from the key's
#: fields, or bookkeeping that no rule reads.
UNKEYED_FIELDS = {
    "rules": "one Solver serves one table's rules",
    "players": "constant", "deck": "not read after the deal", "dealer": "not read after the deal",
    "talon": "empty in every solvable position", "trump_card": "its suit is keyed",
    "trump_holder": "no rule reads it", "discard": "no rule reads it",
    "known": "no rule reads it (views only)", "order": "derived from attacker, direction and out",
    "bout": "no rule reads it (first_bout is keyed)", "exchange_seat": "None after the first bout",
    "outcome": "None until the game ends", "history": "no rule reads it",
    "events": "no rule reads it", "out_order": "no rule reads it",
    "_legal_at": "a cache", "_legal": "a cache", "_any_timing": "from the rules",
    "_action_cap": "from the rules", "_bout_cap": "from the rules", "_first_cap": "from the rules",
    "_all_ranks": "from the rules", "_transfers": "from the rules",
    "_throw_ranks": "derived from the table on entering the throw-in phase",
    "_ask_backwards": "from the rules", "_draw_backwards": "from the rules",
}


class SolverLimit(Exception):
    """The search ran out of its node or time budget before proving a value (not an
    error: the position is merely too big for the budget)."""


def solvable(game: Game, face_up_talon: bool = False) -> bool:
    """Whether ``game`` is a position of perfect information the solver can take: not
    over, the talon empty, exactly two seats still in, past the trump exchange. With
    ``face_up_talon`` a talon of one card counts too: that card is the face-up trump,
    seen by both seats, so its draw is no chance and the game is still one of perfect
    information (the solver plays the engine, which draws it)."""
    if game.phase == OVER or game.phase == EXCHANGE_PHASE or len(game.talon) > face_up_talon:
        return False
    return game.players - sum(game.out) == 2


def state_key(game: Game) -> tuple[Any, ...]:
    """The position as the rules see it: equal keys, equal futures (``KEY_FIELDS``).

    The action count is left out (as 0) when the action cap is out of reach
    (``cap_in_reach``): positions that differ only in it then share an entry."""
    g = game
    count = g.action_count if cap_in_reach(g) else 0
    return (tuple(g.hands), tuple(g.attacks), tuple(g.covers), g.phase, g.attacker, g.defender,
            g.taking, g.asker, g.passes, g.transfers, g.shown, g.limit, g.first_bout,
            g.pickup_streak, g.direction, count, g.trump_suit, tuple(g.out))


def cap_in_reach(game: Game) -> bool:
    """Whether the game could still reach the action cap from here (solvable positions).

    A bound on the actions left: with C cards in the hands and on the table, a bout lays
    each card at most once, shows at most 4 trumps, and has at most one pass per card
    or shown trump laid and one take or lead pass more: at most 2C + 11 actions. A
    bout that is beaten discards at least two cards, so at most C // 2 + 1 of them are
    left, each after at most S takes in a row: S is the stalemate guard's limit, or,
    with two seats in and no transfers, C (the same seat then attacks after every take
    and has one card fewer each time). No guard and transfers on: no bound."""
    g = game
    cards = g.table_mask().bit_count() + len(g.talon)  # (a face-up trump still to draw)
    for hand in g.hands:
        cards += hand.bit_count()
    rules = g.rules
    limit = rules.pickup_draw_limit
    streak = cards if rules.transfer == "off" else -1
    if limit is not None and (streak < 0 or limit < streak):
        streak = limit
    if streak < 0:
        return True
    bound = (cards // 2 + 1) * (streak + 1) * (2 * cards + 11)
    return bound >= rules.action_cap - g.action_count


def terminal_value(game: Game, side: int) -> int:
    """The value of a finished ``game`` for seat ``side``."""
    outcome = game.outcome
    assert outcome is not None
    if outcome.durak is None:
        return DRAW
    return LOSS if outcome.durak == side else WIN


@dataclass
class Solver:
    """Solves positions of one table (one ``Rules``), keeping what it proved between calls.

    ``max_nodes`` bounds the positions searched per call, ``seconds`` the wall time per
    call (None: no bound). Both raise ``SolverLimit`` when exceeded.
    """

    max_nodes: int | None = None
    seconds: float | None = None
    #: state_key -> (lower bound, upper bound, best action or -1), for ``side``'s values.
    table: dict[tuple[Any, ...], tuple[int, int, int]] = field(default_factory=dict)
    nodes: int = 0  #: positions searched by this solver, over all calls
    _limit: int = 0
    _budget: int | None = None
    _deadline: float = 0.0
    side: int = -1

    def value(self, game: Game, seat: int | None = None, max_nodes: int | None = None) -> int:
        """The exact value of ``game`` (``solvable``) for ``seat`` (default: the seat to
        move). Raises SolverLimit when the budget (``max_nodes`` for this call, else
        the solver's) runs out first."""
        root = self._root(game, max_nodes)
        if seat is None:
            seat = game.seat_to_move()
        return self._for(seat, self._solve(root, LOSS, WIN))

    def action_values(self, game: Game) -> list[tuple[int, int]]:
        """(action, exact value for the seat to move) for each legal action of ``game``,
        in legal order. Raises SolverLimit when the budget runs out first."""
        root = self._root(game)
        seat = root.seat_to_move()
        out = []
        for action in root.legal_actions():
            child = root.copy()
            child.apply_legal(action)
            out.append((action, self._for(seat, self._solve(child, LOSS, WIN))))
        return out

    def best_action(self, game: Game) -> tuple[int, int]:
        """(an action of best value for the seat to move, that value). A game in which one
        seat plays ``best_action`` at every decision ends no worse for it than the value.
        Raises SolverLimit."""
        return self._best(self._root(game))

    def line(self, game: Game) -> list[int]:
        """A principal variation: actions from ``game`` to the end of the game, each seat
        playing a best action (``best_action``) at every decision. The budget holds for
        the whole line, not for each of its steps. Raises SolverLimit."""
        g = self._root(game)
        actions = []
        while not g.is_over:
            legal = g.legal_actions()
            action = legal[0] if len(legal) == 1 else self._best(g)[0]
            g.apply_legal(action)
            actions.append(action)
        return actions

    # ------------------------------------------------------------------ search

    def _best(self, root: Game) -> tuple[int, int]:
        """``best_action`` of ``root`` (a position ``_root`` made), within the budget
        ``_root`` set."""
        seat = root.seat_to_move()
        v = self._solve(root.copy(), LOSS, WIN)
        legal = root.legal_actions()
        if len(legal) == 1:
            return legal[0], self._for(seat, v)
        entry = self.table.get(state_key(root))
        # The action that proved the value first (a bound from a narrower window may have
        # stored one that is merely no better), then the rest: each checked exactly.
        first = entry[2] if entry is not None else legal[0]
        for action in [first] + [a for a in legal if a != first]:
            child = root.copy()
            child.apply_legal(action)
            if self._solve(child, LOSS, WIN) == v:
                return action, self._for(seat, v)
        raise AssertionError("no action reaches the position's value")

    def _root(self, game: Game, max_nodes: int | None = None) -> Game:
        if not solvable(game, face_up_talon=True):
            raise ValueError("the solver takes positions with an empty talon (or only the "
                             f"face-up trump in it) and two seats in ({game!r})")
        side = min(s for s in range(game.players) if not game.out[s])
        if self.side != side:
            # (another game, or another pair still in: the table's values are for ``side``)
            self.table.clear()
            self.side = side
        if max_nodes is None:
            max_nodes = self.max_nodes
        self._budget = max_nodes
        self._limit = self.nodes + max_nodes if max_nodes is not None else -1
        self._deadline = time.perf_counter() + self.seconds if self.seconds is not None else 0.0
        g = game.copy()
        g.history, g.events = [], None  # copied at every node: keep them empty
        return g

    def _for(self, seat: int, value: int) -> int:
        """``side``'s value as ``seat``'s."""
        return value if seat == self.side else -value

    def _solve(self, g: Game, alpha: int, beta: int) -> int:
        """The value of ``g`` for ``side`` if it lies within (alpha, beta); else a bound
        on the far side of the window. ``g`` is the caller's to lose (it is played on)."""
        if g.phase == OVER:
            return terminal_value(g, self.side)
        legal = g.legal_actions()
        while len(legal) == 1:  # a lone action needs no node of its own
            g.apply_legal(legal[0])
            if g.phase == OVER:
                return terminal_value(g, self.side)
            legal = g.legal_actions()
        self.nodes += 1
        if not self.nodes & 1023:
            self._check_budget()
        key = state_key(g)
        table = self.table
        entry = table.get(key)
        first = -1
        lo, hi = LOSS, WIN
        if entry is not None:
            lo, hi, first = entry
            if lo >= beta or lo == hi:
                return lo
            if hi <= alpha:
                return hi
            alpha, beta = max(alpha, lo), min(beta, hi)
        seat = g.seat_to_move()
        maximize = seat == self.side
        if first < 0:
            first = greedy_action(g, seat, legal)
        order = [first] + [a for a in legal if a != first]
        best = LOSS - 1 if maximize else WIN + 1
        best_action = first
        a, b = alpha, beta
        for action in order:
            child = g.copy()
            child.apply_legal(action)
            v = self._solve(child, a, b)
            if maximize:
                if v > best:
                    best, best_action = v, action
                    if v > a:
                        a = v
            elif v < best:
                best, best_action = v, action
                if v < b:
                    b = v
            if a >= b:
                break
        # Fail-hard bounds: a value at or below alpha proves only an upper bound, at or
        # above beta only a lower bound; inside the window it is exact.
        if best <= alpha:
            hi = min(hi, best)
        elif best >= beta:
            lo = max(lo, best)
        else:
            lo = hi = best
        table[key] = (lo, hi, best_action)
        return best

    def _check_budget(self) -> None:
        if self._limit >= 0 and self.nodes >= self._limit:
            raise SolverLimit(f"node budget of {self._budget} spent")
        if self.seconds is not None and time.perf_counter() >= self._deadline:
            raise SolverLimit(f"time budget of {self.seconds:g} s spent")


def line_text(actions: list[int]) -> list[str]:
    """A line of actions in the log's text form (``"attack 6S"``)."""
    return [action_str(a) for a in actions]
