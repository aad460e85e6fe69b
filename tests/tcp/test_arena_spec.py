"""What a bot author meets at the arena is what protocol/SPEC.md says: the findings of a bot
written from the SPEC alone (601 arena games), each against a real arena on 127.0.0.1
(``referee.league.arena.Arena``, or the ``durak-ref serve`` command itself) with bots
talking real TCP.

- ``game``: the number in every message of a game is the server's game number (the
  store's, the log's, the live page's), continuing across runs; the SPEC said "the index
  within the match", which an arena does not have.
- an illegal action's error names the kinds of the legal list the bot was offered, not
  every kind of the phase ("may: cover, transfer, show_trump, take" where transfer was off).
- ``serve --games N`` plays N games: a pairing's two games made 101 of 100 (and 4 of 3).
"""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from tcp_security_kit import (
    HOST,
    BotRecord,
    Client,
    config,
    legit_bot,
    running_arena,
    serve_command,
    start_example_bots,
    wait_until,
)

import protocol
from protocol import messages as m
from referee.league.arena import Arena, register
from referee.records.store import Store
from referee.rules.actions import KIND_NAMES
from referee.seats.tcp import TcpLimits
from support import cli

SPEC = " ".join(Path(protocol.__file__).with_name("SPEC.md").read_text(encoding="utf-8").split())


def logged_games(log_dir: Path) -> list[dict[str, Any]]:
    """The game records of the arena log in ``log_dir``."""
    (log,) = log_dir.glob("arena-*.jsonl")
    return [r for r in map(json.loads, log.read_text().splitlines()) if r["type"] == "game"]


async def serve_until_done(store: Store, tokens: dict[str, str], games: int,
                           log_dir: Path) -> tuple[dict[str, BotRecord], Arena]:
    """One arena run on ``store`` with ``games`` as its limit, every registered bot a
    well-behaved TCP client; returns when the arena has stopped and said bye to all."""
    arena = Arena(store, config(), TcpLimits(handshake_s=5.0), games=games, log_dir=log_dir)
    bots = {name: BotRecord(name) for name in tokens}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(arena.run, HOST, 0)
            for name, token in tokens.items():
                nursery.start_soon(partial(legit_bot, port, name, token, bots[name]))
    return bots, arena


async def test_the_game_number_is_the_servers_and_continues_across_runs(tmp_path: Path) -> None:
    """A bot may rely on ``game``: the same number in every message of a game, never the
    same for two games, and in the arena the game's number in the server's store and log
    (so the author can find it: ``/game/N`` on the live page). It is not a count of the
    bot's games: a second run of ``serve`` on the same store goes on from the first."""
    store = Store(tmp_path / "arena.sqlite")
    try:
        tokens = {name: register(store, name) for name in ("alice", "bob")}
        first, _ = await serve_until_done(store, tokens, 2, tmp_path / "one")
        second, _ = await serve_until_done(store, tokens, 2, tmp_path / "two")
        assert first["alice"].games == first["bob"].games == [0, 1]
        assert second["alice"].games == second["bob"].games == [2, 3]
        for bot in (*first.values(), *second.values()):  # game_end carries the same number
            assert [end["game"] for end in bot.ended] == bot.games
        assert [g.game_index for g in store.games("ladder")] == [0, 1, 2, 3]
        logged = [g["game"] for run in ("one", "two") for g in logged_games(tmp_path / run)]
        assert logged == [0, 1, 2, 3]
    finally:
        store.close()
    # What the SPEC promises, in its own words.
    assert ("in the arena (`durak-ref serve`) the server's number of the game, the one its "
            "store, logs and live page (`/game/N`) show") in SPEC
    assert "continues across runs" in SPEC
    assert "0-based index of the game within the match |" not in SPEC


