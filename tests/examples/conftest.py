"""Fixtures shared by the example-bot tests: build the C bot, find node and the JS bot
(tests/support.py does both, under a lock, as the pytest-xdist workers run at once).

A missing tool skips the tests that need it, with the reason shown (``-ra``).
"""

from __future__ import annotations

import pytest

from support import c_example_bot, js_example_bot


@pytest.fixture(scope="session")
def c_bot_cmd() -> list[str]:
    return c_example_bot()


@pytest.fixture(scope="session")
def js_bot_cmd() -> list[str]:
    return js_example_bot()
