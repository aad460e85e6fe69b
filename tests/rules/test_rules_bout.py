"""RULES.md, "The bout": leading, covering, taking, throwing in, who is asked when,
when the bout ends, the limits on attack cards, and forced moves."""

from rules_testkit import cards, hand, legal, play, table

from referee.rules import PASS, TAKE, Game, make_rules

CLASSIC = make_rules()


def seats_asked(g: Game, *actions: str) -> list[int]:
    """Apply ``actions`` and return the seat that was asked for each one."""
    asked = []
    for a in actions:
        asked.append(g.current_seat)
        play(g, a)
    return asked


# --- 1. the lead ------------------------------------------------------------------------

def test_main_attacker_leads_any_card():
    g = Game.from_position(CLASSIC, ["6S 7S 7H", "8S 9H AH"], trump="TH", talon="QC TH")
    assert g.current_seat == 0 and g.observe(0)["phase"] == "attack"
    assert legal(g) == {"attack 6S", "attack 7S", "attack 7H"}


def test_lead_with_a_trump_or_a_high_card_is_allowed_too():
    g = Game.from_position(CLASSIC, ["AH AS 6C", "8S 9H KH"], trump="TH", talon="QC TH")
    assert legal(g) == {"attack AH", "attack AS", "attack 6C"}


# --- 2. the defender ---------------------------------------------------------------------

def test_defender_covers_with_a_higher_card_of_the_suit_or_a_trump_or_takes():
    g = Game.from_position(CLASSIC, ["6S 7S 7H", "8S 9H AH", "7C"], trump="TH", talon="QC TH")
    play(g, "attack 6S")
    assert g.current_seat == 1 and g.observe(1)["phase"] == "defend"
    assert legal(g) == {"cover 0 8S", "cover 0 9H", "cover 0 AH", "take"}


def test_the_example_from_the_brief():
    g = Game.from_position(CLASSIC, ["7S 7H", "8S 9H AH"], trump="TH", talon="QC TH", table="6S/--")
    assert legal(g) == {"cover 0 8S", "cover 0 9H", "cover 0 AH", "take"}


def test_a_trump_lead_is_covered_only_by_a_higher_trump():
    g = Game.from_position(CLASSIC, ["6S 7S 7H", "8S 9H AH 6H"], trump="TH", talon="QC TH")
    play(g, "attack 7H")
    assert legal(g) == {"cover 0 9H", "cover 0 AH", "take"}


def test_no_follow_suit_and_a_defender_who_cannot_beat_may_only_take():
    g = Game.from_position(CLASSIC, ["AS 7S", "6S KD AC"], trump="TH", talon="QC TH")
    play(g, "attack AS")
    assert legal(g) == {"take"}


def test_defender_chooses_which_uncovered_card_to_cover_one_at_a_time():
    g = Game.from_position(make_rules("perevodnoy"), ["9C", "7S 7D AH", "7C 9D"],
                           trump="TH", talon="QC TH", table="6S/-- 6D/--")
    assert legal(g) == {"cover 0 7S", "cover 0 AH", "cover 1 7D", "cover 1 AH", "take"}
    play(g, "cover 1 7D")
    assert table(g) == "6S/-- 6D/7D"
    assert g.current_seat == 1
    assert legal(g) == {"cover 0 7S", "cover 0 AH", "take"}
    play(g, "cover 0 AH")
    assert table(g) == "6S/AH 6D/7D" and g.current_seat == 0 and legal(g) == {"pass"}


# --- 3. asking the attackers --------------------------------------------------------------

# Four players: seat 0 attacks, seat 1 defends, seats 2 and 3 are the other attackers.
P4_HANDS = ["6S 7S 8H", "9S TS JS QS 7C 8C", "6D 7D 8D", "6H 7H 9H"]


def p4(rules=CLASSIC, **kw) -> Game:
    return Game.from_position(rules, P4_HANDS, trump="AC", talon="9C TC JC QC KC AC", **kw)


def test_after_all_covered_attackers_are_asked_main_first_then_clockwise_never_the_defender():
    g = p4()
    play(g, "attack 6S", "cover 0 9S")
    assert g.observe(0)["phase"] == "throw_in"
    assert seats_asked(g, "pass", "pass", "pass") == [0, 2, 3]
    # everyone passed in a row: the bout is beaten and over, the defender attacks next
    assert g.observe(0)["phase"] == "attack" and g.attacker == 1 and g.defender == 2
    assert table(g) == ""


