"""Helpers for the TCP security tests: a raw framed client, an in-process legitimate bot,
an arena running on a free loopback port, and small polling helpers.

Everything here runs in the test's own trio loop, so an arena and dozens of clients cost
milliseconds; only the end-to-end tests start real example bots as subprocesses.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from protocol import messages as m
from protocol.codec import FrameDecoder, encode
from referee.league.arena import Arena, register
from referee.records.store import Store
from referee.rules import make_rules
from referee.seats.tcp import TcpLimits
from referee.table.clock import TimeControl
from referee.table.match import FORFEITS, MatchConfig

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"
PYTHON = sys.executable
HOST = "127.0.0.1"
#: Generous real-time margin for "it happened in time" checks on a loaded machine.
SLACK = 3.0
#: How long an in-process bot thinks before each answer in tests on trio's virtual clock
#: (``legit_bot(think=...)``). An arena pairs its bots again as soon as a game ends, so
#: without a pause the games would keep some task runnable and virtual time would hardly
#: move; with it, every task waits while the bots think and the clock jumps.
VIRTUAL_THINK_S = 0.02


class Client:
    """A raw TCP client speaking frames, every read under a deadline."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.decoder = FrameDecoder(strict=False)
        self.received: list[dict[str, Any]] = []

    @classmethod
    async def connect(cls, port: int, local: str | None = None) -> Client:
        return cls(await trio.open_tcp_stream(HOST, port, local_address=local))

    async def send(self, message: dict[str, Any]) -> None:
        await self.stream.send_all(encode(message))

    async def send_raw(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def receive(self, timeout: float = 5.0) -> dict[str, Any] | None:
        """The next message; None at the end of the stream (or a reset connection)."""
        with trio.fail_after(timeout):
            while True:
                message = self.decoder.next_message()
                if message is not None:
                    self.received.append(message)
                    return message
                if self.decoder.eof:
                    return None
                try:
                    chunk = await self.stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    chunk = b""
                self.decoder.feed(chunk)

    async def until_closed(self, timeout: float) -> list[dict[str, Any]]:
        """Read until the server closes the connection; the messages read on the way."""
        got = []
        while (message := await self.receive(timeout)) is not None:
            got.append(message)
        return got

    async def hello(self, name: str | None, token: str | None, timeout: float = 15.0) -> None:
        """Read the referee's hello and answer with ours (``name`` None: no hello)."""
        greeting = await self.receive(timeout)
        assert greeting is not None and greeting["type"] == "hello", greeting
        if name is not None:
            await self.send(m.bot_hello_msg(name, version="test", token=token))

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await self.stream.aclose()


@dataclass
class BotRecord:
    """What an in-process bot saw."""

    name: str
    games: list[int] = field(default_factory=list)
    ended: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    pings: int = 0
    refused: dict[str, Any] | None = None
    bye: bool = False
    connections: int = 0
    seated: trio.Event = field(default_factory=trio.Event)


async def legit_bot(port: int, name: str, token: str, record: BotRecord | None = None, *,
                    hang_up_at_request: int | None = None, retries: int = 0,
                    local: str | None = None, hold: trio.Event | None = None,
                    think: float = 0.0) -> BotRecord:
    """A well-behaved bot: answers hello with name + token, every request with legal[0]
    and every ping with its pong, until bye or the end of the stream.

    ``hang_up_at_request=k``: closes the connection instead of answering its k-th request
    (counted over the bot's life), then reconnects. A refusal (error before any game) is
    recorded; ``retries`` reconnects after a ``busy`` refusal (a reconnect may beat the
    referee to noticing the old connection is gone). ``hold``: the first answer waits
    for this event (to keep a match from ending before the test is done with it).
    ``think``: seconds slept before each answer (see VIRTUAL_THINK_S)."""
    record = record or BotRecord(name)
    while True:
        record.connections += 1
        client = await Client.connect(port, local)
        try:
            await client.hello(name, token)
            hung_up = False
            while (message := await client.receive(timeout=60)) is not None:
                kind = message["type"]
                if kind == "request":
                    record.requests += 1
                    if hold is not None:
                        await hold.wait()
                    if record.requests == hang_up_at_request:
                        hung_up = True
                        break
                    if think:
                        await trio.sleep(think)
                    await client.send(m.action_msg(message["id"], message["legal"][0]))
                elif kind == "ping":
                    record.pings += 1
                    await client.send(m.pong_msg(message["id"]))
                elif kind == "game_start":
                    record.games.append(message["game"])
                    record.seated.set()
                elif kind == "game_end":
                    record.ended.append(message)
                elif kind == "error" and message["fatal"] and message["code"] in m.REFUSAL_CODES:
                    record.refused = message
                    break
                elif kind == "bye":
                    record.bye = True
                    return record
        finally:
            await client.aclose()
        if hung_up:
            continue
        if record.refused is not None and record.refused["code"] == "busy" and retries > 0:
            retries -= 1
            record.refused = None
            await trio.sleep(0.05)
            continue
        return record


async def wait_until(predicate: Callable[[], bool], timeout: float, what: str,
                     poll: float = 0.01) -> None:
    """Poll ``predicate`` until true; fail the test (naming ``what``) after ``timeout``."""
    deadline = trio.current_time() + timeout
    while not predicate():
        if trio.current_time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await trio.sleep(poll)


async def start_example_bots(port: int, tokens: dict[str, str]) -> list[trio.Process]:
    """One real ``random_bot.py`` per ``name: token``, connected over TCP to the arena
    at ``port`` (each seeded by its place), its output discarded."""
    bots = []
    for seed, (name, token) in enumerate(tokens.items()):
        bots.append(await trio.lowlevel.open_process(
            [PYTHON, str(EXAMPLES / "random_bot.py"), str(seed), "--connect",
             f"{HOST}:{port}", "--token", token, "--name", name],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return bots


@dataclass
class ServeRun:
    """A ``durak-ref serve`` process: its port, what it printed so far, the bots started for it."""

    process: trio.Process
    port: int
    out: bytearray
    err: bytearray
    bots: list[trio.Process] = field(default_factory=list)


@asynccontextmanager
async def serve_command(tmp_path: Path, db: Path, *options: str,
                        timeout: float = 90) -> AsyncIterator[ServeRun]:
    """``durak-ref serve`` as a user runs it, on port 0 (it logs the port it got), its
    store ``db``, its logs in ``tmp_path``, ``--json`` and ``options``: yielded once it
    listens. Everything (the body, serve's end) within ``timeout`` s; on the way out serve
    and its bots are killed if they still run."""
    from support import DURAK_REF

    process = await trio.lowlevel.open_process(
        [str(DURAK_REF), "serve", "--listen", f"{HOST}:0", "--db", str(db), "--log-dir",
         str(tmp_path), "--json", *options],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, COLUMNS="200", NO_COLOR="1"))
    assert process.stdout is not None and process.stderr is not None
    out, err = bytearray(), bytearray()
    listening = re.compile(rb"arena listening on 127\.0\.0\.1:(\d+) ")

    async def collect(stream: Any, into: bytearray) -> None:
        async for chunk in stream:
            into.extend(chunk)

    run = None
    try:
        with trio.fail_after(timeout):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(collect, process.stdout, out)
                nursery.start_soon(collect, process.stderr, err)
                await wait_until(lambda: listening.search(err) is not None, timeout, "serve to listen")
                run = ServeRun(process, int(listening.search(err)[1]), out, err)  # type: ignore[index]
                yield run
    finally:
        for proc in (process, *(run.bots if run else [])):
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


def config(move_time: float = 2.0) -> MatchConfig:
    return MatchConfig(rules=make_rules("classic"), tc=TimeControl.parse(None, move_time))


@dataclass
class ArenaRun:
    arena: Arena
    port: int
    tokens: dict[str, str]
    events: list[str]
    store: Store
    nursery: trio.Nursery
    bots: dict[str, BotRecord] = field(default_factory=dict)

    @property
    def gate(self) -> Any:
        assert self.arena.gate is not None
        return self.arena.gate

    def start_bot(self, name: str, **kwargs: Any) -> BotRecord:
        """Start the legitimate in-process bot ``name`` in the arena's nursery."""
        record = self.bots[name] = BotRecord(name)
        self.nursery.start_soon(lambda: legit_bot(self.port, name, self.tokens[name], record,
                                                  **kwargs))
        return record

    async def play(self, games: int, timeout: float = 20.0) -> None:
        """Wait until the arena has played at least ``games`` games."""
        await wait_until(lambda: self.arena.played >= games, timeout,
                         f"{games} arena games (played {self.arena.played})")

    def refusals(self, code: str | None = "any") -> list[Any]:
        return [r for r in self.gate.refusals if code == "any" or r.code == code]

    def stored_games(self) -> list[Any]:
        return self.store.games("ladder")

    def check_legit_games(self, at_least: int, names: tuple[str, str] = ("alice", "bob")) -> None:
        """At least ``at_least`` stored games between ``names``, each a correct, finished
        game (no forfeit, a real termination) with its seats recorded."""
        rows = [g for g in self.stored_games() if set(g.players) == set(names)]
        assert len(rows) >= at_least, (len(rows), self.events[-20:])
        for g in rows:
            assert g.termination not in FORFEITS, (g.termination, g)
            assert all(s.forfeit is None for s in g.seats), g
            assert sum(s.decisions for s in g.seats) > 0
            if g.durak is not None:
                assert g.durak in names


@asynccontextmanager
async def running_arena(tmp_path: Path, *, names: tuple[str, ...] = ("alice", "bob"),
                        limits: TcpLimits | None = None, move_time: float = 2.0,
                        max_games_per_bot: int = 1, log_dir: Path | None = None,
                        duplicate: bool = False, reconnect_grace: float = 0.0) -> AsyncIterator[ArenaRun]:
    """An arena on 127.0.0.1 (a free port) with ``names`` registered. On exit it is
    stopped: games in flight finish and are stored, the bots get bye, every task ends."""
    store = Store(tmp_path / "arena.sqlite")
    try:
        tokens = {n: register(store, n) for n in names}
        events: list[str] = []
        arena = Arena(store, config(move_time), limits or TcpLimits(handshake_s=2.0),
                      max_games_per_bot=max_games_per_bot, log_dir=log_dir,
                      on_event=events.append, duplicate=duplicate,
                      reconnect_grace=reconnect_grace)
        async with trio.open_nursery() as nursery:
            port = await nursery.start(arena.run, HOST, 0)
            run = ArenaRun(arena, port, tokens, events, store, nursery)
            try:
                yield run
            except BaseException:
                nursery.cancel_scope.cancel()  # a failed test must not wait for its clients
                raise
            finally:
                arena.stop()
        # The server stayed up to the end, shut down cleanly and lost no game.
        assert arena.in_flight == 0
        assert len(store.games("ladder")) == arena.played
    finally:
        store.close()
