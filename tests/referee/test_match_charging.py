"""What a bot is charged and told, as it sees it: every attempt of a decision under the
retry policy is charged to that decision and each retry is recorded with the reason the
bot was told; a bot silent past its budget is told a fatal ``timeout`` error naming the
request and the budget; ``game_start`` names each game's dealer.
Scripted bots on in-memory streams, on trio's virtual clock (see test_match_loop)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from test_match_loop import first_legal, play, slow

from referee.table.clock import TimeControl


async def test_a_decision_asked_again_is_charged_the_time_of_every_attempt(autojump_clock: Any) -> None:
    attempts: list[int] = []

    async def wrong_then_right(request: dict[str, Any]) -> dict[str, Any]:
        attempts.append(request["id"])
        if len(attempts) == 1:
            await trio.sleep(1.0)
            return {"type": "cover", "slot": 9, "card": "AS"}  # never legal: asked again
        if len(attempts) == 2:
            await trio.sleep(2.0)
        return request["legal"][0]

    result, games, _ = await play(wrong_then_right, games=1, retries=1)
    first = next(d for d in games[0].decisions if not d.forced and games[0].players[d.seat] == "scripted")
    assert attempts[:2] == [1, 2]
    assert first.seconds == pytest.approx(3.0, abs=1e-6)


async def test_a_bot_silent_past_its_budget_is_told_a_fatal_timeout_error(autojump_clock: Any) -> None:
    result, games, log = await play(slow(5.0), games=1, tc=TimeControl.parse(None, 2.0))
    errors = [m for m in log if m["type"] == "error"]
    assert len(errors) == 1
    assert errors[0]["code"] == "timeout" and errors[0]["fatal"] is True
    assert errors[0]["message"] == "no answer to request 1 within 2.000 s"
    assert games[0].forfeit["kind"] == "timeout" and games[0].forfeit["reason"].startswith(errors[0]["message"])


async def test_each_retry_is_recorded_with_the_seat_the_request_and_the_reason_the_bot_was_told(
        autojump_clock: Any) -> None:
    async def illegal_once(request: dict[str, Any]) -> dict[str, Any]:
        if request["id"] == 1:
            return {"type": "cover", "slot": 9, "card": "AS"}  # never legal
        return request["legal"][0]

    result, games, log = await play(illegal_once, games=1, retries=2)
    told = [m for m in log if m["type"] == "error"]
    assert len(told) == 1 and told[0]["fatal"] is False
    assert told[0]["message"].startswith("illegal action cover 9 AS for request 1: ")
    assert games[0].retries == [{"seat": 0, "request": 1, "reason": told[0]["message"]}]


async def test_game_start_tells_the_dealer_of_each_game(autojump_clock: Any) -> None:
    result, games, log = await play(first_legal, games=3)
    starts = [m for m in log if m["type"] == "game_start"]
    assert [m["dealer"] for m in starts] == [g.dealer for g in games]
    assert starts[0]["dealer"] == 1  # game 1 is dealt by the last seat
