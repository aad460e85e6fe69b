"""The TCP port is open to strangers. Every attack is refused (or cut off) and
logged with its reason, the server stays up, and legitimate bots go on playing games
that come out right and are stored.

Most tests run an arena (``referee.league.arena.Arena``, store in tmp_path) or a match
(``run_match_async`` with a ``tcp:NAME`` seat) on 127.0.0.1 port 0 inside the test's
trio loop, with in-process bots and raw attackers (``tcp_security_kit``). The end-to-end
tests run the real example bots as subprocesses with ``--connect``. Real time is used
where deadlines are the point (handshake, pings, moves): short limits, generous margins.
"""

from __future__ import annotations

import contextlib
import json
import re
import resource
import shlex
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import trio
from tcp_security_kit import (
    EXAMPLES,
    PYTHON,
    ROOT,
    SLACK,
    VIRTUAL_THINK_S,
    BotRecord,
    Client,
    legit_bot,
    running_arena,
    wait_until,
)

from protocol import messages as m
from protocol.codec import encode
from referee.rules import make_rules
from referee.seats.pipelane import pending
from referee.seats.players import parse_bot_spec
from referee.seats.tcp import TcpLimits
from referee.seats.wire import READ_CHUNK, STALE_MAX, STALE_NOTES_MAX
from referee.table.match import GameRecord, MatchConfig
from referee.table.runner import SeatOptions, run_match_async

GAMES = 6  #: legitimate games each arena test sees through


def raise_fd_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft < wanted:
        pytest.skip(f"needs {wanted} file descriptors; the limit is {soft}")


# --------------------------------------------------------------------------- authentication

@pytest.mark.slow
@pytest.mark.parametrize("case", ["wrong token", "no token", "another bot's token", "unknown name",
                                  "a look-alike name"])
async def test_bad_credentials_are_refused_and_games_go_on(tmp_path: Path, case: str) -> None:
    with trio.fail_after(30):
        async with running_arena(tmp_path) as run:
            run.start_bot("alice")
            run.start_bot("bob")
            name, token, why = {
                "wrong token": ("alice", "not-the-token", "wrong token or unknown name"),
                "no token": ("alice", None, "no token"),
                "another bot's token": ("bob", run.tokens["alice"], "wrong token or unknown name"),
                "unknown name": ("mallory", run.tokens["alice"], "wrong token or unknown name"),
                # A TCP bot's name is its registered name, exactly (register refuses a
                # look-alike: test_arena_hardening.py); Cyrillic а with alice's own token.
                "a look-alike name": ("аlice", run.tokens["alice"], look_alike_refusal("аlice", "alice")),
            }[case]
            attacker = await Client.connect(run.port)
            await attacker.hello(name, token)
            answer = await attacker.until_closed(5)
            await attacker.aclose()
            assert [(a["type"], a["code"], a["fatal"]) for a in answer] == [("error", "auth", True)]
            assert answer[0]["message"] == f"authentication failed for {name!r} ({why})"
            [refusal] = run.refusals()
            assert (refusal.code, refusal.name, refusal.peer) == ("auth", name, "127.0.0.1")
            assert refusal.reason == answer[0]["message"]
            # Logged in aggregate (a guessing flood must not write a line each).
            assert not any("authentication failed" in e for e in run.events)
            run.gate.flush_log()
            [line] = [e for e in run.events if e.startswith("auth: ")]
            assert re.fullmatch(r"auth: 1 failed token from 1 address in the last [\d.]+ s, "
                                r"0 connections refused while throttled; top: 127\.0\.0\.1 \(1\)",
                                line), line
            await run.play(GAMES)
            run.check_legit_games(GAMES)
            # The victim's seats were never touched: alice and bob hold one connection each.
            assert run.arena.status()["connected"] == {"alice": 1, "bob": 1}
        assert run.bots["alice"].bye and run.bots["bob"].bye
        assert run.bots["alice"].connections == run.bots["bob"].connections == 1


def look_alike_refusal(name: str, registered: str) -> str:
    return (f"no bot is registered as {name!r}; it looks like {registered!r}: a bot says hello "
            f"under its registered name, letter for letter")


