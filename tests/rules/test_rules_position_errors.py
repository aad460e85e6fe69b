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


# --- every refusal, word for word ---------------------------------------------------------

SIX = ["6S", "7S", "8S", "9S", "TS", "JS"]


@pytest.mark.parametrize(("hands", "where", "text"), [
    (["6S"], {}, "a table has 2 to 6 players, not 1"),
    ([*SIX, "QS"], {}, "a table has 2 to 6 players, not 7"),
    (["", "6S", "7S"], {"out": (0,)},
     "the attacker, seat 0, is out; the main attacker must be a seat still in the game"),
    (["6S", "", ""], {"out": (1, 2)},
     "fewer than two seats are still in: the game would already be over"),
    (HANDS, {"dealer": 3}, "dealer seat 3 does not exist at a 3-player table"),
    (HANDS, {"dealer": -1}, "dealer seat -1 does not exist at a 3-player table"),
    (["6S", "7S", "8S 9S"], {"out": (2,)}, "seat 2 is marked out but holds 8S 9S"),
    (["6S", "7S"], {"taking": True}, "the defender is taking, but the table is empty"),
    (["6S", "7S", ""], {},
     "seat 2 holds no cards with the talon empty and no bout in play, so it has gone out: "
     "list it in out"),
    (["9C", "7D", "8C"], {"table": "6S/-- 6D/--"},
     "the table holds 2 attack cards, over this bout's limit of 1 (max_attacks, first-bout "
     "limit, or the defender's hand plus the cards they covered with)"),
    (["9C", "7D", "8C"], {"table": "7S/6S"}, "table slot 0: 6S does not beat 7S (trump H)"),
    (["6S 6S", "7S"], {}, "6S is placed twice in the position"),
    (["6S", "7S"], {"table": "6S/--"}, "6S is placed twice in the position"),
    (["6S", "7S"], {"talon": "7S TH"}, "7S is placed twice in the position"),
    (["2C", "7S"], {}, "the position uses cards outside the 36-card deck"),
    (["6S", "7S"], {"talon": "8H 9H"}, "the talon's last card (drawn last) must be the face-up trump"),
    (["", "7S"], {"talon": "8S TH"},
     "seat 0 is to move in phase attack but has no legal action (a main attacker needs a "
     "card to lead)"),
])
def test_every_impossible_position_is_refused_with_its_reason_word_for_word(
        hands: list[str], where: dict, text: str) -> None:
    with pytest.raises(PositionError) as refused:
        Game.from_position(CLASSIC, hands, trump="TH", **where)
    assert str(refused.value) == text


def test_a_table_pair_is_attack_slash_cover_and_an_attack_alone_is_uncovered() -> None:
    for text in ("6S", "6S/", "6S/--"):
        game = Game.from_position(CLASSIC, ["9C", "7D 7S"], trump="TH", table=text)
        assert game.observe(0)["table"] == [["6S", None]] and game.current_seat == 1
    with pytest.raises(ValueError) as refused:   # one slash per pair: the cover is "7S/8S"
        Game.from_position(CLASSIC, ["9C", "7D"], trump="TH", table="6S/7S/8S")
    assert str(refused.value) == "expected a card like '6S' (rank 23456789TJQKA, suit CDHS), got '7S/8S'"


def test_without_a_dealer_the_last_seat_deals() -> None:
    for players in (2, 3, 6):
        game = Game.from_position(CLASSIC, SIX[:players], trump="TH")
        assert game.dealer == players - 1 and game.observe(0)["dealer"] == players - 1


def test_a_cover_by_the_lowest_card_of_the_deck_is_checked_like_any_other() -> None:
    """2C is card 0 of the 52-card deck: a cover by it must beat its card too, and it can
    be placed only once."""
    deck52 = make_rules("classic", {"deck": "52"})
    with pytest.raises(PositionError) as refused:
        Game.from_position(deck52, ["2C", "7D"], trump="AH", table="3D/2C")
    assert str(refused.value) == "2C is placed twice in the position"
    with pytest.raises(PositionError) as refused:
        Game.from_position(deck52, ["9D", "7D", "8D"], trump="AH", table="3C/2C")
    assert str(refused.value) == "table slot 0: 2C does not beat 3C (trump H)"
    # as a trump it beats any other suit, and the debugging form shows it as the cover
    game = Game.from_position(deck52, ["9D", "7D"], trump="AC", table="3D/2C")
    assert [game.observe(s)["table"] for s in (0, 1)] == [[["3D", "2C"]]] * 2
    assert game.observe(0)["attack_limit"] == 2   # the defender's one card plus the 2C it covered with
    assert repr(game) == ("<Game throw_in bout=1 trump=AC att=0 def=1 talon=0 table=[3D/2C] "
                          "hands=[0:9D | 1:7D]>")


@pytest.mark.parametrize("players", [2, 6])
@pytest.mark.parametrize("dealer", ["first", "last"])
def test_every_table_size_and_every_dealer_seat_that_exists_is_accepted(players: int, dealer: str) -> None:
    seat = 0 if dealer == "first" else players - 1
    game = Game.from_position(CLASSIC, SIX[:players], trump="TH", dealer=seat)
    assert [game.observe(s)["dealer"] for s in range(players)] == [seat] * players
    assert game.players == players and game.defender == 1 and game.current_seat == 0
    assert game.legal_actions() == [parse_action("attack 6S")]


def test_a_position_is_not_the_first_bout_and_records_no_events_unless_asked() -> None:
    """The first-bout limit (five attack cards) binds only ``first_bout=True``; events are
    recorded only with ``record_events=True``."""
    hands = ["6S 6D 6H 6C 7S 7D", "8S 8D 8H 8C 9S 9D"]
    rules = make_rules("classic", {"first_bout_limit": "on"})
    later = Game.from_position(rules, hands, trump="TH")
    first = Game.from_position(rules, hands, trump="TH", first_bout=True)
    assert later.observe(0)["attack_limit"] == 6 and first.observe(0)["attack_limit"] == 5
    assert later.events is None
    recorded = Game.from_position(CLASSIC, hands, trump="TH", record_events=True)
    assert recorded.events == []
    recorded.apply(parse_action("attack 6S"))
    assert [recorded.public_event(e, 1) for e in recorded.events] == [
        {"type": "attack", "seat": 0, "card": "6S"}]