CCW_ASKING = make_rules("classic", ["throw_in_order=counter_clockwise"])


def test_throw_in_order_counter_clockwise_asks_the_main_attacker_then_backwards_from_it():
    g = p4(CCW_ASKING)
    assert g.order == [0, 3, 2]
    play(g, "attack 6S", "cover 0 9S")
    assert g.current_seat == 0 and legal(g) == {"pass"}
    play(g, "pass")
    assert g.current_seat == 3 and legal(g) == {"throw_in 6H", "throw_in 9H", "pass"}
    play(g, "pass")
    assert g.current_seat == 2 and legal(g) == {"throw_in 6D", "pass"}
    play(g, "pass")
    assert g.attacker == 1 and g.defender == 2 and g.order == [1, 0, 3]


def test_throw_in_order_counter_clockwise_restarts_at_the_main_attacker_after_a_new_card():
    g = p4(CCW_ASKING)
    play(g, "attack 6S", "cover 0 9S")
    assert seats_asked(g, "pass", "throw_in 6H") == [0, 3]
    assert g.current_seat == 1 and legal(g) == {"cover 1 7C", "cover 1 8C", "take"}
    play(g, "cover 1 7C")
    assert g.current_seat == 0 and legal(g) == {"throw_in 7S", "pass"}
    play(g, "pass")
    assert g.current_seat == 3 and legal(g) == {"throw_in 7H", "throw_in 9H", "pass"}
    play(g, "pass")
    assert g.current_seat == 2 and legal(g) == {"throw_in 6D", "throw_in 7D", "pass"}


def test_throw_in_order_skips_seats_that_are_out_either_way():
    hands = ["6S 7S", "9S TS JS", "6D 7D", "", "6H 7H"]
    for rules, order in ((CLASSIC, [0, 2, 4]), (CCW_ASKING, [0, 4, 2])):
        g = Game.from_position(rules, hands, trump="AC", out=(3,))
        assert g.order == order
        play(g, "attack 6S", "cover 0 9S")
        assert seats_asked(g, "pass", "pass", "pass") == order


def test_throw_in_order_changes_nothing_with_two_or_three_players():
    for hands in (["6S 7S", "9S TS"], ["6S 7S", "9S TS", "6D 7D"]):
        orders = {tuple(Game.from_position(r, hands, trump="AC").order) for r in (CLASSIC, CCW_ASKING)}
        assert orders == {(0,)} or orders == {(0, 2)}


def test_throw_in_order_does_not_change_the_drawing_order():
    # drawing stays main attacker, then clockwise, defender last (draw_others decides it)
    g = p4(CCW_ASKING)
    play(g, "attack 6S", "cover 0 9S", "pass", "pass", "pass")
    assert hand(g, 0) == cards("7S 8H 9C TC JC QC")
    assert hand(g, 2) == cards("6D 7D 8D KC AC")         # the talon ran out here
    assert hand(g, 3) == cards("6H 7H 9H")
    both = make_rules("classic", ["throw_in_order=counter_clockwise", "draw_others=counter_clockwise"])
    g = p4(both)
    play(g, "attack 6S", "cover 0 9S", "pass", "pass", "pass")
    assert hand(g, 3) == cards("6H 7H 9H KC AC")
    assert hand(g, 2) == cards("6D 7D 8D")


def test_throw_in_only_of_ranks_on_the_table_attack_or_cover_cards():
    g = p4()
    play(g, "attack 6S", "cover 0 9S")
    assert g.current_seat == 0 and legal(g) == {"pass"}
    play(g, "pass")
    assert legal(g) == {"throw_in 6D", "pass"}
    play(g, "pass")
    assert legal(g) == {"throw_in 6H", "throw_in 9H", "pass"}


def test_throw_in_ranks_attacks_counts_attack_cards_only():
    g = p4(make_rules("classic", ["throw_in_ranks=attacks"]))
    play(g, "attack 6S", "cover 0 9S", "pass", "pass")
    assert legal(g) == {"throw_in 6H", "pass"}
    play(g, "throw_in 6H", "cover 1 8C")  # 8 is now a cover rank, 6 an attack rank
    assert table(g) == "6S/9S 6H/8C"
    assert legal(g) == {"pass"}          # seat 0 holds 8H: a cover rank only
    play(g, "pass")
    assert legal(g) == {"throw_in 6D", "pass"}


