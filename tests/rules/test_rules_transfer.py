"""RULES.md, "Transfer modes": perevodnoy transfers, trump_show, transfer_limit."""

import pytest
from rules_testkit import cards, hand, legal, play, snapshot, table

from referee.rules import Game, IllegalAction, make_rules

PEREV = make_rules("perevodnoy")
SHOW = make_rules("perevodnoy_trump")


def t3(rules=PEREV, seat2="8C 9D TD JD", **kw) -> Game:
    return Game.from_position(rules, ["6S 6C 9C", "6D 7S KD", seat2], trump="AH",
                              talon="QC KC QS KS AH", **kw)


def test_transfer_is_off_in_classic():
    g = t3(make_rules())
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "take"}
    with pytest.raises(IllegalAction, match="transfer=off"):
        play(g, "transfer 6D")


def test_defender_may_transfer_with_a_card_of_the_attacked_rank():
    g = t3()
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "transfer 6D", "take"}
    play(g, "transfer 6D")
    assert table(g) == "6S/-- 6D/--"
    # the next seat defends, the passing player is the main attacker
    assert (g.attacker, g.defender, g.current_seat) == (1, 2, 2)
    o = g.observe(0)
    assert o["attacker"] == 1 and o["defender"] == 2 and o["transfers"] == 1 and o["phase"] == "defend"
    assert legal(g) == {"cover 1 9D", "cover 1 TD", "cover 1 JD", "take"}


def test_after_a_transfer_the_passing_player_is_asked_first_and_draws_first():
    g = t3()
    play(g, "attack 6S", "transfer 6D", "take")
    assert g.current_seat == 1 and legal(g) == {"pass"}
    play(g, "pass")
    assert g.current_seat == 0 and legal(g) == {"throw_in 6C", "pass"}
    play(g, "pass")
    assert hand(g, 2) == cards("8C 9D TD JD 6S 6D")
    # draw: seat 1 (main attacker) fills up first, then seat 0
    assert hand(g, 1) == cards("7S KD QC KC QS KS")
    assert hand(g, 0) == cards("6C 9C AH")
    assert g.attacker == 0 and g.defender == 1  # the seat after the taking defender


def test_no_transfer_once_a_card_is_covered():
    g = Game.from_position(PEREV, ["9C", "6H 7D", "8C 9D TD JD"], trump="AH",
                           table="6S/7S 6D/--")
    assert legal(g) == {"cover 1 7D", "cover 1 6H", "take"}
    before = snapshot(g)
    with pytest.raises(IllegalAction, match="already covered"):
        play(g, "transfer 6H")
    assert snapshot(g) == before


def test_no_transfer_unless_all_attack_cards_share_one_rank():
    g = Game.from_position(PEREV, ["9C", "6H 7H", "8C 9D TD JD"], trump="AC",
                           table="6S/-- 7S/--")
    assert "transfer 6H" not in legal(g) and "transfer 7H" not in legal(g)
    with pytest.raises(IllegalAction, match="one rank"):
        play(g, "transfer 6H")


def test_transfer_card_must_be_of_the_attacked_rank():
    g = t3()
    play(g, "attack 6S")
    with pytest.raises(IllegalAction, match="attacked rank"):
        play(g, "transfer KD")


def test_new_defender_must_hold_as_many_cards_as_attack_cards_will_lie():
    g = t3(seat2="8C")
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "take"}
    with pytest.raises(IllegalAction, match="too few cards"):
        play(g, "transfer 6D")
    g = t3(seat2="8C 9D")
    play(g, "attack 6S")
    assert "transfer 6D" in legal(g)
    play(g, "transfer 6D")
    assert g.observe(0)["attack_limit"] == 2


def test_transfer_new_defender_is_the_next_seat_still_in():
    g = Game.from_position(PEREV, ["6S 9C", "6D 7S", "", "8C 9D TD"], trump="AH", out=(2,))
    play(g, "attack 6S", "transfer 6D")
    assert (g.attacker, g.defender) == (1, 3)


