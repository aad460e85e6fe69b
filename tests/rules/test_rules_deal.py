"""RULES.md, "Seats, dealer, deal, trump", "Who attacks first" and "Trump exchange"."""

import pytest
from rules_testkit import cards, deck_for, hand, legal, play

from referee.rules import Game, RulesError, card_str, make_rules, parse_card
from referee.rules.cards import deck_cards


def names(ints):
    return [card_str(c) for c in ints]


def seat0_keeps_taking_back(g: Game) -> list[str]:
    """Two players, seat 0 attacking: seat 0 leads its lowest card and seat 1 always takes,
    so seat 0 draws exactly one card per bout. Returns the cards seat 0 draws, in order."""
    drawn = []
    while g.observe(0)["talon"]:
        assert g.attacker == 0 and g.phase == 1
        before = hand(g, 0)
        g.apply(g.legal_actions()[0])
        play(g, "take")
        while not g.is_over and g.current_seat == 0 and g.phase == 3:
            play(g, "pass")
        new = hand(g, 0) - before
        assert len(new) == 1
        drawn += new
    return drawn


# --- dealer and deal -----------------------------------------------------------------

@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_game_one_dealer_is_the_last_seat(players):
    g = Game.new(make_rules(), players, seed=7)
    assert g.dealer == players - 1
    assert all(g.observe(s)["dealer"] == players - 1 for s in range(players))


@pytest.mark.parametrize("players, dealer", [(2, 1), (3, 2), (3, 0), (4, 1), (6, 5), (5, 3)])
def test_deal_one_at_a_time_from_the_dealers_next_seat(players, dealer):
    deck = list(reversed(deck_cards(36)))
    g = Game.new(make_rules(), players, deck=deck, dealer=dealer)
    for k in range(players):
        seat = (dealer + 1 + k) % players
        assert hand(g, seat) == set(names(deck[k:6 * players:players]))
    assert g.observe(0)["hand_sizes"] == [6] * players


def test_deal_seat_zero_gets_deck_0_n_2n():
    deck = deck_cards(36)
    g = Game.new(make_rules(), 3, deck=deck)
    assert hand(g, 0) == set(names(deck[0:18:3]))
    assert hand(g, 1) == set(names(deck[1:18:3]))
    assert hand(g, 2) == set(names(deck[2:18:3]))


@pytest.mark.parametrize("size, players", [(36, 2), (36, 4), (24, 2), (24, 3), (52, 5), (52, 6)])
def test_trump_is_the_card_after_the_deal(size, players):
    deck = deck_cards(size)[::-1]
    g = Game.new(make_rules("classic", {"deck": str(size)}), players, deck=deck)
    o = g.observe(0)
    assert o["trump"] == card_str(deck[6 * players])
    assert o["trump_suit"] == card_str(deck[6 * players])[1]
    assert o["talon"] == size - 6 * players
    assert o["trump_holder"] is None
    assert all(o["known"][s] == [] for s in range(players))


def test_talon_is_drawn_from_the_card_after_the_trump_and_the_trump_last():
    deck = [parse_card(c) for c in "6C 7C 8C 9C TC JC QC KC AC 6D 7D 8D".split()]
    deck += [c for c in deck_cards(36) if c not in deck]
    g = Game.new(make_rules(), 2, deck=deck)
    assert g.observe(0)["trump"] == card_str(deck[12])
    drawn = seat0_keeps_taking_back(g)
    assert drawn == names(deck[13:]) + [card_str(deck[12])]
    assert g.observe(1)["trump_holder"] == 0
    assert card_str(deck[12]) in g.observe(1)["known"][0]


@pytest.mark.parametrize("dealer", [5, 2, 0])
def test_six_players_36_cards_the_last_card_dealt_is_trump_and_stays_with_the_dealer(dealer):
    deck = deck_cards(36)[::-1]
    g = Game.new(make_rules(), 6, deck=deck, dealer=dealer)
    last = card_str(deck[35])
    for s in range(6):
        o = g.observe(s)
        assert o["talon"] == 0
        assert o["trump"] == last
        assert o["trump_holder"] == dealer
        assert o["known"][dealer] == [last]
        assert all(o["known"][t] == [] for t in range(6) if t != dealer)
        assert o["hand_sizes"] == [6] * 6
    assert last in hand(g, dealer)


