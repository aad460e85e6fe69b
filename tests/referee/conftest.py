"""Fixtures shared by the referee's tests."""

from collections import OrderedDict

import pytest

from referee.table import match


@pytest.fixture(autouse=True)
def fresh_event_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no packed shared events (``match._EVENT_BODIES``): the frames
    it checks are packed in the test, through the cache-miss path, whatever ran before
    in the process (another test, or mutmut's stats pass in the parent of its workers)."""
    monkeypatch.setattr(match, "_EVENT_BODIES", OrderedDict())