async def test_a_hello_under_a_look_alike_name_is_refused_naming_the_name_it_imitates(
        tmp_path: Path) -> None:
    # Issue 35 item 4: Cyrillic letters in a registered bot's or a built-in's name. On
    # 5aa61aa each was refused only as "wrong token or unknown name", which did not say
    # why a name that reads like the right one fails; now the refusal names it.
    limits = TcpLimits(handshake_s=2.0, auth_free_failures=10)  # five failures, no penalty
    with trio.fail_after(30):
        async with running_arena(tmp_path, names=("alpha", "victim"), limits=limits) as run:
            run.start_bot("alpha")
            run.start_bot("victim")
            for name, token, why in [
                    ("аlpha", run.tokens["alpha"], look_alike_refusal("аlpha", "alpha")),  # а
                    ("vіctim", run.tokens["victim"], look_alike_refusal("vіctim", "victim")),  # і
                    ("grееdy", run.tokens["alpha"], look_alike_refusal("grееdy", "greedy")),  # е е
                    ("ехреrt", run.tokens["alpha"], look_alike_refusal("ехреrt", "expert")),  # е х р е
                    # The exact name with a wrong token is refused as before.
                    ("alpha", "not-the-token", "wrong token or unknown name")]:
                attacker = await Client.connect(run.port)
                await attacker.hello(name, token)
                answer = await attacker.until_closed(5)
                await attacker.aclose()
                assert [(a["type"], a["code"]) for a in answer] == [("error", "auth")], (name, answer)
                assert answer[0]["message"] == f"authentication failed for {name!r} ({why})"
            assert [r.name for r in run.refusals()] == ["аlpha", "vіctim", "grееdy", "ехреrt", "alpha"]
            # The registered bots, under their own names, play on.
            await run.play(GAMES)
            run.check_legit_games(GAMES, ("alpha", "victim"))
            assert run.arena.status()["connected"] == {"alpha": 1, "victim": 1}


# --------------------------------------------------------------------------- busy seat

def _port_from(events: list[str]) -> int | None:
    for e in events:
        found = re.match(r"listening on .*:(\d+) for ", e)
        if found:
            return int(found.group(1))
    return None


async def test_second_connection_for_a_seated_bot_is_busy(tmp_path: Path) -> None:
    """In a match, alice's first connection is seated and plays every game; a second one
    with the right token is refused with ``busy`` while the first keeps its seat."""
    events: list[str] = []
    hold = trio.Event()
    alice = BotRecord("alice")
    options = SeatOptions(listen=("127.0.0.1", 0), tokens=(("alice", "s3cret"),),
                             connect_wait=10)
    config = MatchConfig(rules=make_rules("classic"), games=GAMES, seed=3)

    async def second_connection() -> None:
        await wait_until(lambda: "alice connected from 127.0.0.1" in events, 10, "alice seated")
        port = _port_from(events)
        assert port is not None
        intruder = await Client.connect(port)
        await intruder.hello("alice", "s3cret")
        answer = await intruder.until_closed(5)
        await intruder.aclose()
        assert [(a["type"], a["code"], a["fatal"]) for a in answer] == [("error", "busy", True)]
        assert answer[0]["message"].startswith("alice is already connected and seated")
        hold.set()  # only now may the seated alice play on

    async def seated() -> None:
        await wait_until(lambda: _port_from(events) is not None, 10, "the gate to listen")
        await legit_bot(_port_from(events), "alice", "s3cret", alice, hold=hold)

    games: list[GameRecord] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(seated)
            nursery.start_soon(second_connection)
            await run_match_async(
                [parse_bot_spec("tcp:alice"), parse_bot_spec("builtin:greedy")], config,
                log_dir=tmp_path, options=options, on_tcp=events.append,
                on_game=lambda r, _: games.append(r))  # the result keeps counts only
    assert [e for e in events if e.startswith("refused")] == [
        "refused 127.0.0.1 (alice): alice is already connected and seated; this connection "
        "is refused"]
    assert len(games) == GAMES
    assert all(g.forfeit is None and g.termination not in ("disconnect", "timeout")
               for g in games)
    assert alice.games == list(range(GAMES)) and len(alice.ended) == GAMES
    assert alice.bye and alice.connections == 1 and alice.refused is None


# --------------------------------------------------------------------------- slow handshakes

async def test_client_that_never_speaks_is_closed_after_handshake_time(
        tmp_path: Path, autojump_clock: Any) -> None:
    """The real handshake limit, on trio's virtual clock (the arena, its bots and the
    client all run in this trio run over loopback): closed exactly when it ends."""
    limits = TcpLimits()
    handshake = limits.handshake_s
    with trio.fail_after(handshake + 30):
        async with running_arena(tmp_path, limits=limits) as run:
            run.start_bot("alice", think=VIRTUAL_THINK_S)
            run.start_bot("bob", think=VIRTUAL_THINK_S)
            silent = await Client.connect(run.port)
            start = trio.current_time()
            got = await silent.until_closed(handshake + 1)
            waited = trio.current_time() - start
            await silent.aclose()
            assert waited == pytest.approx(handshake, abs=0.01)
            assert [x["type"] for x in got] == ["hello", "error"]
            assert got[1]["code"] == "protocol" and got[1]["message"] == f"no hello within {handshake:g} s"
            [refusal] = run.refusals()
            assert (refusal.code, refusal.reason) == ("protocol", f"no hello within {handshake:g} s")
            await run.play(GAMES)
            run.check_legit_games(GAMES)
            assert run.gate.open_connections == 2


