"""Chromium for tests and scripts: where it is, how it is launched, and a page wrapper
that records what a page did, and how a person's table is played to its end. Used by
tests/browser/ (the fixtures, the play page's tests) and by
docs/screenshots/make_screenshots.py, so both run the browser, and play, the same way.

Playwright's own browser download cannot work here: the browser is Debian's
``/usr/bin/chromium`` (``DURAK_CHROMIUM`` overrides), launched with ``executable_path``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path(os.environ.get("DURAK_CHROMIUM", "/usr/bin/chromium"))

#: The browser flags: no sandbox (tests run as root), no GPU, and no network of the
#: browser's own (updates, sync, field trials) that could be mistaken for the page's.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: Sizes for layout tests and screenshots.
LAPTOP = {"width": 1366, "height": 800}
PHONE = {"width": 390, "height": 844}

#: One enabled control of the person's move on the table page (/table/N): a playable
#: card, a cover target, a button.
CONTROL = "#hand .playable, #pairs .target, #actions button:not([disabled])"

#: URL prefixes of requests that stay in the file (the page itself, inline data).
LOCAL = ("file://", "data:", "blob:", "about:")


def launch(playwright: Any, user_data_dir: Path) -> Any:
    """Start Chromium with CHROMIUM_FLAGS and a fresh profile in ``user_data_dir``;
    returns its (persistent) browser context. A persistent context is how Playwright
    takes a --user-data-dir."""
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS,
        viewport=LAPTOP)


@dataclass
class RecordedPage:
    """A page and everything it did that a test may want to forbid: ``console_errors``
    (console errors and uncaught exceptions) and ``requests`` (every request's URL)."""

    page: Any  # playwright.sync_api.Page
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, context: Any) -> RecordedPage:
        """A new page of ``context``, recorded from its first request."""
        page = context.new_page()
        rec = cls(page)
        page.on("console", lambda msg: rec.console_errors.append(f"console.{msg.type}: {msg.text}")
                if msg.type == "error" else None)
        page.on("pageerror", lambda exc: rec.console_errors.append(f"uncaught: {exc}"))
        page.on("request", lambda req: rec.requests.append(req.url))
        return rec

    def goto_file(self, path: Path) -> None:
        """Open a local file and wait until it has loaded."""
        self.page.goto(path.resolve().as_uri())

    def requests_leaving(self, allowed: tuple[str, ...] = LOCAL) -> list[str]:
        """The requests whose URL starts with none of ``allowed``."""
        return [u for u in self.requests if not u.startswith(allowed)]

    def assert_no_request_left(self, allowed: tuple[str, ...] = LOCAL) -> None:
        leaving = self.requests_leaving(allowed)
        assert not leaving, f"the page made requests outside {allowed}: {leaving}"

    def assert_clean(self, allowed: tuple[str, ...] = LOCAL) -> None:
        """No console error, no uncaught exception, no request outside ``allowed`` (a
        served page passes its own origin)."""
        assert not self.console_errors, f"console errors: {self.console_errors}"
        self.assert_no_request_left(allowed)


#: The table page's move state: the game is over; the open request's id (None: not the
#: person's move); a card is chosen and waits for the attack it covers.
MOVE_STATE = """() => ({
  over: document.getElementById('result').textContent.startsWith('game over'),
  asked: typeof view !== 'undefined' && view && view.table && view.table.request ? view.table.request.id : null,
  choosing: document.querySelector('#pairs .target') !== null})"""


def wants_a_click(state: dict[str, Any], last: int | None) -> bool:
    """Whether a move state asks for a click: a request not yet answered (a page that has
    not yet drawn the next view still shows the answered one), or a chosen card."""
    return state["asked"] is not None and (state["asked"] != last or state["choosing"])


def play_to_the_end(page: Any, prefer: tuple[str, ...] = ()) -> None:
    """Play the person's seat of the table ``page`` shows to the game's end, clicking at
    each of their moves the first enabled control (in page order), or of the first of
    the ``prefer`` selectors that finds one. AssertionError past 600 clicks."""
    last = None
    for _ in range(600):
        page.wait_for_function(
            f"() => {{ const s = ({MOVE_STATE})(); return s.over || (s.asked !== null && "
            f"(s.asked !== {json.dumps(last)} || s.choosing)); }}", timeout=60000)
        state = page.evaluate(MOVE_STATE)
        if state["over"]:
            return
        choice = next((c for c in prefer if page.locator(c).count()), CONTROL)
        page.locator(choice).first.click()
        last = state["asked"]
    raise AssertionError("the game did not end within 600 clicks")


def click_a_move(page: Any, answered: dict[int, int | None]) -> bool:
    """One look at a person's table ``page`` among several: click its first enabled
    control if it waits for one (``answered``: the last request clicked, by page).
    Returns whether its game is over."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    state = page.evaluate(MOVE_STATE)
    if state["over"]:
        return True
    if wants_a_click(state, answered.get(id(page))):
        try:  # the view may be redrawn meanwhile: then look again
            page.locator(CONTROL).first.click(timeout=5000)
            answered[id(page)] = state["asked"]
        except PlaywrightTimeout:
            pass
    return False


#: True once a page's event stream is open (the lobby's and the table page's status).
LIVE = "() => document.getElementById('status').textContent === 'live'"


def create_table(page: Any, lobby: str, name: str, seats: dict[int, str], *, players: int | None = None,
                 clock: str | None = None, move_time: str | None = None, ready: str | None = None) -> None:
    """As a person would: open the ``lobby``, wait for its stream (and for the ``ready``
    predicate), sit as ``name`` at a new table of ``players`` (the form's default when
    None) whose other seats are ``seats`` (seat -> a bot such as builtin:greedy, or
    open), with the form's ``clock`` (e.g. 300+5) or ``move_time`` (seconds), and wait
    until the browser is on the table's page."""
    page.goto(lobby)
    page.wait_for_function(LIVE)
    if ready is not None:
        page.wait_for_function(ready, timeout=30000)
    page.fill("[data-testid=name]", name)
    if players is not None:
        page.select_option("[data-testid=players]", str(players))
    for seat, who in seats.items():
        page.select_option(f"[data-testid=seat-{seat}]", who)
    if clock is not None:
        page.fill("[data-testid=clock]", clock)
    if move_time is not None:
        page.fill("[data-testid=move-time]", move_time)
    page.click("[data-testid=create]")
    page.wait_for_url("**/table/*")


def join_from_another_browser(page: Any, table_url: str, name: str) -> None:
    """Join the table at ``table_url`` as ``name`` from another origin of the same server
    (localhost for 127.0.0.1: its own localStorage, so another person's tokens)."""
    page.goto(table_url.replace("127.0.0.1", "localhost"))
    page.fill("[data-testid=name]", name)
    page.click("[data-testid=join]")