def test_transfer_respects_max_attacks():
    rules = make_rules("perevodnoy", ["max_attacks=2"])
    g = Game.from_position(rules, ["9C", "6H 7D", "8C 9D TD JD"], trump="AC", table="6S/-- 6D/--")
    assert legal(g) == {"cover 1 7D", "take"}
    with pytest.raises(IllegalAction, match="attack limit"):
        play(g, "transfer 6H")
    g = Game.from_position(PEREV, ["9C", "6H 7D", "8C 9D TD JD"], trump="AC", table="6S/-- 6D/--")
    assert "transfer 6H" in legal(g)
    # a transfer that brings the table exactly to max_attacks is allowed
    g = Game.from_position(rules, ["9C", "6H 7D", "8C 9D TD JD"], trump="AC", table="6S/--")
    assert legal(g) == {"transfer 6H", "take"}
    play(g, "transfer 6H")
    assert table(g) == "6S/-- 6H/--" and g.current_seat == 2


def test_after_a_transfer_the_first_bout_limit_still_holds():
    rules = make_rules("perevodnoy", ["first_bout_limit=on"])
    g = Game.from_position(rules, ["6S 9C", "6D 7S", "8C 9D TD JD QD KD 7C"], trump="AH",
                           talon="QC AH", first_bout=True)
    play(g, "attack 6S", "transfer 6D")
    assert g.observe(0)["attack_limit"] == 5


def test_after_a_transfer_the_limit_is_the_new_defenders_hand():
    g = t3(seat2="8C 9D TD")
    play(g, "attack 6S", "transfer 6D")
    assert g.observe(0)["attack_limit"] == 3
    play(g, "cover 1 9D", "take")
    assert legal(g) == {"pass"}        # seat 1 holds no six
    play(g, "pass")
    assert legal(g) == {"throw_in 6C", "throw_in 9C", "pass"}
    play(g, "throw_in 6C")
    # three attack cards = what seat 2 held when the bout reached it: the bout ends
    assert table(g) == "" and hand(g, 2) >= cards("6S 6D 9D 6C")


def test_bout_travels_round_the_table_back_to_its_first_attacker():
    g = Game.from_position(PEREV, ["6S 9C 9D 9S", "6D 7S KD", "6C 8C TD JD"], trump="AH",
                           talon="QC AH")
    play(g, "attack 6S", "transfer 6D", "transfer 6C")
    assert (g.attacker, g.defender) == (2, 0)
    assert table(g) == "6S/-- 6D/-- 6C/--"
    assert g.observe(1)["transfers"] == 2
    assert legal(g) == {"cover 0 9S", "cover 1 9D", "cover 2 9C", "take"}


def test_two_players_ping_pong():
    g = Game.from_position(PEREV, ["6S 6C 9C 9D", "6D 6H 7S 8S"], trump="AH", talon="QC AH")
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "cover 0 8S", "cover 0 6H", "transfer 6D", "transfer 6H", "take"}
    play(g, "transfer 6D")
    assert (g.attacker, g.defender) == (1, 0)
    assert legal(g) == {"transfer 6C", "cover 1 9D", "take"}
    play(g, "transfer 6C")
    assert (g.attacker, g.defender) == (0, 1)
    # seat 0 holds two cards: no fourth card may be passed back to it
    assert legal(g) == {"cover 0 7S", "cover 0 8S", "cover 0 6H", "cover 1 6H", "cover 2 6H", "take"}


def test_transfer_limit_one_deflection():
    g = Game.from_position(make_rules("deflection"), ["6S 9C 9D 9S", "6D 7S KD", "6H 8C TD JD"],
                           trump="AC", talon="QC AC")
    play(g, "attack 6S")
    assert "transfer 6D" in legal(g)
    play(g, "transfer 6D")
    assert legal(g) == {"cover 0 8C", "cover 1 8C", "cover 1 TD", "cover 1 JD", "take"}
    with pytest.raises(IllegalAction, match="1 transfer"):
        play(g, "transfer 6H")


def test_transfer_limit_counts_per_bout():
    rules = make_rules("deflection")
    g = Game.from_position(rules, ["6S 7C 9D", "6D 7S KD QD", "7H 8C TD JD"], trump="AC",
                           talon="KS QC AC")
    play(g, "attack 6S", "transfer 6D", "take")
    assert (g.attacker, g.defender) == (0, 1) and g.observe(0)["transfers"] == 0
    play(g, "attack 7C")
    assert "transfer 7S" in legal(g)