async def test_client_sending_a_byte_a_second_is_closed(tmp_path: Path, autojump_clock: Any) -> None:
    """Slowloris: each byte arrives in time, but the handshake has one overall deadline
    (the real one, on the virtual clock as above)."""
    limits = TcpLimits()
    handshake = limits.handshake_s
    hello = encode(m.bot_hello_msg("alice", token="whatever"))
    assert len(hello) > handshake + 2  # the dribble cannot finish within the deadline
    sent = 0
    with trio.fail_after(handshake + 30):
        async with running_arena(tmp_path, limits=limits) as run:
            run.start_bot("alice", think=VIRTUAL_THINK_S)
            run.start_bot("bob", think=VIRTUAL_THINK_S)
            slow = await Client.connect(run.port)
            assert (await slow.receive())["type"] == "hello"
            start = trio.current_time()

            async def dribble() -> None:
                nonlocal sent
                try:
                    for byte in hello:
                        await slow.send_raw(bytes([byte]))
                        sent += 1
                        await trio.sleep(1.0)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass

            async with trio.open_nursery() as nursery:
                nursery.start_soon(dribble)
                got = await slow.until_closed(handshake + 1)
                closed_after = trio.current_time() - start
                nursery.cancel_scope.cancel()
            await slow.aclose()
            assert closed_after == pytest.approx(handshake, abs=0.01)
            assert handshake <= sent <= handshake + 1
            assert [(x["type"], x["code"]) for x in got] == [("error", "protocol")]
            [refusal] = run.refusals()
            assert refusal.reason == f"no hello within {handshake:g} s"
            await run.play(GAMES)
            run.check_legit_games(GAMES)


# --------------------------------------------------------------------------- bad bytes

async def test_4_gib_header_is_refused_at_once_without_allocating(tmp_path: Path) -> None:
    with trio.fail_after(30):
        async with running_arena(tmp_path, limits=TcpLimits(handshake_s=10.0)) as run:
            tracemalloc.start()
            try:
                attacker = await Client.connect(run.port)
                assert (await attacker.receive())["type"] == "hello"
                tracemalloc.reset_peak()
                base = tracemalloc.get_traced_memory()[0]
                start = trio.current_time()
                await attacker.send_raw(b"\xff\xff\xff\xff" + b"\x00" * 1000)
                got = await attacker.until_closed(SLACK)
                refused_after = trio.current_time() - start
                peak = tracemalloc.get_traced_memory()[1] - base
            finally:
                tracemalloc.stop()
            await attacker.aclose()
            assert refused_after < SLACK  # at once: long before the 10 s handshake deadline
            assert peak < 1 << 20, f"the referee allocated {peak} bytes for a refused header"
            assert [(x["type"], x["code"]) for x in got] == [("error", "protocol")]
            expected = "bad hello: frame header says 4294967295 bytes; the limit is 4096"
            assert got[0]["message"] == expected
            [refusal] = run.refusals()
            assert (refusal.code, refusal.reason) == ("protocol", expected)
            run.start_bot("alice")
            run.start_bot("bob")
            await run.play(GAMES)
            run.check_legit_games(GAMES)


GARBAGE = {
    "http": (b"GET / HTTP/1.1\r\nHost: durak\r\n\r\n", "protocol",
             "bad hello: the bot sent text where a frame belongs: 'GET / HTTP/1.1\\r\\nHost"),
    "tls client hello": (bytes.fromhex("16030100a5010000a10303") + bytes(range(64)), "protocol",
                         "bad hello: frame header says 369295616 bytes; the limit is 4096"),
    "zero-length frame": (b"\x00\x00\x00\x00", "protocol",
                          "bad hello: frame header says 0 bytes; a frame must hold one msgpack map"),
    "not msgpack": (b"\x00\x00\x00\x04\xc1\xc1\xc1\xc1", "protocol",
                    "bad hello: frame is not valid msgpack"),
    "not a map": (b"\x00\x00\x00\x01\x2a", "protocol", "bad hello: frame holds"),
    "action first": (encode(m.action_msg(1, {"type": "pass"})), "protocol",
                     "bad hello: expected the bot's hello first"),
    "wrong version": (encode(m.bot_hello_msg("alice", token="x", protocol=99)), "version", ""),
    "truncated frame": (b"\x00\x00\x00\x40\x81", "protocol",
                        "bad hello: stream ended 1 byte into a 64-byte frame"),
}


