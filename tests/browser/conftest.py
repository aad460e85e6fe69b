"""Browser-test fixtures: a real headless Chromium (Debian's ``/usr/bin/chromium``)
driven by Playwright for Python's sync API (see browserkit.py for how it is launched).

Where Chromium or Playwright is missing the browser tests skip with the reason shown
(``-ra``); on CI (``CI=true``) they fail instead, because CI installs both (``.ci/run``).

Fixtures (for plain ``def`` tests: Playwright's sync API must not run inside trio):

- ``browser``: one Chromium per test module, with a fresh ``--user-data-dir``, as a
  Playwright browser context. Per module, not per session: the browser and Playwright's
  driver are child processes of pytest, and later tests (of other folders) that look for
  leftover processes must not find them;
- ``browser_page``: a ``browserkit.RecordedPage`` (a new page of it): ``.page`` (a
  Playwright ``Page``), ``.console_errors``, ``.requests``, and ``assert_clean()``: no
  console error, no uncaught exception, no request that left the file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browserkit import CHROMIUM, RecordedPage, launch


def _unavailable(reason: str) -> None:
    """Skip visibly; on CI, where .ci/run installs the browser, fail instead."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _unavailable(f"browser tests need Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("browser tests need Playwright for Python (pip install -e '.[test]')")
    user_data = Path(tempfile.mkdtemp(prefix="durak-chromium-"))
    try:
        with sync_playwright() as pw:
            context = launch(pw, user_data)
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(user_data, ignore_errors=True)


@pytest.fixture
def browser_page(browser: Any) -> Iterator[RecordedPage]:
    rec = RecordedPage.open(browser)
    try:
        yield rec
    finally:
        rec.page.close()
