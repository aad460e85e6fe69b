"""Fixtures shared by the referee's tests."""

from collections import OrderedDict
from typing import Any

import pytest

from referee.rules import Game
from referee.seats import pipelane
from referee.table import framelane


@pytest.fixture(autouse=True)
def fresh_event_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no packed shared events (``framelane._EVENT_BODIES``) and no
    packed draw heads (``framelane._DRAW_HEADS``) or answer heads (``pipelane._HEADS``): the frames
    it checks are packed in the test, through the cache-miss path, whatever ran before
    in the process (another test, or mutmut's stats pass in the parent of its workers)."""
    monkeypatch.setattr(framelane, "_EVENT_BODIES", OrderedDict())
    # (These two are Final: compiled, the lanes read them as C statics, not from the
    # module's dict, so they are emptied in place rather than replaced.)
    framelane._DRAW_HEADS.clear()
    pipelane._HEADS.clear()


@pytest.fixture
def dealt_games(monkeypatch: pytest.MonkeyPatch) -> list[Game]:
    """Every game ``Game.new`` deals while the test runs, in order (the referee's deals,
    and any the test makes itself)."""
    dealt: list[Game] = []
    real_new = Game.new

    def new(*args: Any, **kwargs: Any) -> Game:
        dealt.append(real_new(*args, **kwargs))
        return dealt[-1]

    monkeypatch.setattr(Game, "new", new)
    return dealt
