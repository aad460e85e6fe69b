"""Flat memory: a match and a tournament keep counters, not one object per game.

Counted, never timed: the number of objects a MatchResult holds is the same after 500
and after 5,000 in-process games; forfeit evidence is kept for the first
``FORFEIT_DETAILS_KEPT`` forfeits only, the rest counted; a tournament's schedule is
made one game at a time. (The memory itself is measured by ``durak-ref bench soak``.)
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

from referee.league.tournament import BotEntry, TournamentSettings, iter_schedule, schedule, schedule_size
from referee.rules import make_rules
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.match import FORFEIT_DETAILS_KEPT, GameRecord, MatchConfig, MatchResult, play_match

SCALARS = (int, float, str, bytes, bool, type(None))


def reachable(root: Any) -> tuple[int, int]:
    """(containers, their total length) that ``root`` holds, following references but
    not into classes or functions. Scalars are not counted: equal small ints are one
    shared object, large ones are not, which says nothing about growth."""
    seen: set[int] = set()
    containers = length = 0
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (type, *SCALARS)) or callable(obj):
            continue
        seen.add(id(obj))
        containers += 1
        length += len(obj) if hasattr(obj, "__len__") else 0
        todo.extend(gc.get_referents(obj))
    return containers, length


@pytest.mark.slow
def test_a_match_result_holds_as_many_objects_after_5000_games_as_after_500() -> None:
    import trio

    sizes: dict[int, tuple[tuple[int, int], int]] = {}

    def on_game(record: GameRecord, result: MatchResult) -> None:
        if result.played in (500, 5000):
            sizes[result.played] = (reachable(result), len(result.forfeit_details))

    async def main() -> MatchResult:
        players = [BuiltinPlayer(name, parse_bot_spec(f"builtin:{kind}"), 1)
                   for name, kind in (("g", "greedy"), ("r", "random"))]
        return await play_match(players, MatchConfig(rules=make_rules(), games=5000, seed=5),
                                on_game=on_game)

    result = trio.run(main)
    assert result.played == 5000 and sum(result.terminations.values()) == 5000
    assert sizes[500] == sizes[5000]
    summary = result.summary()
    assert summary["games"] == 5000 and summary["actions"] >= summary["decisions"] > 0


def forfeit_record(index: int) -> GameRecord:
    return GameRecord(index, f"match:{index}", 1, [], ["a", "b"], [], "crash", 0, (), "a forfeited",
                      1, 0.01, {"seat": 0, "bot": "a", "kind": "crash", "reason": "gone",
                                "decision": 0, "evidence": {"stderr_tail": ["boom"]}})


def test_forfeit_evidence_is_kept_for_the_first_forfeits_and_the_rest_are_counted() -> None:
    from referee.table.match import BotStats

    result = MatchResult(MatchConfig(rules=make_rules(), games=5000, seed=1),
                         [BotStats("a"), BotStats("b")])
    for i in range(5000):
        result.add(forfeit_record(i))
    summary = result.summary()
    assert len(summary["forfeit_details"]) == FORFEIT_DETAILS_KEPT
    assert [f["game"] for f in summary["forfeit_details"]] == list(range(FORFEIT_DETAILS_KEPT))
    assert summary["forfeits_total"] == 5000
    assert summary["bots"][0]["forfeits"] == {"crash": 5000}
    assert summary["terminations"] == {"crash": 5000}


def test_the_schedule_is_made_one_game_at_a_time_and_counted_without_listing() -> None:
    bots = [BotEntry(f"b{i}", "builtin:random") for i in range(5)]
    settings = TournamentSettings(bots, games=1_000_000, seed="1")
    assert schedule_size(settings) == 10 * 1_000_000
    games = iter_schedule(settings)
    first = [next(games) for _ in range(30)]
    small = TournamentSettings(bots, games=4, seed="1")
    assert first[:len(schedule(small))][:20] == schedule(small)[:20]  # the same order, lazily
    assert [g.index for g in iter_schedule(small, 7)] == [g.index for g in schedule(small)][7:]
