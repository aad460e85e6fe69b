"""A bot's clock runs from its request fully written to its answer's frame complete.

On trio's virtual clock with a scripted far side (see test_match_loop.py): the stream
that carries requests to the bot can be made slow to accept them, so the referee's
write takes virtual time. That time is the referee's (or the pipe's), never the bot's.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from referee.rules import make_rules
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.clock import TimeControl
from referee.table.match import MatchConfig, play_match
from tests.referee.test_match_loop import Answer, MemoryBot, far_side, slow

WRITE_S = 1.5  #: virtual seconds the slow stream takes to accept each write


class SlowSend(trio.abc.SendStream):
    """A send stream that takes ``delay`` virtual seconds to accept each write."""

    def __init__(self, inner: trio.abc.SendStream, delay: float) -> None:
        self.inner, self.delay = inner, delay

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await trio.sleep(self.delay)
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def play_slow_write(answer: Answer, tc: TimeControl, games: int = 1) -> tuple[Any, list[dict[str, Any]]]:
    left, right = trio.testing.memory_stream_pair()
    bot = MemoryBot("scripted", left)
    bot._attach(SlowSend(left, WRITE_S), left)
    opponent = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"))
    log: list[dict[str, Any]] = []
    config = MatchConfig(rules=make_rules(), games=games, seed=4, tc=tc, max_restarts=0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(far_side, right, answer, log)
        await bot.start(nursery)
        records: list[Any] = []
        result = await play_match([bot, opponent], config,
                                  on_game=lambda record, _: records.append(record))
        nursery.cancel_scope.cancel()
    result.games = records  # the match keeps counters only; this test reads the records
    return result, log


def bot_times(result: Any) -> list[float]:
    return [d.seconds for g in result.games for d in g.decisions if d.seat == 0 and not d.forced]


async def test_a_slow_write_is_not_charged_to_the_bot(autojump_clock: Any) -> None:
    # 2 s per decision; each request takes 1.5 s to write and the bot answers 1.75 s
    # after reading it: 3.25 s after the referee began, in time by the bot's own clock.
    result, _ = await play_slow_write(slow(1.75), TimeControl.parse(None, 2.0))
    game = result.games[0]
    assert game.termination == "normal", game.forfeit
    times = bot_times(result)
    assert times and all(t == pytest.approx(1.75, abs=1e-9) for t in times)
    # The write is the referee's time: it shows in the game's wall time, not the bot's.
    assert game.overhead_s >= WRITE_S * len(times)
    summary = result.summary()
    assert summary["referee_wall_us_per_decision"] >= 1e6 * WRITE_S * len(times) / summary["decisions"]
    assert summary["referee_cpu_us_per_decision"] is not None


async def test_the_read_deadline_starts_when_the_write_completes(autojump_clock: Any) -> None:
    # 2.25 s after the write is over the 2 s budget: a timeout, with the budget as evidence.
    result, _ = await play_slow_write(slow(2.25), TimeControl.parse(None, 2.0))
    game = result.games[0]
    assert game.termination == "timeout" and game.durak == 0
    assert game.forfeit["evidence"]["budget_s"] == pytest.approx(2.0)
    assert game.forfeit["evidence"]["waited_s"] == pytest.approx(2.0)


async def test_a_bot_that_does_not_read_is_failed_by_the_write_limit(autojump_clock: Any) -> None:
    # A write slower than the whole budget: the bot is not reading its input.
    left, right = trio.testing.memory_stream_pair()
    bot = MemoryBot("scripted", left)
    opponent = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"))
    config = MatchConfig(rules=make_rules(), games=1, seed=4, tc=TimeControl.parse(None, 1.0),
                         max_restarts=0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(far_side, right, slow(0.1), [])
        await bot.start(nursery)
        bot._attach(SlowSend(left, 5.0), left)
        records: list[Any] = []
        await play_match([bot, opponent], config, on_game=lambda record, _: records.append(record))
        nursery.cancel_scope.cancel()
    (game,) = records
    assert game.termination == "timeout" and game.durak == 0
    assert "not reading its input" in game.forfeit["reason"]


async def test_the_fischer_clock_is_exact_with_slow_writes(autojump_clock: Any) -> None:
    # 10 s + 1 s per move at 3 s per answer, each write 1.5 s: the clock shows exactly
    # 10, 8, 6, 4, 2 s left (the writes cost the bot nothing), and then runs out.
    result, log = await play_slow_write(slow(3.0), TimeControl.parse("10+1"))
    game = result.games[0]
    assert game.termination == "timeout" and game.durak == 0
    asked = [m for m in log if m["type"] == "request"]
    assert [m["clock"]["remaining_ms"] for m in asked] == [10000, 8000, 6000, 4000, 2000]
    assert bot_times(result) == [pytest.approx(3.0, abs=1e-9)] * 4
