"""The referee's fast paths change no verdict. An answer whose bytes are the canonical
encoding of an action the request knows (``Ask.answers``) skips the decoder, yet is taken only for the request
it names, only once, and its legality is still the table's to judge; pipes are written
and read without waiting in trio when they can be, under the same deadlines.
"""

from __future__ import annotations

import os
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode, pack
from referee.seats.pipelane import Request
from referee.seats.players import BotFailure, BotSpec, parse_bot_spec
from referee.seats.wire import YIELD_EVERY, StreamPlayer
from support import ask

PASS, TAKE = {"type": "pass"}, {"type": "take"}
KNOWN = {pack(PASS): "pass-int", pack(TAKE): "take-int"}  # what the table's map looks like


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
        assert await ask(player, request(1), 5.0, KNOWN) == "pass-int"
        assert await ask(player, request(2), 5.0, KNOWN) == "pass-int"  # known bytes: not decoded
        with pytest.raises(BotFailure) as info:
            await ask(player, request(3), 5.0, KNOWN)
    assert info.value.kind == "protocol"
    assert "answered request 2 twice" in str(info.value)


async def test_a_known_answer_naming_an_older_request_is_stale_not_taken() -> None:
    async with pipes({1: answer(1, PASS), 2: answer(1, PASS) + answer(2, TAKE)}) as (player, others):
        assert await ask(player, request(1), 5.0, KNOWN) == "pass-int"
        assert await ask(player, request(2), 5.0, KNOWN) == "take-int"
        await player.send(msg.game_end_msg(game=0, durak=0, termination="normal", reason="over"))
    assert [m.get("code") for m in others if m["type"] == "error"] == ["stale"]


async def test_a_known_answer_that_is_illegal_now_is_still_handed_to_the_table() -> None:
    # The seat returns what the bot answered; legality is the table's to judge
    # (framelane.settle): the known bytes do not depend on the request's legal list.
    async with pipes({1: answer(1, TAKE), 2: answer(2, TAKE)}) as (player, _):
        assert await ask(player, request(1), 5.0, KNOWN) == "take-int"
        assert await ask(player, request(2, [PASS]), 5.0, KNOWN) == "take-int"


async def test_a_bot_that_never_answers_still_times_out_on_a_pipe(autojump_clock: trio.abc.Clock) -> None:
    async with pipes({}) as (player, _):
        with pytest.raises(BotFailure) as info:
            await ask(player, request(1), 2.0)
    assert info.value.kind == "timeout"
    assert "no answer to request 1 within 2.000 s" in str(info.value)


async def test_a_quick_bot_that_stops_answering_still_times_out_at_its_deadline(
        autojump_clock: trio.abc.Clock) -> None:
    # After a quick answer the next one is first waited for in the pipe's own poll
    # (blocking, briefly); the deadline stays the referee's all the same.
    async with pipes({1: answer(1, PASS)}) as (player, _):
        assert await ask(player, request(1), 2.0) == PASS  # (no known bytes: decoded)
        assert player._lane.quick  # its answer came at once: the next wait starts in the poll
        with pytest.raises(BotFailure) as info:
            await ask(player, request(2), 2.0)
    assert info.value.kind == "timeout"
    assert "no answer to request 2 within 2.000 s" in str(info.value)


# -- every decision here is asked as the table asks it: ``attempt`` (the synchronous fast
# lane) first, then the awaited ``finish``. Whichever finishes a decision, the verdict is
# the same: these tests assert verdicts, never which lane ran.


def frame_of(request_id: int, legal: list[dict] | None = None, **observation: object) -> bytes:
    return encode(msg.request_msg(id=request_id, game=0, observation=observation,
                                  legal=legal or [PASS, TAKE]))


def FrameAsk(request_id: int, budget: float, **observation: object) -> Request:
    """A request as a table asks it (``players.Ask``: what a stream player reads)."""
    return Request(request_id, budget, KNOWN, frame_of(request_id, **observation))


async def decide_both_lanes(player: PipePlayer, request_id: int, budget: float, **obs: object) -> object:
    """What the match loop does: ``attempt`` first, then the awaited ``finish``."""
    ask = FrameAsk(request_id, budget, **obs)
    got = player.attempt(ask)
    if got is None:
        got = await player.finish(ask)
    assert ask.timing is not None  # the bot's time, from the request written to its answer
    return got


async def test_a_canonical_known_answer_to_a_frame_request_is_the_mapped_value() -> None:
    odd_order = b"".join((b"\x83", pack("action"), pack(PASS), pack("type"), pack("action"),
                          pack("id"), pack(2)))  # the same message, keys in another order
    async with pipes({1: answer(1, TAKE), 2: struct.pack(">I", len(odd_order)) + odd_order,
                      3: answer(3, {"type": "attack", "card": "6S"})}) as (player, _):
        assert await decide_both_lanes(player, 1, 5.0) == "take-int"
        assert await decide_both_lanes(player, 2, 5.0) == PASS  # not canonical: decoded
        # Canonical bytes of an action the map does not know: decoded, returned as a map
        # (legal or not is the table's call).
        assert await decide_both_lanes(player, 3, 5.0) == {"type": "attack", "card": "6S"}


async def test_a_quick_bot_that_stops_answering_times_out_at_its_deadline_in_the_frame_lane(
        autojump_clock: trio.abc.Clock) -> None:
    async with pipes({1: answer(1, PASS)}) as (player, _):
        assert await decide_both_lanes(player, 1, 2.0) == "pass-int"
        assert player._lane.quick  # the next request is tried in the fast lane
        with pytest.raises(BotFailure) as info:
            await decide_both_lanes(player, 2, 2.0)
    assert info.value.kind == "timeout"
    assert "no answer to request 2 within 2.000 s" in str(info.value)