async def test_garbage_bytes_are_refused(tmp_path: Path) -> None:
    with trio.fail_after(30):
        async with running_arena(tmp_path) as run:
            run.start_bot("alice")
            run.start_bot("bob")
            for label, (data, code, reason) in GARBAGE.items():
                attacker = await Client.connect(run.port)
                assert (await attacker.receive())["type"] == "hello"
                await attacker.send_raw(data)
                if label == "truncated frame":
                    await attacker.stream.send_eof()
                got = await attacker.until_closed(SLACK)
                await attacker.aclose()
                assert [(x["type"], x["code"], x["fatal"]) for x in got] == [("error", code, True)], label
                assert got[0]["message"].startswith(reason), (label, got[0]["message"])
                assert run.refusals()[-1].code == code and run.refusals()[-1].reason == got[0]["message"]
            assert len(run.refusals()) == len(GARBAGE)
            await run.play(GAMES)
            run.check_legit_games(GAMES)
            assert run.gate.open_connections == 2


# --------------------------------------------------------------------------- floods and limits

@pytest.mark.slow
async def test_500_simultaneous_connections_opened_and_dropped(tmp_path: Path) -> None:
    raise_fd_limit(2000)
    limits = TcpLimits(max_connections=1000, max_pending=1000, max_per_address=1000,
                       max_per_network=1000, handshake_s=10.0)
    with trio.fail_after(45):
        async with running_arena(tmp_path, limits=limits) as run:
            clients: list[trio.SocketStream] = []

            async def open_one() -> None:
                clients.append(await trio.open_tcp_stream("127.0.0.1", run.port))

            async with trio.open_nursery() as nursery:
                for _ in range(500):
                    nursery.start_soon(open_one)
            assert len(clients) == 500
            await wait_until(lambda: run.gate.open_connections == 500, 10, "500 open connections")
            assert run.gate.per_address == {"127.0.0.1": 500}
            async with trio.open_nursery() as nursery:
                for stream in clients:
                    nursery.start_soon(stream.aclose)
            await wait_until(lambda: run.gate.open_connections == 0, 10,
                             f"every connection closed (open: {run.gate.open_connections})")
            assert run.gate.per_address == {}
            assert len(run.refusals(None)) == 500  # each drop logged (nothing sent back)
            assert {r.reason for r in run.refusals(None)} <= {
                "closed the connection before its hello", "connection broke during the handshake"}
            # The server is up and a legitimate pair still connects and plays.
            run.start_bot("alice")
            run.start_bot("bob")
            await run.play(GAMES)
            run.check_legit_games(GAMES)
            assert run.gate.open_connections == 2


async def test_pending_limits_per_address_and_network_leave_bots_alone(tmp_path: Path) -> None:
    """The limits count unauthenticated (pending) connections only,
    so alice and bob (authenticated, 127.0.0.1) never count against them. 127.0.0.1 may
    hold 3 pending connections and 127.0.0.0/24 4: strangers hit both limits while the
    bots keep playing, and another network (127.0.1.0/24) still gets in."""
    limits = TcpLimits(max_pending=64, max_per_address=3, max_per_network=4, handshake_s=10.0)
    with trio.fail_after(30):
        async with running_arena(tmp_path, limits=limits) as run:
            run.start_bot("alice")
            run.start_bot("bob")
            await wait_until(lambda: run.gate.authenticated == 2, 10, "alice and bob")
            local = [await Client.connect(run.port) for _ in range(3)]  # 3 of 3 allowed
            for c in local:
                assert (await c.receive())["type"] == "hello"
            refused_local = await Client.connect(run.port)
            other = await Client.connect(run.port, local="127.0.0.2")  # 4 of 4 in the /24
            assert (await other.receive())["type"] == "hello"
            refused_net = await Client.connect(run.port, local="127.0.0.3")
            got_local = await refused_local.until_closed(SLACK)
            got_net = await refused_net.until_closed(SLACK)
            # A limit refusal comes instead of the referee's hello.
            assert [(x["type"], x["code"]) for x in got_local] == [("error", "limit")]
            assert [(x["type"], x["code"]) for x in got_net] == [("error", "limit")]
            assert got_local[0]["message"] == ("too many unauthenticated connections from "
                                               "127.0.0.1 (3 open)")
            assert got_net[0]["message"] == ("too many unauthenticated connections from "
                                             "127.0.0.0/24 (4 open)")
            assert [(r.code, r.peer, r.reason) for r in run.refusals()] == [
                ("limit", "127.0.0.1", got_local[0]["message"]),
                ("limit", "127.0.0.3", got_net[0]["message"])]
            assert run.gate.pending == 4 and run.gate.open_connections == 6
            assert run.gate.per_address == {"127.0.0.1": 3, "127.0.0.2": 1}
            assert run.gate.per_network == {"127.0.0.0/24": 4}
            # Another network is not affected.
            elsewhere = await Client.connect(run.port, local="127.0.1.3")
            assert (await elsewhere.receive())["type"] == "hello"
            await run.play(GAMES)  # while the limits bite
            for c in (*local, refused_local, other, refused_net, elsewhere):
                await c.aclose()
            await wait_until(lambda: run.gate.open_connections == 2, 10, "the strangers gone")
            assert run.gate.per_address == {} and run.gate.per_network == {}
            # Room again: a new connection gets the referee's hello.
            again = await Client.connect(run.port, local="127.0.0.3")
            assert (await again.receive())["type"] == "hello"
            await again.aclose()
            await run.play(GAMES + 2)
            run.check_legit_games(GAMES + 2)


