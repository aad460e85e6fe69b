"""An impossible explicit position is refused naming the seat and the seats that exist;
a cover that does not beat is explained naming the trump suit; a game's debugging form
shows the table with an uncovered attack as ``--``."""

from __future__ import annotations

import pytest

from referee.rules import make_rules
from referee.rules.actions import parse_action
from referee.rules.game import Game, PositionError

CLASSIC = make_rules("classic", ())
HANDS = ["6S 7S", "8S 9H", "AC"]


@pytest.mark.parametrize(("where", "text"), [
    ({"out": (3,)}, "out seat 3 does not exist at a 3-player table (seats 0..2)"),
    ({"out": (-1,)}, "out seat -1 does not exist at a 3-player table (seats 0..2)"),
    ({"attacker": 3}, "attacker seat 3 does not exist at a 3-player table (seats 0..2)"),
    ({"dealer": 5}, "dealer seat 5 does not exist at a 3-player table"),
])
def test_a_seat_that_does_not_exist_is_refused_naming_the_seats_that_do(where: dict, text: str) -> None:
    with pytest.raises(PositionError) as refused:
        Game.from_position(CLASSIC, HANDS, trump="TH", **where)
    assert str(refused.value) == text


def test_the_debugging_form_shows_the_table_with_uncovered_attacks_as_dashes() -> None:
    game = Game.from_position(CLASSIC, ["6S 7S", "8S 9H"], trump="TH", table="6D/7D 6H/--")
    assert repr(game) == ("<Game defend bout=1 trump=TH att=0 def=1 talon=0 table=[6D/7D 6H/--] "
                          "hands=[0:6S 7S | 1:8S 9H]>")


def test_a_cover_that_does_not_beat_names_both_cards_and_the_trump_suit() -> None:
    game = Game.from_position(CLASSIC, ["6S 7S", "8S 9H"], trump="TH", table="6D/7D 6H/--")
    assert game.illegal_reason(parse_action("cover 1 8S")) == "8S does not beat 6H (trump H)"


@pytest.mark.parametrize("given", [{}, {"seed": 1, "deck": list(range(36))}])
def test_a_new_game_needs_exactly_one_of_seed_or_deck(given: dict) -> None:
    with pytest.raises(ValueError) as refused:
        Game.new(CLASSIC, 2, **given)
    assert str(refused.value) == "give exactly one of seed or deck"
