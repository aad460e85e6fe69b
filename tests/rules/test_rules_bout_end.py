"""RULES.md, "End of a bout" and "End of the game": discard or pick up, who attacks next,
drawing back up to six, going out, the durak, draws, the stalemate guard, the action cap."""

from rules_testkit import cards, hand, legal, play, table

from referee.rules import Game, make_rules

CLASSIC = make_rules()

P3 = ["6S 7S 8H", "9S TS JS QS 7C 8C", "6D 7D 8D"]
P3_TALON = "9D TD JD QD KD AD 9H TH JH QH KH AH"


def p3(rules=CLASSIC, **kw) -> Game:
    return Game.from_position(rules, P3, trump="AH", talon=P3_TALON, **kw)


# --- beaten ---------------------------------------------------------------------------------

def test_beaten_table_goes_to_the_discard_and_the_defender_attacks_next():
    g = p3()
    discard_before = set(g.observe(0)["discard"])
    play(g, "attack 6S", "cover 0 9S", "pass", "pass")
    o = g.observe(2)
    assert o["table"] == [] and set(o["discard"]) == discard_before | {"6S", "9S"}
    assert o["known"] == [[], [], []]
    assert g.attacker == 1 and g.defender == 2 and o["phase"] == "attack"
    assert g.current_seat == 1


def test_a_cover_by_the_lowest_card_of_the_deck_leaves_the_table_like_any_other():
    """2C is card 0 of the 52-card deck: beaten, it goes to the discard; taken, to the hand."""
    rules = make_rules("classic", {"deck": "52"})
    g = Game.from_position(rules, ["3D 9S", "2C 5H 6H", "7S"], trump="AC", talon="KH AC")
    discard_before = set(g.observe(0)["discard"])
    play(g, "attack 3D", "cover 0 2C")       # nobody can throw in: the bout ends beaten
    o = g.observe(2)
    assert o["table"] == [] and set(o["discard"]) == discard_before | {"3D", "2C"}
    assert o["hand_sizes"] == [3, 2, 1]
    g = Game.from_position(rules, ["3D 3S 9S", "2C 5H 6H", "7S"], trump="AC", talon="KH AC")
    play(g, "attack 3D", "cover 0 2C", "throw_in 3S", "take")
    assert hand(g, 1) == cards("2C 3D 3S 5H 6H") and g.observe(0)["known"][1] == ["2C", "3D", "3S"]


def test_the_seat_drawing_the_face_up_trump_keeps_its_other_known_cards_known():
    g = Game.from_position(CLASSIC, ["6S 9C TC JC QC KC 7C", "7D 8D"], trump="AH", talon="QH AH")
    play(g, "attack 6S", "take")   # seat 1 picks up 6S, then draws QH and the face-up AH
    assert hand(g, 1) == cards("6S 7D 8D QH AH")
    for s in (0, 1):
        o = g.observe(s)
        assert o["known"] == [[], ["6S", "AH"]] and o["trump_holder"] == 1 and o["talon"] == 0


def test_drawing_order_main_attacker_other_attackers_clockwise_defender_last_each_fills_up():
    g = p3()
    play(g, "attack 6S", "cover 0 9S", "pass", "pass")
    assert hand(g, 0) == cards("7S 8H 9D TD JD QD")      # 2 + 4
    assert hand(g, 2) == cards("6D 7D 8D KD AD 9H")      # 3 + 3
    assert hand(g, 1) == cards("TS JS QS 7C 8C TH")      # 5 + 1, last
    assert g.observe(0)["talon"] == 4 and g.observe(0)["trump_holder"] is None


