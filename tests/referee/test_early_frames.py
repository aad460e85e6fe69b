"""A bot speaks only when asked: any frame (but the pong of a ping) that is there while no
request is open is a protocol error (SPEC section 6), so no answer can be taken before its request
exists. The referee checks without waiting, before it writes each request, on pipes
(trio FdStream) and sockets (SocketStream) alike; real bot processes show it end to end.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
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
from referee.table.match import GameRecord, MatchConfig, play_match
from support import ask, cli

BOT = Path(__file__).resolve().parent / "bots" / "eager_bot.py"
REQUEST = {"type": "request", "id": 1, "game": 0}


class RawPlayer(StreamPlayer):
    """The referee's side of a bot on any pair of trio streams."""

    def __init__(self, send: trio.abc.SendStream, receive: trio.abc.ReceiveStream) -> None:
        super().__init__("raw", BotSpec("command", "raw", ("raw",), "raw", named=True))
        self._attach(send, receive)

    async def _stream_failure(self) -> BotFailure:
        return BotFailure("crash", "the far side ended its stream", {})

    def _write_failure(self) -> BotFailure:
        return BotFailure("crash", "the far side closed its stream", {})


def action(request_id: int) -> bytes:
    return encode(msg.action_msg(request_id, {"type": "pass"}))


@asynccontextmanager
async def socket_pair() -> AsyncIterator[tuple[RawPlayer, trio.SocketStream]]:
    a, b = trio.socket.socketpair()
    stream, far = trio.SocketStream(a), trio.SocketStream(b)
    try:
        yield RawPlayer(stream, stream), far
    finally:
        await stream.aclose()
        await far.aclose()


@asynccontextmanager
async def pipe_pair() -> AsyncIterator[tuple[RawPlayer, int]]:
    """The player on two pipes, and the fd the far side writes its frames to."""
    to_bot_r, to_bot_w = os.pipe()
    from_bot_r, from_bot_w = os.pipe()
    send, receive = trio.lowlevel.FdStream(to_bot_w), trio.lowlevel.FdStream(from_bot_r)
    try:
        yield RawPlayer(send, receive), from_bot_w
    finally:
        await send.aclose()
        await receive.aclose()
        os.close(to_bot_r)
        os.close(from_bot_w)


async def answer_requests(far: trio.SocketStream) -> None:
    decoder = FrameDecoder()
    while chunk := await far.receive_some(65536):
        decoder.feed(chunk)
        for m in decoder.messages():
            if m["type"] == "request":
                await far.send_all(action(m["id"]))


@pytest.mark.parametrize("transport", ["socket", "pipe"])
async def test_an_answer_written_before_its_request_is_a_protocol_error(transport: str) -> None:
    async with AsyncExitStack() as stack:
        if transport == "socket":
            player, far = await stack.enter_async_context(socket_pair())
            await far.send_all(action(1))
        else:
            player, fd = await stack.enter_async_context(pipe_pair())
            os.write(fd, action(1))
        with pytest.raises(BotFailure) as info:
            await ask(player, REQUEST, 5.0)
    assert info.value.kind == "protocol"
    assert str(info.value) == "answered before request 1 was sent (an action for request 1)"
    assert info.value.evidence["received"] == msg.action_msg(1, {"type": "pass"})


@pytest.mark.parametrize("transport", ["socket", "pipe"])
async def test_a_pong_no_ping_asked_for_is_a_protocol_error(transport: str) -> None:
    """A pong answers a ping, once (tests/referee/test_floods_bounded.py has the rest):
    one sent when no ping was written is an early frame like any other."""
    async with AsyncExitStack() as stack:
        if transport == "socket":
            player, far = await stack.enter_async_context(socket_pair())
            await far.send_all(encode(msg.pong_msg(7)) * 3)
        else:
            player, fd = await stack.enter_async_context(pipe_pair())
            os.write(fd, encode(msg.pong_msg(7)) * 3)
        with pytest.raises(BotFailure) as info:
            await ask(player, REQUEST, 5.0)
    assert info.value.kind == "protocol"
    assert str(info.value) == ("sent an unsolicited pong (id 7) before request 1 was sent: no "
                               "ping was open; a pong only answers a ping, once, with its id")
    assert info.value.evidence["received"] == msg.pong_msg(7)


