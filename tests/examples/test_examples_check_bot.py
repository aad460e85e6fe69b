"""Every example bot (Python, C, JavaScript) passes check-bot in every rule variant it
plays: transfer, reflection, show-trump transfer, same-rank leads, throw-in any time, the
24-, 36- and 52-card decks and 2 to 6 players."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee.conformance.checkbot import CONFIGS, check_bot

pytestmark = pytest.mark.process

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


@pytest.fixture(params=["minimal", "random", "greedy", "c", "javascript"])
def example_bot(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "c":
        return request.getfixturevalue("c_bot_cmd")
    if request.param == "javascript":
        return request.getfixturevalue("js_bot_cmd")
    return [sys.executable, str(EXAMPLES / f"{request.param}_bot.py")]


async def test_every_example_bot_passes_every_variant(example_bot: list[str]) -> None:
    report = await check_bot(example_bot)
    data = report.as_dict()
    assert data["variants"] == {rs.key: "pass" for rs in CONFIGS}, [
        c.summary for c in report.checks if c.status == "fail"]
    assert report.ok
    for run in report.configs:
        assert run.failure is None and run.missing == []


