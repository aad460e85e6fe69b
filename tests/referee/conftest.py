"""Fixtures shared by the referee's tests."""

from typing import Any

import pytest

from referee.rules import Game
from referee.seats import pipelane


@pytest.fixture(autouse=True)
def fresh_answer_heads() -> None:
    """Each test starts with no packed answer heads (``pipelane._HEADS``): the frames it
    checks are packed in the test, through the miss path, whatever ran before in the
    process (another test, or mutmut's stats pass in the parent of its workers). (Final:
    compiled, the lane reads it as a C static, so it is emptied in place.)"""
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