def test_four_players_24_cards_whole_deck_dealt():
    deck = deck_cards(24)
    g = Game.new(make_rules("classic", ["deck=24"]), 4, deck=deck)
    assert g.observe(0)["talon"] == 0
    assert g.observe(0)["trump"] == card_str(deck[23])
    assert g.observe(0)["trump_holder"] == 3


def test_seeded_deck_is_reproducible_and_explicit_deck_is_recorded():
    a = Game.new(make_rules(), 3, seed="match:1")
    b = Game.new(make_rules(), 3, seed="match:1")
    c = Game.new(make_rules(), 3, seed="match:2")
    assert a.deck == b.deck and a.deck != c.deck
    assert sorted(a.deck) == deck_cards(36)
    d = Game.new(make_rules(), 3, deck=a.deck)
    assert [d.observe(s) for s in range(3)] == [a.observe(s) for s in range(3)]


def test_bad_deck_orders_are_refused():
    with pytest.raises(RulesError):
        Game.new(make_rules(), 2, deck=deck_cards(36)[:-1])
    with pytest.raises(RulesError):
        Game.new(make_rules(), 2, deck=deck_cards(36)[:-1] + [0])
    with pytest.raises(RulesError):
        Game.new(make_rules(), 2, deck=deck_cards(52))
    with pytest.raises(ValueError):
        Game.new(make_rules(), 2)
    with pytest.raises(ValueError):
        Game.new(make_rules(), 2, seed=1, deck=deck_cards(36))
    with pytest.raises(RulesError):
        Game.new(make_rules(), 2, seed=1, dealer=2)


@pytest.mark.parametrize("deck", [
    deck_cards(36)[1:] + [deck_cards(36)[1]],   # a card twice, one missing
    deck_cards(36)[1:] + [0],                   # a card of the 52-card deck only
    deck_cards(36)[1:] + [52], deck_cards(36)[1:] + [-1],  # no card at all
    deck_cards(36) + [deck_cards(36)[0]],       # one card too many
    [],
])
def test_a_deck_order_that_is_not_each_card_of_the_deck_once_is_refused(deck):
    with pytest.raises(RulesError, match="exactly once"):
        Game.new(make_rules(), 2, deck=deck)


@pytest.mark.parametrize("players, dealer", [(2, 1), (2, 0), (3, 0), (4, 2), (6, 5)])
def test_the_hands_are_dealt_one_card_at_a_time_from_the_dealers_left(players, dealer):
    deck = deck_cards(36)[::-1]
    g = Game.new(make_rules(), players, deck=deck, dealer=dealer)
    for seat in range(players):
        first = (seat - dealer - 1) % players  # the seat's place in the round
        assert g.hands[seat] == sum(1 << deck[first + players * k] for k in range(6))


@pytest.mark.parametrize(("given", "text"), [
    ({"deck": deck_cards(36)[:-1]}, "the deck order must hold each of the 36 cards exactly once"),
    ({"deck": deck_cards(36)[:-1] + [0]}, "the deck order must hold each of the 36 cards exactly once"),
    ({"seed": 1, "dealer": 2}, "dealer seat 2 does not exist at a 2-player table"),
    ({"seed": 1, "dealer": -1}, "dealer seat -1 does not exist at a 2-player table"),
])
def test_bad_deals_are_refused_word_for_word(given, text):
    with pytest.raises(RulesError) as refused:
        Game.new(make_rules(), 2, **given)
    assert str(refused.value) == text


@pytest.mark.parametrize("dealer", [0, 2])
def test_every_dealer_seat_that_exists_deals_and_no_events_are_kept_unless_asked(dealer):
    g = Game.new(make_rules(), 3, seed=1, dealer=dealer)
    assert g.dealer == dealer and [g.observe(s)["dealer"] for s in range(3)] == [dealer] * 3
    assert g.events is None and Game.new(make_rules(), 3, seed=1, record_events=True).events == []
    o = g.observe(0)
    assert o["taking"] is False and o["bout"] == 1 and o["transfers"] == 0 and o["shown"] == []


# --- who attacks first ------------------------------------------------------------------

HANDS2 = ["8H 6C 7C 8C 9C TC", "7H 6D 7D 8D 9D TD"]


def test_lowest_trump_opens():
    g = Game.new(make_rules(), 2, deck=deck_for(36, HANDS2, "AH"))
    assert g.attacker == g.current_seat == 1 and g.defender == 0
    assert legal(g) == {f"attack {c}" for c in HANDS2[1].split()}


