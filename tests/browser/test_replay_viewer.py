"""The HTML replay viewer (``durak-ref replay LOG --html OUT``) in a real headless Chromium.

What a person sees must be what the log says: at every step the cards in each hand and
on the table are exactly the rules engine's, dealt again from the log (tests/replay_logs.py
is the oracle). A seat's view shows no card that seat could not see, in the page or in its
source. The page loads nothing from anywhere, logs no console error, runs no markup from a
bot's name, and answers its keyboard shortcuts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browserkit import PHONE, RecordedPage

from replay_logs import (
    CARD_TOKEN,
    IMG_NAME,
    SCRIPT_NAME,
    hostile_names_log,
    never_seen_by,
    play_match,
    states,
    with_illegal_forfeit,
    with_odd_fields,
)
from support import cli

#: Everything the DOM shows of the game at the current step, read in one call.
READ_DOM = """() => {
  const cards = (root) => root ? [...root.querySelectorAll('[data-card]')].map(c => c.dataset.card) : [];
  const seats = {};
  for (const box of document.querySelectorAll('#table [data-seat]')) {
    seats[box.dataset.seat] = {cards: cards(box.querySelector('.rp-hand')),
                               text: box.querySelector('.dk-count')?.textContent ?? null};
  }
  const table = [...document.querySelectorAll('#table-pairs .dk-pair')].map(p => [
    p.querySelector('.dk-attack').dataset.card,
    p.querySelector('.dk-cover')?.dataset.card ?? null]);
  return {seats, table, decisions: Number(document.querySelector('#step-info').dataset.decisions),
          talon: Number(document.querySelector('#talon-count').textContent),
          discard: Number(document.querySelector('#discard-count').textContent),
          all: cards(document.body), text: document.body.innerText};
}"""


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real logs: a 3-seat classic match; transfers with trump exchanges (declines happen
    there); hostile names with a forfeit whose evidence names the forfeiter's cards."""
    tmp = tmp_path_factory.mktemp("viewer")
    classic = play_match(tmp / "classic", "builtin:greedy", "builtin:random", "builtin:greedy", games=3)
    transfer = play_match(tmp / "transfer", "builtin:random", "builtin:greedy", "builtin:random",
                          "builtin:greedy", games=3,
                          extra=("--rules", "perevodnoy", "--set", "trump_exchange=on"))
    hostile = hostile_names_log(tmp / "hostile")
    forfeit, _card = with_illegal_forfeit(hostile, tmp / "forfeit.jsonl")
    return {"classic": classic, "transfer": transfer, "hostile": hostile, "forfeit": forfeit}


def render(log: Path, out: Path, *args: str) -> Path:
    res = cli("replay", log, "--html", out, *args, cwd=out.parent)
    assert res.returncode == 0, res.stderr
    return out


def open_at(bp: RecordedPage, html: Path, game: int) -> None:
    bp.goto_file(html)
    bp.page.evaluate(f"window.durakReplay.goto({game}, 0)")


def dom(bp: RecordedPage) -> dict[str, Any]:
    return bp.page.evaluate(READ_DOM)


def test_each_step_shows_exactly_the_hands_and_table_of_the_rules_engine(
        browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path) -> None:
    html = render(logs["classic"], tmp_path / "r.html")
    for game_no in (0, 2):
        record, expected = states(logs["classic"], game_no)
        open_at(browser_page, html, game_no)
        for k, state in enumerate(expected):
            if k:
                browser_page.page.keyboard.press("ArrowRight")
            shown = dom(browser_page)
            assert shown["decisions"] == k
            for seat, hand in enumerate(state.hands):
                assert sorted(shown["seats"][str(seat)]["cards"]) == sorted(hand), (game_no, k, seat)
            assert shown["table"] == state.table, (game_no, k)
            assert (shown["talon"], shown["discard"]) == (state.talon, state.discard), (game_no, k)
        assert record["termination"] in shown["text"]
    browser_page.assert_clean()


@pytest.mark.parametrize("which", ["classic", "transfer"])
def test_a_seat_view_shows_no_card_that_seat_could_not_see(
        browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path, which: str) -> None:
    log = logs[which]
    seat = 1
    html = render(log, tmp_path / "seat.html", "--game", "1", "--seat", str(seat))
    record, expected = states(log, 1)
    source = html.read_text()
    # In the file, not even inside its data: no card hidden from the seat all game long.
    leaked = set(CARD_TOKEN.findall(source)) & never_seen_by(expected, seat)
    assert not leaked, f"cards seat {seat} never saw are in the page source: {sorted(leaked)}"
    open_at(browser_page, html, 1)
    steps = browser_page.page.evaluate("window.durakReplay.where().steps")
    seen_decisions = []
    for k in range(steps):
        if k:
            browser_page.page.keyboard.press("ArrowRight")
        shown = dom(browser_page)
        state = expected[shown["decisions"]]
        seen_decisions.append(shown["decisions"])
        hidden = state.hidden[seat]
        assert not set(shown["all"]) & hidden, f"step {k}: the DOM shows hidden {set(shown['all']) & hidden}"
        assert not set(CARD_TOKEN.findall(shown["text"])) & hidden, f"step {k}: hidden card in the text"
        assert sorted(shown["seats"][str(seat)]["cards"]) == sorted(state.hands[seat])
        for other, hand in enumerate(state.hands):
            if other != seat and hand:
                assert shown["seats"][str(other)]["text"] == f"{len(hand)} card{'s' if len(hand) != 1 else ''}"
        assert shown["table"] == state.table
    assert seen_decisions == sorted(seen_decisions) and seen_decisions[-1] == len(record["decisions"])
    # The whole page source as the browser holds it, too.
    assert not set(CARD_TOKEN.findall(browser_page.page.content())) & never_seen_by(expected, seat)
    browser_page.assert_clean()


