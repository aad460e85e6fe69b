"""The compiled pipe lane (referee/seats/pipelane.py) and the StreamPlayer it serves share
one copy of the connection's state (the player's ``_lane``), and read the clock and the pipes exactly as the
player does. (Its verdicts are specified with real pipes in test_known_answers.py and
test_early_frames.py, and with real bot processes in test_hostile_bots.py.)
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
import trio

from protocol.codec import FrameDecoder, encode, pack
from referee.seats import pipelane
from referee.seats.pipelane import pending
from referee.seats.players import BotFailure, BotSpec
from referee.seats.wire import StreamPlayer
from tests.referee.test_known_answers import PASS, PipePlayer, answer, pipes, request

#: The known answers the lane maps: PASS's packed map -> "PASS".
KNOWN = {pack(PASS): "PASS"}


def RawAsk(frame: bytes, request_id: int, budget: float | None = 5.0,
           answers: dict[bytes, Any] = KNOWN) -> pipelane.Request:
    """A request as a table asks it (``players.Ask``: what a stream player reads)."""
    return pipelane.Request(request_id, budget, answers, frame)


#: A value of the right type for each lane field, none equal to a fresh lane's.
SAMPLES: dict[str, Any] = {
    "out": bytearray(b"queued"), "failure": BotFailure("crash", "gone", {}), "quick": True,
    "unyielded": 7, "open": (3, 1.5), "stash": {"type": "pong"}, "expect": b"head",
    "answers": {b"x": 1}, "answered": 3, "timing": (1.0, 2.0), "pipes": True,
    "poll": object(), "decoder": FrameDecoder(), "now": time.perf_counter, "clock_offset": 4.25,
    "out_fileno": os.getpid, "in_fileno": os.getppid, "out_holder": object(),
    "in_holder": object(),
}


async def test_the_player_keeps_its_connection_on_its_lane_only() -> None:
    async with pipes({}) as (player, _):
        lane = player._lane
        own = vars(player)
        assert not any(name in own or f"_{name}" in own for name in SAMPLES), own.keys()
        failure = BotFailure("crash", "gone", {})
        player.failure = failure  # the public failure is the lane's
        assert lane.failure is failure and player.failure is failure
        assert player.decoder is lane.decoder


async def test_a_new_stream_resets_every_field_of_the_same_lane() -> None:
    # The same object: a table holds it for the whole game, and a TCP seat may reconnect
    # (a new stream) in the middle of one.
    async with pipes({}) as (player, _):
        lane = player._lane
        fresh = {field: getattr(lane, field) for field in SAMPLES}
        for field, value in SAMPLES.items():
            setattr(lane, field, value)  # everything of the old connection, dirtied
        player._attach(player._send_stream, player._receive_stream)
        assert player._lane is lane
        for field, value in SAMPLES.items():
            assert getattr(lane, field) is not value, f"{field} carried over"
        assert {f: getattr(lane, f) for f in ("out", "failure", "quick", "unyielded", "open",
                                              "stash", "timing", "pipes")} == {
            f: fresh[f] for f in ("out", "failure", "quick", "unyielded", "open", "stash",
                                  "timing", "pipes")}


async def test_events_queued_through_a_lane_held_before_a_new_stream_go_to_the_new_one() -> None:
    async with pipes({}) as (player, _):
        held = player._lane  # as a table holds it from the start of a game
        player._fail("disconnect", "the connection was lost")
        player._attach(player._send_stream, player._receive_stream)  # the bot is back
        pipelane.queue_frame(held, b"an event frame")
        assert pending(held) == b"an event frame"  # written with its next request


def test_a_player_may_fail_before_any_stream_is_attached() -> None:
    # (A TCP seat is failed until a client connects: its failure is on a lane already.)
    class Unattached(StreamPlayer):
        def __init__(self) -> None:
            super().__init__("seat", BotSpec("command", "seat", ("seat",), "seat", named=True))
            self.failure = BotFailure("disconnect", "no client has connected", {})

    seat = Unattached()
    assert seat._lane.failure is seat.failure and seat.failure.kind == "disconnect"
    with pytest.raises(BotFailure):
        seat.hear(b"frame")


async def test_under_trios_default_clock_the_lane_reads_the_same_time_without_a_call() -> None:
    async with pipes({}) as (player, _):
        offset = player._lane.clock_offset
        assert isinstance(offset, float)
        before = trio.current_time()
        lane_now = time.perf_counter() + offset
        after = trio.current_time()
        assert before <= lane_now <= after


async def test_under_any_other_clock_the_lane_asks_the_clock(autojump_clock: Any) -> None:
    async with pipes({}) as (player, _):
        assert player._lane.clock_offset is None
        await trio.sleep(12.5)  # virtual time: only the clock itself knows it
        assert player._lane.now() == trio.current_time()


async def test_the_pipes_are_read_through_their_holders_and_a_closed_one_is_never_written() -> None:
    async with pipes({}) as (player, _):
        lane = player._lane
        assert lane.out_holder.fd == player._send_stream.fileno()
        assert lane.in_holder.fd == player._receive_stream.fileno()
        await player._send_stream.aclose()
        assert lane.out_holder.fd == -1  # as fileno() says: never a number reused since
        player._lane.quick = True
        # The write fails (a closed stream), nothing is queued for later, and the request
        # is left to the awaited path, which reports the bot gone.
        assert player.attempt(RawAsk(b"\x00\x00\x00\x01\x80", 1, 5.0, {})) is None
        assert lane.out == b"" and lane.queued == [] and lane.open is None


def event(n: int, size: int = 0) -> bytes:
    """A frame the far side reads as an ``event`` message numbered ``n`` (``size`` bytes of
    padding make it big)."""
    return encode({"type": "event", "game": 0, "event": {"type": "note", "n": n, "pad": "x" * size}})


async def test_frames_queued_apart_are_read_through_out_after_its_bytes_in_order() -> None:
    async with pipes({}) as (player, _):
        lane = player._lane
        player._queue(event(1))  # (as send queues a hello)
        pipelane.queue_frame(lane, event(2))
        pipelane.queue_frame(lane, event(3))
        assert lane.out == event(1) and lane.queued == [event(2), event(3)]  # not copied yet
        assert pending(lane) == event(1) + event(2) + event(3)  # joined on when read
        assert lane.queued == []
        pipelane.queue_frame(lane, event(4))
        player._attach(player._send_stream, player._receive_stream)  # a new stream: nothing
        # of the old one is written
        assert lane.out == b"" and lane.queued == []


async def test_past_queued_max_the_frames_are_joined_and_still_go_out_in_order() -> None:
    count = 3 * pipelane.QUEUED_MAX + 5  # (writev takes at most IOV_MAX buffers)
    async with pipes({1: answer(1, PASS)}) as (player, others):
        for n in range(count):
            pipelane.queue_frame(player._lane, event(n))
            assert len(player._lane.queued) <= pipelane.QUEUED_MAX
        player._lane.quick = True  # so the synchronous lane writes them with the request
        assert player.attempt(RawAsk(encode(request(1)), 1)) == "PASS"
    assert [m["event"]["n"] for m in others] == list(range(count))


async def test_queued_bytes_and_frames_precede_the_request_in_one_write() -> None:
    async with pipes({1: answer(1, PASS)}) as (player, others):
        player._queue(event(0))
        pipelane.queue_frame(player._lane, event(1))
        player._lane.quick = True
        assert player.attempt(RawAsk(encode(request(1)), 1)) == "PASS"
        assert player._lane.out == b"" and player._lane.queued == []
    assert [m["event"]["n"] for m in others] == [0, 1]


async def test_a_write_the_pipe_takes_in_part_leaves_the_rest_for_the_awaited_path() -> None:
    # 200 KB queued: a pipe takes 64 KB at once, the far side has read nothing yet, so
    # writev takes part of it (always, whatever the timing). The request is left open with
    # the rest queued in order; finish writes it as the far side reads, and takes
    # the answer.
    frames = [event(n, 2000) for n in range(100)]
    async with pipes({1: answer(1, PASS)}) as (player, others):
        for frame in frames:
            pipelane.queue_frame(player._lane, frame)
        player._lane.quick = True
        request_frame = encode(request(1))
        ask = RawAsk(request_frame, 1)
        assert player.attempt(ask) is None
        lane = player._lane
        assert lane.open == (1, None)  # written in part: its write time is not known yet
        assert lane.queued == [] and 0 < len(lane.out) < len(b"".join(frames) + request_frame)
        assert (b"".join(frames) + request_frame).endswith(bytes(lane.out))
        assert await player.finish(ask) == "PASS"
    assert [m["event"]["n"] for m in others] == list(range(100))


async def test_a_failed_write_keeps_what_was_queued_and_drops_only_the_request() -> None:
    async with pipes({}) as (player, _):
        pipelane.queue_frame(player._lane, event(1))
        await player._send_stream.aclose()
        player._lane.quick = True
        assert player.attempt(RawAsk(encode(request(1)), 1)) is None
        assert player._lane.queued == [event(1)] and player._lane.out == b""


def test_the_lane_reads_the_decoders_buffered_count_from_its_two_fields() -> None:
    # decide_now reads FrameDecoder.buffered as len(_buf) - _pos (no interpreted call).
    decoder = FrameDecoder()
    frames = event(1) + event(2)
    for fed in (b"", frames[:3], frames[3:10], frames[10:]):
        if fed:
            decoder.feed(fed)
        assert decoder.buffered == len(decoder._buf) - decoder._pos
        while decoder.next_message() is not None:
            assert decoder.buffered == len(decoder._buf) - decoder._pos
    assert decoder.buffered == 0 == len(decoder._buf) - decoder._pos


async def test_a_decoder_holding_bytes_keeps_the_synchronous_lane_closed() -> None:
    async with pipes({1: answer(1, PASS)}) as (player, _):
        player._lane.quick = True
        player.decoder.feed(event(7)[:5])  # part of a frame read earlier: to be judged
        assert player.attempt(RawAsk(encode(request(1)), 1)) is None
        assert player._lane.open is None  # nothing written: finish does it all


#: A bot process that answers every request at once: the first legal action for an odd
#: request id, the second for an even one, in canonical bytes (codec.encode).
QUICK_BOT = r"""
import os, sys
from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
decoder = FrameDecoder()
while chunk := os.read(0, 65536):
    decoder.feed(chunk)
    while (m := decoder.next_message()) is not None:
        if m["type"] == "request":
            os.write(1, encode(msg.action_msg(m["id"], m["legal"][(m["id"] + 1) % 2])))