# --------------------------------------------------------------------------- misbehaving bots

async def test_client_that_stops_reading_mid_game_forfeits_and_memory_stays_bounded(
        tmp_path: Path) -> None:
    """mallory authenticates, then at game_start stops reading and floods the referee
    with answers to requests nobody asked. Its game is a ``protocol`` forfeit: answers
    before their request when the flood is there before mallory's first request is sent,
    else too many stale answers while the request is open (which one depends on who is
    asked first); either way the referee decodes a bounded number of its frames. What the
    referee buffers for it stays capped; alice and bob play on."""
    move_time = 0.5
    flood = encode(m.action_msg(999_999, {"type": "pass"})) * 2000
    seats: list[Any] = []
    flooded = 0
    with trio.fail_after(40):
        async with running_arena(tmp_path, names=("alice", "bob", "mallory"), move_time=move_time,
                                 log_dir=tmp_path) as run:
            claim = run.gate.claim

            def spy(name: str) -> Any:
                seat = claim(name)
                seats.append(seat)
                return seat

            run.gate.claim = spy

            async def mallory() -> None:
                nonlocal flooded
                client = await Client.connect(run.port)
                await client.hello("mallory", run.tokens["mallory"])
                while (message := await client.receive(30)) is not None:
                    if message["type"] == "ping":
                        await client.send(m.pong_msg(message["id"]))
                    elif message["type"] == "game_start":
                        break  # from here on: never read again
                try:
                    while True:
                        await client.send_raw(flood)
                        flooded += len(flood)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
                await client.aclose()

            run.nursery.start_soon(mallory)
            run.start_bot("alice")
            run.start_bot("bob")
            await wait_until(lambda: any(g.seats and any(s.bot == "mallory" for s in g.seats)
                                         for g in run.stored_games()), 20, "mallory's game")
            [game] = [g for g in run.stored_games() if "mallory" in g.players]
            mallory_seat = next(s for s in game.seats if s.bot == "mallory")
            kind = game.termination
            assert kind == "protocol" and mallory_seat.forfeit == kind
            assert game.durak == "mallory"
            [seat] = [s for s in seats if s.name == "mallory"]
            assert seat.failure.kind == kind
            # Bounded: queued "stale" notes are capped; the decoder holds at most a frame
            # and a read chunk; the rest of the flood waits in kernel buffers or is dropped.
            assert len(pending(seat._lane)) <= STALE_NOTES_MAX + 1024
            assert seat.decoder.buffered <= READ_CHUNK + seat.max_frame
            # How much of the flood gets through before the forfeit depends on the machine's
            # speed and on which rule ends mallory's game first; the bounds above do not.
            assert flooded > 0
            await wait_until(lambda: not seat.connected, 5, "mallory's connection released")
            await wait_until(lambda: run.gate.open_connections <= 2, 10, "mallory's socket closed")
            await run.play(len(run.stored_games()) + GAMES)
            run.check_legit_games(GAMES)
    # The forfeit's evidence in the arena log: which rule it broke, and what it sent.
    records = [json.loads(line) for path in tmp_path.glob("arena-*.jsonl")
               for line in path.read_text().splitlines()]
    [forfeit] = [r["forfeit"] for r in records if r.get("type") == "game" and r["forfeit"]]
    assert forfeit["bot"] == "mallory" and forfeit["kind"] == kind
    assert forfeit["evidence"]["received"]["id"] == 999_999
    if "answered before" not in forfeit["reason"]:
        assert re.match(rf"sent {STALE_MAX + 1} actions for other requests while request \d+ "
                        rf"was open \(at most {STALE_MAX} are ignored as stale\)", forfeit["reason"])
        assert forfeit["evidence"]["stale_answers"] == STALE_MAX + 1