def test_bot_names_are_text_never_markup(browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path) -> None:
    html = render(logs["hostile"], tmp_path / "h.html")
    browser_page.goto_file(html)
    page = browser_page.page
    title = page.title()
    assert title.startswith("durak-ref replay"), f"a name's script ran: the title is {title!r}"
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 3  # the data and the two viewer scripts
    text = page.inner_text("body")
    assert SCRIPT_NAME in text and IMG_NAME in text  # shown literally
    for k in range(12):
        page.keyboard.press("ArrowRight")
        assert page.title() == title, f"step {k}"
    browser_page.assert_clean()


def test_a_forfeit_shows_its_evidence_only_to_those_who_may_see_it(
        browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path) -> None:
    log = logs["forfeit"]
    record, expected = states(log, 0)
    culprit = record["forfeit"]["seat"]
    other = (culprit + 1) % len(record["players"])
    page = browser_page.page
    omni = render(log, tmp_path / "omni.html", "--game", "0")
    open_at(browser_page, omni, 0)
    page.keyboard.press("End")
    assert "illegal" in page.inner_text("#result")
    assert record["forfeit"]["evidence"]["stderr_tail"] in page.inner_text("#evidence")
    assert page.locator(f'#table [data-seat="{culprit}"] .rp-durak').count() == 1
    seat_view = render(log, tmp_path / "other.html", "--game", "0", "--seat", str(other))
    open_at(browser_page, seat_view, 0)
    page.keyboard.press("End")
    assert "illegal" in page.inner_text("#result")
    assert page.locator("#evidence").count() == 0
    hidden_all_game = never_seen_by(expected, other)
    assert not set(CARD_TOKEN.findall(seat_view.read_text())) & hidden_all_game
    browser_page.assert_clean()


def test_keyboard_and_buttons_step_play_and_switch_games(
        browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path) -> None:
    html = render(logs["classic"], tmp_path / "k.html")
    browser_page.goto_file(html)
    page = browser_page.page
    where = lambda: page.evaluate("window.durakReplay.where()")  # noqa: E731
    assert where()["game"] == 0 and where()["step"] == 0
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert where()["step"] == 2
    page.keyboard.press("ArrowLeft")
    assert where()["step"] == 1
    page.keyboard.press("End")
    assert where()["step"] == where()["steps"] - 1
    page.keyboard.press("Home")
    assert where()["step"] == 0
    # The scrub bar focused: an arrow key steps once, not twice.
    page.focus("#scrub")
    page.keyboard.press("ArrowRight")
    assert where()["step"] == 1
    page.click("#next")
    assert where()["step"] == 2
    page.click("#prev")
    assert where()["step"] == 1
    # Space plays until Space again; it advances on its own meanwhile.
    page.select_option("#speed", "60")
    page.keyboard.press("Space")
    assert where()["playing"]
    page.wait_for_function("() => window.durakReplay.where().step >= 4")
    page.keyboard.press("Space")
    assert not where()["playing"]
    paused_at = where()["step"]
    page.keyboard.press("ArrowRight")
    assert where()["step"] == min(paused_at + 1, where()["steps"] - 1)
    # Next game with PageDown, and by the list.
    page.keyboard.press("PageDown")
    assert where()["game"] == 1 and where()["step"] == 0
    page.click('#games button[data-game="2"]')
    assert where()["game"] == 2
    assert "Game 2" in page.inner_text("#game-title")
    # The scrub bar jumps.
    page.fill("#scrub", "5")
    assert where()["step"] == 5
    browser_page.assert_clean()


def test_a_link_opens_a_game_at_a_step(browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path) -> None:
    html = render(logs["classic"], tmp_path / "l.html")
    browser_page.page.goto(html.resolve().as_uri() + "#game=1&step=7")
    assert browser_page.page.evaluate("window.durakReplay.where()") == {
        "game": 1, "step": 7, "steps": len(states(logs["classic"], 1)[1]), "playing": False}
    browser_page.assert_clean()


def test_the_match_summary_and_game_list_are_on_the_page(
        browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path) -> None:
    html = render(logs["classic"], tmp_path / "s.html")
    browser_page.goto_file(html)
    page = browser_page.page
    summary = page.inner_text("#summary")
    assert "greedy" in summary and "random" in summary and "classic" in summary
    items = page.locator("#games button").all_inner_texts()
    assert [t.split("\n")[0] for t in items] == ["Game 0", "Game 1", "Game 2"]
    browser_page.assert_clean()


@pytest.mark.parametrize("which", ["transfer", "hostile"])  # 4 seats; long names without spaces
def test_a_phone_sees_the_whole_table_without_scrolling_sideways(
        browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path, which: str) -> None:
    html = render(logs[which], tmp_path / "p.html")
    page = browser_page.page
    page.set_viewport_size(PHONE)
    browser_page.goto_file(html)
    for step in (0, 10, 30):
        page.evaluate(f"window.durakReplay.goto(0, {step})")
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"step {step}: the page is {width[0]}px wide on a {width[1]}px phone"
    browser_page.assert_clean()


def test_odd_field_types_in_a_log_do_not_break_the_page(
        browser_page: RecordedPage, logs: dict[str, Path], tmp_path: Path) -> None:
    odd = with_odd_fields(logs["classic"], tmp_path / "odd.jsonl")
    html = render(odd, tmp_path / "odd.html")
    browser_page.goto_file(html)
    page = browser_page.page
    page.keyboard.press("End")
    assert "normal" in page.inner_text("#result")
    assert page.locator("#summary tr").count() == 4  # the header row and three bots
    browser_page.assert_clean()
