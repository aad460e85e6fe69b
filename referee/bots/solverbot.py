"""``builtin:solver``: the endgame solver as a bot. Once the position is a solved endgame
(referee/bots/solver.py: the talon empty, two seats in) it plays the solver's best action
whenever the solver proves the position's value within its budget; otherwise a fallback
built-in bot decides.

Reading the engine is fair here: in such a position the seat can name the other hand by
counting (the deck minus its own hand, the table and the discard pile; a test checks it
against the seat's observation), so the solver knows nothing the seat could not.

Parameters, from the bot spec (``builtin:solver:solve_ms=50,fallback=ismcts,iterations=200``):
``solve_ms`` the solver's time per decision (default 100; never more than half of what
the seat's clock allows), ``solve_nodes`` a bound in positions per decision instead
(with it alone the play is the same on any machine), ``fallback`` the bot that decides
elsewhere (random, greedy, gentle or ismcts; default greedy); any other parameter is the
fallback's own (ismcts's ``iterations``, ``ms``, ``c``, ``bias``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import UserError
from ..rules.game import Game
from .solver import Solver, SolverLimit, solvable

DEFAULT_SOLVE_MS = 100.0
MAX_SOLVE_MS = 600_000.0
MAX_SOLVE_NODES = 1_000_000_000
FALLBACKS = ("random", "greedy", "gentle", "ismcts")
DEFAULT_FALLBACK = "greedy"


class SolverBotParamError(UserError, ValueError):
    """A ``builtin:solver:...`` parameter is unknown or out of range (the user's spec)."""

    hint = "give builtin:solver:KEY=VALUE,... with the parameters the message lists"


@dataclass(frozen=True)
class SolverBotParams:
    """The solver's budget per decision (``solve_ms`` None: only ``solve_nodes`` bounds
    it) and the fallback bot with its own ``KEY=VALUE`` parameters."""

    solve_ms: float | None = DEFAULT_SOLVE_MS
    solve_nodes: int | None = None
    fallback: str = DEFAULT_FALLBACK
    fallback_items: tuple[str, ...] = ()


def parse_params(items: Mapping[str, str]) -> SolverBotParams:
    """Parameters from ``{"solve_ms": "50", "fallback": "ismcts", "iterations": "200"}``.
    Raises SolverBotParamError naming the bad key or value; the fallback's own
    parameters are checked by its parser (the caller's)."""
    solve_ms: float | None = DEFAULT_SOLVE_MS
    solve_nodes = None
    fallback = DEFAULT_FALLBACK
    rest: list[str] = []
    for key, text in items.items():
        if key == "fallback":
            if text not in FALLBACKS:
                raise SolverBotParamError(f"solver parameter fallback={text!r}: one of {', '.join(FALLBACKS)}")
            fallback = text
        elif key in ("solve_ms", "solve_nodes"):
            try:
                number = float(text) if key == "solve_ms" else int(text)
            except ValueError:
                raise SolverBotParamError(f"solver parameter {key}={text!r} is not a number") from None
            high = MAX_SOLVE_MS if key == "solve_ms" else MAX_SOLVE_NODES
            if not (math.isfinite(number) and 0 < number <= high):
                raise SolverBotParamError(f"solver parameter {key}={text}: must be > 0 and <= {high:g}")
            if key == "solve_ms":
                solve_ms = number
            else:
                solve_nodes = int(number)
        else:
            rest.append(f"{key}={text}")
    if solve_nodes is not None and "solve_ms" not in items:
        solve_ms = None
    if rest and fallback != "ismcts":
        raise SolverBotParamError(f"unknown solver parameter(s) {', '.join(rest)}; parameters: "
                                  f"solve_ms, solve_nodes, fallback (and ismcts's own with "
                                  f"fallback=ismcts)")
    return SolverBotParams(solve_ms, solve_nodes, fallback, tuple(rest))


class SolverChooser:
    """The solver half of ``builtin:solver`` for one seat: ``choose`` per decision. What
    it proved stays in its solver for the rest of the game (a fresh one per game)."""

    def __init__(self, params: SolverBotParams) -> None:
        self.params = params
        self._solver = Solver()
        self._game: object = None

    def choose(self, game: Game, game_index: object, budget: float | None) -> int | None:
        """A best action of the seat to move in ``game`` (game number ``game_index`` of
        the match), or None: not a solved endgame, or not proved within the budget
        (``budget``: the seconds the seat's clock allows, None for no limit)."""
        if not solvable(game):
            return None
        if game_index != self._game:
            self._solver, self._game = Solver(), game_index
        solver, params = self._solver, self.params
        seconds = None if params.solve_ms is None else params.solve_ms / 1000
        if budget is not None:
            seconds = budget / 2 if seconds is None else min(seconds, budget / 2)
        solver.seconds, solver.max_nodes = seconds, params.solve_nodes
        try:
            return solver.best_action(game)[0]
        except SolverLimit:
            return None