def test_drawing_order_in_a_four_player_game_and_the_trump_is_drawn_last():
    hands = ["6S 7S 8H", "9S TS JS QS 7C 8C", "6D 7D 8D", "6H 7H 9H"]
    g = Game.from_position(CLASSIC, hands, trump="AC", talon="9C TC JC QC KC AC")
    play(g, "attack 6S", "cover 0 9S", "pass", "pass", "pass")
    assert hand(g, 0) == cards("7S 8H 9C TC JC QC")
    assert hand(g, 2) == cards("6D 7D 8D KC AC")         # the talon ran out: five cards
    assert hand(g, 3) == cards("6H 7H 9H")
    assert hand(g, 1) == cards("TS JS QS 7C 8C")
    for s in range(4):
        o = g.observe(s)
        assert o["talon"] == 0 and o["trump_holder"] == 2 and o["trump"] == "AC"
        assert o["known"] == [[], [], ["AC"], []]
    assert g.out == [False] * 4


def test_draw_others_counter_clockwise_main_attacker_first_then_the_others_backwards():
    rules = make_rules("classic", ["draw_others=counter_clockwise"])
    hands = ["6S 7S 8H", "9S TS JS QS 7C 8C", "6D 7D 8D", "6H 7H 9H"]
    g = Game.from_position(rules, hands, trump="AC", talon="9C TC JC QC KC AC")
    # the asking order is not changed: main attacker, then clockwise from the defender's left
    play(g, "attack 6S", "cover 0 9S")
    assert g.current_seat == 0 and legal(g) == {"pass"}
    play(g, "pass")
    assert g.current_seat == 2
    play(g, "pass")
    assert g.current_seat == 3
    play(g, "pass")
    # drawing: seat 0 (main attacker) first, then seat 3, then seat 2, the defender last
    assert hand(g, 0) == cards("7S 8H 9C TC JC QC")
    assert hand(g, 3) == cards("6H 7H 9H KC AC")         # the talon ran out here
    assert hand(g, 2) == cards("6D 7D 8D")
    assert hand(g, 1) == cards("TS JS QS 7C 8C")
    assert g.observe(0)["trump_holder"] == 3


def test_no_one_draws_above_six():
    g = Game.from_position(CLASSIC, ["6S 7S 8S 9S TS JS QS", "7D 8D 9D TD JD KD"], trump="AH",
                           talon="9H TH AH")
    play(g, "attack 6S", "take")
    assert g.observe(0)["hand_sizes"] == [6, 7] and g.observe(0)["talon"] == 3


# --- taken ---------------------------------------------------------------------------------

def test_taken_the_defender_picks_up_everything_publicly_and_the_next_seat_attacks():
    g = p3()
    play(g, "attack 6S", "cover 0 9S", "pass", "throw_in 6D", "take")  # no 6 or 9 left to add
    assert hand(g, 1) >= cards("6S 9S 6D")
    for s in range(3):
        o = g.observe(s)
        assert o["table"] == []
        assert set(o["known"][1]) == {"6S", "9S", "6D"}
        assert "6S" not in o["discard"]
    assert g.attacker == 2 and g.defender == 0


def test_taken_the_defender_draws_last_and_only_up_to_six():
    g = p3()
    play(g, "attack 6S", "take", "pass", "throw_in 6D")
    assert hand(g, 0) == cards("7S 8H 9D TD JD QD")
    assert hand(g, 2) == cards("7D 8D KD AD 9H TH")
    assert hand(g, 1) == cards("9S TS JS QS 7C 8C 6S 6D")
    assert g.observe(0)["talon"] == 4


def test_known_cards_accumulate_over_takes():
    g = Game.from_position(CLASSIC, ["6S 6D 9C", "7D 8D 9D"], trump="AH", talon="TH AH")
    play(g, "attack 6S", "take", "pass")
    assert g.observe(0)["known"] == [["AH"], ["6S"]]
    assert g.attacker == 0
    play(g, "attack 9C", "take")
    assert g.observe(1)["known"] == [["AH"], ["6S", "9C"]]


