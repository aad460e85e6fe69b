"""Floods over TCP cost the flooder, not the referee or the other bots.

- A ping is answered by one pong with its id: a wrong id, a second pong, a pong nobody
  asked for is the bot's protocol error (a seat over a real socket pair, and a bot
  streaming pongs in a real arena).
- A full pool of unauthenticated connections evicts the oldest *silent* one: under a
  flood of silent connections from distinct /24s, registered bots that send their hello
  get in, 10 of 10, even one whose hello trickles in over longer than the pool lasts.
- A correct token is admitted whatever the throttle state of its address and network;
  a wrong one from there is still throttled.

Arenas run in the test's trio loop over loopback, with clients bound to 127.x.y.z
addresses; where time is the point, on trio's virtual clock (``autojump_clock``), so a
flood "of 1,000 connections a second" is exactly that however slow the machine.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from tcp_security_kit import Client, legit_bot, running_arena, wait_until
from test_tcp_security import _port_from, raise_fd_limit

from protocol import messages as m
from protocol.codec import FrameDecoder, encode
from referee.rules import make_rules
from referee.seats.players import BotFailure, parse_bot_spec
from referee.seats.tcp import FD_RESERVE, PENDING_CEILING, TcpLimits, TcpSeat, fd_sized_pending
from referee.table.clock import TimeControl
from referee.table.match import MatchConfig
from referee.table.runner import SeatOptions, run_match_async
from support import ask

REQUEST = {"type": "request", "id": 1, "game": 0}


# --------------------------------------------------------------------------- one pong per ping

class _Far:
    """The bot's end of a socket pair: frames in, frames out."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream, self.decoder = stream, FrameDecoder()

    async def receive(self) -> dict[str, Any]:
        while (message := self.decoder.next_message()) is None:
            self.decoder.feed(await self.stream.receive_some(65536))
        return message

    async def send(self, *messages: dict[str, Any]) -> None:
        await self.stream.send_all(b"".join(encode(x) for x in messages))


@asynccontextmanager
async def _seat_and_far() -> AsyncIterator[tuple[TcpSeat, _Far]]:
    """A TCP seat over one end of a socket pair, the bot at the other."""
    a, b = trio.socket.socketpair()
    near, far = trio.SocketStream(a), trio.SocketStream(b)
    seat = TcpSeat("alice")
    seat.attach_connection(near, FrameDecoder(4096),
                           m.BotHello(protocol=1, name="alice", version="1", author=None,
                                      token="t"), "127.0.0.1")
    try:
        yield seat, _Far(far)
    finally:
        await near.aclose()
        await far.aclose()


async def test_a_ping_answered_with_another_id_fails_the_bot_and_tells_it_why() -> None:
    async with _seat_and_far() as (seat, far):
        async with trio.open_nursery() as nursery:
            async def bot() -> None:
                ping = await far.receive()
                await far.send(m.pong_msg(ping["id"] + 1))
            nursery.start_soon(bot)
            assert await seat.ping(5.0) is False
        assert seat.failure is not None and seat.failure.kind == "protocol"
        assert str(seat.failure) == ("answered ping 1 with a pong for id 2 (sent while ping 1 was "
                                     "open); a pong carries the id of the ping it answers")
        told = await far.receive()
        assert (told["type"], told["code"], told["message"], told["fatal"]) == (
            "error", "protocol", str(seat.failure), True)
        assert not seat.connected


async def test_a_ping_answered_twice_is_a_protocol_error_at_the_next_request() -> None:
    async with _seat_and_far() as (seat, far):
        async with trio.open_nursery() as nursery:
            async def bot() -> None:
                ping = await far.receive()
                await far.send(m.pong_msg(ping["id"]), m.pong_msg(ping["id"]))
            nursery.start_soon(bot)
            assert await seat.ping(5.0) is True
        with pytest.raises(BotFailure) as info:
            await ask(seat, dict(REQUEST, legal=[{"type": "pass"}]), 5.0)
        assert info.value.kind == "protocol"
        assert str(info.value) == ("answered ping 1 twice (the second pong was there before request 1 "
                                   "was sent); one pong per ping")


