"""A person plays in the browser (``durak-ref serve --http``'s lobby at /play) in a real
headless Chromium: creates a table against builtin:greedy and plays the whole game by
clicking only enabled controls, at laptop and phone size. Every seat message Chromium
received names no card hidden from the person's seat; the game's log verifies, and the
person is rated under their display name."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from browserkit import LAPTOP, PHONE, RecordedPage
from livekit import CARD, Running, hidden_to_seat_at_end
from referee.records.matchlog import read_log
from referee.rules.options import rules_from_dict
from support import cli

WIDTH = "() => [document.documentElement.scrollWidth, window.innerWidth]"
#: One enabled control of the person's move: a playable card, a cover target, a button.
CONTROL = "#hand .playable, #pairs .target, #actions button:not([disabled])"
NAME = "<svg onload=alert(1)>Ann"  #: 24 characters, the most a display name has


def play_to_the_end(page: Any) -> None:
    for _ in range(600):
        if page.locator("#result").inner_text().startswith("game over"):
            return
        page.wait_for_function(
            "() => document.getElementById('turn').dataset.yourMove === 'yes' || "
            "document.getElementById('result').textContent.startsWith('game over')", timeout=60000)
        if page.locator("#result").inner_text().startswith("game over"):
            return
        page.locator(CONTROL).first.click()
        page.wait_for_timeout(30)
    raise AssertionError("the game did not end within 600 clicks")


@pytest.mark.parametrize("size", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_a_person_plays_a_whole_game_against_greedy_by_clicking(
        tmp_path: Path, browser_page: RecordedPage, size: dict[str, int]) -> None:
    db = tmp_path / "arena.sqlite"
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", db, "--log-dir",
                    tmp_path / "logs", "--http", "127.0.0.1:0")
    page = browser_page.page
    page.set_viewport_size(size)
    received: list[str] = []
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.eventSourceMessageReceived", lambda e: received.append(e["data"]))
        page.on("dialog", lambda d: (_ for _ in ()).throw(AssertionError(f"a script ran: {d.message}")))
        page.goto(lobby)
        page.wait_for_function("document.getElementById('status').textContent === 'live'")
        page.fill("[data-testid=name]", NAME)
        page.select_option("[data-testid=seat-1]", "builtin:greedy")
        page.click("[data-testid=create]")
        page.wait_for_url("**/table/*")
        width = page.evaluate(WIDTH)
        assert width[0] <= width[1], width
        play_to_the_end(page)
        assert NAME in page.locator("#title").inner_text()  # text, never markup
        page.wait_for_selector("[data-testid=replay]")
        page.screenshot(path=str(tmp_path / "play.png"))  # (docs/screenshots/play-*.png are these)
        width = page.evaluate(WIDTH)
        assert width[0] <= width[1], width
        browser_page.assert_clean(allowed=(lobby.removesuffix("/play"),))
        page.goto("about:blank")
        serve.process.send_signal(signal.SIGINT)
        assert serve.process.wait(timeout=60) == 0, serve.lines
    finally:
        serve.close()
    (log_path,) = (tmp_path / "logs").glob("table-*.jsonl")
    log = read_log(log_path)
    (record,) = log.games
    hidden = hidden_to_seat_at_end(record, rules_from_dict(log.header["rules"], log.header["preset"]), 0)
    assert received
    for data in received:
        assert not set(CARD.findall(data)) & hidden, data
    verify = cli("replay", log_path, "--verify", cwd=tmp_path)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    ladder = cli("ladder", "show", "--db", db, "--json", cwd=tmp_path)
    assert ladder.returncode == 0, ladder.stderr
    assert NAME in json.dumps(json.loads(ladder.stdout)), ladder.stdout


def test_a_reload_mid_game_returns_to_the_same_seat_with_the_clock_paused(
        tmp_path: Path, browser_page: RecordedPage) -> None:
    # 10 s per move (room for a busy machine's clicks); the page is away 11 s at the
    # person's move, then reloaded: the
    # seat token in the browser brings it back to the same seat, the move still open.
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", tmp_path / "a.sqlite",
                    "--log-dir", tmp_path / "logs", "--http", "127.0.0.1:0", "--person-grace", "30")
    page = browser_page.page
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        page.goto(lobby)
        page.wait_for_function("document.getElementById('status').textContent === 'live'")
        page.fill("[data-testid=name]", "Bea")
        page.select_option("[data-testid=seat-1]", "builtin:greedy")
        page.fill("[data-testid=move-time]", "10")
        page.click("[data-testid=create]")
        page.wait_for_url("**/table/*")
        table_url = page.url
        page.wait_for_function("document.getElementById('turn').dataset.yourMove === 'yes'")
        page.goto("about:blank")
        serve.wait_for(r"Bea: the browser left at request \d+; game paused")
        page.wait_for_timeout(11000)  # past the 10 s move time: paused, not lost
        page.goto(table_url)
        page.wait_for_function("document.getElementById('turn').dataset.yourMove === 'yes'")
        serve.wait_for(r"Bea came back after")
        play_to_the_end(page)
        result = page.locator("#result").inner_text()
        assert "(timeout)" not in result and "(disconnect)" not in result, result
    finally:
        serve.close()


def test_a_second_person_joins_a_three_seat_table_with_a_bot(
        tmp_path: Path, browser: Any, browser_page: RecordedPage) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # (the fixture skips without it)

    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", tmp_path / "a.sqlite",
                    "--log-dir", tmp_path / "logs", "--http", "127.0.0.1:0")
    first = browser_page.page
    second = RecordedPage.open(browser)
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        first.goto(lobby)
        first.wait_for_function("document.getElementById('status').textContent === 'live'")
        first.fill("[data-testid=name]", "Cat")
        first.select_option("[data-testid=players]", "3")
        first.select_option("[data-testid=seat-1]", "open")
        first.select_option("[data-testid=seat-2]", "builtin:greedy")
        first.click("[data-testid=create]")
        first.wait_for_url("**/table/*")
        # Another browser: another origin of the same server (its own localStorage).
        second.page.goto(first.url.replace("127.0.0.1", "localhost"))
        second.page.fill("[data-testid=name]", "Dan")
        second.page.click("[data-testid=join]")
        over = "() => document.getElementById('result').textContent.startsWith('game over')"
        for _ in range(1200):
            if first.evaluate(over) and second.page.evaluate(over):
                break
            for page in (first, second.page):
                if page.evaluate("() => document.getElementById('turn').dataset.yourMove === 'yes'"):
                    control = page.locator(CONTROL).first
                    try:  # the move may have gone meanwhile (the view is redrawn): look again
                        control.click(timeout=1000)
                    except PlaywrightTimeout:
                        pass
            first.wait_for_timeout(30)
        assert first.evaluate(over) and second.page.evaluate(over)
        names = first.locator("#others").inner_text()
        assert "Dan" in names and "greedy" in names, names
        second.assert_clean(allowed=(lobby.removesuffix("/play").replace("127.0.0.1", "localhost"),))
    finally:
        second.page.close()
        serve.close()
    (log_path,) = (tmp_path / "logs").glob("table-*.jsonl")
    assert [b["name"] for b in read_log(log_path).header["bots"]] == ["Cat", "Dan", "greedy"]
