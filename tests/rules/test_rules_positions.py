"""``Game.from_position`` refuses positions no game could reach or continue from, with a
PositionError (a ValueError) naming what is wrong, instead of looping or accepting them."""

import pytest
from rules_testkit import legal

from referee.rules import Game, PositionError, RulesError, make_rules

CLASSIC = make_rules()


def position(hands, **kw) -> Game:
    kw.setdefault("trump", "AH")
    return Game.from_position(CLASSIC, hands, **kw)


def test_a_position_error_is_a_rules_error_and_a_value_error():
    assert issubclass(PositionError, RulesError) and issubclass(PositionError, ValueError)


def test_an_attacker_who_is_out_is_refused_instead_of_looping_forever():
    with pytest.raises(PositionError, match="the attacker, seat 0, is out"):
        position(["", "6S", "7S"], attacker=0, out=(0,))


def test_seats_that_do_not_exist_are_named():
    with pytest.raises(PositionError, match="attacker seat 3 does not exist at a 3-player table"):
        position(["6S", "7S", "8S"], attacker=3)
    with pytest.raises(PositionError, match="out seat 5 does not exist"):
        position(["6S", "7S", "8S"], out=(5,))
    with pytest.raises(PositionError, match="dealer seat 4 does not exist"):
        position(["6S", "7S"], dealer=4)


def test_a_seat_marked_out_must_hold_no_cards():
    with pytest.raises(PositionError, match="seat 2 is marked out but holds 8S"):
        position(["6S", "7S", "8S"], out=(2,))


def test_a_game_with_one_seat_left_is_already_over():
    with pytest.raises(PositionError, match="fewer than two seats are still in"):
        position(["6S", "", ""], out=(1, 2))


def test_a_table_over_the_attack_limit_is_refused():
    # the defender holds one card and covered nothing: at most one attack card
    with pytest.raises(PositionError, match="2 attack cards, over this bout's limit of 1"):
        position(["9C", "7D", "8C"], table="6S/-- 6D/--")
    # max_attacks caps the table whatever the defender holds
    rules = make_rules("classic", {"max_attacks": "1"})
    with pytest.raises(PositionError, match="over this bout's limit of 1"):
        Game.from_position(rules, ["9C", "7D 8D 9D", "8C"], trump="AH", table="6S/7S 6D/--")


def test_a_cover_that_does_not_beat_its_card_is_refused():
    with pytest.raises(PositionError, match="table slot 0: 6S does not beat 7S"):
        position(["9C", "7D", "8C"], table="7S/6S")


def test_taking_with_an_empty_table_is_refused():
    with pytest.raises(PositionError, match="taking, but the table is empty"):
        position(["6S", "7S"], taking=True)


def test_a_stuck_position_with_no_legal_action_is_refused():
    # seat 0 must lead but holds nothing, and a talon is left to draw from: no action at all
    with pytest.raises(PositionError, match="seat 0 is to move in phase attack but has no legal action"):
        position(["", "7S"], talon="8S AH")


def test_an_empty_handed_seat_still_in_between_bouts_has_gone_out():
    with pytest.raises(PositionError, match="seat 2 holds no cards with the talon empty"):
        position(["6S", "7S", ""])


def test_mid_bout_an_empty_hand_is_fine_and_play_goes_on():
    # seat 0 led its last card (decision 5: it stays in the bout until it ends)
    g = position(["", "7S 8S", "9C"], table="6S/--")
    assert g.current_seat == 1 and legal(g) == {"cover 0 7S", "cover 0 8S", "take"}