def test_thrown_in_card_goes_to_the_defender_then_asking_restarts_at_the_main_attacker():
    g = p4()
    play(g, "attack 6S", "cover 0 9S")
    assert seats_asked(g, "pass", "throw_in 6D") == [0, 2]
    assert g.current_seat == 1 and g.observe(1)["phase"] == "defend"
    assert legal(g) == {"cover 1 7C", "cover 1 8C", "take"}
    play(g, "cover 1 7C")
    # restarts at seat 0, not at seat 3 (the one after the thrower)
    assert g.current_seat == 0
    assert legal(g) == {"throw_in 7S", "pass"}
    # a new card gives everybody another turn: seat 3 must still be asked
    assert seats_asked(g, "pass", "throw_in 7D") == [0, 2]
    play(g, "cover 2 8C")
    assert seats_asked(g, "pass", "pass", "pass") == [0, 2, 3]
    assert g.attacker == 1 and table(g) == ""
    assert set(g.observe(0)["discard"]) >= cards("6S 9S 6D 7C 7D 8C")


def test_passing_earlier_does_not_end_the_bout_when_a_card_was_added_since():
    g = p4()
    play(g, "attack 6S", "cover 0 9S")
    assert seats_asked(g, "pass", "pass", "throw_in 9H") == [0, 2, 3]
    play(g, "cover 1 7C")
    assert seats_asked(g, "pass", "pass") == [0, 2]
    assert g.current_seat == 3 and g.observe(0)["phase"] == "throw_in"
    play(g, "pass")
    assert g.attacker == 1


def test_while_the_defender_takes_thrown_cards_are_not_answered_and_asking_restarts():
    g = p4()
    play(g, "attack 6S", "take")
    o = g.observe(2)
    assert o["phase"] == "throw_in" and o["taking"] is True
    assert g.current_seat == 0 and legal(g) == {"pass"}
    assert seats_asked(g, "pass", "throw_in 6D") == [0, 2]
    assert g.current_seat == 0 and g.observe(0)["phase"] == "throw_in"
    assert table(g) == "6S/-- 6D/--"
    assert seats_asked(g, "pass", "pass", "throw_in 6H") == [0, 2, 3]
    # nobody holds a six any more: taken at once; the defender picks up everything and
    # the next seat after them attacks
    assert hand(g, 1) == cards("9S TS JS QS 7C 8C 6S 6D 6H")
    assert g.attacker == 2 and g.defender == 3


def test_a_taken_bout_ends_when_every_attacker_passed_in_a_row():
    g = Game.from_position(CLASSIC, ["6S 6D", "9S TS JS", "6H 7H"], trump="AC", talon="9C TC JC QC KC AC")
    play(g, "attack 6S", "take")
    assert seats_asked(g, "pass", "throw_in 6H") == [0, 2]
    assert seats_asked(g, "pass") == [0]
    assert g.current_seat == 2 and g.observe(0)["phase"] == "throw_in"
    play(g, "pass")
    assert hand(g, 1) == cards("6S 6H 9S TS JS") and g.attacker == 2


def test_bout_ends_at_once_when_no_attacker_holds_a_table_rank():
    g = Game.from_position(CLASSIC, ["6S 7S 8H", "9S TS JS QS 7C 8C", "7D 8D TD", "7H JH QH"],
                           trump="AC", talon="9C TC JC QC KC AC")
    play(g, "attack 6S", "cover 0 9S")
    o = g.observe(0)
    assert o["phase"] == "attack" and o["table"] == [] and g.attacker == 1
    assert set(o["discard"]) >= {"6S", "9S"}


def test_bout_ends_at_once_when_the_taken_table_holds_no_rank_an_attacker_has():
    g = Game.from_position(CLASSIC, ["6S 7S", "9S TS", "7D 8D", "7H 8H"], trump="AC",
                           talon="9C TC JC QC KC AC")
    play(g, "attack 6S", "take")
    assert g.attacker == 2 and hand(g, 1) == cards("6S 9S TS")


