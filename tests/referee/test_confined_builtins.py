"""Searching built-ins as confined seats (referee/seats/confined.py): ``durak-ref bot
builtin:NAME`` plays the built-in as a program over the bot protocol, a confined
built-in decides exactly as the same built-in in the referee's process, and a run
confines its searching built-ins where it seats a program bot (issue 35, item 1)."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import trio

from referee.rules.options import make_rules
from referee.seats.confined import CODE_ROOT, ConfinedBuiltin, confine_searching
from referee.seats.players import BuiltinPlayer, Player, parse_bot_spec
from referee.seats.process import ProcessPlayer
from referee.seats.sandbox import Sandbox
from referee.table.clock import TimeControl
from referee.table.match import GameRecord, MatchConfig, play_match
from referee.table.runner import make_players
from support import DURAK_REF, ROOT

pytestmark = pytest.mark.process

GREEDY_BOT = (sys.executable, str(ROOT / "examples/python/greedy_bot.py"))


def _config(games: int, seed: int = 3) -> MatchConfig:
    return MatchConfig(rules=make_rules("classic", []), games=games, seed=seed,
                       tc=TimeControl.parse(None, 60.0))


async def _play(players: list[Player], config: MatchConfig) -> list[GameRecord]:
    """The match's game records."""
    games: list[GameRecord] = []
    async with trio.open_nursery() as nursery:
        try:
            for p in players:
                await p.start(nursery)
            await play_match(players, config, on_game=lambda g, _: games.append(g))
            return games
        finally:
            for p in players:
                await p.close()
            nursery.cancel_scope.cancel()


def _greedy_program() -> ProcessPlayer:
    return ProcessPlayer("greedy", parse_bot_spec(" ".join(GREEDY_BOT)))


def _moves(games: list[GameRecord]) -> list[list[tuple[int, int]]]:
    return [[(d.seat, d.action) for d in g.decisions] for g in games]


def test_durak_ref_bot_plays_a_builtin_as_a_command_bot() -> None:
    """The command the README names, as a program bot of a match (its environment says
    where this checkout's code is, and its sandbox shows it: a bot gets only the
    allowlisted variables and sees only its own program's files)."""
    spec = parse_bot_spec(f"{DURAK_REF} bot builtin:ismcts:iterations=30")
    bot = ProcessPlayer("ismcts", spec, env={"PYTHONPATH": CODE_ROOT},
                        sandbox=Sandbox(binds=(CODE_ROOT,), warn=False))
    result = trio.run(_play, [bot, BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"))],
                      _config(2))
    assert [g.forfeit for g in result] == [None, None]
    assert bot.info["name"] == "ismcts" and bot.info["version"] == "builtin"


@pytest.mark.parametrize("text", ["builtin:ismcts:iterations=40", "builtin:expert:iterations=150",
                                  "builtin:solver:solve_nodes=20000,fallback=ismcts,iterations=20",
                                  "builtin:random", "builtin:gentle"])
def test_a_confined_builtin_makes_the_in_process_builtins_decisions(text: str) -> None:
    """The same seed, seat name and opponent: the same decisions, move for move, whether
    the built-in decides in the referee's process or as a confined process."""
    spec = parse_bot_spec(text)
    config = _config(2)
    here = trio.run(_play, [BuiltinPlayer("b", spec, config.seed), _greedy_program()], config)
    confined = ConfinedBuiltin("b", spec, config.seed)
    there = trio.run(_play, [confined, _greedy_program()], config)
    assert _moves(there) == _moves(here)
    assert [g.forfeit for g in there] == [None, None]


def test_a_run_confines_its_searching_builtins_only_opposite_a_program_bot() -> None:
    config = _config(1)
    searching = parse_bot_spec("builtin:expert")
    cheap = parse_bot_spec("builtin:greedy")
    program = parse_bot_spec(" ".join(GREEDY_BOT))
    alone = make_players([searching, cheap], config, stderr_stem=None)
    assert not confine_searching([searching, cheap])
    assert [type(p) for p in alone] == [BuiltinPlayer, BuiltinPlayer]
    mixed = make_players([searching, cheap, program], config, stderr_stem=None)
    assert [type(p) for p in mixed] == [ConfinedBuiltin, BuiltinPlayer, ProcessPlayer]
    tcp = make_players([searching, parse_bot_spec("tcp:remote")], config, stderr_stem=None)
    assert isinstance(tcp[0], ConfinedBuiltin)


def test_the_seats_key_goes_in_the_environment_never_on_the_command_line() -> None:
    """The key holds the run's secret seed, which keys its deals."""
    bot = ConfinedBuiltin("x", parse_bot_spec("builtin:expert"), "c0ffee" * 4)
    assert not any("c0ffee" in word for word in bot.spec.argv)

    async def started() -> dict[str, Any]:
        async with trio.open_nursery() as nursery:
            try:
                await bot.start(nursery)
                return {"env": dict(bot.env or {})}
            finally:
                await bot.close()
                nursery.cancel_scope.cancel()

    assert trio.run(started)["env"]["DURAK_BOT_KEY"] == f"{'c0ffee' * 4}:x"
    assert os.environ.get("DURAK_BOT_KEY") is None