"""


@pytest.mark.process
async def test_a_bot_process_that_answers_at_once_gets_every_answer_right_in_either_lane() -> None:
    # Which lane finishes each decision depends on how soon the process answers (within
    # QUICK_WAIT_MS: the synchronous one); what each returns, and the timing, must not.
    import subprocess
    import sys
    from pathlib import Path

    from protocol import messages as msg

    root = Path(__file__).resolve().parents[2]
    proc = await trio.lowlevel.open_process([sys.executable, "-c", QUICK_BOT], cwd=root,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    pass_, take = {"type": "pass"}, {"type": "take"}
    answers = {pack(pass_): "PASS", pack(take): "TAKE"}
    try:
        assert proc.stdin is not None and proc.stdout is not None
        player = PipePlayer(proc.stdin, proc.stdout)  # (the pipes of a real process)
        last_answered = -1.0
        for request_id in range(1, 201):
            frame = encode(msg.request_msg(id=request_id, game=0, observation={},
                                           legal=[pass_, take], clock=msg.clock_map()))
            ask = RawAsk(frame, request_id, 5.0, answers)
            got = player.attempt(ask)
            if got is None:
                got = await player.finish(ask)
            assert got == ("PASS" if request_id % 2 else "TAKE")
            assert ask.timing is not None
            written, answered = ask.timing
            assert last_answered <= written <= answered  # each answer after its request
            last_answered = answered
            assert player._lane.answered == request_id and player._lane.open is None
    finally:
        proc.kill()
        await proc.wait()