def test_bout_ends_at_once_when_the_cap_is_reached():
    g = p4(make_rules("classic", ["max_attacks=1"]))
    play(g, "attack 6S", "cover 0 9S")
    assert g.attacker == 1 and table(g) == ""


# --- limits ---------------------------------------------------------------------------------

BIG_DEFENDER = "7C 8C 9C TC JC QC KC AC"


def five_covered(rules, first_bout=False, defender=BIG_DEFENDER) -> Game:
    return Game.from_position(rules, ["6H 7H 8H 9H", defender + " AD"],
                              trump="AC", table="6S/7S 6D/7D 8S/9S 8D/9D TS/JS",
                              first_bout=first_bout)


def test_at_most_six_attack_cards_by_default():
    g = five_covered(CLASSIC)
    assert g.observe(0)["attack_limit"] == 6
    assert legal(g) == {"throw_in 6H", "throw_in 7H", "throw_in 8H", "throw_in 9H", "pass"}
    play(g, "throw_in 6H")
    assert legal(g) == {"cover 5 7C", "cover 5 8C", "cover 5 9C", "cover 5 TC", "cover 5 JC",
                        "cover 5 QC", "cover 5 KC", "cover 5 AC", "take"}
    play(g, "cover 5 7C")
    # six attack cards: the bout ends although seat 0 still holds 7H 8H 9H
    assert table(g) == "" and g.attacker == 1


def test_six_cards_while_taking_too():
    g = five_covered(CLASSIC)
    play(g, "throw_in 6H", "take")
    assert table(g) == "" and g.attacker == 0 and len(hand(g, 1)) == 9 + 11


def test_max_attacks_number():
    g = five_covered(make_rules("classic", ["max_attacks=5", "ask_forced=off"]))
    assert legal(g) == {"pass"} and g.forced_action() == PASS
    g = Game.from_position(make_rules("classic", ["max_attacks=2"]), ["6H 6C", "TS 8S 9S"],
                           trump="AC", table="6S/7S")
    assert legal(g) == {"throw_in 6H", "throw_in 6C", "pass"}
    play(g, "throw_in 6H", "take")
    assert table(g) == ""


def test_max_attacks_none_only_the_defenders_hand_limits():
    g = five_covered(make_rules("classic", ["max_attacks=none"]))
    assert g.observe(0)["attack_limit"] == 14
    play(g, "throw_in 6H", "cover 5 8C", "throw_in 8H")
    assert len(g.observe(0)["table"]) == 7 and g.current_seat == 1


def test_first_bout_limit_five_in_the_first_bout_only():
    rules = make_rules("classic", ["first_bout_limit=on"])
    g = five_covered(rules, first_bout=True)
    assert g.observe(0)["attack_limit"] == 5
    assert legal(g) == {"pass"}
    g = five_covered(rules, first_bout=False)
    assert g.observe(0)["attack_limit"] == 6
    assert "throw_in 6H" in legal(g)


def test_first_bout_limit_off_by_default():
    g = five_covered(CLASSIC, first_bout=True)
    assert g.observe(0)["attack_limit"] == 6


def test_first_bout_limit_from_a_real_deal():
    rules = make_rules("classic", ["first_bout_limit=on"])
    g = Game.new(rules, 2, seed=11)
    assert g.observe(0)["attack_limit"] == 5
    defender = g.defender
    g.apply(g.legal_actions()[0])
    play(g, "take")
    while g.observe(0)["bout"] == 1:
        play(g, "pass")
    assert g.observe(0)["attack_limit"] == 6
    assert len(hand(g, defender)) >= 7


def test_uncovered_cards_never_outnumber_the_defenders_hand():
    # the defender holds two cards: at most two attack cards this bout
    g = Game.from_position(CLASSIC, ["6S 6D 6H 7S", "7D 8S", "6C"], trump="AC",
                           talon="9D TD JD QD KD AD 9C TC JC QC KC AC")
    assert g.observe(0)["attack_limit"] == 2
    play(g, "attack 6S", "cover 0 8S")
    assert legal(g) == {"throw_in 6D", "throw_in 6H", "pass"}
    play(g, "throw_in 6D", "cover 1 7D")
    # the defender has no cards left: no more throw-ins although both attackers hold sixes
    assert table(g) == "" and g.attacker == 1


