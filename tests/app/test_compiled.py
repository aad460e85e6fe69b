"""The compiled hot path (setup.py compiles it with mypyc; referee/native/loader.py picks
compiled or Python at start-up).

Specification: the compiled modules behave exactly as their Python sources (the same
games, legal lists, events, views, request frames, built-in choices, deals, clock
charges and error messages);
the referee runs them as Python whenever the compiled build cannot be trusted (a source
edited since the build: all of them, as mypyc compiled them as one group) or when asked
(``DURAK_PURE_PYTHON=1``); ``durak-ref version`` says which. On CI the install compiles
them: a CI run that silently measured and tested only Python would be a broken build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import referee
from referee.native.hotpath import COMPILED
from referee.native.loader import status

#: Plays seeded games under every preset and table size through the checked ``apply``,
#: and prints a digest of everything the compiled modules compute on the way, with the
#: loader's status.
TRANSCRIPT = r"""
import hashlib, json, random, sys
from referee.native.loader import status
from referee.rules import Game, make_rules
from referee.rules.actions import IllegalAction, MalformedAction, action_from_wire
from referee.rules.options import PRESETS
from referee.bots.fastchoice import greedy_action, random_action
from referee.rules.deal import deal_deck
from referee.table.clock import Clock, TimeControl
from referee.table.requests import RequestFrames

digest, decisions, games = hashlib.sha256(), 0, 0

def note(*parts):
    digest.update(repr(parts).encode())

for preset in sorted(PRESETS):
    rules = make_rules(preset)
    for players in range(2, 7):
        try:
            rules.check_table(players)
        except Exception:
            continue
        for seed in range(int(sys.argv[1])):
            g = Game.new(rules, players, seed=f"{preset}:{players}:{seed}", record_events=True)
            frames, rng = RequestFrames(g, seed), random.Random(seed)
            clocks = [Clock(TimeControl.parse(f"{seed + 1}+0.25")) for _ in range(players)]
            games += 1
            while not g.is_over:
                legal = g.legal_actions()
                seat = g.seat_to_move()
                note(legal, g.forced_action(legal), g.observe(seat),
                     frames.frame(seat, decisions, legal, clocks[seat]),
                     greedy_action(g, seat, legal))
                # A bot's answers of every shape: mypyc's ints change representation
                # past 2**62, and a bool is an int to Python but not an action.
                for bad in ("take", -1, 1.5, True, 99999, max(legal) + 16, 2**63, 2**64 + 1, -2**80):
                    try:
                        g.apply(bad)
                    except (IllegalAction, MalformedAction) as e:
                        note(type(e).__name__, str(e))
                clocks[seat].charge(decisions % 7 / 16)
                copy = g.copy()
                g.apply(random_action(legal, rng))
                note(copy.history == g.history[:-1], copy.action_count + 1 == g.action_count)
                decisions += 1
            note(g.history, g.outcome, g.events, [g.public_event(e, 0) for e in g.events])
# A bot's wire answers of every shape (action_from_wire reads them before apply does).
for wire in ({"type": "cover", "card": "7S", "slot": 2**70}, {"type": "cover", "card": "7S", "slot": True},
             {"type": "attack", "card": 7}, {"type": "attack", "card": None}, {"type": 1}, "attack", None,
             {"type": "cover", "card": "7S", "slot": 3}, {"type": "take"}):
    try:
        note(action_from_wire(wire))
    except MalformedAction as e:
        note(str(e))
for seed in range(int(sys.argv[1]) * 20):
    note([deal_deck(f"run{seed}", f"match:{seed}", size) for size in (24, 36, 52)])
for tc in (TimeControl.parse("1+0.25"), TimeControl.parse(None, 0.5), TimeControl.parse("2", 0.3)):
    clock = Clock(tc)
    for used in (0, 0.1, 0.25, 0.3, 0.75, 2):
        note(clock.budget(), clock.wire(), clock.charge(used), clock.remaining)
