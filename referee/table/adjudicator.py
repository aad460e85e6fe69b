"""Adjudication: a game whose outcome the endgame solver proves ends there, scored as perfect
play from that position gives, like a chess tablebase.

Once the talon is empty and two seats still hold cards, the rest of the game is a game of
perfect information (referee/bots/solver.py). With ``--adjudicate BUDGET`` the referee
then runs the solver after each applied decision (``framelane.record``), before the next
seat is asked: between decisions, so no bot's clock runs while it searches. Each search
is a slice of at most ``SLICE_S`` seconds (or ``SLICE_NODES`` positions), so other tables
of the same process are never held up for longer; what a slice proved stays in the
solver's table, so the next slice (on the smaller position one decision later) starts
from it. When the game's budget is spent without a proof, the game is played on to its
end as usual.

A proof ends the game with termination ``adjudicated``: its durak and ``last_out`` are
those at the end of the solver's principal variation (both seats playing best actions),
which is logged so anyone can replay it; ``replay --verify`` re-solves the position. No
bot can ask for adjudication or shape its result: the referee decides when to search,
and the result is the solver's value, not any seat's claim.

A budget in seconds depends on the machine's speed (a slower machine adjudicates fewer
games); a budget in positions (``20000nodes``) makes a run reproducible anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from ..bots.solver import Solver, SolverLimit, line_text, solvable
from ..errors import UserError
from ..rules.game import Game

#: Seconds one search may take between two decisions (about: the solver looks at its
#: clock every 1024 positions): the longest other tables of the process wait for it.
SLICE_S = 0.010
#: Positions one search may visit, for budgets given in positions (about SLICE_S's worth).
SLICE_NODES = 1024
#: The termination of an adjudicated game (protocol ``game_end``, the log).
ADJUDICATED = "adjudicated"
#: ``--adjudicate on``: the budget per game.
DEFAULT_BUDGET = "100ms"

_BUDGET_RE = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|nodes)$")


class AdjudicateError(UserError, ValueError):
    """The user's ``--adjudicate`` value is not a budget (the message says what is)."""

    hint = "give --adjudicate off, on, a time such as 100ms, or a number of positions such as 20000nodes"


@dataclass(frozen=True)
class Budget:
    """How much solving a game may get, in all, once its talon is empty: ``seconds`` of
    the referee's time or ``nodes`` positions (exactly one is set). ``text`` is the form
    the user gave (logged in the header)."""

    text: str
    seconds: float | None = None
    nodes: int | None = None


def parse_budget(text: str | None) -> Budget | None:
    """``--adjudicate``'s value: ``off`` (or None) -> None; ``on`` -> ``DEFAULT_BUDGET``;
    ``100ms``, ``0.5s`` -> seconds; ``20000nodes`` -> positions. Raises AdjudicateError."""
    if text is None:
        return None
    t = text.strip().lower()
    if t == "off":
        return None
    if t == "on":
        t = DEFAULT_BUDGET
    m = _BUDGET_RE.match(t)
    if m is None:
        raise AdjudicateError(f"--adjudicate {text!r}: expected off, on ({DEFAULT_BUDGET}), "
                              f"a time such as 100ms or 0.5s, or a count of positions such as "
                              f"20000nodes")
    number, unit = float(m.group(1)), m.group(2)
    if unit == "nodes":
        if number != int(number) or number < 1:
            raise AdjudicateError(f"--adjudicate {text!r}: a count of positions is a whole number >= 1")
        return Budget(t, nodes=int(number))
    seconds = number / 1000 if unit == "ms" else number
    if not 0 < seconds <= 3600:
        raise AdjudicateError(f"--adjudicate {text!r}: a time budget is more than 0 and at most 1 hour")
    return Budget(t, seconds=seconds)


@dataclass(frozen=True)
class Adjudication:
    """A proved end: ``line`` (actions, from the position after the game's last recorded
    decision to the end of the game, best play by both seats) and the end it reaches:
    ``durak``, ``last_out`` and why (``reason``). ``nodes`` and ``seconds``: what the
    proof cost, over every slice of the game."""

    line: list[int]
    durak: int | None
    last_out: tuple[int, ...]
    reason: str
    nodes: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        """The game record's ``adjudication`` field."""
        return {"line": line_text(self.line), "nodes": self.nodes,
                "ms": round(self.seconds * 1000, 3)}


def line_end(game: Game, line: list[int]) -> Game:
    """``game`` (not changed) played on along ``line`` (legal actions) to its end."""
    g = game.copy()
    g.history, g.events = [], None
    for action in line:
        g.apply_legal(action)
    return g


def adjudicated_reason(end: Game, names: list[str]) -> str:
    """The reason of a game adjudicated with the end ``end`` (``line_end``'s game);
    ``names``: the seats' names."""
    o = end.outcome
    assert o is not None
    result = (f"a draw ({o.termination})" if o.durak is None
              else f"seat {o.durak} ({names[o.durak]}) the durak")
    return f"adjudicated: perfect play from here ends with {result}"


class Adjudicator:
    """One game's adjudication: ``settles(game)`` after each applied decision."""

    def __init__(self, budget: Budget, names: list[str]) -> None:
        self.budget = budget
        self.names = names
        self.solver = Solver()
        self.spent_s = 0.0
        self.spent_nodes = 0
        self.result: Adjudication | None = None
        self.done = False  #: a proof, or the budget spent: no more searching this game

    def settles(self, game: Game) -> bool:
        """Search ``game`` for one slice if it is solvable and the budget lasts; True when
        its outcome is proved (``result`` says what it is: the game ends there)."""
        if self.done or not solvable(game):
            return False
        budget, solver = self.budget, self.solver
        if budget.seconds is not None:
            solver.seconds = min(SLICE_S, budget.seconds - self.spent_s)
        else:
            assert budget.nodes is not None
            solver.max_nodes = min(SLICE_NODES, budget.nodes - self.spent_nodes)
        started, nodes = perf_counter(), solver.nodes
        try:
            line: list[int] | None = solver.line(game)  # (its first step proves the value)
        except SolverLimit:
            line = None
        self.spent_s += perf_counter() - started
        self.spent_nodes += solver.nodes - nodes
        if line is None:
            self.done = (self.spent_s >= budget.seconds if budget.seconds is not None
                         else self.spent_nodes >= (budget.nodes or 0))
            return False
        end = line_end(game, line)
        o = end.outcome
        assert o is not None
        self.result = Adjudication(line, o.durak, o.last_out, adjudicated_reason(end, self.names),
                                   self.spent_nodes, self.spent_s)
        self.done = True
        return True
