"""Browser-test fixtures: a real headless Chromium (Debian's ``/usr/bin/chromium``)
driven by Playwright for Python's sync API.

Playwright's own browser download cannot work here, so the browser is the system's,
launched with ``executable_path``. Where it is missing the browser tests skip with the
reason shown (``-ra``); on CI (``CI=true``) they fail instead, because CI installs it
(``.ci/run``).

Fixtures for tests (plain ``def`` tests: the sync API must not run inside trio):

- ``browser``: one Chromium for the session, with a fresh ``--user-data-dir``;
- ``browser_page``: a ``RecordedPage`` in a fresh browser context: ``.page`` (a
  Playwright ``Page``), ``.console_errors`` (console errors and uncaught exceptions)
  and ``.requests`` (the URL of every request the page made), so a test can assert
  that nothing failed and no request left the file (``assert_no_request_left`` and
  ``assert_clean``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("DURAK_CHROMIUM", "/usr/bin/chromium"))

#: The flags of issue 11: no sandbox (tests run as root), no GPU, and no network of the
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


def _unavailable(reason: str) -> None:
    """Skip visibly; on CI, where the browser is installed by .ci/run, fail instead."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@dataclass
class RecordedPage:
    """A page and everything it did that a test may want to forbid."""

    page: object  # playwright.sync_api.Page (imported lazily: it may be missing)
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def goto_file(self, path: Path) -> None:
        """Open a local file and wait until it has loaded."""
        self.page.goto(path.resolve().as_uri())  # type: ignore[attr-defined]

    def requests_leaving(self, allowed: tuple[str, ...] = ("file://", "data:", "blob:", "about:")) -> list[str]:
        """The requests whose URL starts with none of ``allowed``."""
        return [u for u in self.requests if not u.startswith(allowed)]

    def assert_no_request_left(self, allowed: tuple[str, ...] = ("file://", "data:", "blob:", "about:")) -> None:
        leaving = self.requests_leaving(allowed)
        assert not leaving, f"the page made requests outside {allowed}: {leaving}"

    def assert_clean(self, allowed: tuple[str, ...] = ("file://", "data:", "blob:", "about:")) -> None:
        """No console error, no uncaught exception, no request outside ``allowed``."""
        assert not self.console_errors, f"console errors: {self.console_errors}"
        self.assert_no_request_left(allowed)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        _unavailable(f"browser tests need Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("browser tests need Playwright for Python (pip install -e '.[test]')")
    user_data = tempfile.mkdtemp(prefix="durak-chromium-")
    with sync_playwright() as pw:
        # A persistent context is how Playwright takes a --user-data-dir; each test still
        # gets pages of its own (see browser_page), and the directory is fresh per session.
        context = pw.chromium.launch_persistent_context(
            user_data, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS,
            viewport=LAPTOP)
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(user_data, ignore_errors=True)


@pytest.fixture
def browser_page(browser: object) -> Iterator[RecordedPage]:
    page = browser.new_page()  # type: ignore[attr-defined]
    rec = RecordedPage(page)
    page.on("console", lambda msg: rec.console_errors.append(f"console.{msg.type}: {msg.text}")
            if msg.type == "error" else None)
    page.on("pageerror", lambda exc: rec.console_errors.append(f"uncaught: {exc}"))
    page.on("request", lambda req: rec.requests.append(req.url))
    try:
        yield rec
    finally:
        page.close()