def test_deflection_never_passes_onto_a_player_with_one_card():
    g = t3(make_rules("deflection"), seat2="8C")
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "take"}


def test_deflection_with_trump_show_never_shows_onto_a_player_with_one_card():
    # seat 2 holds one card: enough for a show in perevodnoy_trump, never under deflection
    rules = make_rules("deflection", ["transfer=trump_show"])
    g = Game.from_position(rules, ["6S 9C", "6H 7S KD", "8C"], trump="AH", talon="QC KC AH")
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "cover 0 6H", "take"}
    with pytest.raises(IllegalAction, match="never passed onto a player with one card"):
        play(g, "show_trump 6H")
    # with two cards the new defender may be shown onto (or transferred onto)
    g = Game.from_position(rules, ["6S 9C", "6H 7S KD", "8C 9D"], trump="AH", talon="QC KC AH")
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "cover 0 6H", "transfer 6H", "show_trump 6H", "take"}


def test_transfer_limit_none_allows_any_number():
    g = Game.from_position(make_rules("perevodnoy", ["transfer_limit=none"]),
                           ["6S 6C 9C 9D", "6D 6H 7S 8S"], trump="AC", talon="QC AC")
    play(g, "attack 6S", "transfer 6D", "transfer 6C")
    assert g.observe(0)["transfers"] == 2


def test_transfer_limit_two():
    rules = make_rules("perevodnoy", ["transfer_limit=2"])
    g = Game.from_position(rules, ["6S 6C 9C 9D TD JD", "6D 6H 7S 8S TS"], trump="AC", talon="QC AC")
    play(g, "attack 6S", "transfer 6D", "transfer 6C")
    assert "transfer 6H" not in legal(g)
    g = Game.from_position(PEREV, ["6S 6C 9C 9D TD JD", "6D 6H 7S 8S TS"], trump="AC", talon="QC AC")
    play(g, "attack 6S", "transfer 6D", "transfer 6C")
    assert "transfer 6H" in legal(g)


# --- trump_show -----------------------------------------------------------------------------

def s2(rules=SHOW) -> Game:
    return Game.from_position(rules, ["6S 6C 9C", "6H 7S KD"], trump="AH", talon="QC KC AH")


def test_show_the_trump_of_the_attacked_rank():
    g = s2()
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "cover 0 6H", "transfer 6H", "show_trump 6H", "take"}


def test_showing_passes_the_bout_on_with_no_new_card_and_the_card_becomes_known():
    g = s2(make_rules("perevodnoy_trump"))
    g.events = []
    play(g, "attack 6S", "show_trump 6H")
    assert table(g) == "6S/--"
    assert hand(g, 1) == cards("6H 7S KD")
    assert (g.attacker, g.defender) == (1, 0)
    for s in (0, 1):
        o = g.observe(s)
        assert o["known"][1] == ["6H"] and o["shown"] == ["6H"]
        assert o["hand_sizes"] == [2, 3] and o["transfers"] == 1
    assert g.public_event(g.events[-1], 0) == {"type": "show_trump", "seat": 1, "card": "6H"}


def test_each_trump_may_be_shown_once_per_bout():
    g = s2()
    play(g, "attack 6S", "show_trump 6H")
    assert legal(g) == {"transfer 6C", "take"}
    play(g, "transfer 6C")
    # 6H was shown already; passing it (a third card) to seat 0's single card is too many
    assert legal(g) == {"cover 0 7S", "cover 0 6H", "cover 1 6H", "take"}
    with pytest.raises(IllegalAction, match="already shown"):
        play(g, "show_trump 6H")
    # the same when the bout could go on to a seat holding enough cards: only the rule stops it
    g = Game.from_position(SHOW, ["6S 6C 9C TC JC", "6H 7S KD"], trump="AH", talon="QC KC QS KS AH")
    play(g, "attack 6S", "show_trump 6H", "transfer 6C")
    assert legal(g) == {"cover 0 7S", "cover 0 6H", "cover 1 6H", "transfer 6H", "take"}
    with pytest.raises(IllegalAction, match="6H was already shown in this bout"):
        play(g, "show_trump 6H")