def test_picked_up_card_leaves_the_known_list_when_played():
    g = Game.from_position(CLASSIC, ["9D 8D", "TC 8C 7H"], trump="AH", talon="TH AH", attacker=1)
    play(g, "attack TC", "take")
    assert g.observe(1)["known"] == [["TC"], ["AH"]]
    assert g.attacker == 1
    play(g, "attack 8C")
    assert legal(g) == {"cover 0 TC", "take"}
    play(g, "cover 0 TC")
    assert g.observe(1)["known"] == [[], ["AH"]]


# --- next attacker, out seats ------------------------------------------------------------------

def test_next_seat_skips_players_who_are_out():
    g = Game.from_position(CLASSIC, ["6S", "7S 8S", "", "9D TD"], trump="AH", attacker=1, out=(2,))
    assert g.attacker == 1 and g.defender == 3
    play(g, "attack 7S", "take")
    assert table(g) == "" and g.attacker == 0 and g.defender == 1


def test_beaten_and_the_defender_is_out_the_next_seat_after_them_attacks():
    g = Game.from_position(CLASSIC, ["6S 8H", "7S", "8D 9D"], trump="AH")
    play(g, "attack 6S", "cover 0 7S")
    assert g.out == [False, True, False]
    assert g.observe(0)["out"] == [False, True, False]
    assert g.attacker == 2 and g.defender == 0


FAIR = make_rules("classic", ["defender_fairness=on"])


def test_defender_fairness_the_left_hand_player_defends_against_the_same_attacker():
    # seat 1 beats off 6S with its last card and goes out; the talon is empty
    g = Game.from_position(FAIR, ["6S 8H", "7S", "8D 9D", "TC JC"], trump="AH")
    play(g, "attack 6S", "cover 0 7S")  # nobody can throw in: the bout ends
    assert g.out == [False, True, False, False]
    assert (g.attacker, g.defender, g.current_seat) == (0, 2, 0)
    assert g.order == [0, 3]
    assert legal(g) == {"attack 8H"}
    # without the option seat 2 attacks seat 3 (and misses its turn to defend)
    g = Game.from_position(CLASSIC, ["6S 8H", "7S", "8D 9D", "TC JC"], trump="AH")
    play(g, "attack 6S", "cover 0 7S")  # nobody can throw in: the bout ends
    assert (g.attacker, g.defender) == (2, 3)


def test_defender_fairness_does_not_apply_to_a_take_or_a_defender_still_in():
    g = Game.from_position(FAIR, ["6S 8H", "7S 9S", "8D 9D"], trump="AH")
    play(g, "attack 6S", "cover 0 7S")  # nobody can throw in: the bout ends
    assert g.out == [False, False, False] and (g.attacker, g.defender) == (1, 2)
    g = Game.from_position(FAIR, ["6S 8H", "7D", "8D 9D"], trump="AH")
    play(g, "attack 6S", "take")
    assert (g.attacker, g.defender) == (2, 0)


def test_defender_fairness_when_the_attacker_went_out_too_the_next_seat_attacks():
    # seat 0 leads its last card, seat 1 covers with its last: both out; seat 2 attacks seat 3
    g = Game.from_position(FAIR, ["6S", "7S", "8D 9D", "TC JC"], trump="AH")
    play(g, "attack 6S", "cover 0 7S")  # nobody can throw in: the bout ends
    assert g.out == [True, True, False, False]
    assert (g.attacker, g.defender) == (2, 3)


def test_no_one_goes_out_while_the_talon_lasts():
    g = Game.from_position(CLASSIC, ["6S", "7S 8S"], trump="TH", talon="9D TH")
    play(g, "attack 6S", "cover 0 7S")
    assert hand(g, 0) == cards("9D TH") and g.out == [False, False]
    assert g.attacker == 1 and not g.is_over