print(json.dumps({"digest": digest.hexdigest(), "games": games, "decisions": decisions,
                  "native": status()}))
"""


def run_python(code: str, *args: str, pure: bool = False, path: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DURAK_PURE_PYTHON"}
    if pure:
        env["DURAK_PURE_PYTHON"] = "1"
    if path is not None:
        env["PYTHONPATH"] = str(path)
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=240, cwd=path or Path.cwd())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def require_compiled_build() -> dict:
    """The loader's status; skips (visibly) only off CI when the install compiled nothing."""
    native = status()
    if not native["compiled"]:
        message = f"no compiled build in this install ({native['python'] or 'no manifest'})"
        if os.environ.get("CI"):
            pytest.fail(f"CI installs the compiled build (setup.py, mypyc): {message}")
        pytest.skip(message)
    return native


def test_ci_runs_every_hot_module_compiled() -> None:
    native = require_compiled_build()
    assert native["python"] == {}
    assert native["compiled"] == sorted(COMPILED)


@pytest.mark.process
def test_compiled_modules_play_exactly_the_games_their_python_sources_play() -> None:
    require_compiled_build()
    compiled = run_python(TRANSCRIPT, "6")
    python = run_python(TRANSCRIPT, "6", pure=True)
    assert compiled["native"]["python"] == {} and python["native"]["compiled"] == []
    assert compiled["games"] == python["games"] > 60
    assert compiled["decisions"] == python["decisions"] > 3000
    assert compiled["digest"] == python["digest"]


@pytest.mark.process
def test_durak_pure_python_runs_every_compiled_module_from_its_source() -> None:
    require_compiled_build()
    python = run_python(TRANSCRIPT, "0", pure=True)
    assert python["native"]["compiled"] == []
    assert set(python["native"]["python"].values()) == {"DURAK_PURE_PYTHON is set"}


@pytest.mark.process
def test_an_edited_source_runs_every_compiled_module_as_python(tmp_path: Path) -> None:
    """A checkout edited after its build (or mutation testing's mutated copy) must run the
    edited code, not the stale extension; the other compiled modules go with it."""
    native = require_compiled_build()
    tree = tmp_path / "referee"
    shutil.copytree(Path(referee.__file__).parent, tree,
                    ignore=shutil.ignore_patterns("__pycache__"))
    game = tree / "rules" / "game.py"
    game.write_text(game.read_text(encoding="utf-8")
                    + "\nEDITED_AFTER_THE_BUILD = True\n", encoding="utf-8")
    probe = ("import json; from referee.native.loader import status; import referee.rules.game as g; "
             "print(json.dumps({'edited': getattr(g, 'EDITED_AFTER_THE_BUILD', False), "
             "'file': g.__file__, **status()}))")
    seen = run_python(probe, path=tmp_path)
    assert seen["edited"] is True and seen["file"] == str(game)
    assert seen["compiled"] == []
    assert set(seen["python"]) == set(native["compiled"])
    assert set(seen["python"].values()) == {
        "referee/rules/game.py changed since it was compiled (compiled modules run together)"}
    # The copy unedited runs compiled again: the digests, not the copy, decide.
    game.write_text((Path(referee.__file__).parent / "rules" / "game.py").read_text(encoding="utf-8"),
                    encoding="utf-8")
    assert run_python(probe, path=tmp_path)["compiled"] == native["compiled"]


def test_version_says_which_hot_modules_run_compiled() -> None:
    """`durak-ref version`, in both forms, reports the loader's view."""
    from typer.testing import CliRunner

    from referee.cli import app
    native = status()
    shown = CliRunner().invoke(app, ["version", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["native"] == native
    text = CliRunner().invoke(app, ["version"]).output
    if native["compiled"] and not native["python"]:
        assert f"hot path: compiled with mypyc ({len(native['compiled'])} modules)" in text
    else:
        assert "hot path: Python" in text
