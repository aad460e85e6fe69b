"""Every page at a phone's size (390x844) in a real headless Chromium: the replay's
controls and the viewing seat's hand are on the first screen, the live page never
scrolls sideways, the report's tables fit and its chart labels are readable; the replay
follows its address (a changed hash, Back), lists a tournament's games by number and
fills its summary from the tournament log's records."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browserkit import PHONE, RecordedPage

from replay_logs import play_match
from report_kit import played_tournament
from support import DURAK_REF, cli

SLOW_BOT = Path(__file__).parents[1] / "web" / "bots" / "slow_bot.py"  # thinks DELAY s per decision
#: The layout facts a test checks, read in one call.
RECT = "(sel) => { const e = document.querySelector(sel); if (!e) return null; const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }"
WIDTH = "() => [document.documentElement.scrollWidth, window.innerWidth]"
#: Draws the widest table the live page can show, beside the games in play.
WORST_TABLE = """() => {
  const deck = [];
  for (const s of "CDHS") for (const r of "6789TJQKA") deck.push(r + s);
  const names = [0, 1, 2, 3, 4, 5].map((i) => "a_bot_with_a_very_long_name_number_" + i);
  state.tables.set(99999, {game: 99999, bout: 99, names, out: [false, false, false, false, false, false],
    attacker: 0, defender: 1, taking: false, hand_sizes: [36, 36, 36, 36, 36, 36],
    known: [deck, [], deck.slice(0, 20), [], [], []], trump: "6H", talon: 0, discard: 0,
    table: deck.slice(0, 6).map((c, i) => [c, deck[30 + i]]), end: null,
    last: ["a_bot_with_a_very_long_name_number_0 attacks with the ace of spades and more words"]});
  renderTables();
}"""


def on_phone(bp: RecordedPage, url: str) -> None:
    bp.page.set_viewport_size(PHONE)
    bp.page.goto(url)


@pytest.fixture(scope="module")
def classic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play_match(tmp_path_factory.mktemp("phone"), "builtin:greedy", "builtin:random", "builtin:greedy",
                      games=3, seed="phone")


def render(log: Path, out: Path, *args: str) -> Path:
    done = cli("replay", log, "--html", out, *args, cwd=out.parent)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("view", [(), ("--seat", "0")], ids=["omniscient", "seat-0"])
def test_the_replay_shows_its_controls_and_the_own_hand_on_the_first_screen(
        browser_page: RecordedPage, classic: Path, tmp_path: Path, view: tuple[str, ...]) -> None:
    html = render(classic, tmp_path / "r.html", *view)
    on_phone(browser_page, html.resolve().as_uri())
    page = browser_page.page
    page.screenshot(path=str(tmp_path / "replay-phone.png"))
    first = page.evaluate(RECT, ".rp-controls button")
    assert 0 <= first["top"] and first["bottom"] <= PHONE["height"], first
    for step in (0, 5, 12):
        page.evaluate(f"window.durakReplay.goto(0, {step})")
        hand = page.evaluate(RECT, ".rp-bottom .rp-hand")
        assert hand["bottom"] <= PHONE["height"] and hand["right"] <= PHONE["width"], (step, hand)
    browser_page.assert_clean()


def test_the_replay_follows_a_changed_hash_and_back(browser_page: RecordedPage, classic: Path,
                                                    tmp_path: Path) -> None:
    html = render(classic, tmp_path / "h.html")
    on_phone(browser_page, html.resolve().as_uri() + "#game=1&step=7")
    page = browser_page.page

    def where() -> tuple[int, int]:
        w = page.evaluate("window.durakReplay.where()")
        return w["game"], w["step"]
    assert where() == (1, 7)
    page.evaluate("location.hash = '#game=2&step=3'")  # a link followed on the open page
    page.wait_for_timeout(50)  # hashchange is dispatched as a task after the change
    assert where() == (2, 3)
    page.go_back()
    assert where() == (1, 7)
    page.go_forward()
    assert where() == (2, 3)
    browser_page.assert_clean()


@pytest.fixture(scope="module")
def tournament_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """A real tournament's log with its games written in reverse order (games played at
    once are logged as they finish, in any order), and its game records."""
    tmp = tmp_path_factory.mktemp("tournament")
    played_tournament(tmp, "--games", "2")
    (log,) = (tmp / "logs").glob("tournament-*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    games = [r for r in records if r["type"] == "game"]
    shuffled = tmp / "shuffled.jsonl"
    shuffled.write_text("".join(json.dumps(r) + "\n" for r in [records[0], *games[::-1], records[-1]]))
    return shuffled, games


def test_a_tournament_log_lists_its_games_by_number(
        browser_page: RecordedPage, tournament_log: tuple[Path, list[dict]], tmp_path: Path) -> None:
    log, games = tournament_log
    on_phone(browser_page, render(log, tmp_path / "t.html").resolve().as_uri())
    listed = [t.split("\n")[0] for t in browser_page.page.locator("#games button").all_inner_texts()]
    assert listed == [f"Game {n}" for n in sorted(g["game"] for g in games)]
    browser_page.assert_clean()


def test_a_tournament_logs_summary_is_counted_from_its_game_records(
        browser_page: RecordedPage, tournament_log: tuple[Path, list[dict]], tmp_path: Path) -> None:
    log, games = tournament_log
    on_phone(browser_page, render(log, tmp_path / "t.html").resolve().as_uri())
    rows = browser_page.page.eval_on_selector_all(
        "#summary table tr", "rows => rows.map(r => [...r.children].map(c => c.textContent.trim()))")[1:]
    expected: dict[str, list[int]] = {}
    for g in games:
        for name in g["players"]:
            expected.setdefault(name, [0, 0])[0] += 1
        if g["durak"] is not None:
            expected[g["players"][g["durak"]]][1] += 1
    shown = {re.split(r"\s", row[0])[0]: row for row in rows}
    assert set(shown) == set(expected), rows
    for name, (played, durak) in expected.items():
        assert shown[name][1] == str(played) and shown[name][2].startswith(str(durak)), (name, shown[name])
    assert all(cell != "-" for row in rows for cell in row[1:4]), rows
    browser_page.assert_clean()


def test_the_live_page_never_scrolls_sideways(browser_page: RecordedPage, tmp_path: Path) -> None:
    slow = f"{sys.executable} {SLOW_BOT} 0.01"
    run = subprocess.Popen(
        [str(DURAK_REF), "tournament", "--bot", "a_bot_with_a_long_name=builtin:greedy", "--bot", f"slow={slow}",
         "--bot", "greedy=builtin:greedy", "--games", "40", "--seed", "live-phone", "--sandbox", "none",
         "--db", str(tmp_path / "t.sqlite"), "--log-dir", str(tmp_path / "logs"), "--http", "127.0.0.1:0"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert run.stderr is not None
        url = next(m[1] for line in run.stderr if (m := re.search(r"live page: (http://\S+)", line)))
        on_phone(browser_page, url)
        page = browser_page.page
        deadline = time.monotonic() + 60
        while not page.evaluate("() => document.querySelectorAll('#standings tbody tr').length > 0 && "
                                "document.querySelectorAll('#tables .game').length > 0"):
            assert time.monotonic() < deadline, "no table in play and no standings within 60 s"
            page.wait_for_timeout(100)
        page.screenshot(path=str(tmp_path / "live-phone.png"))
        width = page.evaluate(WIDTH)
        assert width[0] <= width[1], f"the live page is {width[0]}px wide on a {width[1]}px phone"
        # The widest table a game can show, whichever moment the games above were caught
        # at: six long names, a seat holding every card face up (all taken, so all known)
        # and six attacks covered.
        page.evaluate(WORST_TABLE)
        page.screenshot(path=str(tmp_path / "live-phone-worst.png"))
        width = page.evaluate(WIDTH)
        assert width[0] <= width[1], f"the widest table is {width[0]}px wide on a {width[1]}px phone"
    finally:
        run.kill()
        run.wait()
        assert run.stderr is not None
        run.stderr.close()


def test_the_report_tables_fit_and_its_chart_labels_are_readable(browser_page: RecordedPage,
                                                                 tmp_path: Path) -> None:
    db, tid = played_tournament(tmp_path, "--games", "2")
    html = tmp_path / "report.html"
    done = cli("report", "--tournament", tid, "--db", db, "--html", html, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    on_phone(browser_page, html.resolve().as_uri())
    page = browser_page.page
    page.screenshot(path=str(tmp_path / "report-phone.png"), full_page=True)
    assert page.evaluate(WIDTH)[0] <= PHONE["width"]
    for table in ("standings", "crosstable"):
        box = page.evaluate(RECT, f"#{table}")
        assert box["right"] <= PHONE["width"], (table, box)  # reflowed, not cut at the edge
    heights = page.evaluate("() => [...document.querySelectorAll('svg text')].map("
                            "t => t.getBoundingClientRect().height)")
    assert heights and min(heights) >= 10, f"chart labels render {min(heights):.1f}px high"
    boxes = page.evaluate("() => [...document.querySelectorAll('svg')].map(s => getComputedStyle("
                          "s.parentElement).overflowX)")
    assert set(boxes) == {"auto"}  # a chart wider than the phone scrolls in its own box
    browser_page.assert_clean()