async def test_a_second_ping_answered_with_the_first_ones_id_is_a_protocol_error() -> None:
    async with _seat_and_far() as (seat, far):
        async with trio.open_nursery() as nursery:
            async def bot() -> None:
                await far.receive()
                await far.send(m.pong_msg(1))
                await far.receive()
                await far.send(m.pong_msg(1))
            nursery.start_soon(bot)
            assert await seat.ping(5.0) is True
            assert await seat.ping(5.0) is False
        assert str(seat.failure).startswith("answered ping 2 with a pong for id 1")


async def test_the_pong_of_a_ping_whose_wait_was_cut_short_is_taken_once(autojump_clock: Any) -> None:
    """A ping round cancelled after the ping was written (the arena stopping, say) leaves
    the ping open: its pong, found later, is the answer it is, and the game goes on."""
    async with _seat_and_far() as (seat, far):
        with trio.move_on_after(1.0):
            await seat.ping(5.0)
        assert (await far.receive())["type"] == "ping"
        await far.send(m.pong_msg(1))
        async with trio.open_nursery() as nursery:
            async def bot() -> None:
                request = await far.receive()
                await far.send(m.action_msg(request["id"], {"type": "pass"}))
            nursery.start_soon(bot)
            assert await ask(seat, dict(REQUEST, legal=[{"type": "pass"}]), 5.0) == {"type": "pass"}
        assert seat._ping_open is None and seat._ping_answered == 1


@pytest.mark.slow
async def test_a_bot_streaming_pongs_in_the_arena_forfeits_at_its_first_pong(tmp_path: Path) -> None:
    """mallory plays, and from her game_start on streams pongs 0, 1, 2, ... between her
    answers. Her game is her protocol forfeit for pong 0, the first she sent (the
    referee decoded no other), she is told why, and alice plays on with bob."""
    sent = 0
    told: list[dict[str, Any]] = []
    with trio.fail_after(40):
        async with running_arena(tmp_path, names=("alice", "bob", "mallory")) as run:
            async def mallory() -> None:
                nonlocal sent
                client = await Client.connect(run.port)
                await client.hello("mallory", run.tokens["mallory"])

                sending = trio.Lock()  # the flood and the answers share the stream

                async def flood() -> None:
                    nonlocal sent
                    try:
                        while True:
                            async with sending:
                                await client.send_raw(b"".join(encode(m.pong_msg(sent + i))
                                                               for i in range(64)))
                            sent += 64
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass

                async with trio.open_nursery() as nursery:
                    while (message := await client.receive(30)) is not None:
                        if message["type"] == "game_start":
                            nursery.start_soon(flood)
                        elif message["type"] == "request":
                            async with sending:
                                await client.send(m.action_msg(message["id"], message["legal"][0]))
                        elif message["type"] == "error":
                            told.append(message)
                    nursery.cancel_scope.cancel()
                await client.aclose()

            run.nursery.start_soon(mallory)
            run.start_bot("alice", think=0.01)
            run.start_bot("bob", think=0.01)
            await wait_until(lambda: any("mallory" in g.players for g in run.stored_games()), 20,
                             "mallory's game")
            [game] = [g for g in run.stored_games() if "mallory" in g.players]
            assert game.termination == "protocol" and game.durak == "mallory"
            await run.play(len(run.stored_games()) + 2)
    assert sent > 0
    [error] = told
    assert (error["code"], error["fatal"]) == ("protocol", True)
    assert error["message"].startswith("sent an unsolicited pong (id 0) ")
    assert error["message"].endswith(": no ping was open; a pong only answers a ping, once, with its id")


# --------------------------------------------------------------------------- the pending pool

def test_the_pending_cap_is_sized_by_the_fd_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fd limit less the bots' room and FD_RESERVE, within 16..PENDING_CEILING."""
    for soft, expected in ((1024, 1024 - 256 - FD_RESERVE), (20000, PENDING_CEILING), (300, 16)):
        monkeypatch.setattr(resource, "getrlimit", lambda _which, soft=soft: (soft, 1 << 20))
        assert fd_sized_pending(256) == expected