async def test_a_second_answer_found_before_the_next_request_is_a_protocol_error() -> None:
    async with socket_pair() as (player, far):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer_requests, far)
            assert await ask(player, REQUEST, 5.0) == {"type": "pass"}
            nursery.cancel_scope.cancel()
        await far.send_all(action(1))  # the same answer again
        with pytest.raises(BotFailure, match=r"^answered request 1 twice"):
            await ask(player, dict(REQUEST, id=2), 5.0)


async def test_a_second_answer_read_while_the_next_request_is_open_is_only_stale(
        autojump_clock: Any) -> None:
    """The check runs before each request is written; a duplicate that comes after that,
    while the next request is open, is an action for another request: ignored with a
    ``stale`` notice (not fatal), as SPEC section 6 says."""
    left, right = trio.testing.memory_stream_pair()
    bot = RawPlayer(left, left)
    seen: list[dict[str, Any]] = []

    async def far_side() -> None:
        decoder = FrameDecoder()
        last = None
        while chunk := await right.receive_some(65536):
            decoder.feed(chunk)
            for m in decoder.messages():
                seen.append(m)
                if m["type"] == "hello":
                    await right.send_all(encode(msg.bot_hello_msg("dup")))
                elif m["type"] == "request":
                    dup = b"" if last is None else encode(msg.action_msg(last, m["legal"][-1]))
                    await right.send_all(dup + encode(msg.action_msg(m["id"], m["legal"][0])))
                    last = m["id"]
                elif m["type"] == "bye":
                    await right.aclose()
                    return

    opponent = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(far_side)
        await bot._handshake(10)
        games: list[GameRecord] = []  # the result keeps counts only
        await play_match([bot, opponent], MatchConfig(rules=make_rules(), games=2, seed=3),
                         on_game=lambda r, _: games.append(r))
        await bot._try_send(msg.bye_msg())
    assert [g.termination for g in games] == ["normal", "normal"]
    stale = [m for m in seen if m["type"] == "error"]
    assert stale and all(m["code"] == "stale" and not m["fatal"] for m in stale)


# --------------------------------------------------------------------------- real bots

#: A well-behaved bot process: against it, both seats take request frames, so every
#: decision first goes through the referee's synchronous frame lane (framelane.py).
PROGRAM = f"{sys.executable} {Path(__file__).resolve().parents[2] / 'examples' / 'python' / 'greedy_bot.py'}"


def play_eager(mode: str, tmp_path: Path, *extra: str, opponent: str = "builtin:greedy") -> dict[str, Any]:
    result = cli("match", f"{sys.executable} {BOT} {mode}", opponent, "-n", "2",
                 "--json", "--log-dir", tmp_path / "logs", *extra, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.process
@pytest.mark.parametrize("opponent", ["builtin:greedy", PROGRAM], ids=["builtin", "program"])
@pytest.mark.parametrize(("mode", "reason"), [
    ("early", "answered before request 1 was sent (an action for request 1)"),
    ("ahead", "answered before request 2 was sent (an action for request 2)"),
    ("twice", "answered request 1 twice"),
])
def test_a_bot_that_speaks_out_of_turn_forfeits_with_a_protocol_error(
        tmp_path: Path, mode: str, reason: str, opponent: str) -> None:
    summary = play_eager(mode, tmp_path, opponent=opponent)
    [first, *_] = summary["forfeit_details"]
    assert first["game"] == 0 and first["kind"] == "protocol"
    assert first["bot"].startswith("eager")
    assert first["reason"].startswith(reason)
    assert summary["terminations"].get("protocol") == 2  # restarted, it does it again


@pytest.mark.process
def test_a_well_behaved_python_bot_is_never_caught(tmp_path: Path) -> None:
    """The check costs honest bots nothing: the example bot plays clean games."""
    example = Path(__file__).resolve().parents[2] / "examples" / "python" / "greedy_bot.py"
    result = cli("match", f"{sys.executable} {example}", "builtin:random", "-n", "4", "--json",
                 "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["forfeit_details"] == []
