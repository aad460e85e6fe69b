"""Hints of a learning game (referee/human/hints.py): the move a built-in would play in
the seat, from the request alone, with a one-line reason."""

from __future__ import annotations

import pytest

from referee.human.hints import hint
from referee.rules import Game, make_rules
from referee.rules.actions import shared_wire
from referee.rules.deal import deal_deck


@pytest.mark.parametrize("bot", ["gentle", "ismcts"])
def test_a_hint_is_one_of_the_legal_moves_with_a_reason(bot: str) -> None:
    rules = make_rules("classic", [])
    game = Game.new(rules, 2, deck=deal_deck("hints", "h:0", rules.deck), dealer=1)
    for step in range(6):
        seat, legal = game.seat_to_move(), game.legal_actions()
        request = {"id": step + 1, "observation": game.observe(seat),
                   "legal": [dict(shared_wire(a)) for a in legal]}
        got = hint(bot, request, rules.as_dict(), "seed")
        assert 0 <= got["index"] < len(legal) and got["why"] and "\n" not in got["why"]
        assert got == hint(bot, request, rules.as_dict(), "seed")  # the same when asked again
        game.apply_legal(legal[got["index"]])
        if game.is_over:
            break


def test_no_hints_from_a_bot_that_gives_none() -> None:
    with pytest.raises(ValueError):
        hint("greedy", {"id": 1, "observation": {}, "legal": [{"type": "take"}]})
