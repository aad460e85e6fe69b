"""RULES.md, "Transfer modes", `transfer=reflect`: a card of the attacked rank sends the bout
back to the main attacker, who defends, and the direction of play reverses until the next
reflection."""

import pytest
from rules_testkit import cards, hand, legal, play, snapshot, table

from referee.rules import Game, IllegalAction, make_rules

REFLECT = make_rules("classic", ["transfer=reflect"])
TALON = "QC KC QS KS JH QH KH AH"


def r3(rules=REFLECT, seat0="6S 8C 9C", seat1="6D 7S KD", seat2="8D 9D TD JD", **kw) -> Game:
    return Game.from_position(rules, [seat0, seat1, seat2], trump="AH", talon=TALON, **kw)


def test_the_defender_may_reflect_with_a_card_of_the_attacked_rank():
    g = r3()
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "transfer 6D", "take"}
    assert g.observe(2)["direction"] == "clockwise"


def test_a_reflection_sends_the_bout_back_to_the_attacker_and_reverses_the_direction():
    g = r3()
    play(g, "attack 6S", "transfer 6D")
    assert table(g) == "6S/-- 6D/--"
    # seat 1 is the main attacker now, seat 0 (who led) defends
    assert (g.attacker, g.defender, g.current_seat) == (1, 0, 0)
    for s in range(3):
        o = g.observe(s)
        assert o["direction"] == "counter_clockwise" and o["transfers"] == 1
        assert (o["attacker"], o["defender"]) == (1, 0)
    assert legal(g) == {"take"}  # 8C 9C beat neither 6S nor 6D (hearts are trump)


def test_after_a_reflection_attackers_are_asked_and_draw_counter_clockwise():
    g = r3(seat0="6S 8C 9C TC", seat2="6C 9D TD JD")
    play(g, "attack 6S", "transfer 6D", "take")
    assert g.order == [1, 2]  # main attacker, then counter-clockwise from the defender
    assert g.current_seat == 1 and legal(g) == {"pass"}
    play(g, "pass")
    assert g.current_seat == 2 and legal(g) == {"throw_in 6C", "pass"}
    play(g, "pass")
    assert hand(g, 0) == cards("6S 6D 8C 9C TC KH")      # the defender draws last
    assert hand(g, 1) == cards("7S KD QC KC QS KS")      # main attacker draws first
    assert hand(g, 2) == cards("6C 9D TD JD JH QH")      # then seat 2
    # seat 0 took: the next seat counter-clockwise after it, seat 2, attacks seat 1
    assert (g.attacker, g.defender) == (2, 1)
    assert g.observe(0)["direction"] == "counter_clockwise"


def test_the_direction_stays_reversed_until_the_next_reflection():
    g = r3(seat0="6S 8C 9C 6H", seat1="6D 7S KD QD")
    play(g, "attack 6S", "transfer 6D")
    # seat 0 reflects back: clockwise again, seat 0 attacks seat 1
    assert "transfer 6H" in legal(g)
    play(g, "transfer 6H")
    assert (g.attacker, g.defender) == (0, 1) and g.observe(2)["direction"] == "clockwise"
    assert table(g) == "6S/-- 6D/-- 6H/--"


def test_a_beaten_reflected_bout_the_defender_attacks_the_next_seat_counter_clockwise():
    g = Game.from_position(REFLECT, ["6S 9S 7D", "6D 7C KD", "8D 9D TD JD"], trump="AH",
                           talon=TALON)
    play(g, "attack 6S", "transfer 6D")
    assert legal(g) == {"cover 0 9S", "cover 1 7D", "take"}
    play(g, "cover 0 9S", "cover 1 7D")  # the limit (seat 0's two cards) is reached: it ends
    assert table(g) == "" and g.out == [False] * 3
    assert hand(g, 1) == cards("7C KD QC KC QS KS")
    assert hand(g, 2) == cards("8D 9D TD JD JH QH")
    assert hand(g, 0) == cards("KH AH") and g.observe(1)["trump_holder"] == 0
    assert (g.attacker, g.defender) == (0, 2)


