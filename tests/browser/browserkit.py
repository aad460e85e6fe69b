"""Chromium for tests and scripts: where it is, how it is launched, and a page wrapper
that records what a page did, and how a person's table is played to its end. Used by
tests/browser/ (the fixtures, the play page's tests) and by
docs/screenshots/make_screenshots.py, so both run the browser, and play, the same way.

Playwright's own browser download cannot work here: the browser is Debian's
``/usr/bin/chromium`` (``DURAK_CHROMIUM`` overrides), launched with ``executable_path``.
"""

from __future__ import annotations

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


def play_to_the_end(page: Any, prefer: tuple[str, ...] = ()) -> None:
    """Play the person's seat of the table ``page`` shows to the game's end, clicking at
    each of their moves the first enabled control (in page order: the buttons first), or
    of the first of the ``prefer`` selectors that finds one. AssertionError past 600 clicks."""
    over = "document.getElementById('result').textContent.startsWith('game over')"
    for _ in range(600):
        page.wait_for_function(
            f"() => document.getElementById('turn').dataset.yourMove === 'yes' || {over}",
            timeout=60000)
        if page.evaluate(f"() => {over}"):
            return
        choice = next((c for c in prefer if page.locator(c).count()), CONTROL)
        page.locator(choice).first.click()
        page.wait_for_timeout(30)
    raise AssertionError("the game did not end within 600 clicks")