async def test_an_answer_sent_before_its_request_is_refused_in_the_frame_lane() -> None:
    async with pipes({1: answer(1, PASS) + answer(2, PASS)}) as (player, others):
        assert await decide_both_lanes(player, 1, 5.0) == "pass-int"
        await trio.sleep(0.05)  # the early answer is in the pipe
        with pytest.raises(BotFailure) as info:
            await decide_both_lanes(player, 2, 5.0)
    assert info.value.kind == "protocol"
    assert "answered before request 2 was sent" in str(info.value)
    assert [m.get("code") for m in others if m["type"] == "error"] == ["protocol"]  # told


async def test_a_known_answer_sent_twice_is_refused_in_the_frame_lane() -> None:
    async with pipes({1: answer(1, PASS) * 2}) as (player, _):
        assert await decide_both_lanes(player, 1, 5.0) == "pass-int"
        await trio.sleep(0.05)
        with pytest.raises(BotFailure) as info:
            await decide_both_lanes(player, 2, 5.0)
    assert "answered request 1 twice" in str(info.value)


async def test_a_bot_that_stops_reading_cannot_stall_the_frame_lane(
        autojump_clock: trio.abc.Clock) -> None:
    # Its pipe fills: the fast lane writes what fits and leaves the rest queued; the
    # awaited continuation fails the bot at the request's deadline.
    to_bot_r, to_bot_w = os.pipe()
    from_bot_r, from_bot_w = os.pipe()
    player = PipePlayer(trio.lowlevel.FdStream(to_bot_w), trio.lowlevel.FdStream(from_bot_r))
    far_in, far_out = trio.lowlevel.FdStream(to_bot_r), trio.lowlevel.FdStream(from_bot_w)

    async def answer_once_then_stop_reading() -> None:
        decoder = FrameDecoder()
        while decoder.next_message() is None:
            decoder.feed(await far_in.receive_some(65536))
        await far_out.send_all(answer(1, PASS))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer_once_then_stop_reading)
        assert await decide_both_lanes(player, 1, 2.0) == "pass-int"
    assert player._lane.quick
    with pytest.raises(BotFailure) as info:
        await decide_both_lanes(player, 2, 2.0, padding="x" * 200_000)
    assert info.value.kind == "timeout"
    assert "not reading its input" in str(info.value)
    for stream in (far_in, far_out):
        await stream.aclose()


async def test_the_fast_lane_steps_aside_for_the_periodic_yield_to_trio() -> None:
    # However quick the bot, every YIELD_EVERY-th decision goes through trio, so the
    # stderr drains, exit watchers and Ctrl-C are served.
    async with pipes({i: answer(i, PASS) for i in range(1, 3 * YIELD_EVERY)}) as (player, _):
        assert await decide_both_lanes(player, 1, 5.0) == "pass-int"
        player._lane.quick = True
        player._lane.unyielded = YIELD_EVERY - 1
        ask = FrameAsk(2, 5.0)
        assert player.attempt(ask) is None
        assert player._lane.open is None  # nothing was written: finish does it all
        with trio.testing.assert_checkpoints():  # it yielded
            assert await player.finish(ask) == "pass-int"
        assert player._lane.unyielded == 1  # and counts again from this decision


@pytest.mark.process
def test_a_stream_player_subclass_that_overrides_hear_or_attempt_is_called_itself() -> None:
    """A stream player's ``attempt`` and ``hear`` are its lane's compiled methods, bound
    per instance; a subclass with its own (TcpSeat's ``hear`` keeps the game_start for a
    reconnection) keeps them."""
    from referee.seats.process import ProcessPlayer
    from referee.seats.tcp import TcpSeat

    seat = TcpSeat("alice")
    assert seat.hear.__func__ is TcpSeat.hear  # type: ignore[attr-defined]
    assert seat.attempt == seat._lane.attempt
    assert "attempt" not in vars(ProcessPlayer) and "hear" not in vars(ProcessPlayer)
    bot = ProcessPlayer("bob", parse_bot_spec("./bot"))
    assert (bot.attempt, bot.hear) == (bot._lane.attempt, bot._lane.hear)


@pytest.mark.process
def test_the_loop_calls_a_pipe_players_lane_itself_and_any_other_players_own_methods() -> None:
    """The loop's seat for a player (``pipelane.seat_of``): the lane both its ``attempt``
    and ``hear`` are bound to; a player with a method of its own (TcpSeat's ``hear``,
    a built-in) is called through its own methods, each call reaching it unchanged."""
    from referee.seats.pipelane import Forwarding, seat_of
    from referee.seats.players import BuiltinPlayer
    from referee.seats.process import ProcessPlayer
    from referee.seats.tcp import TcpSeat

    bot = ProcessPlayer("bob", parse_bot_spec("./bot"))
    assert seat_of(bot) is bot._lane
    tcp = seat_of(TcpSeat("alice"))
    assert type(tcp) is Forwarding
    heard: list[bytes] = []
    asked: list[object] = []
    builtin = BuiltinPlayer("carol", parse_bot_spec("builtin:gentle"))
    builtin.hear = heard.append  # type: ignore[method-assign]
    builtin.attempt = lambda ask: asked.append(ask) or 7  # type: ignore[method-assign]
    seat = seat_of(builtin)
    request = Request(3, 1.0, KNOWN, b"frame")
    assert seat.attempt(request) == 7 and asked == [request]
    seat.hear(b"event")
    assert heard == [b"event"]
