"""RULES.md, "Cards": ranks, suits, decks, text form, which card beats which."""

import pytest

from referee.rules import CardError, card_str, parse_card
from referee.rules.cards import RANKS, SUITS, beats, deck_cards, rank_of, suit_of

ALL = [r + s for r in "23456789TJQKA" for s in "CDHS"]


def b(card: str, other: str, trump: str) -> bool:
    return beats(parse_card(card), parse_card(other), "CDHS".index(trump))


def test_ranks_low_to_high_and_suits():
    assert RANKS == "23456789TJQKA"
    assert SUITS == "CDHS"
    ordered = [rank_of(parse_card(r + "S")) for r in "23456789TJQKA"]
    assert ordered == sorted(ordered) and len(set(ordered)) == 13
    assert [suit_of(parse_card("A" + s)) for s in "CDHS"] == [0, 1, 2, 3]


@pytest.mark.parametrize("size, low", [(24, "9"), (36, "6"), (52, "2")])
def test_decks(size, low):
    cards = [card_str(c) for c in deck_cards(size)]
    assert len(cards) == len(set(cards)) == size
    ranks = "23456789TJQKA"
    assert set(cards) == {r + s for r in ranks[ranks.index(low):] for s in "CDHS"}


def test_text_form_round_trips_for_every_card():
    assert [card_str(parse_card(t)) for t in ALL] == ALL
    assert sorted(parse_card(t) for t in ALL) == list(range(52))
    assert card_str(parse_card("6S")) == "6S"
    assert card_str(parse_card("TH")) == "TH"


@pytest.mark.parametrize("text, want", [("10H", "TH"), ("10s", "TS"), ("th", "TH"), (" qd ", "QD"),
                                        ("ac", "AC")])
def test_lenient_input_and_canonical_output(text, want):
    assert card_str(parse_card(text)) == want


def test_ten_is_never_produced_as_10():
    assert not any(card_str(c).startswith("10") for c in range(52))


@pytest.mark.parametrize("text", ["", "6", "6X", "1S", "S6", "66S", "10", "100H", "6 S", "ZZ", "JOKER"])
def test_bad_text_is_a_card_error(text):
    with pytest.raises(CardError, match="expected a card"):
        parse_card(text)


@pytest.mark.parametrize("bad", [None, 6, b"6S"])
def test_non_string_is_a_card_error(bad):
    with pytest.raises(CardError):
        parse_card(bad)


@pytest.mark.parametrize("index", [-1, 52, 100])
def test_card_index_out_of_range(index):
    with pytest.raises(CardError):
        card_str(index)


def test_card_error_is_a_value_error():
    assert issubclass(CardError, ValueError)


# --- beats ---------------------------------------------------------------------------

def test_same_suit_higher_rank_beats():
    assert b("7S", "6S", "H")
    assert b("AS", "KS", "H")
    assert b("TC", "9C", "H")


def test_same_suit_lower_or_equal_does_not_beat():
    assert not b("6S", "7S", "H")
    assert not b("6S", "6S", "H")


def test_other_non_trump_suit_never_beats_no_follow_suit_rule():
    assert not b("AS", "6C", "H")
    assert not b("AD", "2C", "H")


def test_trump_beats_any_non_trump():
    assert b("6H", "AS", "H")
    assert b("2H", "AC", "H")


def test_trump_beaten_only_by_higher_trump():
    assert b("7H", "6H", "H")
    assert not b("6H", "7H", "H")
    assert not b("AS", "6H", "H")
    assert not b("AC", "2H", "H")


def test_beats_agrees_with_the_rule_for_every_pair():
    for trump in range(4):
        for x in range(52):
            for y in range(52):
                want = (suit_of(x) == suit_of(y) and rank_of(x) > rank_of(y)) or (
                    suit_of(x) == trump and suit_of(y) != trump)
                assert beats(x, y, trump) == want, (card_str(x), card_str(y), trump)
