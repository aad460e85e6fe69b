"""RULES.md, "The bout": `lead=same_rank` (a lead of several cards of one rank) and
`throw_in_timing=any` (attackers add cards while some are still uncovered)."""

import pytest
from rules_testkit import hand, legal, play, snapshot, table

from referee.rules import Game, IllegalAction, make_rules

SAME = make_rules("classic", ["lead=same_rank"])
ANY = make_rules("classic", ["throw_in_timing=any"])
TALON = "QC KC QS KS JH QH KH AH"


def test_by_default_the_lead_is_one_card_and_the_defender_answers_at_once():
    g = Game.from_position(make_rules(), ["6S 6D 9C", "7S 8D KD", "8C 9D"], trump="AH", talon=TALON)
    play(g, "attack 6S")
    assert g.current_seat == 1 and legal(g) == {"cover 0 7S", "take"}


def test_same_rank_lead_the_main_attacker_may_add_cards_of_the_lead_rank_or_pass():
    g = Game.from_position(SAME, ["6S 6D 6C 9C", "7S 8D KD QD", "8C 9D"], trump="AH", talon=TALON)
    assert legal(g) == {"attack 6S", "attack 6D", "attack 6C", "attack 9C"}
    play(g, "attack 6S")
    o = g.observe(1)
    assert o["phase"] == "attack" and o["table"] == [["6S", None]] and g.current_seat == 0
    assert legal(g) == {"attack 6D", "attack 6C", "pass"}
    assert g.forced_action() is None
    play(g, "attack 6D")
    assert legal(g) == {"attack 6C", "pass"}
    play(g, "pass")
    assert table(g) == "6S/-- 6D/--"
    assert g.current_seat == 1
    assert legal(g) == {"cover 0 7S", "cover 1 8D", "cover 1 KD", "cover 1 QD", "take"}


def test_same_rank_lead_only_of_the_lead_rank():
    g = Game.from_position(SAME, ["6S 6D 9C", "7S 8D KD", "8C 9D"], trump="AH", talon=TALON)
    play(g, "attack 6S")
    before = snapshot(g)
    with pytest.raises(IllegalAction, match="a lead of several cards is of one rank: 9C is not of rank 6"):
        play(g, "attack 9C")
    assert snapshot(g) == before


def test_same_rank_lead_ends_by_itself_when_nothing_more_can_be_added():
    # no other six in hand: the defender answers at once
    g = Game.from_position(SAME, ["6S 9C", "7S 8D KD", "8C 9D"], trump="AH", talon=TALON)
    play(g, "attack 6S")
    assert g.current_seat == 1 and g.observe(0)["phase"] == "defend"
    # the defender holds two cards: the lead stops at two
    g = Game.from_position(SAME, ["6S 6D 6C 6H", "7S 8D", "8C 9D"], trump="AH", talon=TALON)
    play(g, "attack 6S", "attack 6D")
    assert g.current_seat == 1 and legal(g) == {"cover 0 7S", "cover 1 8D", "take"}


def test_same_rank_lead_in_the_transfer_game_lead_a_pair_the_defender_transfers_with_a_third():
    rules = make_rules("perevodnoy", ["lead=same_rank"])
    g = Game.from_position(rules, ["6S 6D 9C", "6C 7S 8D KD", "8C 9D TD JD"], trump="AH", talon=TALON)
    play(g, "attack 6S", "attack 6D")  # no six left in hand: the lead ends by itself
    assert "transfer 6C" in legal(g)
    play(g, "transfer 6C")
    assert table(g) == "6S/-- 6D/-- 6C/--" and (g.attacker, g.defender) == (1, 2)


def test_same_rank_lead_respects_the_first_bout_limit_and_max_attacks():
    rules = make_rules("classic", ["lead=same_rank", "max_attacks=2"])
    g = Game.from_position(rules, ["6S 6D 6C 9C", "7S 8D KD QD", "8C 9D"], trump="AH", talon=TALON)
    play(g, "attack 6S", "attack 6D")
    assert g.current_seat == 1  # two cards: the lead is over


# --- throw_in_timing=any ------------------------------------------------------------------

def a3(rules=ANY) -> Game:
    return Game.from_position(rules, ["6S 9C", "7S 8D KD QD", "6D 9D TC"], trump="AH", talon=TALON)


def test_throw_in_any_the_attackers_are_asked_after_the_lead_before_the_defender():
    g = a3()
    play(g, "attack 6S")
    o = g.observe(1)
    assert o["phase"] == "throw_in" and o["table"] == [["6S", None]]
    # seat 0 holds no other six (forced pass); seat 2 may add 6D while 6S is uncovered
    assert g.current_seat == 0 and legal(g) == {"pass"}
    play(g, "pass")
    assert g.current_seat == 2 and legal(g) == {"throw_in 6D", "pass"}
    play(g, "throw_in 6D")
    # a new card would restart the asking at the main attacker, but nobody can add more
    # (decision 2): the defender answers at once
    assert g.current_seat == 1 and g.observe(1)["phase"] == "defend"
    assert legal(g) == {"cover 0 7S", "cover 1 8D", "cover 1 KD", "cover 1 QD", "take"}


def test_throw_in_any_after_every_cover_the_attackers_may_add_again():
    g = a3()
    play(g, "attack 6S", "pass", "pass")
    assert g.current_seat == 1
    play(g, "cover 0 7S")
    # 7S is on the table now; nobody holds a 6 or 7 but seat 2's 6D
    assert g.current_seat == 0 and g.observe(0)["phase"] == "throw_in"
    play(g, "pass")
    assert legal(g) == {"throw_in 6D", "pass"}
    play(g, "throw_in 6D")
    assert g.current_seat == 1 and legal(g) == {"cover 1 8D", "cover 1 KD", "cover 1 QD", "take"}


def test_throw_in_any_the_bout_ends_when_all_pass_and_all_is_covered():
    g = a3()
    play(g, "attack 6S", "pass", "pass", "cover 0 7S", "pass", "pass")
    assert table(g) == "" and (g.attacker, g.defender) == (1, 2)


def test_throw_in_any_nobody_able_to_add_goes_straight_to_the_defender():
    g = Game.from_position(ANY, ["6S 9C", "7S 8D", "8C 9D"], trump="AH", talon=TALON)
    play(g, "attack 6S")
    assert g.current_seat == 1 and g.observe(0)["phase"] == "defend"


def test_throw_in_any_never_more_uncovered_cards_than_the_defender_holds():
    # the defender holds one card: the lead fills the limit, nobody is asked
    g = Game.from_position(ANY, ["6S 9C", "7S", "6D 9D"], trump="AH", talon=TALON)
    play(g, "attack 6S")
    assert g.current_seat == 1 and legal(g) == {"cover 0 7S", "take"}


def test_throw_in_any_with_a_taking_defender_is_as_before():
    g = a3()
    play(g, "attack 6S", "pass", "pass", "take")
    assert g.current_seat == 0 and legal(g) == {"pass"}
    play(g, "pass", "throw_in 6D")  # nothing more can be added: the bout ends
    assert table(g) == "" and "6D" in hand(g, 1) and "6S" in hand(g, 1)