def test_lowest_trump_counts_only_trumps():
    hands = ["6C 6D 6S 7C 7D 7S", "KH 8C 8D 8S 9C 9D"]
    g = Game.new(make_rules(), 2, deck=deck_for(36, hands, "AH"))
    assert g.attacker == 1


def test_lowest_trump_in_the_52_card_deck_the_two_of_trumps_is_lowest_other_twos_do_not_count():
    rules = make_rules("classic", {"deck": "52"})
    hands = ["3H 5C 6C 7C 8C 9C", "2S 5D 6D 7D 8D 9D", "4H 5S 6S 7S 8S 9S"]
    assert Game.new(rules, 3, deck=deck_for(52, hands, "AH")).attacker == 0
    hands[2] = "2H 5S 6S 7S 8S 9S"
    assert Game.new(rules, 3, deck=deck_for(52, hands, "AH")).attacker == 2


def test_lowest_trump_three_players():
    hands = ["TS JS QS KS 6C 7C", "6D 7D 8D 9D TD JD", "AS 9S 8S 7S 8C 9C"]
    g = Game.new(make_rules(), 3, deck=deck_for(36, hands, "6S"))
    assert g.attacker == 2 and g.defender == 0


@pytest.mark.parametrize("dealer, opener", [(1, 0), (0, 1)])
def test_nobody_holds_a_trump_the_dealers_next_seat_opens(dealer, opener):
    hands = ["2C 3C 4C 5C 6C 7C", "2D 3D 4D 5D 6D 7D"]
    g = Game.new(make_rules("classic", ["deck=52"]), 2, deck=deck_for(52, hands, "AH", dealer=dealer),
                 dealer=dealer)
    assert g.attacker == opener


def test_six_players_the_dealers_shown_trump_counts_for_lowest_trump():
    hands = ["7C 8C 9C TC JC QC", "7D 8D 9D TD JD QD", "7S 8S 9S TS JS QS",
             "7H 8H 9H TH JH QH", "KC AC KD AD KS AS", "KH AH 6C 6D 6S 6H"]
    g = Game.new(make_rules(), 6, deck=deck_for(36, hands))
    assert g.observe(0)["trump"] == "6H"
    assert g.attacker == 5 and g.defender == 0


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_dealer_next_opens(dealer):
    hands = ["TS JS QS KS 6C 7C", "6D 7D 8D 9D TD JD", "6S 9S 8S 7S 8C 9C"]
    rules = make_rules("classic", ["first_attacker=dealer_next"])
    g = Game.new(rules, 3, deck=deck_for(36, hands, "AS", dealer=dealer), dealer=dealer)
    assert g.attacker == (dealer + 1) % 3


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_seat_n_opens_every_game(seat):
    rules = make_rules("classic", [f"first_attacker=seat:{seat}"])
    for dealer in range(4):
        for s in range(3):
            g = Game.new(rules, 4, seed=s, dealer=dealer)
            assert g.attacker == seat and g.current_seat == seat
            assert g.defender == (seat + 1) % 4


TWO_C = make_rules("classic", ["deck=52", "first_attacker=two_of_clubs"])


@pytest.mark.parametrize("twos, opener", [
    (["2C", "2D", "2H"], 0),   # 2C opens, whoever else holds twos
    (["2S", "2H", "2D"], 2),   # no 2C: 2D opens
    (["2S", "2H", "3C"], 1),   # no 2C or 2D: 2H
    (["3D", "2S", "3C"], 1),   # only 2S
])
def test_two_of_clubs_opens_then_2d_2h_2s(twos, opener):
    # each seat: its two, three spades, two hearts (all distinct, no other twos)
    hands = [" ".join([two] + [r + "S" for r in rs] + [r + "H" for r in hs])
             for two, rs, hs in zip(twos, ["456", "789", "TJQ"], ["45", "78", "TJ"], strict=True)]
    g = Game.new(TWO_C, 3, deck=deck_for(52, hands, "AD"))
    assert g.attacker == g.current_seat == opener
    assert legal(g) == {f"attack {c}" for c in hands[opener].split()}


@pytest.mark.parametrize("dealer, opener", [(1, 0), (0, 1)])
def test_two_of_clubs_nobody_holds_a_two_the_dealers_next_seat_opens(dealer, opener):
    # 2H is the face-up trump, not in a hand: it does not count
    hands = ["3C 4C 5C 6C 7C 8C", "3D 4D 5D 6D 7D 8D"]
    g = Game.new(TWO_C, 2, deck=deck_for(52, hands, "2H", dealer=dealer), dealer=dealer)
    assert g.attacker == opener


