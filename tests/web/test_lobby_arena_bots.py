"""Registered bots in the lobby of a real ``serve --http`` (issue 35, item 2): a person
seats an arena bot only with its owner's leave (``register --lobby on``), only under
the arena's time per move, and keeps it waiting at most ``--lobby-bot-wait`` on a move:
then the game is the person's timeout, not the bot's. Meanwhile the bot's other
connection goes on playing in the arena, and the lobby's game rates nobody on the
arena's ladder (it is stored as a game of the run ``lobby``).

Real components: the CLI's ``register``, a real ``serve`` process, the example random
bot connected over TCP as real processes, HTTP posts to the lobby."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from livekit import Running
from referee.records.store import open_store
from support import ROOT, cli

pytestmark = pytest.mark.process

RANDOM_BOT = ROOT / "examples" / "python" / "random_bot.py"
ARENA_GAME = re.compile(r"^game \d+: (gamma v delta|delta v gamma):")
WAIT_S = 5  #: --lobby-bot-wait: the longest gamma waits on the visitor's move


def register(db: Path, tmp_path: Path, *args: str) -> dict[str, Any]:
    done = cli("register", *args, "--db", db, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def post(base: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    answer = httpx.post(base + path, json=body, timeout=30)
    return answer.status_code, answer.json()


def connect(port: int, name: str, token: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(RANDOM_BOT), "--connect", f"127.0.0.1:{port}",
                             "--name", name, "--token", token],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def arena_games(serve: Running) -> int:
    return sum(bool(ARENA_GAME.match(line)) for line in list(serve.lines))


def seat_gamma(base: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Create the visitor's table with gamma once gamma has a free connection (its
    other one plays delta in the arena)."""
    deadline = time.monotonic() + 60
    while True:
        status, answer = post(base, "/api/tables", body)
        if status != 409 or time.monotonic() > deadline:
            return status, answer
        time.sleep(0.2)


def test_a_visitor_cannot_hold_a_registered_bot_nor_choose_its_rated_games(tmp_path: Path) -> None:
    db = tmp_path / "arena.sqlite"
    gamma = register(db, tmp_path, "gamma", "--lobby", "on")
    delta = register(db, tmp_path, "delta")
    omega = register(db, tmp_path, "omega")
    assert (gamma["lobby"], delta["lobby"], omega["lobby"]) == (True, False, False)
    shown = cli("ladder", "show", "--db", db, "--json", cwd=tmp_path)
    assert json.loads(shown.stdout)["lobby_bots"] == ["gamma"], shown.stdout
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", db, "--http", "127.0.0.1:0",
                    "--move-time", "30", "--lobby-bot-wait", str(WAIT_S), "--max-games-per-bot", "2",
                    "--person-grace", "600", "--log-dir", tmp_path / "logs")
    bots: list[subprocess.Popen[bytes]] = []
    try:
        port = int(serve.wait_for(r"arena listening on 127\.0\.0\.1:(\d+)")[1])
        base = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+)/play$")[1]
        assert "gamma (lobby)" in serve.wait_for(r"^arena on .*; bots: .*")[0]
        # Two connections of gamma (one for the arena, one free), one of delta.
        bots = [connect(port, "gamma", gamma["token"]), connect(port, "gamma", gamma["token"]),
                connect(port, "delta", delta["token"])]
        serve.wait_for(ARENA_GAME.pattern)

        # (a) Bots whose owners did not allow lobby play: refused, saying why.
        for name in ("delta", "omega"):  # connected, and not
            status, answer = post(base, "/api/tables", {"name": "Visitor", "seats": ["you", f"tcp:{name}"]})
            assert status == 403 and "owner has not allowed lobby play" in answer["error"], answer
            assert f"register {name} --lobby on" in answer["error"], answer
        # The arena's time per move, not the visitor's: 3600 s per move is refused.
        status, answer = post(base, "/api/tables", {"name": "Visitor", "seats": ["you", "tcp:gamma"],
                                                    "move_time": 3600})
        assert status == 400 and "arena's time limit of 30 s per move" in answer["error"], answer

        # (b) The old attack within the arena's limits: seat gamma and never move.
        before = len(serve.lines)
        status, answer = seat_gamma(base, {"name": "Visitor", "seats": ["you", "tcp:gamma"],
                                           "move_time": 30})
        assert status == 200, answer
        line = serve.wait_for(rf"^table {answer['table']} \(game \d+\): .*", timeout=120)[0]
        during = [ln for ln in serve.lines[before:serve.lines.index(line)] if ARENA_GAME.match(ln)]
        assert during, serve.lines[before:]  # gamma kept playing in the arena meanwhile
        assert line.endswith(": timeout, durak Visitor"), line
        # ... and after: the game freed its connection; the arena pairs gamma on.
        played = arena_games(serve)
        deadline = time.monotonic() + 60
        while arena_games(serve) <= played + 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert arena_games(serve) > played + 2

        # The owner withdraws the leave while serve runs: the lobby follows.
        changed = register(db, tmp_path, "gamma", "--lobby", "off")
        assert (changed["token"], changed["lobby"]) == (None, False), changed  # the token holds
        status, answer = post(base, "/api/tables", {"name": "Visitor", "seats": ["you", "tcp:gamma"]})
        assert status == 403, answer
        played = arena_games(serve)  # gamma's token still holds: it plays on in the arena
        deadline = time.monotonic() + 60
        while arena_games(serve) <= played and time.monotonic() < deadline:
            time.sleep(0.1)
        assert arena_games(serve) > played
    finally:
        serve.process.send_signal(signal.SIGINT)  # stop: games in flight finish and are stored
        try:
            serve.process.wait(timeout=60)
        finally:
            serve.close()
            for bot in bots:
                bot.kill()
                bot.wait()

    # The person's timeout, not the bot's; and (c) the game is the lobby's, not rated.
    with open_store(db) as store:
        (lobby_game,) = store.games("lobby")
        seats = {s.bot: s for s in lobby_game.seats}
        assert seats["Visitor"].forfeit == "timeout" and seats["gamma"].forfeit is None
        ladder = store.games("ladder")
        assert ladder and all("Visitor" not in g.players for g in ladder)
        assert store.ladder_rating("Visitor") is None
        gamma_rated = sum("gamma" in g.players for g in ladder)
        rating = store.ladder_rating("gamma")
        assert rating is not None and rating[1] == gamma_rated
        assert {tid for tid, *_ in store.history("gamma")} == {"ladder"}
    verified = cli("verify", "--db", db, cwd=tmp_path, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