def test_a_defender_with_no_cards_after_the_talon_ran_out_is_out():
    g = Game.from_position(CLASSIC, ["6S", "7S"], trump="TH", talon="TH")
    play(g, "attack 6S", "cover 0 7S")
    assert hand(g, 0) == {"TH"}
    assert g.is_over and g.outcome.durak == 0 and g.outcome.termination == "normal"


# --- end of the game ------------------------------------------------------------------------

def test_the_last_player_holding_cards_is_the_durak():
    g = Game.from_position(CLASSIC, ["6S", "7S", "9D"], trump="AH")
    play(g, "attack 6S", "cover 0 7S")
    assert g.is_over and g.current_seat is None and g.legal_actions() == []
    assert g.observe(0)["phase"] == "over"
    o = g.outcome
    assert (o.termination, o.durak, o.last_out) == ("normal", 2, ())
    assert o.as_dict() == {"termination": "normal", "durak": 2, "last_out": [],
                           "reason": "the last player holding cards is the durak"}


def test_the_durak_after_a_take():
    g = Game.from_position(CLASSIC, ["6S", "7D 8D"], trump="TH")
    play(g, "attack 6S", "take")
    assert g.outcome.durak == 1 and g.outcome.termination == "normal"


def test_last_two_out_in_the_same_bout_is_a_draw_by_default():
    g = Game.from_position(CLASSIC, ["6S", "7S"], trump="TH")
    play(g, "attack 6S", "cover 0 7S")
    o = g.outcome
    assert (o.termination, o.durak, o.last_out) == ("draw", None, (0, 1))
    assert o.as_dict() == {"termination": "draw", "durak": None, "last_out": [0, 1],
                           "reason": "the last players went out in the same bout"}


def test_last_two_out_defender_loses():
    g = Game.from_position(make_rules("classic", ["last_two_out=defender_loses"]), ["6S", "7S"], trump="TH")
    play(g, "attack 6S", "cover 0 7S")
    o = g.outcome
    assert (o.termination, o.durak, o.last_out) == ("normal", 1, (0, 1))
    assert o.as_dict() == {"termination": "normal", "durak": 1, "last_out": [0, 1],
                           "reason": "everyone went out in the last bout; its defender is the durak"}


def test_last_out_lists_only_the_seats_that_went_out_in_the_final_bout():
    g = Game.from_position(CLASSIC, ["6S", "7S", ""], trump="TH", out=(2,))
    play(g, "attack 6S", "cover 0 7S")
    assert g.outcome.last_out == (0, 1) and g.outcome.durak is None


def test_three_go_out_in_the_last_bout():
    g = Game.from_position(CLASSIC, ["6S", "7S 7D", "6D"], trump="TH")
    play(g, "attack 6S", "cover 0 7S", "pass", "throw_in 6D", "cover 1 7D")
    o = g.outcome
    assert (o.termination, o.durak, o.last_out) == ("draw", None, (0, 1, 2))
    g = Game.from_position(make_rules("classic", ["last_two_out=defender_loses"]),
                           ["6S", "7S 7D", "6D"], trump="TH")
    play(g, "attack 6S", "cover 0 7S", "pass", "throw_in 6D", "cover 1 7D")
    assert g.outcome.durak == 1


# --- stalemate guard and action cap --------------------------------------------------------------

def stall(limit: str) -> Game:
    return Game.from_position(make_rules("classic", [f"pickup_draw_limit={limit}"]),
                              ["6S 6D 7S 8S", "7C 8C 9C"], trump="AH")


def test_pickup_draw_limit_takes_in_a_row_with_empty_talon_end_in_a_draw():
    g = stall("2")
    play(g, "attack 6S", "take", "pass")
    assert not g.is_over and g.attacker == 0
    play(g, "attack 7S", "take")
    assert g.is_over
    o = g.outcome
    assert (o.termination, o.durak, o.last_out) == ("stalemate", None, ())
    assert o.reason == "2 takes in a row with an empty talon and nobody going out"