@pytest.mark.process
def test_serving_raises_the_soft_fd_limit_to_the_hard_one() -> None:
    """In a fresh process with the usual soft limit of 1,024 (the hard limit as it is)."""
    code = ("import resource; from referee.seats.tcp import FD_TARGET, raise_fd_limit;"
            "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE);"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard));"
            "print(raise_fd_limit(), min(hard, FD_TARGET))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    got, expected = out.stdout.split()
    assert got == expected


def _flood_source(n: int) -> str:
    """The n-th flooding address: each in its own /24 (127.1.0.2, 127.1.1.2, ...)."""
    return f"127.{1 + n // 256}.{n % 256}.2"


@pytest.mark.slow
async def test_a_flood_of_silent_connections_evicts_the_oldest_silent_and_bots_get_in(
        tmp_path: Path, autojump_clock: Any) -> None:
    """1,000 silent connections a second from distinct /24s, into a pool of 64 (the old
    default; the default now holds thousands): each silent one lasts 64 ms. Meanwhile
    10 times a bot connects and sends its hello at once, then 10 times it sends the
    first bytes of its hello at once and the rest 200 ms later (the pool of silent
    connections turns over three times meanwhile): all 20 are admitted (before, the
    slow ones were evicted like the silent ones). The evicted connections are exactly
    the oldest silent ones."""
    raise_fd_limit(2 * 6000 + 200)
    rate, most, cap = 1000, 6000, 64
    limits = TcpLimits(max_pending=cap, handshake_s=5.0)
    silent: list[Client] = []
    admitted: list[str] = []
    with trio.fail_after(120):
        async with running_arena(tmp_path, names=("alice", "bob"), limits=limits) as run:
            done = trio.Event()

            async def flood() -> None:
                start = trio.current_time()
                for n in range(most):  # bounded: it stops by itself (or when the bot is done)
                    if done.is_set():
                        return
                    await trio.sleep_until(start + n / rate)
                    silent.append(await Client.connect(run.port, local=_flood_source(n)))

            async def bot(name: str, local: str, pause: float) -> None:
                client = await Client.connect(run.port, local=local)
                hello = encode(m.bot_hello_msg(name, version="1", token=run.tokens[name]))
                await client.send_raw(hello[:7] if pause else hello)
                if pause:
                    await trio.sleep(pause)
                    await client.send_raw(hello[7:])
                await wait_until(lambda: f"{name} connected from {local}" in run.events
                                 or any(r.peer == local for r in run.gate.refusals), 10,
                                 f"{name} from {local} admitted or refused")
                if f"{name} connected from {local}" in run.events:
                    admitted.append(local)
                await client.aclose()  # (its next connection finds this one dead)

            async def tries() -> None:
                await trio.sleep(0.3)  # the pool is full and turning over
                for pause, third in ((0.0, 200), (0.2, 201)):
                    for k in range(10):
                        await bot("alice", f"127.{third}.{k}.1", pause)
                        await trio.sleep(0.05)
                done.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(flood)
                nursery.start_soon(tries)
            assert 2 * cap < len(silent) < most
            # Each silent connection's fate, as its client reads it: given way, or closed by
            # the handshake deadline (those still pending when the flood ended).
            fates: list[str] = [""] * len(silent)

            async def fate(n: int) -> None:
                got = await silent[n].until_closed(limits.handshake_s + 1)
                fates[n] = got[-1]["message"] if got and got[-1]["type"] == "error" else "none"
                await silent[n].aclose()

            async with trio.open_nursery() as nursery:
                for n in range(len(silent)):
                    nursery.start_soon(fate, n)
    assert len(admitted) == 20, (admitted, [r for r in run.gate.refusals if r.peer.startswith("127.2")])
    gave_way = "too many unauthenticated connections; this one gave way to a newer one"
    assert set(fates) == {gave_way, f"no hello within {limits.handshake_s:g} s"}
    # Exactly the oldest were evicted: every one before the last evicted one, and the
    # newest (at most a pool's worth) left for the deadline.
    evicted = [n for n, f in enumerate(fates) if f == gave_way]
    assert evicted == list(range(len(evicted)))
    assert len(silent) - cap <= len(evicted) < len(silent)


# --------------------------------------------------------------------------- the throttle

