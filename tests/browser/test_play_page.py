"""A person plays in the browser (``durak-ref serve --http``'s lobby at /play) in a real
headless Chromium: creates a table against builtin:greedy and plays the whole game by
clicking only enabled controls, at laptop and phone size. Every seat message Chromium
received names no card hidden from the person's seat; the game's log verifies, and the
person is rated under their display name."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from browserkit import (
    CONTROL,
    LAPTOP,
    LIVE,
    PHONE,
    RecordedPage,
    click_a_move,
    create_table,
    join_from_another_browser,
    play_to_the_end,
)

from livekit import CARD, Running, check_live_stream, expected_views, hidden_to_seat_at_end
from referee.records.matchlog import read_log
from referee.rules.options import rules_from_dict
from referee.table.match import MatchConfig
from support import cli

WIDTH = "() => [document.documentElement.scrollWidth, window.innerWidth]"
NAME = "<svg onload=alert(1)>Ann"  #: 24 characters, the most a display name has
TCP_BOT = Path(__file__).parent / "bots" / "slow_tcp_bot.py"


def serve_lobby(tmp_path: Path, *options: str) -> Running:
    """`durak-ref serve` with its lobby on a free port, its store and logs in ``tmp_path``."""
    return Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", tmp_path / "a.sqlite",
                   "--log-dir", tmp_path / "logs", "--http", "127.0.0.1:0", *options)


@contextmanager
def two_people_at_a_table(tmp_path: Path, browser: Any, first: Any, creator: str, joiner: str,
                          seats: dict[int, str], **table: Any) -> Iterator[tuple[RecordedPage, str]]:
    """A lobby server (``serve_lobby``), a table ``creator`` creates on page ``first``
    (``create_table``'s ``seats`` and options) and ``joiner`` joins from a second browser;
    yields that browser's page and the lobby's address, and closes both afterwards."""
    serve = serve_lobby(tmp_path)
    second = RecordedPage.open(browser)
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        create_table(first, lobby, creator, seats, **table)
        join_from_another_browser(second.page, first.url, joiner)
        yield second, lobby
    finally:
        second.page.close()
        serve.close()


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
        create_table(page, lobby, NAME, {1: "builtin:greedy"})
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
    # Rated under the display name in the lobby's run, not on the arena's ladder.
    lobby = cli("report", "--tournament", "lobby", "--db", db, "--json", cwd=tmp_path)
    assert lobby.returncode == 0, lobby.stderr
    assert NAME in [row["name"] for row in json.loads(lobby.stdout)["standings"]], lobby.stdout
    ladder = cli("ladder", "show", "--db", db, "--json", cwd=tmp_path)
    assert NAME not in json.dumps(json.loads(ladder.stdout)), ladder.stdout


def test_a_reload_mid_game_returns_to_the_same_seat_with_the_clock_paused(
        tmp_path: Path, browser_page: RecordedPage) -> None:
    # 10 s per move (room for a busy machine's clicks); the page is away 11 s at the
    # person's move, then reloaded: the
    # seat token in the browser brings it back to the same seat, the move still open.
    serve = serve_lobby(tmp_path, "--person-grace", "30")
    page = browser_page.page
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        create_table(page, lobby, "Bea", {1: "builtin:greedy"}, move_time="10")
        table_url = page.url
        page.wait_for_function("() => document.getElementById('turn').dataset.yourMove === 'yes'")
        page.goto("about:blank")
        serve.wait_for(r"Bea: the browser left at request \d+; game paused")
        page.wait_for_timeout(11000)  # past the 10 s move time: paused, not lost
        page.goto(table_url)
        page.wait_for_function("() => document.getElementById('turn').dataset.yourMove === 'yes'")
        serve.wait_for(r"Bea came back after")
        play_to_the_end(page)
        result = page.locator("#result").inner_text()
        assert "(timeout)" not in result and "(disconnect)" not in result, result
    finally:
        serve.close()


def test_a_second_person_joins_a_three_seat_table_with_a_bot(
        tmp_path: Path, browser: Any, browser_page: RecordedPage) -> None:
    first = browser_page.page
    with two_people_at_a_table(tmp_path, browser, first, "Cat", "Dan", {1: "open", 2: "builtin:greedy"},
                               players=3) as (second, lobby):
        answered: dict[int, int | None] = {}
        for _ in range(2400):
            done = [click_a_move(page, answered) for page in (first, second.page)]
            if all(done):
                break
            first.wait_for_timeout(30)
        assert all(done)
        names = first.locator("#others").inner_text()
        assert "Dan" in names and "greedy" in names, names
        second.assert_clean(allowed=(lobby.removesuffix("/play").replace("127.0.0.1", "localhost"),))
    (log_path,) = (tmp_path / "logs").glob("table-*.jsonl")
    assert [b["name"] for b in read_log(log_path).header["bots"]] == ["Cat", "Dan", "greedy"]


def test_each_person_sees_the_others_clock_run_on_their_move(
        tmp_path: Path, browser: Any, browser_page: RecordedPage) -> None:
    # Two people at a 300+5 table: whoever is not on move sees the mover's clock beside
    # the mover's name, marked on move and ticking down from 5:00; their own stands.
    first = browser_page.page
    with two_people_at_a_table(tmp_path, browser, first, "Eve", "Fay", {1: "open"}, clock="300+5") as (second, _):
        mine = "() => document.getElementById('turn')?.dataset.yourMove === 'yes'"
        seats = {0: first, 1: second.page}
        first.wait_for_function(f"() => ({mine})() || document.querySelector('[data-testid=clock-1].on-move')")
        mover = 0 if first.evaluate(mine) else 1
        watcher = seats[1 - mover]
        clock = watcher.locator(f"[data-testid=clock-{mover}]")
        watcher.wait_for_function(
            f"() => !!document.querySelector('[data-testid=clock-{mover}]')?.classList.contains('on-move')")
        shown = clock.inner_text()
        assert re.match(r"[45]:\d\d", shown), shown  # minutes:seconds of a 5-minute clock
        watcher.wait_for_function(  # it ticks (the page counts down from what it was sent)
            f"() => (document.querySelector('[data-testid=clock-{mover}]')?.textContent ?? {json.dumps(shown)}) !== {json.dumps(shown)}",
            timeout=15000)
        assert "your clock: 5:00" in watcher.locator("#clock").inner_text()
        seats[mover].locator(CONTROL).first.click()
        watcher.wait_for_function(  # the move is made: the mover's clock stops, 5 s up
            f"() => !document.querySelector('[data-testid=clock-{mover}]').classList.contains('on-move')")
        after = clock.inner_text()
        assert re.match(r"[45]:\d\d", after), after


def test_a_person_plays_a_registered_tcp_bot_at_a_lobby_table(
        tmp_path: Path, browser_page: RecordedPage) -> None:
    # A bot registered with the arena, whose owner allows lobby play, and connected over
    # TCP is offered as a seat; the table plays it through the same loop as an arena
    # game, within the arena's time per move (10 s by default), to the end, and the bot
    # is free again afterwards (offered for the next table).
    db = tmp_path / "arena.sqlite"
    registered = cli("register", "tina", "--lobby", "on", "--db", db, "--json", cwd=tmp_path)
    assert registered.returncode == 0, registered.stderr
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", db, "--log-dir",
                    tmp_path / "logs", "--http", "127.0.0.1:0")
    page = browser_page.page
    bot = None
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        port = serve.wait_for(r"arena listening on 127\.0\.0\.1:(\d+)")[1]
        bot = subprocess.Popen(
            [sys.executable, str(TCP_BOT), "0.01", "--connect", f"127.0.0.1:{port}",
             "--token", json.loads(registered.stdout)["token"], "--name", "tina"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        offered = "() => [...document.querySelectorAll('[data-testid=seat-1] option')].some(o => o.value === 'tcp:tina')"
        create_table(page, lobby, "Pat", {1: "tcp:tina"}, clock="300+2", move_time="10", ready=offered)
        assert "tina" in page.locator("[data-testid=seat-1]").inner_text()
        play_to_the_end(page)
        result = page.locator("#result").inner_text()
        assert all(f"({kind})" not in result for kind in ("timeout", "crash", "protocol",
                                                          "illegal", "disconnect")), result
        page.wait_for_selector("[data-testid=replay]")
        assert page.locator("[data-testid=clock-1]").inner_text().count(":") == 1  # its clock
        page.goto(lobby)
        page.wait_for_function(offered, timeout=30000)  # free again
        browser_page.assert_clean(allowed=(lobby.removesuffix("/play"),))
    finally:
        if bot is not None:
            bot.terminate()
            bot.wait(timeout=30)
        serve.close()
    (log_path,) = (tmp_path / "logs").glob("table-*.jsonl")
    log = read_log(log_path)
    assert [b["name"] for b in log.header["bots"]] == ["Pat", "tina"]
    verify = cli("replay", log_path, "--verify", cwd=tmp_path)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_person_thinking_past_the_servers_keep_alive_timeout_keeps_the_stream(
        tmp_path: Path, browser_page: RecordedPage) -> None:
    # hypercorn closes a connection idle between requests after IDLE_TIMEOUT_S; the seat's
    # stream is one response in flight, so it stays open while the person thinks longer
    # (its heartbeat and the lobby's other limits: tests/web/test_idle_limits.py, on the
    # virtual clock), and their next move's post opens a new connection if it must.
    from referee.web.live import IDLE_TIMEOUT_S

    serve = serve_lobby(tmp_path)
    page = browser_page.page
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        create_table(page, lobby, "Gil", {1: "builtin:greedy"})
        page.wait_for_function(LIVE)
        page.evaluate("""() => { window.statuses = [];
            new MutationObserver(() => window.statuses.push(document.getElementById('status').textContent))
              .observe(document.getElementById('status'), {childList: true, characterData: true, subtree: true}); }""")
        request = "() => view.table && view.table.request && view.table.request.id"
        # (The game may start before the table page has opened its stream: that first
        # wait for the page is a pause of its own, not one of these.)
        page.wait_for_function("() => document.getElementById('turn').dataset.yourMove === 'yes'")
        gone_before = [line for line in serve.lines if "browser left" in line]
        for _ in range(2):
            page.wait_for_function("() => document.getElementById('turn').dataset.yourMove === 'yes'")
            asked = page.evaluate(request)
            page.wait_for_timeout(int(1000 * (IDLE_TIMEOUT_S + 1.5)))
            page.locator(CONTROL).first.click()
            page.wait_for_function(f"() => ({request})() !== {asked}")  # the move was taken
        assert page.evaluate("window.statuses") == [], "the seat's stream dropped"
        play_to_the_end(page)
        assert [line for line in serve.lines if "browser left" in line] == gone_before, serve.lines
        result = page.locator("#result").inner_text()
        assert "(timeout)" not in result and "(disconnect)" not in result, result
    finally:
        serve.close()


def record_streams(page: Any) -> list[tuple[str, Any]]:
    """Every Server-Sent Events message ``page`` receives from now on, as Chromium itself
    reports it: (event, JSON data)."""
    received: list[tuple[str, Any]] = []
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on("Network.eventSourceMessageReceived",
           lambda e: received.append((e["eventName"], json.loads(e["data"]))))
    return received


def test_the_lobby_and_the_live_page_watching_a_table_in_play_receive_no_hidden_card(
        tmp_path: Path, browser: Any, browser_page: RecordedPage) -> None:
    # While a person plays greedy, one page watches the lobby and one the live page.
    # Every lobby message names no card at all (names, rules, results); every live page
    # view is a spectator's view of its moment, naming no card hidden then.
    serve = serve_lobby(tmp_path)
    page = browser_page.page
    lobby_page, live_page = RecordedPage.open(browser), RecordedPage.open(browser)
    try:
        live = serve.wait_for(r"^live page: (http://127\.0\.0\.1:\d+/)$")[1]
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        in_lobby, on_live = record_streams(lobby_page.page), record_streams(live_page.page)
        lobby_page.page.goto(lobby)
        live_page.page.goto(live)
        for watcher in (lobby_page.page, live_page.page):
            watcher.wait_for_function(LIVE)
        create_table(page, lobby, "Hal", {1: "builtin:greedy"})
        play_to_the_end(page)
        page.wait_for_selector("[data-testid=replay]")
        lobby_page.page.wait_for_selector("[data-testid=table-1][data-state=over]")
        live_page.page.wait_for_function("() => document.querySelectorAll('#recent li').length === 1")
        for watcher in (lobby_page, live_page):
            watcher.assert_clean(allowed=(live.rstrip("/"),))
    finally:
        lobby_page.page.close()
        live_page.page.close()
        serve.close()
    (log_path,) = (tmp_path / "logs").glob("table-*.jsonl")
    log = read_log(log_path)
    (record,) = log.games
    states = [t["state"] for name, data in in_lobby for t in data["tables"]]
    assert "playing" in states and "over" in states, states  # it watched the game in play
    for name, data in in_lobby:
        assert name == "lobby" and not CARD.findall(json.dumps(data)), (name, data)
    config = MatchConfig(rules=rules_from_dict(log.header["rules"], log.header["preset"]))
    assert check_live_stream(on_live, {record["game"]: expected_views(record, config)}) >= 10


def test_a_table_the_server_forgot_says_it_is_gone_and_leads_to_the_lobby(
        tmp_path: Path, browser_page: RecordedPage) -> None:
    # The server stops with a person at an open table and starts again on the same port:
    # it knows no such seat now. The page stops "reconnecting…", says the table is gone,
    # links to the lobby, and forgets the seat token.
    args = ("serve", "--listen", "127.0.0.1:0", "--db", tmp_path / "a.sqlite", "--log-dir",
            tmp_path / "logs")
    serve = Running(tmp_path, *args, "--http", "127.0.0.1:0")
    page = browser_page.page
    again = None
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:(\d+)/play)$")
        create_table(page, lobby[1], "Ida", {1: "open"})
        page.wait_for_function(LIVE)
        serve.process.send_signal(signal.SIGINT)  # an open table: nothing in play to wait for
        assert serve.process.wait(timeout=60) == 0, serve.lines
        again = Running(tmp_path, *args, "--http", f"127.0.0.1:{lobby[2]}")
        again.wait_for(r"^lobby: ")
        page.wait_for_selector("[data-testid=gone]", timeout=30000)
        assert page.locator("#status").inner_text() == "table gone"
        assert page.get_attribute("[data-testid=gone]", "href") == "/play"
        assert page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('durak-seat-'))") == []
        page.click("[data-testid=gone]")
        page.wait_for_url("**/play")
    finally:
        serve.close()
        if again is not None:
            again.close()


#: The fullest table the table page can show, drawn over the page's own view: four seats
#: of 24-character names, the person holding 40 cards of a 52-card deck, every other
#: seat's cards known, six covered attacks, a long hint, notice and events, and a cover
#: of slot 5 offered for every card in hand.
WORST_TABLE = """() => {
  const deck = [];
  for (const s of "CDHS") for (const r of "23456789TJQKA") deck.push(r + s);
  const names = [0, 1, 2, 3].map((i) => "a_person_named_at_length" .slice(0, 23) + i);
  const hand = deck.slice(12, 52);
  const legal = [{type: "take"}, ...hand.map((card) => ({type: "cover", slot: 5, card}))];
  const line = names[1] + " throws in the ace of spades and says a great many words";
  view = {name: names[0], replay: null, notice: null,
    clocks: names.map((_, i) => ({remaining_ms: 3599000, move_ms: i === 0 ? 3599000 : null,
                                  running: i === 0, paused: false})),
    table: {game: 1, names, seat: 0, trump: "2H", trump_holder: null, talon: 0, discard: 0,
      hand_sizes: [40, 30, 30, 30], known: [[], deck.slice(0, 30), deck.slice(0, 30), deck.slice(0, 30)],
      out: [false, false, false, false], attacker: 1, defender: 0, taking: false, bout: 99,
      table: deck.slice(0, 6).map((c, i) => [c, deck[6 + i]]), end: null, notice: line,
      last: Array(8).fill(line), hand,
      request: {id: 9, legal, clock: {remaining_ms: 3599000, increment_ms: 5000, move_ms: 3599000},
                phase: "defend", used_ms: 0, hint: {bot: "ismcts", text: "cover 7D with 8D", why: line}}}};
  shownAt = Date.now();
  render();
}"""


def test_the_fullest_table_fits_a_phone_with_its_controls_on_the_first_screen(
        tmp_path: Path, browser_page: RecordedPage) -> None:
    # Whatever moment a game is in, the table page at 390x844 never scrolls sideways and
    # shows the move's buttons and the hand's first cards without scrolling: drawn here
    # at its fullest, not sampled from a game.
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", tmp_path / "a.sqlite",
                    "--http", "127.0.0.1:0")
    page = browser_page.page
    page.set_viewport_size(PHONE)
    try:
        lobby = serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+/play)$")[1]
        create_table(page, lobby, "Jo", {1: "open"})  # nothing plays: the view is ours
        page.wait_for_function(LIVE)
        page.evaluate(WORST_TABLE)
        page.screenshot(path=str(tmp_path / "table-phone-worst.png"), full_page=True)
        width = page.evaluate(WIDTH)
        assert width[0] <= width[1], f"the fullest table is {width[0]}px wide on a {width[1]}px phone"
        assert page.locator("#hand .playable").count() == 40
        for control in ("[data-testid=action-take]", "#hand .playable"):
            box = page.locator(control).first.bounding_box()
            assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= PHONE["width"], (control, box)
            assert 0 <= box["y"] and box["y"] + box["height"] <= PHONE["height"], (control, box)
        assert page.locator("[data-testid=action-take]").is_enabled()
    finally:
        serve.close()