def test_reflection_needs_the_attacker_to_hold_one_more_card_than_will_lie_on_the_table():
    # seat 0 leads its second-to-last card and holds one: a reflection would face it with two
    g = r3(seat0="6S 8C")
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "take"}
    with pytest.raises(IllegalAction, match="too few cards"):
        play(g, "transfer 6D")


def test_reflection_only_before_any_cover_and_only_of_the_attacked_rank():
    g = Game.from_position(REFLECT, ["9C TC", "6H 8D 7D", "8C 9D TD JD"], trump="AH",
                           table="6S/7S 6D/--", talon=TALON)
    assert legal(g) == {"cover 1 7D", "cover 1 8D", "cover 1 6H", "take"}


def test_reflection_respects_transfer_limit():
    rules = make_rules("classic", ["transfer=reflect", "transfer_limit=1"])
    g = r3(rules, seat0="6S 8C 9C 6H", seat1="6D 7S KD QD")
    play(g, "attack 6S", "transfer 6D")
    assert "transfer 6H" not in legal(g)


def test_two_players_reflection_is_a_transfer_back():
    g = Game.from_position(REFLECT, ["6S 8C 9C", "6D 7S KD"], trump="AH", talon=TALON)
    play(g, "attack 6S", "transfer 6D")
    assert (g.attacker, g.defender) == (1, 0)


def test_four_players_the_roles_and_orders_follow_the_reversed_direction():
    g = Game.from_position(REFLECT, ["6S 8C 9C", "6D 7S", "8D 9D TD", "TH JH QH"], trump="AS",
                           talon="QC KC AS")
    play(g, "attack 6S", "transfer 6D")
    # counter-clockwise: after seat 0 comes seat 3, then seat 2
    assert (g.attacker, g.defender) == (1, 0) and g.order == [1, 3, 2]


def test_after_a_reflection_throw_in_order_counter_clockwise_asks_against_the_new_direction():
    rules = make_rules("classic", ["transfer=reflect", "throw_in_order=counter_clockwise"])
    g = Game.from_position(rules, ["6S 8C 9C", "6D 7S", "8D 9D TD", "TH JH QH"], trump="AS",
                           talon="QC KC AS")
    assert g.order == [0, 3, 2]
    play(g, "attack 6S", "transfer 6D")
    # play now runs counter-clockwise, so asking against it runs clockwise from seat 1
    assert (g.attacker, g.defender) == (1, 0) and g.order == [1, 2, 3]


def test_counter_clockwise_positions_can_be_set_up():
    g = Game.from_position(REFLECT, ["6S 8C 9C", "6D 7S", "8D 9D TD"], trump="AH",
                           talon=TALON, counter_clockwise=True)
    assert (g.attacker, g.defender) == (0, 2) and g.order == [0, 1]
    assert g.observe(0)["direction"] == "counter_clockwise"


def test_direction_is_not_in_the_observation_of_other_transfer_modes():
    for preset in ("classic", "perevodnoy", "perevodnoy_trump", "deflection"):
        g = Game.new(make_rules(preset), 3, seed=1)
        assert "direction" not in g.observe(0)


def test_a_new_game_plays_clockwise_again():
    g = Game.new(REFLECT, 3, seed=5)
    assert g.direction == 1 and g.observe(0)["direction"] == "clockwise"


def test_a_cheating_defender_cannot_show_a_trump_under_reflect():
    g = r3(seat0="6S 8C 9C", seat1="6H 7S KD")  # 6H is the trump of the attacked rank
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "cover 0 6H", "transfer 6H", "take"}
    before = snapshot(g)
    with pytest.raises(IllegalAction, match=r"show_trump is not allowed by these rules \(transfer=reflect\)"):
        play(g, "show_trump 6H")
    assert snapshot(g) == before
