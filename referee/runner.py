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
from .players import BotFailure, BotSpec, BotStartError, BotSpecError, BuiltinPlayer, Player, unique_names
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
    result: MatchResult | None = None
    start_error: BotStartError | None = None
    async with trio.open_nursery() as nursery:
        try:
            async with AsyncExitStack() as stack:
                for p in players:
                    stack.push_async_callback(p.close)
                    try:
                        await p.start(nursery)
                    except BotFailure:
                        pass  # the player stays failed: each of its games is a forfeit
                _adopt_hello_names(players)
                result = await play_match(players, rules, games=games, seed=seed,
                                          until_durak=until_durak, on_game=on_game)
        except BotStartError as exc:
            start_error = exc  # raised below, outside the nursery, as itself
        finally:
            # Players are closed; their reader tasks may still wait on pipes.
            nursery.cancel_scope.cancel()
    if start_error is not None:
        raise start_error
    assert result is not None
    return result


def _adopt_hello_names(players: Sequence[Player]) -> None:
    """Unnamed command bots take the name from their hello (made unique)."""
    names = []
    for p in players:
        hello_name = p.info.get("name")
        names.append(hello_name if hello_name and not p.spec.named and p.spec.kind == "command"
                     else p.spec.name)
    for p, name in zip(players, unique_names(names)):
        p.name = name


def run_match(specs: Sequence[BotSpec], rules: Rules, **kwargs: Any) -> MatchResult:
    """Synchronous entry point: run a whole match under ``trio.run``."""
    return trio.run(lambda: run_match_async(specs, rules, **kwargs))