async def test_mid_game_disconnect_is_a_forfeit_and_the_bot_reconnects(tmp_path: Path) -> None:
    events: list[str] = []
    alice = BotRecord("alice")
    options = SeatOptions(listen=("127.0.0.1", 0), tokens=(("alice", "s3cret"),),
                             connect_wait=10)
    config = MatchConfig(rules=make_rules("classic"), games=4, seed=11)

    async def client() -> None:
        await wait_until(lambda: _port_from(events) is not None, 10, "the gate to listen")
        await legit_bot(_port_from(events), "alice", "s3cret", alice, hang_up_at_request=3,
                        retries=5)

    games: list[GameRecord] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client)
            result = await run_match_async(
                [parse_bot_spec("tcp:alice"), parse_bot_spec("builtin:greedy")], config,
                log_dir=tmp_path, options=options, on_tcp=events.append,
                on_game=lambda r, _: games.append(r))  # the result keeps counts only
    first, *rest = games
    assert first.termination == "disconnect" and first.durak == 0
    assert first.forfeit["kind"] == "disconnect" and first.forfeit["bot"] == "alice"
    assert first.forfeit["reason"].startswith("the bot closed the connection")
    assert first.forfeit["evidence"] == {"peer": "127.0.0.1"}
    assert len(rest) == 3 and all(g.forfeit is None for g in rest)
    assert alice.connections == 2 and alice.bye
    assert alice.games == [0, 1, 2, 3]
    assert [e for e in events if "connected from" in e] == ["alice connected from 127.0.0.1"] * 2
    # The match log has the forfeit with its evidence.
    log = [json.loads(line) for line in Path(result.log_path).read_text().splitlines()]
    assert [g["termination"] for g in log if g["type"] == "game"][0] == "disconnect"
    assert log[-1]["summary"]["bots"][0]["forfeits"] == {"disconnect": 1}


async def test_idle_connection_that_does_not_answer_pings_is_dropped(tmp_path: Path,
                                                                     autojump_clock: Any) -> None:
    """On trio's virtual clock (the arena and every client are in this loop, over
    loopback): the deaf connection is dropped exactly when its ping times out, and the
    legitimate bots, which answer at once, are never dropped however loaded the machine."""
    interval, timeout = 0.3, 0.3
    limits = TcpLimits(ping_interval=interval, ping_timeout=timeout, handshake_s=2.0)
    with trio.fail_after(30):
        async with running_arena(tmp_path, limits=limits) as run:
            deaf = await Client.connect(run.port)
            await deaf.hello("alice", run.tokens["alice"])
            start = trio.current_time()  # before the arena can have read the hello
            got = await deaf.until_closed(interval + timeout + 1)  # reads, never answers
            dropped_after = trio.current_time() - start
            await deaf.aclose()
            # Told why before it is dropped (the error names the ping and its timeout).
            assert [x["type"] for x in got] == ["ping", "error"]
            ping_id = got[0]["id"]
            why = f"no answer to ping {ping_id} within {timeout:.3f} s"
            assert (got[1]["code"], got[1]["message"], got[1]["fatal"]) == ("timeout", why, True)
            # pinged within one interval, dropped after its full timeout
            assert timeout <= dropped_after <= interval + timeout
            assert f"alice did not answer a ping; dropped: {why}" in run.events
            assert "alice (127.0.0.1) disconnected" in run.events
            await wait_until(lambda: run.gate.open_connections == 0, 5, "the socket closed")
            assert run.arena.played == 0
            # Bots that answer pings are kept, and play.
            run.start_bot("alice")
            run.start_bot("bob")
            await wait_until(lambda: run.bots["alice"].pings + run.bots["bob"].pings >= 2, 10,
                             "pings answered")
            await run.play(GAMES)
            run.check_legit_games(GAMES)
        assert run.bots["alice"].connections == run.bots["bob"].connections == 1
        assert len([e for e in run.events if e.startswith("alice did not answer a ping")]) == 1


async def test_connection_dropped_between_games_costs_no_game_and_reconnect_is_seated(
        tmp_path: Path, autojump_clock: Any) -> None:
    """Regression: a connection the bot closed while idle used to stay "connected" until
    a ping found out, so the bot's reconnect was refused as busy and the dead seat was
    paired, losing a rated game as a disconnect forfeit. On trio's virtual clock (all in
    this trio run over loopback): a pause ends only once every task has done what it
    could, so "no game was paired" after it is a fact, not a race."""
    with trio.fail_after(30):
        async with running_arena(tmp_path) as run:
            # alice drops while waiting and reconnects at once: seated, not busy.
            gone = await Client.connect(run.port)
            await gone.hello("alice", run.tokens["alice"])
            await wait_until(lambda: run.arena.status()["connected"] == {"alice": 1}, 5, "alice")
            await gone.aclose()
            await trio.sleep(0.05)
            again = await Client.connect(run.port)
            await again.hello("alice", run.tokens["alice"])
            await wait_until(lambda: "alice (127.0.0.1) closed its connection while idle; dropped"
                             in run.events, 5, "the dead connection dropped")
            assert run.arena.status()["connected"] == {"alice": 1}
            # She drops again; bob arrives: no game against the dead seat.
            await again.aclose()
            await trio.sleep(0.05)
            run.start_bot("bob", think=VIRTUAL_THINK_S)
            await wait_until(lambda: run.events.count(
                "alice (127.0.0.1) closed its connection while idle; dropped") == 2, 5,
                "the second dead connection dropped")
            await trio.sleep(0.2)
            assert run.arena.played == 0 and run.refusals("busy") == []
            run.start_bot("alice", think=VIRTUAL_THINK_S)
            await run.play(GAMES)
            run.check_legit_games(GAMES)
            assert all(g.termination == "normal" or g.durak is None for g in run.stored_games())


