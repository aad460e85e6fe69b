"""The referee's fast paths change no verdict. An answer whose bytes are the canonical
encoding of an action seen before skips the decoder, yet is taken only for the request
it names, only once, and its legality is still the table's to judge; pipes are written
and read without waiting in trio when they can be, under the same deadlines.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
from referee.seats.players import BotFailure, BotSpec
from referee.seats.wire import StreamPlayer

PASS, TAKE = {"type": "pass"}, {"type": "take"}


class PipePlayer(StreamPlayer):
    """The referee's side of a bot on two real pipes."""

    def __init__(self, send: trio.abc.SendStream, receive: trio.abc.ReceiveStream) -> None:
        super().__init__("pipe", BotSpec("command", "pipe", ("pipe",), "pipe", named=True))
        self._attach(send, receive)

    async def _stream_failure(self) -> BotFailure:
        return BotFailure("crash", "the far side ended its stream", {})

    def _write_failure(self) -> BotFailure:
        return BotFailure("crash", "the far side closed its stream", {})


@asynccontextmanager
async def pipes(replies: dict[int, bytes]) -> AsyncIterator[tuple[PipePlayer, list[dict]]]:
    """The player on two real pipes, and a far side that writes ``replies[id]`` once it
    has read request ``id``; the list collects every other message it reads."""
    to_bot_r, to_bot_w = os.pipe()
    from_bot_r, from_bot_w = os.pipe()
    send, receive = trio.lowlevel.FdStream(to_bot_w), trio.lowlevel.FdStream(from_bot_r)
    far_in, far_out = trio.lowlevel.FdStream(to_bot_r), trio.lowlevel.FdStream(from_bot_w)
    others: list[dict] = []

    async def far_side() -> None:
        decoder = FrameDecoder()
        while chunk := await far_in.receive_some(65536):
            decoder.feed(chunk)
            for m in decoder.messages():
                if m["type"] == "request" and m["id"] in replies:
                    await far_out.send_all(replies[m["id"]])
                elif m["type"] != "request":
                    others.append(m)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(far_side)
        try:
            yield PipePlayer(send, receive), others
        finally:
            await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
            for stream in (send, receive, far_in, far_out):
                await stream.aclose()


def request(request_id: int, legal: list[dict] | None = None) -> dict:
    return msg.request_msg(id=request_id, game=0, observation={}, legal=legal or [PASS, TAKE])


def answer(request_id: int, action: dict) -> bytes:
    return encode(msg.action_msg(request_id, action))


async def test_a_known_answer_sent_twice_is_an_answer_twice() -> None:
    async with pipes({1: answer(1, PASS), 2: answer(2, PASS) * 2}) as (player, _):
        assert await player.decide(request(1), 5.0) == PASS  # decoded, and now known
        assert await player.decide(request(2), 5.0) == PASS  # known bytes: not decoded
        with pytest.raises(BotFailure) as info:
            await player.decide(request(3), 5.0)
    assert info.value.kind == "protocol"
    assert "answered request 2 twice" in str(info.value)


async def test_a_known_answer_naming_an_older_request_is_stale_not_taken() -> None:
    async with pipes({1: answer(1, PASS), 2: answer(1, PASS) + answer(2, TAKE)}) as (player, others):
        assert await player.decide(request(1), 5.0) == PASS
        assert await player.decide(request(2), 5.0) == TAKE
        await player.send(msg.game_end_msg(game=0, durak=0, termination="normal", reason="over"))
    assert [m.get("code") for m in others if m["type"] == "error"] == ["stale"]


async def test_a_known_answer_that_is_illegal_now_is_still_handed_to_the_table() -> None:
    # decide returns the bot's action; legality is judged by the table (match.py).
    async with pipes({1: answer(1, TAKE), 2: answer(2, TAKE)}) as (player, _):
        assert await player.decide(request(1), 5.0) == TAKE
        assert await player.decide(request(2, [PASS]), 5.0) == TAKE


async def test_a_bot_that_never_answers_still_times_out_on_a_pipe(autojump_clock: trio.abc.Clock) -> None:
    async with pipes({}) as (player, _):
        with pytest.raises(BotFailure) as info:
            await player.decide(request(1), 2.0)
    assert info.value.kind == "timeout"
    assert "no answer to request 1 within 2.000 s" in str(info.value)


async def test_a_quick_bot_that_stops_answering_still_times_out_at_its_deadline(
        autojump_clock: trio.abc.Clock) -> None:
    # After a quick answer the next one is first waited for in the pipe's own poll
    # (blocking, briefly); the deadline stays the referee's all the same.
    async with pipes({1: answer(1, PASS)}) as (player, _):
        assert await player.decide(request(1), 2.0) == PASS
        assert player._quick  # its answer came at once: the next wait starts in the poll
        with pytest.raises(BotFailure) as info:
            await player.decide(request(2), 2.0)
    assert info.value.kind == "timeout"
    assert "no answer to request 2 within 2.000 s" in str(info.value)
