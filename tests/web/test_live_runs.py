"""The live page's feed from real runs: tournaments (in this process and in worker
processes) send the live page exactly the public spectator messages of each game, and
the ``--http`` option behaves as documented on the command line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from livekit import public_timeline
from referee.league.tournament import BotEntry, TournamentSettings, run_tournament
from referee.records.matchlog import read_log
from referee.records.store import Store
from referee.table.match import MatchConfig
from support import cli

pytestmark = pytest.mark.process


def open_tournament(path: Path, s: TournamentSettings, tid: str = "t1") -> Store:
    store = Store(path)
    with store.transaction():
        for b in s.bots:
            store.ensure_bot(b.name, b.command)
    store.create_tournament(tid, "tournament", s.as_dict())
    return store


@pytest.mark.parametrize("concurrency", [1, 2])
async def test_a_tournament_feeds_each_games_public_messages_and_nothing_else(
        tmp_path: Path, concurrency: int) -> None:
    """With workers (concurrency 2) the messages cross the worker's channel: the parent
    gets them in order, before the game's record, and exactly what the engine's public
    events give a spectator (replayed here from the logged record)."""
    settings = TournamentSettings([BotEntry("a", "builtin:random"), BotEntry("b", "builtin:greedy"),
                                   BotEntry("c", "builtin:random")], games=2, seed=11,
                                  concurrency=concurrency)
    config: MatchConfig = settings.validate()
    store = open_tournament(tmp_path / "s.sqlite", settings)
    seen: dict[int, list[dict[str, Any]]] = {}
    finished_before_record: list[int] = []

    async def watch(message: dict[str, Any]) -> None:
        seen.setdefault(message["game"], []).append(message)

    def on_game(record: Any, progress: Any) -> None:
        finished_before_record.append(seen[record.index][-1]["type"] == "end")

    progress = await run_tournament(settings, store, "t1", log_dir=tmp_path, watch=watch,
                                    on_game=on_game)
    store.close()
    games = read_log(tmp_path / "tournament-t1.jsonl").games
    assert progress.done == len(games) == len(seen) == 6
    assert all(finished_before_record)
    for record in games:
        messages = seen[record["game"]]
        # Each event carries every seat's public clock as the referee charged it (real
        # time, so no replay has it; tests/web/test_public_clocks.py checks its values).
        assert all(len(m["clocks"]) == len(record["players"]) for m in messages[1:-1])
        untimed = [{k: v for k, v in m.items() if k != "clocks"} for m in messages[:-1]]
        assert untimed == [m for m, _ in public_timeline(record, config)]
        assert messages[-1] == {"type": "end", "game": record["game"], "durak": record["durak"],
                                "termination": record["termination"], "reason": record["reason"]}


def test_tournament_http_prints_the_page_and_warns_off_loopback(tmp_path: Path) -> None:
    result = cli("tournament", "--bot", "a=builtin:greedy", "--bot", "b=builtin:random",
                 "--games", "2", "--db", tmp_path / "s.sqlite", "--log-dir", tmp_path / "logs",
                 "--http", "0.0.0.0:0", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^durak-ref: warning: the live page listens on 0\.0\.0\.0, not loopback",
                     result.stderr, re.M)
    assert re.search(r"^live page: http://0\.0\.0\.0:\d+/$", result.stderr, re.M)


@pytest.mark.parametrize("command", ["tournament", "serve"])
@pytest.mark.parametrize("value,message", [
    ("8080", "--http '8080': expected HOST:PORT"),
    ("localhost:99999", "--http 'localhost:99999': expected HOST:PORT with a port 0..65535"),
])
def test_a_bad_http_address_is_the_users_error(tmp_path: Path, command: str, value: str,
                                                message: str) -> None:
    args = (["--bot", "a=builtin:greedy", "--bot", "b=builtin:random"] if command == "tournament"
            else [])
    result = cli(command, *args, "--db", tmp_path / "s.sqlite", "--http", value, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_port_in_use_stops_the_tournament_before_it_plays(tmp_path: Path) -> None:
    import socket
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = cli("tournament", "--bot", "a=builtin:greedy", "--bot", "b=builtin:random",
                     "--games", "2", "--db", tmp_path / "s.sqlite", "--log-dir", tmp_path / "logs",
                     "--http", f"127.0.0.1:{port}", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"--http 127.0.0.1:{port}: cannot listen there" in result.stderr
    assert "Traceback" not in result.stderr


def test_without_http_no_server_code_is_even_imported() -> None:
    """--http off costs nothing: the referee's modules do not import the HTTP server."""
    import subprocess
    import sys
    code = ("import sys, referee.cli, referee.table.match, referee.league.tournament, referee.league.arena, "
            "referee.league.worker\nprint(sorted(m for m in ('hypercorn', 'h11', 'h2', 'wsproto') "
            "if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def _stream_until_closed(url: str, seen: list[bytes]) -> None:
    """Read the page's event stream (in a thread) until the server closes it."""
    import httpx
    try:
        with httpx.stream("GET", url + "events", timeout=60) as response:
            for chunk in response.iter_raw():
                seen.append(chunk)
    except httpx.HTTPError:
        seen.append(b"<broken>")
    seen.append(b"<closed>")


def _refused(url: str) -> bool:
    import httpx
    try:
        httpx.get(url, timeout=5)
    except httpx.ConnectError:
        return True
    return False


@pytest.mark.parametrize("command", ["serve", "tournament"])
def test_sigterm_closes_the_live_page_with_the_run(tmp_path: Path, command: str) -> None:
    """SIGTERM stops the run as Ctrl-C does (serve: the games in flight finish, exit 0;
    tournament: exit 130, resumable) and the live page's server closes with it, ending
    the streams of its viewers."""
    import signal
    import sys
    import threading

    from livekit import Running

    db = tmp_path / "s.sqlite"
    if command == "serve":
        assert cli("register", "alice", "--db", db, cwd=tmp_path).returncode == 0
        args: list[str | Path] = ["serve", "--listen", "127.0.0.1:0", "--db", db]
        expected_exit = 0
    else:
        slow = f"{sys.executable} {Path(__file__).parent / 'bots' / 'slow_bot.py'}"
        args = ["tournament", "--bot", "a=builtin:greedy", "--bot", f"s={slow}", "--games", "50",
                "--sandbox", "none", "--db", db]
        expected_exit = 130
    run = Running(tmp_path, *args, "--log-dir", tmp_path / "logs", "--http", "127.0.0.1:0")
    try:
        url = run.wait_for(r"^live page: (http://127\.0\.0\.1:\d+/)$")[1]
        seen: list[bytes] = []
        reader = threading.Thread(target=_stream_until_closed, args=(url, seen), daemon=True)
        reader.start()
        while not seen:
            assert run.process.poll() is None, run.lines
            threading.Event().wait(0.05)
        if command == "tournament":  # a game in play
            while b"event: table" not in b"".join(seen):
                threading.Event().wait(0.05)
        run.process.send_signal(signal.SIGTERM)
        assert run.process.wait(timeout=60) == expected_exit, run.lines
        reader.join(timeout=30)
        assert seen[-1] == b"<closed>" and b"".join(seen).startswith(b"event: snapshot")
        assert _refused(url)
        if command == "tournament":
            assert any("resume with" in line for line in run.lines), run.lines
    finally:
        run.close()


def test_a_duplicate_tournament_serves_no_replay_of_a_game_while_its_twin_plays(tmp_path: Path) -> None:
    """``tournament --http`` with duplicate deals (the default): games 0 and 1 are one
    deal with the seats swapped, as are 2 and 3. Whenever game 1 (or 3) is seen in play
    both before and after the requests, game 0's (2's) replay is 404 and no JSON lists it;
    once the next deal plays, both twins of the first are served."""
    import sys
    import time

    import httpx

    from livekit import Running

    slow = f"{sys.executable} {Path(__file__).parent / 'bots' / 'slow_bot.py'} 0.04"
    run = Running(tmp_path, "tournament", "--bot", "a=builtin:greedy", "--bot", f"s={slow}",
                  "--games", "4", "--sandbox", "none", "--db", tmp_path / "s.sqlite",
                  "--log-dir", tmp_path / "logs", "--http", "127.0.0.1:0")
    held: list[int] = []
    shown: list[int] = []
    try:
        url = run.wait_for(r"^live page: (http://127\.0\.0\.1:\d+/)$")[1]
        with httpx.Client(base_url=url, timeout=10) as client:
            def playing() -> list[int]:
                return [t["game"] for t in client.get("/api/state").json()["tables"]]

            while run.process.poll() is None:
                try:
                    before = playing()
                    if before in ([1], [3]):
                        first = before[0] - 1
                        replay = client.get(f"/game/{first}").status_code
                        recent = [g["game"] for g in client.get("/api/state").json()["recent"]]
                        if playing() == before:  # still in play: the answers were given during it
                            assert replay == 404 and first not in recent, (replay, recent)
                            held.append(first)
                    if before == [2]:
                        codes = [client.get(f"/game/{n}").status_code for n in (0, 1)]
                        if playing() == before:
                            assert codes == [200, 200]
                            shown.append(2)
                except httpx.TransportError:
                    break  # the run ended and its page with it
                time.sleep(0.05)
        assert run.process.wait(timeout=120) == 0, run.lines
    finally:
        run.close()
    assert held and shown, (held, shown)


def test_the_live_page_ends_with_the_runs_final_standings_and_says_the_run_is_over(tmp_path: Path) -> None:
    """A 12-game round robin of three bots, watched from its start to its end: the last
    event a page gets is ``over``, with every bot's 8 games counted (standings are
    otherwise recomputed at most every 2 s, and the server went with the run before the
    last games were counted), and a replay it links to has an ending of its own."""
    import json
    import sys
    import threading

    from livekit import Running

    slow = f"{sys.executable} {Path(__file__).parent / 'bots' / 'slow_bot.py'} 0.01"
    db = tmp_path / "s.sqlite"
    run = Running(tmp_path, "tournament", "--bot", "a=builtin:greedy", "--bot", f"s={slow}",
                  "--bot", "r=builtin:random", "--games", "4", "--sandbox", "none", "--db", db,
                  "--log-dir", tmp_path / "logs", "--http", "127.0.0.1:0")
    try:
        url = run.wait_for(r"^live page: (http://127\.0\.0\.1:\d+/)$")[1]
        seen: list[bytes] = []
        reader = threading.Thread(target=_stream_until_closed, args=(url, seen), daemon=True)
        reader.start()
        assert run.process.wait(timeout=120) == 0, run.lines
        reader.join(timeout=30)
    finally:
        run.close()
    events = re.findall(rb"event: (\w+)\ndata: (.*)\n", b"".join(seen))
    assert events and events[-1][0] == b"over", events[-3:]
    final = json.loads(events[-1][1])
    assert {row["bot"]: row["games"] for row in final["standings"]} == {"a": 8, "s": 8, "r": 8}
    assert "run over" in (Path(__import__("referee").__file__).parent / "web" / "assets" / "live.js").read_text()

