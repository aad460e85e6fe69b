"""How many players a table seats is one fact: ``MIN_SEATS`` and ``MAX_SEATS`` in
``referee/rules/options.py``. Everything else that bounds a table (the engine's checks,
log and store validation, ratings, tournaments, the frame builder's tables, every CLI
option and help text) reads them, so changing the bound is one edit there."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer.main

from protocol import messages
from referee.cli import app
from referee.commands.options import BOTS_HELP
from referee.rules import MAX_SEATS, MIN_SEATS, SEATS_TEXT, Game, PositionError, RulesError, make_rules

ROOT = Path(__file__).resolve().parents[2]

#: The ways the bound was written out before it had one place (issue 36: "2 to 6 seats"
#: was a literal in eight places).
LITERAL_BOUNDS = {
    "a 2..6 comparison": re.compile(r"\b2\s*<=\s*[\w.()]+\s*<=\s*6\b"),
    "a 2..6 range": re.compile(r"range\(\s*2\s*,\s*7\s*\)"),
    "a seat range(6)": re.compile(r"range\(\s*6\s*\)"),
    "a typer max=6": re.compile(r"\bmax=6\b"),
    "'2 to 6' in words": re.compile(r"\b2 to 6\b"),
    "'2..6' or '2-6'": re.compile(r"\b2(\.\.|-)6\b"),
    "'at most 6 seats' or '1 to 5 bots'": re.compile(r"at most 6 seats|\b1 to 5\b"),
    "a MAX_SEATS/MAX_PLAYERS of its own": re.compile(r"\b_?MAX_(SEATS|PLAYERS)\b[\w\s,:]*=[\s\d,]*\b6\b"),
}

#: Files that may still write the bound, each with why.
ALLOWED = {
    # The protocol is the lowest layer and may not import the engine; its declaration of
    # the ``players`` field is the wire's copy, held equal below
    # (test_the_protocol_declares_the_engines_bound).
    "protocol/messages.py",
    # The learning envs' observation layout is a trained agent's input shape, sized for
    # six seats on purpose (its own versioned fact, not the rules' bound); held below
    # (test_the_observation_layout_has_room_for_every_table).
    "referee/env/encoding.py",
}


def literal_bounds(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line what`` for each line of ``path`` that writes the seat bound out."""
    where = path.relative_to(root)
    return [f"{where}:{number} {what}: {line.strip()}"
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            for what, pattern in LITERAL_BOUNDS.items() if pattern.search(line)]


def test_no_module_writes_the_seat_bound_itself() -> None:
    offenders = [line for top in ("referee", "protocol") for path in sorted((ROOT / top).rglob("*.py"))
                 if str(path.relative_to(ROOT)) not in ALLOWED
                 if path != ROOT / "referee" / "rules" / "options.py"
                 for line in literal_bounds(path)]
    assert offenders == [], ("read the bound from referee.rules (MIN_SEATS, MAX_SEATS, SEATS_TEXT, "
                             "seat_count_error):\n" + "\n".join(offenders))


def test_the_search_sees_each_way_of_writing_the_bound(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("if not 2 <= len(seats) <= 6:\n"
                     "    pass\n"
                     "for n in range(2, 7): pass\n"
                     "players: Annotated[int, typer.Option(min=2, max=6)] = 2\n"
                     'HELP = "Bots, one per seat (2 to 6)"\n'
                     "_MIN_SEATS, _MAX_SEATS = 2, 6\n"
                     "MAX_SEATS = 6\n", encoding="utf-8")
    assert [line.split(" ", 1)[0] for line in literal_bounds(probe, tmp_path)] == [
        "probe.py:1", "probe.py:3", "probe.py:4", "probe.py:5", "probe.py:6", "probe.py:7"]


def _players_options() -> list[tuple[str, Any]]:
    """(command, option) for every ``--players`` option of the CLI."""
    found: list[tuple[str, Any]] = []

    def visit(command: Any, name: str) -> None:
        if hasattr(command, "commands"):  # a group
            for sub_name, sub in command.commands.items():
                visit(sub, f"{name} {sub_name}")
        found.extend((name, p) for p in command.params if p.name == "players")
    visit(typer.main.get_command(app), "durak-ref")
    return found


def test_every_players_option_is_bounded_by_the_rules() -> None:
    """Each command's ``--players`` either has the range MIN_SEATS..MAX_SEATS or is
    checked by the rules later (then its help names the same bound)."""
    options = _players_options()
    assert len(options) >= 4  # bench engine, env, strength; tournament
    for command, option in options:
        if option.max is not None:
            assert (option.min, option.max) == (MIN_SEATS, MAX_SEATS), command
        else:
            assert SEATS_TEXT in (option.help or ""), command


def test_help_texts_name_the_bound_from_the_rules() -> None:
    assert SEATS_TEXT == f"{MIN_SEATS} to {MAX_SEATS}"
    assert f"one per seat ({SEATS_TEXT})" in BOTS_HELP


def test_the_engine_seats_exactly_min_to_max() -> None:
    rules = make_rules("classic", {"deck": "52"})
    for players in (MIN_SEATS, MAX_SEATS):
        rules.check_table(players)
        assert Game.new(rules, players, seed=1).players == players
    for players in (MIN_SEATS - 1, MAX_SEATS + 1):
        with pytest.raises(RulesError, match=f"a table has {SEATS_TEXT} players, not {players}"):
            rules.check_table(players)


def test_a_position_with_too_many_seats_names_the_bound() -> None:
    with pytest.raises(PositionError, match=f"a table has {SEATS_TEXT} players, not {MAX_SEATS + 1}"):
        Game.from_position(make_rules("classic", {"deck": "52"}), trump="AH",
                           hands=[f"{rank}S" for rank in "23456789TJQKA"[:MAX_SEATS + 1]])


def test_the_protocol_declares_the_engines_bound() -> None:
    for record in (messages.OBSERVATION, messages.GAME_START):
        players = record.by_name["players"].kind
        assert (players.minimum, players.maximum) == (MIN_SEATS, MAX_SEATS), record.type


def test_the_observation_layout_has_room_for_every_table() -> None:
    pytest.importorskip("numpy")
    from referee.env.encoding import MAX_PLAYERS
    assert MAX_PLAYERS >= MAX_SEATS, ("the rules seat more players than the learning envs' "
                                      "observation layout holds: give the envs a new layout version")