async def pass_when_asked_to_defend(port: int, name: str, token: str,
                                    seen: dict[str, Any]) -> None:
    """A bot that answers its first defence (a request with take in ``legal``) with
    pass, and every other request with ``legal[0]``; it records the request and the
    error it gets for it, then leaves."""
    client = await Client.connect(port)
    try:
        await client.hello(name, token)
        while (message := await client.receive(timeout=30)) is not None:
            if message["type"] == "ping":
                await client.send(m.pong_msg(message["id"]))
            elif message["type"] == "request":
                legal = message["legal"]
                if "request" not in seen and any(a["type"] == "take" for a in legal):
                    seen["request"] = message
                    await client.send(m.action_msg(message["id"], {"type": "pass"}))
                else:
                    await client.send(m.action_msg(message["id"], legal[0]))
            elif message["type"] == "error":
                seen["error"] = message
            elif message["type"] in ("game_end", "bye"):
                if "error" in seen:
                    return
    finally:
        await client.aclose()


async def test_an_illegal_action_is_told_the_kinds_it_was_offered(tmp_path: Path) -> None:
    """Classic rules (transfer off): the defender that passes is told "seat N may: cover,
    take" or "may: take", exactly the kinds of its request's legal list, and the game's
    record says the same. It was told "may: cover, transfer, show_trump, take"."""
    seen: dict[str, Any] = {}
    async with running_arena(tmp_path, log_dir=tmp_path / "logs") as run:
        run.start_bot("alice")
        run.nursery.start_soon(pass_when_asked_to_defend, run.port, "bob", run.tokens["bob"], seen)
        await wait_until(lambda: run.arena.played >= 1 and "error" in seen, 30, "bob's illegal pass")
    offered = list(dict.fromkeys(a["type"] for a in seen["request"]["legal"]))
    assert set(offered) <= set(KIND_NAMES) and "transfer" not in offered
    error = seen["error"]
    assert (error["code"], error["fatal"]) == ("illegal", True)
    found = re.search(r"pass is not an option in phase defend \(seat (\d) may: ([a-z_, ]+)\)$",
                      error["message"])
    assert found, error["message"]
    assert found[2].split(", ") == offered
    forfeits = [g["forfeit"] for g in logged_games(tmp_path / "logs") if g["forfeit"]]
    assert [f["reason"] for f in forfeits if f["kind"] == "illegal"] == [error["message"]]


async def test_a_pairing_cut_short_does_not_carry_the_run_past_its_games(tmp_path: Path) -> None:
    """bob hangs up in the first game of the first pairing, so that pairing plays one
    game, not two; the arena still stops at exactly 4 games (it played 5: 1 + 2 + 2)."""
    async with running_arena(tmp_path) as run:
        run.arena.games = 4
        run.start_bot("alice")
        run.start_bot("bob", hang_up_at_request=1, retries=20)
        await wait_until(lambda: run.arena._stopping.is_set() and run.arena.in_flight == 0, 60,
                         "the arena to stop after its games")
        assert run.arena.played == 4 and run.arena.promised == 0
        terminations = [g.termination for g in run.stored_games()]
    assert len(terminations) == 4 and terminations[0] == "disconnect"


@pytest.mark.process
async def test_serve_games_3_plays_3_games(tmp_path: Path) -> None:
    """``durak-ref serve --games 3`` with two real example bots over TCP: 3 games, not
    the 4 of two whole pairings; the bots get bye and exit 0."""
    db = tmp_path / "store.sqlite"
    tokens = {n: json.loads(cli("register", n, "--db", db, "--json", cwd=tmp_path).stdout)["token"]
              for n in ("alice", "bob")}
    async with serve_command(tmp_path, db, "--games", "3") as serve:
        serve.bots = await start_example_bots(serve.port, tokens)
        assert await serve.process.wait() == 0, serve.err.decode()
        assert [await b.wait() for b in serve.bots] == [0, 0]
    out, err = serve.out, serve.err
    served = json.loads(out)
    assert served["played"] == 3, err.decode()
    assert {(r["name"], r["games"]) for r in served["standings"]} == {("alice", 3), ("bob", 3)}
    assert len(re.findall(r"^game \d+: ", err.decode(), re.M)) == 3