async def test_stopping_the_arena_while_pings_are_in_flight(tmp_path: Path, autojump_clock: Any) -> None:
    """Regression: stopping said bye on sockets where a ping was being written or
    awaited: trio.BusyResourceError crashed the arena, or a bot that was about to answer
    was dropped as "did not answer a ping". Now the ping round ends first. (Virtual
    time: 200 connections in this loop must not race a real 10 s on a loaded machine.)"""
    limits = TcpLimits(ping_interval=0.02, ping_timeout=3.0, max_connections=400,
                       max_pending=400, max_per_address=400, max_per_network=400)
    pinged = trio.Event()
    slow_log: list[str] = []
    with trio.fail_after(30):
        async with running_arena(tmp_path, names=("idle",), limits=limits,
                                 max_games_per_bot=400) as run:
            idle = [BotRecord("idle") for _ in range(200)]
            for record in idle:
                run.nursery.start_soon(lambda r=record: legit_bot(run.port, "idle",
                                                                  run.tokens["idle"], r))
            await wait_until(lambda: run.arena.status()["connected"].get("idle") == 200, 10,
                             "200 idle connections")

            async def slow() -> None:
                client = await Client.connect(run.port)
                await client.hello("idle", run.tokens["idle"])
                while (message := await client.receive(10)) is not None:
                    slow_log.append(message["type"])
                    if message["type"] == "ping":
                        pinged.set()
                        # Answer within ping_timeout, but late: nothing may come meanwhile.
                        with trio.move_on_after(0.5):
                            early = await client.receive(10)
                            slow_log.append(early["type"] if early else "end")
                        with contextlib.suppress(trio.BrokenResourceError):
                            await client.send(m.pong_msg(message["id"]))
                            slow_log.append("pong")
                await client.aclose()

            run.nursery.start_soon(slow)
            await wait_until(lambda: all(r.pings for r in idle), 10, "every idle bot pinged")
            await pinged.wait()  # stop while slow's ping waits for its pong
        # Leaving the block stopped the arena: it ended cleanly (no BusyResourceError).
    assert slow_log[-3:] == ["ping", "pong", "bye"]
    assert all(r.bye for r in idle)
    assert not [e for e in run.events if "did not answer a ping" in e]


async def test_a_ping_round_never_crosses_the_first_frame_of_a_game(tmp_path: Path,
                                                                    autojump_clock: Any) -> None:
    """Regression (found with the suite under load): the pinger chose an idle seat but
    marked it busy only when its ping task started, so the scheduler could seat it in a
    game first, and the game's first frame and the ping were written to one socket at
    once: trio.BusyResourceError crashed the arena. On the virtual clock a ping round
    every 0.05 s meets the scheduler's 0.05 s polls at once, game after game."""
    limits = TcpLimits(ping_interval=0.05, ping_timeout=5.0, handshake_s=2.0)
    with trio.fail_after(600):
        async with running_arena(tmp_path, limits=limits, max_games_per_bot=40) as run:
            run.start_bot("alice")
            run.start_bot("bob")
            await run.play(40, timeout=500)
            run.check_legit_games(40)
    assert not [e for e in run.events if "did not answer a ping" in e]


# --------------------------------------------------------------------------- real bots

async def _spawn(argv: list[str], log: Path) -> trio.Process:
    """A bot subprocess with stdin closed and its output (both streams) in ``log``."""
    with log.open("wb") as out:
        return await trio.lowlevel.open_process(argv, cwd=ROOT, stdin=subprocess.DEVNULL,
                                                stdout=out, stderr=subprocess.STDOUT)


