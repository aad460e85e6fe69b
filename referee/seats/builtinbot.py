"""A built-in bot as a program: ``durak-ref bot builtin:NAME[:PARAMS]`` (and ``python -m
referee.seats.builtinbot builtin:NAME``, what the referee spawns: the same code without
the command line's start-up cost) plays the built-in over stdin/stdout with the bot
protocol (protocol/SPEC.md), through the Python SDK (``protocol.bot``).

It decides with the built-in's own code, from what its seat is sent, exactly as the
built-in does in the referee's process (``players.BuiltinPlayer``): ``ismcts`` and
``expert`` through ``bots.ismcts.SearchSeat``, keyed alike; ``random`` with its
generator seeded per game alike; ``greedy`` and ``gentle`` with their request-reading
strategies (``bots/fastchoice.py`` is proven to choose as greedy's); ``solver`` with
``SolverChooser`` on the position its seat can name in a solved endgame (the deals
``determinize`` makes are then the one true deal; ``bots/solverbot.py`` says why),
else its fallback. So the same key gives the same decisions in both places.

The key (``"SEED:SEAT NAME"``, which seeds the search) comes in the environment variable
``DURAK_BOT_KEY``, never on the command line (other processes can read a command line;
the run's seed keys its deals). Without it the key is ``durak-ref:NAME``.
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

from protocol.bot import Bot, run
from protocol.strategies import gentle_choose, greedy_choose, random_choose

from ..bots.solverbot import SolverChooser
from .players import PARAMETRIC, BotSpec, BotSpecError, builtin_param_map, parse_bot_spec

#: The environment variable that carries the seat's key (module docstring).
KEY_ENV = "DURAK_BOT_KEY"


class BuiltinBot(Bot):
    """Built-in ``spec`` (a parsed ``builtin:`` spec) as a protocol bot, keyed by ``key``."""

    version = "builtin"
    author = "durak-ref"

    def __init__(self, spec: BotSpec, key: str) -> None:
        kind = spec.argv[0]
        self.name, self.kind, self.key = kind, kind, key
        params: Any = builtin_param_map(kind, spec.argv[1:], spec.text) if kind in PARAMETRIC else None
        self._solver: SolverChooser | None = None
        self._fallback: BuiltinBot | None = None
        self._search: Any = None
        if kind == "solver":
            self._solver = SolverChooser(params)
            self._fallback = BuiltinBot(BotSpec("builtin", spec.name, (
                params.fallback, *params.fallback_items), spec.text), key)
        elif params is not None:
            from ..bots.ismcts import SearchSeat
            self._search = SearchSeat(params)
        self._rules: Any = None
        self._game: object = None  #: a new object per game (the search's per-game state)
        self._rng = random.Random()

    def on_game_start(self, message: dict[str, Any]) -> None:
        from ..rules.options import rules_from_dict

        self._rules, self._game = rules_from_dict(dict(message["rules"])), object()
        self._rng.seed(f"{self.key}:{message['game']}")  # random's, as BuiltinPlayer's
        if self._fallback is not None:
            self._fallback.on_game_start(message)

    def choose(self, observation: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        request = self.request
        assert request is not None
        return self.decide(request, observation, legal)

    def decide(self, request: dict[str, Any], obs: dict[str, Any],
               legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The answer to ``request`` (its observation and legal list)."""
        if self.kind == "random":
            return random_choose(obs, legal, self._rng)
        if self.kind == "greedy":
            return greedy_choose(obs, legal)
        if self.kind == "gentle":
            return gentle_choose(obs, legal)
        if self._search is not None:
            return self._search.choose(self.key, self._rules, self._game, request["game"],
                                       request["id"], obs, legal)
        solved = self._solved(request, obs, legal)
        if solved is not None:
            return solved
        assert self._fallback is not None
        return self._fallback.decide(request, obs, legal)

    def _solved(self, request: dict[str, Any], obs: dict[str, Any],
                legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The solver's move where its seat can name every card (the talon empty: the
        other hand is what the seat has not seen), within the request's budget."""
        if obs["talon"] or self._solver is None:
            return None
        from ..bots.ismcts import determinize
        from ..rules import action_from_wire

        position = determinize(self._rules, obs, random.Random(0))
        action = self._solver.choose(position, request["game"], _budget(request["clock"]))
        if action is None:
            return None
        return legal[[action_from_wire(a) for a in legal].index(action)]


def _budget(clock: dict[str, Any]) -> float | None:
    """The seconds the request's clock allows (None: no limit), as the referee's budget."""
    limits = [ms for ms in (clock.get("move_ms"), clock.get("remaining_ms")) if ms is not None]
    return min(limits) / 1000 if limits else None


def run_builtin(text: str) -> None:
    """Play built-in ``text`` (``builtin:NAME[:PARAMS]``) over stdin/stdout until the
    referee says bye. Raises BotSpecError for a spec that is not a built-in's."""
    spec = parse_bot_spec(text)
    if spec.kind != "builtin":
        raise BotSpecError(f"{text!r} is not a built-in bot; give builtin:NAME[:KEY=VALUE,...]")
    run(BuiltinBot(spec, os.environ.get(KEY_ENV) or f"durak-ref:{spec.argv[0]}"))


if __name__ == "__main__":
    run_builtin(sys.argv[1] if len(sys.argv) == 2 else "")
