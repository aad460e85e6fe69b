"""Referee policy as a bot sees it and as the summary counts it: how many times an
illegal answer is asked again (never under the forfeit policy, exactly N times under
``retry:N``), that forced moves are not decisions, and that draws are counted per bot.
Scripted bots on in-memory streams, on trio's virtual clock (see test_match_loop)."""

from __future__ import annotations

from typing import Any

import pytest
from test_match_loop import first_legal, play


def always_illegal(asked: list[int]) -> Any:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request["id"])
        return {"type": "cover", "slot": 9, "card": "AS"}  # there is never a slot 9
    return answer


async def test_the_forfeit_policy_asks_once_and_forfeits_at_the_first_illegal_answer(
        autojump_clock: Any) -> None:
    asked: list[int] = []
    result, games, log = await play(always_illegal(asked), games=1, retries=0)
    assert len(asked) == 1
    assert [m for m in log if m["type"] == "error" and not m["fatal"]] == []
    assert games[0].termination == "illegal" and games[0].retries == []
    assert result.summary()["bots"][0]["forfeits"] == {"illegal": 1}


@pytest.mark.parametrize("retries", [1, 2, 5])
async def test_retry_n_asks_again_exactly_n_times_then_forfeits(autojump_clock: Any, retries: int) -> None:
    asked: list[int] = []
    result, games, log = await play(always_illegal(asked), games=1, retries=retries)
    assert len(asked) == 1 + retries
    warnings = [m for m in log if m["type"] == "error" and not m["fatal"]]
    assert len(warnings) == retries and all(m["code"] == "illegal" for m in warnings)
    assert games[0].termination == "illegal" and len(games[0].retries) == retries


async def test_forced_moves_are_actions_but_not_decisions_in_the_statistics(autojump_clock: Any) -> None:
    result, games, log = await play(first_legal, games=4, rules=("ask_forced=off",))
    forced = sum(d.forced for g in games for d in g.decisions)
    assert forced > 0
    summary = result.summary()
    for seat_name in ("scripted", "greedy"):
        stats = next(b for b in summary["bots"] if b["name"] == seat_name)
        asked = sum(1 for g in games for d in g.decisions
                    if not d.forced and g.players[d.seat] == seat_name)
        assert stats["decisions"] == asked
    scripted_requests = [m for m in log if m["type"] == "request"]
    assert next(b for b in summary["bots"] if b["name"] == "scripted")["decisions"] == len(scripted_requests)
    assert summary["decisions"] == sum(not d.forced for g in games for d in g.decisions)
    assert summary["actions"] == sum(len(g.decisions) for g in games)


@pytest.mark.slow
async def test_draws_are_counted_for_each_bot_that_shared_them(autojump_clock: Any) -> None:
    result, games, _ = await play(first_legal, games=40)
    drawn = [g for g in games if g.durak is None]
    assert drawn, "this seed gives no draw in 40 games: pick another"
    summary = result.summary()
    assert summary["draws"] == len(drawn)
    for b in summary["bots"]:
        expected = sum(1 for g in games for seat in g.drawn_seats if g.players[seat] == b["name"])
        assert b["draws"] == expected
        assert b["durak"] == sum(1 for g in games if g.durak is not None and g.players[g.durak] == b["name"])