def test_shown_trumps_are_forgotten_by_the_next_bout():
    g = Game.from_position(SHOW, ["6S 6C 9C TC", "6H 7S KD 7D"], trump="AH", talon="QC KC QS KS AH")
    play(g, "attack 6S", "show_trump 6H", "take", "pass")
    o = g.observe(0)
    assert o["shown"] == [] and o["transfers"] == 0 and o["known"][1] == ["6H"]
    assert (g.attacker, g.defender) == (1, 0)
    play(g, "attack 6H")
    assert g.observe(0)["known"] == [["6S"], []]


def test_show_only_a_trump():
    g = Game.from_position(SHOW, ["6S 6C 9C", "6D 7S KD"], trump="AH", talon="QC KC AH")
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "transfer 6D", "take"}
    with pytest.raises(IllegalAction, match="not a trump"):
        play(g, "show_trump 6D")


def test_show_only_a_trump_of_the_attacked_rank():
    g = Game.from_position(SHOW, ["6S 6C 9C", "7H 7S KD"], trump="AH", talon="QC KC AH")
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "cover 0 7H", "take"}
    with pytest.raises(IllegalAction, match="attacked rank"):
        play(g, "show_trump 7H")


def test_show_needs_the_trump_show_mode():
    g = s2(PEREV)
    play(g, "attack 6S")
    assert legal(g) == {"cover 0 7S", "cover 0 6H", "transfer 6H", "take"}
    with pytest.raises(IllegalAction, match="transfer=on"):
        play(g, "show_trump 6H")


def test_show_needs_the_new_defender_to_hold_as_many_cards_as_lie_on_the_table():
    g = Game.from_position(SHOW, ["6S 9C", "6H 7S KD", "8C"], trump="AH", talon="QC KC AH")
    play(g, "attack 6S")
    # one attack card stays on the table: seat 2's one card is enough for a show, not a transfer
    assert legal(g) == {"cover 0 7S", "cover 0 6H", "show_trump 6H", "take"}
    g = Game.from_position(SHOW, ["6S 9C", "6H 7S KD", ""], trump="AH", out=(2,))
    play(g, "attack 6S")
    assert "show_trump 6H" in legal(g)


def test_show_not_after_a_cover():
    g = Game.from_position(SHOW, ["9C", "6H 8D", "8C 9D TD JD"], trump="AH", table="6S/7S 6D/--")
    assert "show_trump 6H" not in legal(g)


def test_a_shown_trump_counts_against_transfer_limit():
    rules = make_rules("perevodnoy_trump", ["transfer_limit=1"])
    g = Game.from_position(rules, ["6S 6C 9C TC", "6H 7S KD"], trump="AH", talon="QC KC AH")
    play(g, "attack 6S", "show_trump 6H")
    assert legal(g) == {"take"}


def test_four_players_after_a_transfer_ask_and_draw_from_the_passing_player_clockwise():
    g = Game.from_position(PEREV, ["6S 6C", "6D 7S", "8C 9D TD JD", "6H 9S"], trump="AS",
                           talon="QC KC QD KD QH KH 7C 7D 7H AS")
    play(g, "attack 6S", "transfer 6D", "take")
    asked = []
    while g.observe(0)["phase"] == "throw_in":
        asked.append(g.current_seat)
        play(g, "pass")
    assert asked == [1, 3, 0]
    assert hand(g, 2) == cards("8C 9D TD JD 6S 6D")
    assert hand(g, 1) == cards("7S QC KC QD KD QH")   # main attacker draws first
    assert hand(g, 3) == cards("6H 9S KH 7C 7D 7H")   # then the others clockwise from it
    assert hand(g, 0) == cards("6C AS")
    assert (g.attacker, g.defender) == (3, 0)


def test_a_shown_trump_joins_the_cards_already_known_in_that_hand():
    g = Game.from_position(SHOW, ["6S 7S 7C", "7H 9D TD"], trump="AH")
    play(g, "attack 6S", "take", "attack 7S", "show_trump 7H")   # 6S known since the take
    for s in (0, 1):
        assert g.observe(s)["known"] == [[], ["6S", "7H"]] and g.observe(s)["shown"] == ["7H"]
