"""The `report --html` page in a real headless Chromium: it shows exactly the store's
figures, draws its plots, runs no script, fetches nothing and prints no error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from report_kit import HOSTILE_NAME, hand_made, played_tournament
from support import cli

RecordedPage = Any  # tests/browser/conftest.py's RecordedPage (fixture browser_page)
PHONE = {"width": 390, "height": 844}


def cells(rec: RecordedPage, table: str) -> list[list[str]]:
    return rec.page.eval_on_selector_all(  # type: ignore[attr-defined]
        f"#{table} tr", "rows => rows.map(r => [...r.children].map(c => c.textContent.trim()))")


def test_the_report_page_shows_the_stores_standings_crosstable_and_plots(tmp_path: Path,
                                                                     browser_page: RecordedPage) -> None:
    db, tid = played_tournament(tmp_path, "--games", "3", "--players", "3")
    page = tmp_path / "report.html"
    done = cli("report", "--tournament", tid, "--db", db, "--html", page, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    browser_page.goto_file(page)
    standings = cells(browser_page, "standings")[1:]
    assert [(row[0], row[1], row[2]) for row in standings] == [
        (str(b["rank"]), b["name"], str(b["games"])) for b in data["standings"]]
    assert [row[4] for row in standings] == [f"{b['elo']:+.1f} ± {b['elo_error95']:.1f}"
                                             for b in data["standings"]]
    crosstable = cells(browser_page, "crosstable")
    bots = data["crosstable"]["bots"]
    assert crosstable[0][1:] == bots
    for row in crosstable[1:]:
        a = row[0]
        for b, shown in zip(bots, row[1:], strict=True):
            if a != b:
                c = data["crosstable"]["cells"][a][b]
                assert shown.startswith(f"{c['games']} g, ")
    p = browser_page.page
    assert p.locator("#ratings-plot g.rating").count() == 3  # type: ignore[attr-defined]
    assert p.locator("#history-plot polyline").count() == 3  # type: ignore[attr-defined]
    assert p.evaluate("document.scripts.length") == 1  # the JSON data only  # type: ignore[attr-defined]
    browser_page.assert_clean()
    p.set_viewport_size(PHONE)  # type: ignore[attr-defined]
    assert p.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1  # type: ignore[attr-defined]


def test_a_hostile_bot_name_is_text_in_the_browser_never_markup(tmp_path: Path,
                                                                browser_page: RecordedPage) -> None:
    db = hand_made(tmp_path, [([HOSTILE_NAME, "b"], "b", None), (["b", HOSTILE_NAME], HOSTILE_NAME, "crash")])
    page = tmp_path / "r.html"
    assert cli("report", "--tournament", "t-hand", "--db", db, "--html", page, cwd=tmp_path).returncode == 0
    browser_page.goto_file(page)
    p = browser_page.page
    names = cells(browser_page, "standings")
    assert HOSTILE_NAME in [row[1] for row in names]
    assert p.evaluate("window.pwned === undefined")  # type: ignore[attr-defined]
    assert p.locator("img").count() == 0  # type: ignore[attr-defined]
    browser_page.assert_clean()
