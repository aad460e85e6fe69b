"""Every run has a per-decision limit, even when the user sets none, and every id and
clock value is bounded: a mute bot or an absurd answer ends a game, never the run.

Scripted bots on in-memory streams under trio's virtual clock (autojump) for the
defaults; one real bot process through ``durak-ref match`` for the end-to-end case.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
from referee.rules import make_rules
from referee.seats.players import BotFailure, BotSpec, BuiltinPlayer, parse_bot_spec
from referee.seats.wire import StreamPlayer
from referee.table.clock import DEFAULT_MOVE_TIME, MAX_SECONDS, TimeControl, TimeControlError
from referee.table.match import GameRecord, MatchConfig, play_match
from support import cli

BOT = Path(__file__).resolve().parent / "bots" / "eager_bot.py"
Answer = Callable[[dict[str, Any]], Awaitable[list[dict[str, Any]]]]


class MemoryBot(StreamPlayer):
    def __init__(self, stream: trio.abc.HalfCloseableStream) -> None:
        super().__init__("scripted", BotSpec("command", "scripted", ("memory",), "scripted", named=True))
        self._attach(stream, stream)

    async def _stream_failure(self) -> BotFailure:
        return BotFailure("crash", "the scripted bot ended its stream", {})

    def _write_failure(self) -> BotFailure:
        return BotFailure("crash", "the scripted bot's stream is closed", {})


async def play(answer: Answer, tc: TimeControl, games: int = 1) -> tuple[Any, list[dict[str, Any]], float]:
    """A match of the scripted bot (``answer`` gives the frames it sends per request)
    against greedy; returns the result, what the bot received and the virtual time."""
    left, right = trio.testing.memory_stream_pair()
    bot = MemoryBot(left)
    seen: list[dict[str, Any]] = []

    async def far_side() -> None:
        decoder = FrameDecoder()
        while chunk := await right.receive_some(65536):
            decoder.feed(chunk)
            for m in decoder.messages():
                seen.append(m)
                if m["type"] == "hello":
                    await right.send_all(encode(msg.bot_hello_msg("scripted")))
                elif m["type"] == "request":
                    for reply in await answer(m):
                        await right.send_all(encode(reply))

    start = trio.current_time()
    # (virtual seconds: were there no default limit, this would fail at once, not hang)
    with trio.fail_after(1000):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(far_side)
            await bot._handshake(10)
            config = MatchConfig(rules=make_rules(), games=games, seed=2, tc=tc, max_restarts=0)
            players = [bot, BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"))]
            kept: list[GameRecord] = []  # the result keeps counts only
            await play_match(players, config, on_game=lambda r, _: kept.append(r))
            nursery.cancel_scope.cancel()
    return kept, seen, trio.current_time() - start


async def mute(request: dict[str, Any]) -> list[dict[str, Any]]:
    await trio.sleep_forever()
    return []


async def test_a_mute_bot_with_no_time_option_loses_by_timeout_after_the_default(
        autojump_clock: Any) -> None:
    games, seen, elapsed = await play(mute, TimeControl())
    [game] = games
    assert game.termination == "timeout" and game.durak == 0
    assert game.forfeit["evidence"]["budget_s"] == DEFAULT_MOVE_TIME
    assert DEFAULT_MOVE_TIME <= elapsed < DEFAULT_MOVE_TIME + 1
    # the bot was told its limit
    [request] = [m for m in seen if m["type"] == "request"]
    assert request["clock"]["move_ms"] == DEFAULT_MOVE_TIME * 1000


@pytest.mark.parametrize("bad_id", [(1 << 64) - 1, 1 << 40, 0, -1, -(1 << 63)])
async def test_an_absurd_request_id_is_at_most_stale_never_a_hang(
        autojump_clock: Any, bad_id: int) -> None:
    """No clock set: an answer with id 2**64-1 (or any id but the open one's) is ignored
    as stale and the default limit ends the wait; ids below 1 are malformed."""
    async def wrong_id(request: dict[str, Any]) -> list[dict[str, Any]]:
        return [msg.action_msg(bad_id, request["legal"][0])]

    games, seen, elapsed = await play(wrong_id, TimeControl())
    [game] = games
    if bad_id >= 1:
        assert game.termination == "timeout"
        assert game.forfeit["evidence"]["stale_answers"] == 1
        assert elapsed < DEFAULT_MOVE_TIME + 1
    else:
        assert game.termination == "protocol"
        assert "positive integer request id" in game.forfeit["reason"]


@pytest.mark.parametrize("text,move", [(None, 0.0), (None, -1.0), (None, math.nan), (None, math.inf),
                                       (None, MAX_SECONDS * 2), ("inf", None), ("1e9", None),
                                       ("60+1e12", None)])
def test_time_controls_are_positive_finite_and_bounded(text: str | None, move: float | None) -> None:
    with pytest.raises(TimeControlError):
        TimeControl.parse(text, move)


def test_the_default_applies_only_without_a_game_clock_and_is_in_the_log_form() -> None:
    assert TimeControl().as_dict()["move_s"] == DEFAULT_MOVE_TIME
    assert TimeControl.parse(None, 2.5).move == 2.5
    assert TimeControl.parse("60+1").move is None  # the game clock bounds every decision


# --------------------------------------------------------------------------- the CLI

@pytest.mark.process
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_move_time_that_is_not_a_positive_finite_number_is_refused(tmp_path: Path, value: str) -> None:
    result = cli("match", "builtin:greedy", "builtin:random", "--no-log", f"--move-time={value}",
                 cwd=tmp_path)
    assert result.returncode == 2
    assert "--move-time" in result.stderr and "positive number of seconds" in result.stderr


@pytest.mark.process
@pytest.mark.parametrize("command", [["match"], ["tournament"], ["sprt"], ["ladder", "run"]])
def test_help_states_the_default_move_time(tmp_path: Path, command: list[str]) -> None:
    result = cli(*command, "--help", cwd=tmp_path)
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert f"Default: {DEFAULT_MOVE_TIME:g} s when there is no game clock" in text


@pytest.mark.process
def test_the_log_header_records_the_default_limit(tmp_path: Path) -> None:
    result = cli("match", "builtin:greedy", "builtin:random", "-n", "1", "--json",
                 "--log-dir", tmp_path, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    log = Path(json.loads(result.stdout)["log"])
    header = json.loads(log.read_text().splitlines()[0])
    assert header["time_control"]["move_s"] == DEFAULT_MOVE_TIME


@pytest.mark.process
def test_a_mute_bot_process_loses_on_time_and_the_match_ends(tmp_path: Path) -> None:
    result = cli("match", f"{sys.executable} {BOT} mute", "builtin:greedy", "-n", "2",
                 "--move-time", "1", "--json", "--log-dir", tmp_path, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["terminations"] == {"timeout": 2}
    assert {f["bot"] for f in summary["forfeit_details"]} == {"eager-mute"}