async def test_the_right_token_is_admitted_at_once_from_a_throttled_address_and_network(
        tmp_path: Path, autojump_clock: Any) -> None:
    """mallory and her neighbours in 127.0.9.0/24 try 40 wrong tokens, until both her
    address and the network are in their penalty. Then, at once, from her very address
    and from a neighbour's, alice's right token is admitted, 10 of 10; a wrong token from
    either is still refused as throttled. (Before, the penalty refused every connection
    from there before its hello: alice's right token too.)"""
    limits = TcpLimits(auth_network_free_failures=8)
    mallory, neighbour = "127.0.9.200", "127.0.9.77"

    async def attempt(run: Any, local: str, token: str) -> dict[str, Any] | None:
        """The referee's verdict on a hello sent at once: its error, or None if seated."""
        client = await Client.connect(run.port, local=local)
        await client.send(m.bot_hello_msg("alice", version="1", token=token))
        try:
            greeting = await client.receive(5)
            assert greeting is not None and greeting["type"] == "hello", greeting
            with trio.move_on_after(1.0):  # seated: nothing more comes (no partner, no ping)
                return await client.receive(5)
            return None
        finally:
            await client.aclose()

    with trio.fail_after(120):
        async with running_arena(tmp_path, limits=limits) as run:
            for k in range(40):
                verdict = await attempt(run, mallory if k % 2 else f"127.0.9.{10 + k}", "wrong")
                assert verdict is not None and verdict["code"] == "auth"
            now = trio.current_time()
            assert run.gate.throttle.penalty(mallory, now) > 60
            assert run.gate.throttle.penalty("127.0.9.3", now) > 60  # the network's own penalty
            for k in range(10):
                assert await attempt(run, (mallory, neighbour)[k % 2], run.tokens["alice"]) is None
                await wait_until(lambda k=k: f"alice connected from {(mallory, neighbour)[k % 2]}"
                                 in run.events, 1, "alice seated")
            elapsed = trio.current_time() - now
            for local in (mallory, neighbour):
                verdict = await attempt(run, local, "wrong")
                assert verdict is not None and verdict["code"] == "auth"
                assert verdict["message"].startswith("throttled: too many failed tokens from "
                                                     f"{local} or its network; try again in ")
    assert elapsed < limits.auth_delay_s * 40  # admitted at once, not once a penalty ran out


async def test_match_listen_throttles_wrong_tokens_and_admits_the_right_one(tmp_path: Path) -> None:
    """`durak-ref match` with a tcp:NAME seat listens through the same gate: after 40
    wrong tokens from alice's address and her /24, a wrong one is throttled, and alice's
    right token from that very address is seated and plays the match."""
    events: list[str] = []
    options = SeatOptions(listen=("127.0.0.1", 0), tokens=(("alice", "k3y-alice"),), connect_wait=20)
    config = MatchConfig(rules=make_rules("classic"), tc=TimeControl.parse(None, 2.0), games=2, seed="t")
    home = "127.0.9.200"
    verdicts: list[str] = []

    async def guess(local: str) -> str:
        client = await Client.connect(_port_from(events), local=local)  # type: ignore[arg-type]
        try:
            await client.hello("alice", "wrong")
            answer = await client.receive(10)
            assert answer is not None and answer["code"] == "auth"
            return str(answer["message"])
        finally:
            await client.aclose()

    async def attack_then_play() -> None:
        await wait_until(lambda: _port_from(events) is not None, 10, "the gate to listen")
        for k in range(40):
            verdicts.append(await guess(home if k % 2 else f"127.0.9.{10 + k}"))
        verdicts.append(await guess(home))
        await legit_bot(_port_from(events), "alice", "k3y-alice", local=home)  # type: ignore[arg-type]

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(attack_then_play)
            result = await run_match_async([parse_bot_spec("tcp:alice"), parse_bot_spec("builtin:random")],
                                           config, log_dir=tmp_path, options=options,
                                           on_tcp=events.append)
    assert verdicts[-1].startswith(f"throttled: too many failed tokens from {home} or its network")
    assert f"alice connected from {home}" in events
    assert [b.forfeits for b in result.bots] == [{}, {}] and result.bots[0].decisions > 0
