"""The live page (``durak-ref serve --http``) in a real headless Chromium, during real
arena games between bots connected over TCP.

Every byte the browser receives while a game runs must be public: each table view in
the event stream (as Chromium itself reports the messages it received) is a spectator's
view of that moment and names no card hidden at that moment, and no card drawn on a
table in play is one that stays hidden to the game's end. Once a game has ended, its
replay (omniscient: every hand face up) opens from the recent games list.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from browserkit import LIVE, RecordedPage

from livekit import Running, check_live_stream, expected_views
from referee.records.matchlog import read_log
from referee.rules.options import rules_from_dict
from referee.table.match import MatchConfig
from support import cli

SLOW_BOT = Path(__file__).parent / "bots" / "slow_tcp_bot.py"
#: Seconds per decision: a game lasts a few seconds, long enough to be watched.
THINK = "0.02"
#: Each table's cards as the DOM draws them.
TABLE_CARDS = """() => Object.fromEntries([...document.querySelectorAll('#tables .game')].map(
  g => [g.dataset.game, [...g.querySelectorAll('[data-card]')].map(c => c.dataset.card)]))"""


def test_a_browser_watching_live_games_receives_no_hidden_card(
        tmp_path: Path, browser_page: RecordedPage) -> None:
    db = tmp_path / "arena.sqlite"
    tokens = {}
    for name in ("alice", "bob"):
        result = cli("register", name, "--db", db, "--json", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        tokens[name] = json.loads(result.stdout)["token"]
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", db, "--log-dir",
                    tmp_path / "logs", "--http", "127.0.0.1:0", "--move-time", "10")
    bots: list[subprocess.Popen[bytes]] = []
    page = browser_page.page
    received: list[tuple[str, Any]] = []  # (event, data): what Chromium got on the stream
    try:
        url = serve.wait_for(r"^live page: (http://127\.0\.0\.1:\d+/)$")[1]
        port = serve.wait_for(r"arena listening on 127\.0\.0\.1:(\d+)")[1]
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.eventSourceMessageReceived",
               lambda e: received.append((e["eventName"], json.loads(e["data"]))))
        page.goto(url)
        page.wait_for_function(LIVE)
        for name in ("alice", "bob"):
            bots.append(subprocess.Popen(
                [sys.executable, str(SLOW_BOT), THINK, "--connect", f"127.0.0.1:{port}",
                 "--token", tokens[name], "--name", name],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        drawn: list[tuple[int, list[str]]] = []  # (game, cards) of each table the DOM showed
        replay_while_playing: list[int] = []
        deadline = time.monotonic() + 120
        while page.locator("#recent li").count() < 2:  # two games over, more in play
            assert time.monotonic() < deadline, serve.lines
            page.wait_for_timeout(50)
            for game, cards in page.evaluate(TABLE_CARDS).items():
                drawn.append((int(game), cards))
                if not replay_while_playing:  # a game in play has no replay, not even by URL
                    replay_while_playing.append(
                        page.context.request.get(f"{url}game/{int(game)}").status)
        assert replay_while_playing == [404]
        assert drawn, "the page never showed a game in play"
        browser_page.assert_clean(allowed=(url.rstrip("/"),))
        # The first game's replay from the recent games list: omniscient, every hand.
        link = page.locator("#recent li a").last
        first = int(link.inner_text().split()[-1])
        replay = page.context.new_page()
        replay.goto(url + link.get_attribute("href").lstrip("/"))
        replay_cards = set(replay.evaluate(
            "() => [...document.querySelectorAll('[data-card]')].map(c => c.dataset.card)"))
        replay.close()
        page.goto("about:blank")  # stop watching before the arena stops
        serve.process.send_signal(signal.SIGINT)  # games in flight finish and are logged
        assert serve.process.wait(timeout=60) == 0, serve.lines
    finally:
        serve.close()
        for proc in bots:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    (log_path,) = (tmp_path / "logs").glob("arena-*.jsonl")
    log = read_log(log_path)
    config = MatchConfig(rules=rules_from_dict(log.header["rules"], log.header["preset"]))
    views = {g["game"]: expected_views(g, config) for g in log.games}
    never_shown = {g: v[-1][1] for g, v in views.items()}  # hidden to the very end
    first_record = next(g for g in log.games if g["game"] == first)
    assert set(first_record["deck"][:12]) <= replay_cards  # both dealt hands, face up

    # Every table view the browser received is a spectator's view of its moment.
    checked = check_live_stream(received, views)
    assert checked >= 20, received[:5]
    for game, cards in drawn:
        assert not set(cards) & never_shown[game], (game, cards)