@pytest.mark.process
async def test_example_bots_play_in_the_arena_while_attacked(tmp_path: Path) -> None:
    """End to end: two real example bots (random_bot.py --connect) play rated games in
    the arena while strangers knock; the bots exit 0 after the arena's bye."""
    limits = TcpLimits(handshake_s=1.0, ping_interval=0.5, ping_timeout=2.0)
    with trio.fail_after(45):
        async with running_arena(tmp_path, limits=limits) as run:
            bots = [await _spawn([PYTHON, str(EXAMPLES / "random_bot.py"), str(seed), "--connect",
                                  f"127.0.0.1:{run.port}", "--token", run.tokens[name],
                                  "--name", name], tmp_path / f"{name}.log")
                    for seed, name in enumerate(("alice", "bob"))]
            try:
                for name, token, data in (("alice", "guess", None), ("bob", None, None),
                                          ("bob", run.tokens["alice"], None),
                                          (None, None, b"\x00\x00\x00\x05hello"),
                                          (None, None, b"")):
                    attacker = await Client.connect(run.port)
                    if data is None:
                        await attacker.hello(name, token)
                    elif data:
                        await attacker.send_raw(data)
                    got = await attacker.until_closed(1.0 + SLACK)  # b"": silent, timed out
                    await attacker.aclose()
                    assert got[-1]["type"] == "error" and got[-1]["fatal"]
                await run.play(GAMES, timeout=30)
                run.check_legit_games(GAMES)
                assert [r.code for r in run.refusals()] == ["auth"] * 3 + ["protocol"] * 2
            except BaseException:
                for p in bots:
                    p.kill()
                raise
        with trio.fail_after(10):
            codes = [await p.wait() for p in bots]
    assert codes == [0, 0], [(tmp_path / f"{n}.log").read_text() for n in ("alice", "bob")]


def _games(log_path: str) -> list[dict[str, Any]]:
    """Per game: deck, decisions (seat, action text, forced) and the result; no times."""
    out = []
    for line in Path(log_path).read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "game":
            out.append({"game": record["game"], "seed": record["seed"], "dealer": record["dealer"],
                        "players": record["players"], "deck": record["deck"],
                        "decisions": [d[:3] for d in record["decisions"]],
                        "termination": record["termination"], "durak": record["durak"],
                        "last_out": record["last_out"], "bouts": record["bouts"],
                        "forfeit": record["forfeit"]})
    return out


@pytest.mark.process
async def test_a_match_over_tcp_equals_the_same_match_over_pipes(tmp_path: Path) -> None:
    """greedy_bot.py --connect (tcp:greedy) against random_bot.py 7 over pipes gives, game
    for game, the same deals, decisions and results as both bots over pipes."""
    config = MatchConfig(rules=make_rules("classic"), games=12, seed=2024)
    random_bot = shlex.join([PYTHON, str(EXAMPLES / "random_bot.py"), "7"])
    greedy = [PYTHON, str(EXAMPLES / "greedy_bot.py")]
    events: list[str] = []
    options = SeatOptions(listen=("127.0.0.1", 0), tokens=(("greedy", "k3y"),), connect_wait=20)
    tcp_bot: list[trio.Process] = []

    async def connect_greedy() -> None:
        await wait_until(lambda: _port_from(events) is not None, 10, "the gate to listen")
        tcp_bot.append(await _spawn(greedy + ["--connect", f"127.0.0.1:{_port_from(events)}",
                                              "--token", "k3y", "--name", "greedy"],
                                    tmp_path / "greedy-tcp.log"))

    try:
        with trio.fail_after(45):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(connect_greedy)
                over_tcp = await run_match_async(
                    [parse_bot_spec("tcp:greedy"), parse_bot_spec(random_bot)], config,
                    log_dir=tmp_path / "tcp", options=options, on_tcp=events.append)
            with trio.fail_after(10):
                assert await tcp_bot[0].wait() == 0  # it got bye and exited
    finally:
        for p in tcp_bot:
            if p.returncode is None:
                p.kill()
                await p.wait()
    with trio.fail_after(45):
        over_pipes = await run_match_async(
            [parse_bot_spec(shlex.join(greedy)), parse_bot_spec(random_bot)], config,
            log_dir=tmp_path / "pipes")
    assert over_tcp.log_path and over_pipes.log_path
    tcp_games, pipe_games = _games(over_tcp.log_path), _games(over_pipes.log_path)
    assert len(tcp_games) == len(pipe_games) == 12
    assert all(g["players"] == ["greedy", "random"] and g["forfeit"] is None for g in tcp_games)
    for a, b in zip(tcp_games, pipe_games, strict=True):
        assert a == b, f"game {a['game']} differs over TCP"
    for a, b in zip(over_tcp.bots, over_pipes.bots, strict=True):
        assert (a.name, a.durak, a.draws, a.forfeits, a.decisions) == \
            (b.name, b.durak, b.draws, b.forfeits, b.decisions)