@pytest.mark.parametrize("size", ["24", "36"])
def test_two_of_clubs_needs_the_52_card_deck(size):
    with pytest.raises(RulesError, match="first_attacker=two_of_clubs needs the 52-card deck"):
        make_rules("classic", [f"deck={size}", "first_attacker=two_of_clubs"])


def test_first_bout_roles_and_phase():
    g = Game.new(make_rules(), 4, seed=3)
    o = g.observe(0)
    assert o["phase"] == "attack" and o["table"] == [] and o["bout"] == 1
    assert o["defender"] == (o["attacker"] + 1) % 4


# --- trump exchange -----------------------------------------------------------------------

EX = make_rules("classic", ["trump_exchange=on"])
EX_HANDS = ["7H 6C 7C 8C 9C TC", "6H 6D 7D 8D 9D TD"]


def test_exchange_offered_to_the_holder_of_the_lowest_trump_before_the_first_attack():
    g = Game.new(EX, 2, deck=deck_for(36, EX_HANDS, "AH"))
    assert g.observe(0)["phase"] == "exchange"
    assert g.current_seat == 1
    assert legal(g) == {"exchange", "pass"}
    assert g.forced_action() is None


def test_exchange_swaps_the_low_trump_for_the_face_up_trump_publicly():
    g = Game.new(EX, 2, deck=deck_for(36, EX_HANDS, "AH"), record_events=True)
    play(g, "exchange")
    assert hand(g, 1) == cards("AH 6D 7D 8D 9D TD")
    for s in (0, 1):
        o = g.observe(s)
        assert o["trump"] == "6H" and o["trump_suit"] == "H"
        assert o["known"][1] == ["AH"]
        assert o["talon"] == 24
        assert o["phase"] == "attack"
    assert g.public_event(g.events[0], 0) == {"type": "exchange", "seat": 1, "card": "6H", "trump": "AH"}
    # the opener was fixed from the dealt hands: seat 1 (it held 6H), though seat 0's 7H is now lowest
    assert g.attacker == g.current_seat == 1
    assert legal(g) == {f"attack {c}" for c in "AH 6D 7D 8D 9D TD".split()}


def test_after_exchange_the_low_trump_is_drawn_last():
    g = Game.new(make_rules("classic", ["trump_exchange=on", "first_attacker=seat:0"]), 2,
                 deck=deck_for(36, ["6H 6C 7C 8C 9C TC", "7H 6D 7D 8D 9D TD"], "AH"))
    assert g.current_seat == 0
    play(g, "exchange")
    drawn = seat0_keeps_taking_back(g)
    assert drawn[-1] == "6H" and "AH" not in drawn and len(drawn) == 24
    assert g.observe(1)["trump_holder"] == 0


def test_declining_the_exchange_changes_nothing_but_the_phase():
    g = Game.new(EX, 2, deck=deck_for(36, EX_HANDS, "AH"), record_events=True)
    play(g, "pass")
    assert hand(g, 1) == cards(EX_HANDS[1])
    o = g.observe(0)
    assert o["trump"] == "AH" and o["known"] == [[], []] and o["phase"] == "attack"
    assert g.attacker == 1
    # Only the seat that declined sees it: others would learn who holds the low trump.
    assert g.public_event(g.events[0], 1) == {"type": "decline", "seat": 1}
    assert g.public_event(g.events[0], 0) is None


def test_exchange_holder_need_not_be_the_opener():
    rules = make_rules("classic", ["trump_exchange=on", "first_attacker=dealer_next"])
    g = Game.new(rules, 2, deck=deck_for(36, EX_HANDS, "AH"))
    assert g.current_seat == 1 and g.attacker == 0
    play(g, "exchange")
    assert g.current_seat == 0 and legal(g) == {f"attack {c}" for c in EX_HANDS[0].split()}


@pytest.mark.parametrize("seats, offered", [("seats:1", True), ("seats:0,1", True),
                                             ("seats:0", False), ("on", True), ("off", False)])
def test_exchange_is_offered_only_to_the_listed_seats(seats, offered):
    # seat 1 holds the lowest trump 6H
    g = Game.new(make_rules("classic", [f"trump_exchange={seats}"]), 2, deck=deck_for(36, EX_HANDS, "AH"))
    if offered:
        assert g.observe(0)["phase"] == "exchange" and g.current_seat == 1
        assert legal(g) == {"exchange", "pass"}
    else:
        assert g.observe(0)["phase"] == "attack" and g.current_seat == 1
        assert legal(g) == {f"attack {c}" for c in EX_HANDS[1].split()}


