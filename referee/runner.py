"""The match job as the CLI runs it: bot specs in, players started and closed, result out.

This is the one place that turns specs into players, so the CLI, the tests and later
the tournament runner start bots the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any

import trio

from .match import GameRecord, MatchResult, play_match
from .players import BotSpec, BotSpecError, BuiltinPlayer, Player, unique_names
from .rules import Rules


def make_players(specs: Sequence[BotSpec], seed: int) -> list[Player]:
    """One player per spec, with unique names. Raises BotSpecError for unusable specs."""
    names = unique_names([s.name for s in specs])
    players: list[Player] = []
    for name, spec in zip(names, specs):
        if spec.kind == "builtin":
            players.append(BuiltinPlayer(name, spec, seed))
        elif spec.kind == "command":
            from .process import ProcessPlayer
            players.append(ProcessPlayer(name, spec))
        else:
            raise BotSpecError(f"{spec.text}: TCP seats are not served yet; use a command line or builtin:NAME")
    return players


async def run_match_async(specs: Sequence[BotSpec], rules: Rules, *, games: int, seed: int,
                          until_durak: int | None = None,
                          on_game: Callable[[GameRecord, MatchResult], None] | None = None,
                          ) -> MatchResult:
    rules.check_table(len(specs))
    players = make_players(specs, seed)
    async with AsyncExitStack() as stack:
        for p in players:
            stack.push_async_callback(p.close)
            await p.start()
        return await play_match(players, rules, games=games, seed=seed,
                                until_durak=until_durak, on_game=on_game)


def run_match(specs: Sequence[BotSpec], rules: Rules, **kwargs: Any) -> MatchResult:
    """Synchronous entry point: run a whole match under ``trio.run``."""
    return trio.run(lambda: run_match_async(specs, rules, **kwargs))
