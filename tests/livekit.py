"""Helpers for the live page's tests: a real server on a free loopback port, real games
played by built-in bots, and the exact public timeline of a finished game."""

from __future__ import annotations

import dataclasses
import json
import re
import resource
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio

from referee.rules import Game, make_rules
from referee.rules.actions import parse_action
from referee.rules.cards import card_str, iter_bits, parse_card
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.match import MatchConfig, play_game
from referee.table.spectator import PublicTable, public_message, start_message
from referee.web.live import LiveHub, replay_header, serve_live
from support import DURAK_REF

CARD = re.compile(r"(?<![A-Za-z0-9])(?:[2-9TJQKA][CDHS])(?![A-Za-z0-9])")


@asynccontextmanager
async def live_server(hub: LiveHub, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve ``hub`` on a free port; yields the base URL. Closes the hub on exit."""
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve_live, hub, host, 0)
        try:
            yield f"http://{host}:{port}"
        finally:
            hub.close()


def builtin_players(*names: str) -> list[BuiltinPlayer]:
    """Random players with any names, also ones the command line refuses (a TCP or command
    bot's hello may carry any text)."""
    spec = parse_bot_spec("builtin:random")
    return [BuiltinPlayer(n, dataclasses.replace(spec, name=n, named=True), 7) for n in names]


async def play_watched(hub: LiveHub, config: MatchConfig, index: int, names: tuple[str, ...] = (
        "alice", "bob")) -> dict[str, Any]:
    """One real game between built-in bots, watched by ``hub`` and listed as finished."""
    record = await play_game(builtin_players(*names), config, index=index,
                             seed=f"live:{index}", dealer=len(names) - 1, watch=hub.watch)
    hub.finished(replay_header(config), record.as_dict())
    return record.as_dict()


def hidden_from_spectator(game: Game) -> set[str]:
    """Every card in a hand not publicly known, and the talon below the face-up trump."""
    hidden = 0
    for seat, hand in enumerate(game.hands):
        hidden |= hand & ~game.known[seat]
    for c in game.talon:
        if c != game.trump_card:
            hidden |= 1 << c
    return {card_str(c) for c in iter_bits(hidden)}


def hidden_to_seat_at_end(record: dict[str, Any], rules: Any, seat: int) -> set[str]:
    """Cards seat ``seat`` never saw: those in other hands at the end not publicly known,
    and the talon below the face-up trump."""
    game = Game.new(rules, len(record["players"]), deck=[parse_card(c) for c in record["deck"]],
                    dealer=record["dealer"])
    for _, text, _, _ in record["decisions"]:
        game.apply_legal(parse_action(text))
    hidden = 0
    for s, hand in enumerate(game.hands):
        if s != seat:
            hidden |= hand & ~game.known[s]
    for c in game.talon:
        if c != game.trump_card:
            hidden |= 1 << c
    return {card_str(c) for c in iter_bits(hidden)}


def public_timeline(record: dict[str, Any], config: MatchConfig) -> list[tuple[dict, set[str]]]:
    """Re-play a finished game with the engine: each spectator message of it, in order,
    with the cards a spectator could not see right after it."""
    deck = [parse_card(c) for c in record["deck"]]
    game = Game.new(config.rules, len(record["players"]), deck=deck, dealer=record["dealer"],
                    record_events=True)
    out = [(start_message(game, record["game"], record["players"]), hidden_from_spectator(game))]
    for _, text, _, _ in record["decisions"]:
        game.apply_legal(parse_action(text))
        for ev in game.events or []:
            message = public_message(game, record["game"], ev)
            if message is not None:
                out.append((message, hidden_from_spectator(game)))
        game.events.clear()  # type: ignore[union-attr]
    return out


def expected_views(record: dict[str, Any], config: MatchConfig) -> list[tuple[dict, set[str]]]:
    """The table views a spectator of this game must be sent, in order, each with the
    cards still hidden at that moment (the end view comes last)."""
    timeline = public_timeline(record, config)
    table = PublicTable(timeline[0][0])
    views = [(table.view(), timeline[0][1])]
    for message, hidden in timeline[1:]:
        table.apply(message)
        views.append((table.view(), hidden))
    table.apply({"type": "end", "game": record["game"], "durak": record["durak"],
                 "termination": record["termination"], "reason": record["reason"]})
    views.append((table.view(), timeline[-1][1]))
    return views


def check_live_stream(received: list[tuple[str, Any]],
                      views: dict[int, list[tuple[dict, set[str]]]]) -> int:
    """Check what a live page's stream carried (``received``: (event, data) pairs, in
    order) against the engine: results and ratings name no card at all; every table view
    is a spectator's view of its game (``views``: ``expected_views`` by game), in order,
    naming no card hidden at its moment. Returns how many views were checked."""
    position = {g: 0 for g in views}
    checked = 0
    for name, data in received:
        if name in ("finished", "standings"):  # results and ratings: no card at all
            assert not CARD.findall(json.dumps(data)), (name, data)
            continue
        assert name in ("snapshot", "table"), f"an event the page does not expect: {name}"
        if name == "snapshot":
            assert not CARD.findall(json.dumps([data["recent"], data["standings"]])), data
        for view in data["tables"] if name == "snapshot" else [data]:
            want = views[view["game"]]
            at = position[view["game"]]
            while at < len(want) and want[at][0] != view:
                at += 1
            assert at < len(want), ("not a public view of its game, or out of order", view)
            assert not set(CARD.findall(json.dumps(view))) & want[at][1], view
            position[view["game"]] = at
            checked += 1
    return checked


def sse_events(data: bytes) -> list[tuple[str, Any]]:
    """The (event, JSON data) pairs of a Server-Sent Events byte stream."""
    events = []
    for block in data.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def classic(**kwargs: Any) -> MatchConfig:
    return MatchConfig(rules=make_rules("classic", []), seed="live-tests", **kwargs)


class Running:
    """``durak-ref ARGS`` running as a user runs it; its stderr lines collected as they
    come (``wait_for``). Always ``close()`` it."""

    def __init__(self, cwd: Path, *args: str | Path, nofile: int | None = None) -> None:
        """``nofile``: run it with this RLIMIT_NOFILE, soft and hard (as ``prlimit``)."""
        self.lines: list[str] = []

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        # (preexec_fn only when asked: it is unsafe while other threads of ours run)
        self.process = subprocess.Popen(
            [str(DURAK_REF), *map(str, args)], cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            preexec_fn=None if nofile is None else limit)
        self.reader = threading.Thread(target=self._collect, daemon=True)
        self.reader.start()

    def _collect(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """The first stderr line matching ``pattern`` (waits for it; fails if it exits)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if found := re.search(pattern, line):
                    return found
            assert self.process.poll() is None, "\n".join(self.lines)
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r} in: {self.lines}")

    def close(self) -> None:
        """Kill it if it still runs; close its pipe once all its lines are read."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(timeout=10)
        assert self.process.stderr is not None
        self.process.stderr.close()