def test_exchange_seats_parse_format_and_round_trip_through_a_log_header():
    from referee.rules.options import rules_from_dict
    rules = make_rules("classic", ["trump_exchange=seats: 2,0,2"])
    assert rules.trump_exchange == (0, 2)
    assert rules.describe() == "classic trump_exchange=seats:0,2"
    # a log header stores the seats as a JSON list
    assert rules_from_dict({**rules.as_dict(), "trump_exchange": [0, 2]}) == rules
    assert make_rules("classic", ["trump_exchange=everyone"]).trump_exchange is True
    assert make_rules("classic", ["trump_exchange=nobody"]).trump_exchange is False


@pytest.mark.parametrize("text", ["seats:", "seats:x", "seats:6", "seats:0,,1", "1,2", "maybe"])
def test_exchange_seats_bad_values_are_named(text):
    with pytest.raises(RulesError, match="bad value .* for rules option trump_exchange: expected on"):
        make_rules("classic", [f"trump_exchange={text}"])


def test_exchange_seats_must_exist_at_the_table():
    rules = make_rules("classic", ["trump_exchange=seats:0,3"])
    with pytest.raises(RulesError, match="trump_exchange=seats:0,3 names a seat that does not exist "
                                         "at a 3-player table"):
        Game.new(rules, 3, seed=1)
    Game.new(rules, 4, seed=1)


def test_exchange_off_by_default():
    g = Game.new(make_rules(), 2, deck=deck_for(36, EX_HANDS, "AH"))
    assert g.observe(0)["phase"] == "attack" and "exchange" not in legal(g)


@pytest.mark.parametrize("size, low, face_up", [(24, "9S", "KS"), (52, "2S", "KS"), (36, "6S", "KS")])
def test_exchange_low_trump_per_deck(size, low, face_up):
    ranks = "23456789TJQKA"[{24: 7, 36: 4, 52: 0}[size]:]
    pool = [r + s for s in "CDH" for r in ranks]
    hands = [" ".join(pool[0:5] + [low]), " ".join(pool[5:11])]
    rules = make_rules("classic", ["trump_exchange=on", f"deck={size}"])
    g = Game.new(rules, 2, deck=deck_for(size, hands, face_up))
    assert g.current_seat == 0 and legal(g) == {"exchange", "pass"}
    play(g, "exchange")
    assert face_up in hand(g, 0) and low not in hand(g, 0)
    assert g.observe(1)["trump"] == low


@pytest.mark.parametrize("size, not_low", [(24, "TS"), (36, "7S"), (52, "3S")])
def test_exchange_only_for_the_decks_lowest_trump(size, not_low):
    ranks = "23456789TJQKA"[{24: 7, 36: 4, 52: 0}[size]:]
    pool = [r + s for s in "CDH" for r in ranks]
    hands = [" ".join(pool[0:5] + [not_low]), " ".join(pool[5:11])]
    rules = make_rules("classic", ["trump_exchange=on", f"deck={size}"])
    g = Game.new(rules, 2, deck=deck_for(size, hands, "KS"))
    assert g.observe(0)["phase"] == "attack"


# seat 0 holds 6S (and 2S, the deck's lowest trump); the face-up trump is KS
SIX_HANDS = ["2S 6S 3C 4C 5C 7C", "3D 4D 5D 6D 7D 8D"]


def test_exchange_rank_names_the_trump_offered_on_the_52_card_deck():
    rules = make_rules("classic", ["trump_exchange=on", "deck=52", "exchange_rank=6"])
    g = Game.new(rules, 2, deck=deck_for(52, SIX_HANDS, "KS"), record_events=True)
    assert g.current_seat == 0 and legal(g) == {"exchange", "pass"}
    play(g, "exchange")
    assert hand(g, 0) == cards("2S KS 3C 4C 5C 7C")
    assert g.observe(1)["trump"] == "6S" and g.observe(1)["known"][0] == ["KS"]
    assert g.public_event(g.events[0], 1) == {"type": "exchange", "seat": 0, "card": "6S", "trump": "KS"}
    # the opener was fixed before: seat 0 holds the lowest trump, 2S
    assert g.attacker == 0 and legal(g) == {f"attack {c}" for c in "2S KS 3C 4C 5C 7C".split()}