def test_pickup_draw_limit_default_is_forty():
    g = stall("40")
    assert make_rules().pickup_draw_limit == 40
    play(g, "attack 6S", "take", "pass", "attack 7S", "take", "attack 6D", "take")
    assert not g.is_over


def test_pickup_draw_limit_none_disables_the_guard():
    g = stall("none")
    play(g, "attack 6S", "take", "pass", "attack 7S", "take", "attack 6D", "take")
    assert not g.is_over and g.attacker == 0


def test_a_beaten_bout_resets_the_take_streak():
    g = Game.from_position(make_rules("classic", ["pickup_draw_limit=2"]),
                           ["6S 7S 6D 8D", "9C TC JC 7D"], trump="AH")
    play(g, "attack 6S", "take", "pass")          # take 1
    play(g, "attack 6D", "cover 0 7D", "pass")     # beaten: streak reset; seat 1 attacks
    assert g.attacker == 1 and not g.is_over
    play(g, "attack 9C", "take")                   # take 1 again
    assert not g.is_over
    play(g, "attack TC", "take")                   # take 2
    assert g.outcome.termination == "stalemate"


def test_a_take_in_which_someone_goes_out_resets_the_streak():
    rules = make_rules("classic", ["pickup_draw_limit=1"])
    g = Game.from_position(rules, ["6S", "7C", "8D 9D"], trump="AH")
    play(g, "attack 6S", "take")
    assert not g.is_over and g.out == [True, False, False]
    g = Game.from_position(rules, ["6S 9S", "7C", "8D 9D"], trump="AH")
    play(g, "attack 6S", "take")
    assert g.outcome.termination == "stalemate"


def test_takes_with_a_talon_do_not_count():
    g = Game.from_position(make_rules("classic", ["pickup_draw_limit=1"]),
                           ["6S 6D 7S 8S", "7C 8C 9C"], trump="AH", talon="9H TH JH QH 9D TD JD KH AH")
    play(g, "attack 6S", "take", "pass")
    assert not g.is_over


def test_action_cap_ends_the_game_as_a_draw_with_its_own_termination():
    g = Game.new(make_rules("classic", ["action_cap=10"]), 3, seed=5)
    while not g.is_over:
        g.apply(g.legal_actions()[0])
    assert len(g.history) == 10
    o = g.outcome
    assert (o.termination, o.durak, o.last_out) == ("action_cap", None, ())
    assert o.reason == "the action cap of 10 was reached"


def test_action_cap_default():
    assert make_rules().action_cap == 5000


# --- public events ------------------------------------------------------------------------------

def test_draw_events_show_the_cards_only_to_the_drawing_seat():
    g = Game.from_position(CLASSIC, P3, trump="AH", talon=P3_TALON, record_events=True)
    play(g, "attack 6S", "cover 0 9S", "pass", "pass")
    wire = [g.public_event(e, 1) for e in g.events]
    assert wire == [
        {"type": "attack", "seat": 0, "card": "6S"},
        {"type": "cover", "seat": 1, "slot": 0, "card": "9S"},
        {"type": "pass", "seat": 0},
        {"type": "pass", "seat": 2},
        {"type": "bout_end", "result": "beaten", "defender": 1},
        {"type": "draw", "seat": 0, "count": 4},
        {"type": "draw", "seat": 2, "count": 3},
        {"type": "draw", "seat": 1, "count": 1, "cards": ["TH"]},
    ]
    assert g.public_event(g.events[5], 0)["cards"] == ["9D", "TD", "JD", "QD"]


def test_out_event():
    g = Game.from_position(CLASSIC, ["6S", "7S", "9D"], trump="AH", record_events=True)
    play(g, "attack 6S", "cover 0 7S")
    wire = [g.public_event(e, 2) for e in g.events]
    assert wire[-3:] == [{"type": "bout_end", "result": "beaten", "defender": 1},
                         {"type": "out", "seat": 0}, {"type": "out", "seat": 1}]
