"""A command bot without a NAME= takes the name its hello gives, but never one the run
already uses, nor one that looks like it (referee/seats/names.py): a built-in's, a name
the user gave, an earlier seat's. It gets the first free ``NAME#2``, ``NAME#3``, ...
instead, and every other seat keeps its name. (Before, a bot saying hello as "greedy"
took that name and pushed the real built-in aside to ``greedy#2``, so the results
credited the bot with the built-in's name.) Through the real CLI: ``match --json`` and
check-bot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from support import ROOT, cli

pytestmark = pytest.mark.process

BOT = Path(__file__).resolve().parent / "bots" / "named_bot.py"


def named(hello: str) -> str:
    return f"{sys.executable} {BOT} {hello}"


def names(tmp_path: Path, *bots: str) -> list[str]:
    proc = cli("match", *bots, "--games", 1, "--json", "--log-dir", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    header = json.loads(Path(summary["log"]).read_text().splitlines()[0])
    assert [b["name"] for b in header["bots"]] == [b["name"] for b in summary["standings"]]
    return [b["name"] for b in summary["standings"]]


def test_a_bot_that_says_hello_as_a_builtin_does_not_take_the_builtins_name(tmp_path: Path) -> None:
    assert names(tmp_path, named("greedy"), "builtin:greedy") == ["greedy#2", "greedy"]
    # The example bot says hello as "greedy" too, and comes after the built-in here.
    example = f"{sys.executable} {ROOT / 'examples' / 'python' / 'greedy_bot.py'}"
    assert names(tmp_path, "builtin:greedy", example) == ["greedy", "greedy#2"]


def test_a_bot_cannot_take_a_name_the_user_gave_or_a_suffixed_one(tmp_path: Path) -> None:
    assert names(tmp_path, named("alice"), "alice=builtin:random") == ["alice#2", "alice"]
    assert names(tmp_path, named("greedy#2"), "builtin:greedy", "builtin:greedy") == [
        "greedy#2#2", "greedy", "greedy#2"]


def test_a_bot_cannot_take_a_name_that_looks_like_one_the_run_uses(tmp_path: Path) -> None:
    # Issue 35: on main a hello as "grееdy" (Cyrillic е) sat beside builtin:greedy under
    # that name. A look-alike (the same Unicode confusable skeleton, or case) is told
    # apart as the name itself is, and so is its #2 when that looks like a taken one.
    assert names(tmp_path, named("grееdy"), named("GREEDY"), "builtin:greedy") == [
        "grееdy#2", "GREEDY#3", "greedy"]


def test_two_bots_with_one_hello_name_are_told_apart_in_seat_order(tmp_path: Path) -> None:
    assert names(tmp_path, named("twin"), named("twin"), "builtin:random") == ["twin", "twin#2", "random"]


def test_a_named_seat_keeps_its_name_whatever_its_hello_says(tmp_path: Path) -> None:
    assert names(tmp_path, f"bob={named('random')}", "builtin:random") == ["bob", "random"]


@pytest.mark.timeout(120)
def test_check_bot_does_not_let_the_bot_take_its_opponents_names(tmp_path: Path) -> None:
    proc = cli("check-bot", named("random"), "--json", cwd=tmp_path, timeout=110)
    report = json.loads(proc.stdout)
    players = {tuple(g["players"]) for c in report["configs"] for g in c["games"]}
    # The bot under test takes the first name no built-in of the run has (check-bot's
    # bigger tables seat greedy#2, random#2, ...); the built-ins keep their own names.
    mine = bot_name(players)
    opponents = {n for p in players for n in p} - {mine}
    assert players and all(mine in p for p in players), players
    assert mine.startswith("random#") and mine not in opponents
    assert {"random", "greedy"} <= opponents


def bot_name(players: set[tuple[str, ...]]) -> str:
    """The one name at every table of a check-bot run: the bot under test's."""
    (name,) = set.intersection(*(set(p) for p in players)) - {"greedy", "random"}
    return name