def test_defender_hand_cap_counts_covers_while_taking():
    # three cards at the start of the bout; one covered, then take: uncovered cards
    # may grow to the two cards still in hand, so three attack cards in all
    g = Game.from_position(CLASSIC, ["6S 6D 6H 8D", "7S KD QD", "6C"], trump="AC",
                           talon="9C TC JC QC KC AC")
    play(g, "attack 6S", "cover 0 7S", "throw_in 6D", "take")
    assert legal(g) == {"throw_in 6H", "pass"}
    play(g, "throw_in 6H")
    # uncovered 6D 6H = the defender's two cards in hand: the bout ends, although 6C could go in
    assert table(g) == "" and hand(g, 1) == cards("6S 7S 6D 6H KD QD")


def test_defender_hand_cap_from_a_position_counts_cards_the_defender_laid():
    g = Game.from_position(CLASSIC, ["6H 6C 7H", "KD"], trump="AC", table="6S/7S 6D/7D")
    assert g.observe(0)["attack_limit"] == 3
    assert legal(g) == {"throw_in 6H", "throw_in 6C", "throw_in 7H", "pass"}


def test_a_thrown_card_that_reaches_the_cap_ends_a_taken_bout():
    g = Game.from_position(CLASSIC, ["6H 6C", "KD 8S"], trump="AC", table="6S/--", taking=True)
    assert g.observe(0)["phase"] == "throw_in" and g.observe(0)["taking"]
    play(g, "throw_in 6H")
    assert table(g) == "" and hand(g, 1) == cards("6S 6H KD 8S")


# --- forced moves -----------------------------------------------------------------------------
# Forced moves are applied unasked only with ask_forced=off (the default asks them).
UNASKED = make_rules("classic", ["ask_forced=off"])


def test_forced_take_when_take_is_the_only_action():
    g = Game.from_position(UNASKED, ["AS 7S", "6S KD"], trump="TH", talon="QC TH")
    play(g, "attack AS")
    assert legal(g) == {"take"} and g.forced_action() == TAKE


def test_forced_pass_when_pass_is_the_only_action():
    g = p4(UNASKED)
    play(g, "attack 6S", "cover 0 9S")
    assert legal(g) == {"pass"} and g.forced_action() == PASS
    play(g, "pass")
    assert g.forced_action() is None


def test_no_forced_move_when_there_is_a_choice():
    g = Game.from_position(UNASKED, ["6S 7S 7H", "8S 9H AH"], trump="TH", talon="QC TH")
    play(g, "attack 6S")
    assert g.forced_action() is None


def test_never_forced_for_an_attack_even_with_one_card():
    g = Game.from_position(UNASKED, ["6S", "8S 9H AH"], trump="TH", talon="QC TH")
    assert legal(g) == {"attack 6S"} and g.forced_action() is None


def test_ask_forced_on_the_default_asks_every_time():
    rules = make_rules("classic", ["ask_forced=on"])
    assert rules == CLASSIC
    g = Game.from_position(rules, ["AS 7S", "6S KD"], trump="TH", talon="QC TH")
    play(g, "attack AS")
    assert legal(g) == {"take"} and g.forced_action() is None
    g = p4(rules)
    play(g, "attack 6S", "cover 0 9S")
    assert legal(g) == {"pass"} and g.forced_action() is None


def test_no_forced_action_once_the_game_is_over():
    g = Game.from_position(CLASSIC, ["6S", "7S 8S"], trump="TH")
    play(g, "attack 6S", "cover 0 7S")
    assert g.is_over and g.forced_action() is None and g.legal_actions() == []


def test_the_twos_of_the_52_card_deck_are_thrown_in_by_rank_like_any_card():
    """2C is card 0 of the 52-card deck: thrown in only when a two lies on the table, and
    a cover by it puts rank 2 on the table."""
    rules = make_rules("classic", {"deck": "52"})
    g = Game.from_position(rules, ["2C 5S 9H", "7D 8D 9D", "KH"], trump="AH", table="5D/6D")
    assert g.current_seat == 0 and legal(g) == {"throw_in 5S", "pass"}
    g = Game.from_position(rules, ["2S 5S 9H", "7D 8D 9D", "KH"], trump="AC", table="3D/2C")
    assert g.current_seat == 0 and legal(g) == {"throw_in 2S", "pass"}