def test_exchange_rank_lowest_is_the_default_and_offers_the_2_on_52_cards():
    for extra in ([], ["exchange_rank=lowest"]):
        g = Game.new(make_rules("classic", ["trump_exchange=on", "deck=52", *extra]), 2,
                     deck=deck_for(52, SIX_HANDS, "KS"))
        play(g, "exchange")
        assert hand(g, 0) == cards("6S KS 3C 4C 5C 7C") and g.observe(1)["trump"] == "2S"


def test_exchange_rank_is_offered_to_whoever_holds_that_rank():
    # seat 1 holds 6S; seat 0 the lowest trump 2S, which is not offered
    hands = ["2S 3C 4C 5C 7C 8C", "6S 3D 4D 5D 6D 7D"]
    rules = make_rules("classic", ["trump_exchange=on", "deck=52", "exchange_rank=6"])
    g = Game.new(rules, 2, deck=deck_for(52, hands, "KS"))
    assert g.current_seat == 1 and g.attacker == 0 and legal(g) == {"exchange", "pass"}
    play(g, "pass")
    assert g.current_seat == 0 and legal(g) == {f"attack {c}" for c in hands[0].split()}


def test_exchange_rank_no_offer_when_the_face_up_trump_is_not_above_it():
    rules = make_rules("classic", ["trump_exchange=on", "deck=52", "exchange_rank=6"])
    for face_up in ("6S", "4S"):  # that very card, or a lower one: no swap up to be had
        hands = ["2S 3C 4C 5C 7C 8C", "3D 4D 5D 6D 7D 8D"] if face_up == "6S" else SIX_HANDS
        g = Game.new(rules, 2, deck=deck_for(52, hands, face_up))
        assert g.observe(0)["phase"] == "attack"
        assert legal(g) == {f"attack {c}" for c in hands[0].split()}


@pytest.mark.parametrize("text, value", [("6", "6"), ("t", "T"), ("10", "T"), ("A", "A"),
                                         ("lowest", "lowest"), (" Lowest ", "lowest")])
def test_exchange_rank_values_parse_and_round_trip_through_a_log_header(text, value):
    from referee.rules.options import rules_from_dict
    rules = make_rules("classic", ["deck=52", f"exchange_rank={text}"])
    assert rules.exchange_rank == value
    assert rules_from_dict(rules.as_dict()) == rules
    assert ("exchange_rank" in rules.as_dict()) == (value != "lowest")  # quiet at its default


@pytest.mark.parametrize("text", ["1", "11", "X", "66", "", "low"])
def test_exchange_rank_bad_values_are_named(text):
    with pytest.raises(RulesError, match="bad value .* for rules option exchange_rank: expected lowest"):
        make_rules("classic", [f"exchange_rank={text}"])


@pytest.mark.parametrize("deck, rank", [(36, "2"), (36, "5"), (24, "8"), (24, "6")])
def test_exchange_rank_must_be_in_the_deck(deck, rank):
    with pytest.raises(RulesError, match=f"exchange_rank={rank}: the {deck}-card deck has no rank {rank}"):
        make_rules("classic", [f"deck={deck}", f"exchange_rank={rank}"])
    make_rules("classic", [f"deck={deck}", "exchange_rank=A"])


def test_no_exchange_when_the_face_up_card_is_the_lowest_trump():
    g = Game.new(EX, 2, deck=deck_for(36, ["7H 6C 7C 8C 9C TC", "8H 6D 7D 8D 9D TD"], "6H"))
    assert g.observe(0)["phase"] == "attack"


def test_no_exchange_when_the_lowest_trump_is_in_the_talon():
    g = Game.new(EX, 2, deck=deck_for(36, ["7H 6C 7C 8C 9C TC", "8H 6D 7D 8D 9D TD"], "AH", "6H"))
    assert g.observe(0)["phase"] == "attack"


def test_no_exchange_without_a_talon():
    hands = ["7C 8C 9C TC JC QC", "7D 8D 9D TD JD QD", "7S 8S 9S TS JS QS",
             "6H 8H 9H TH JH QH", "KC AC KD AD KS AS", "KH 7H 6C 6D 6S AH"]
    g = Game.new(EX, 6, deck=deck_for(36, hands))
    assert g.observe(0)["phase"] == "attack" and g.observe(0)["trump"] == "AH"
    assert g.attacker == 3
