"""Tests for protocol.strategies: random_choose and greedy_choose on wire dicts."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.strategies import (
    card_cost,
    card_rank,
    card_suit,
    greedy_choose,
    is_trump,
    random_choose,
)

RANKS = "6789TJQKA"
SUITS = "CDHS"
DECK = [r + s for r in RANKS for s in SUITS]


def make_obs(hand, *, trump="TH", table=(), talon=12, taking=False, phase="defend", **extra):
    obs = {
        "seat": 1,
        "players": 2,
        "dealer": 0,
        "hand": list(hand),
        "trump": trump,
        "trump_suit": trump[-1],
        "trump_holder": None,
        "talon": talon,
        "table": [list(p) for p in table],
        "discard": [],
        "hand_sizes": [6, len(hand)],
        "out": [False, False],
        "attacker": 0,
        "defender": 1,
        "phase": phase,
        "taking": taking,
        "bout": 1,
        "transfers": 0,
        "attack_limit": 6,
        "known": [[], []],
        "shown": [],
    }
    obs.update(extra)
    return obs


def A(type_, card=None, slot=None):
    action = {"type": type_}
    if card is not None:
        action["card"] = card
    if slot is not None:
        action["slot"] = slot
    return action


def pick(obs, legal):
    choice = greedy_choose(obs, legal)
    assert any(choice is a for a in legal), "must return an element of legal itself"
    return choice


# --------------------------------------------------------------------------- helpers


def test_card_helpers():
    assert card_rank("6S") == 4 and card_rank("AS") == 12 and card_rank("TH") == card_rank("10H")
    assert card_suit("QD") == "D"
    assert is_trump("6H", "H") and not is_trump("6S", "H")
    assert card_cost("6H", "H") > card_cost("AS", "H")  # any trump beats every non-trump
    assert card_cost("7S", "H") < card_cost("8C", "H")
    assert card_cost("6H", "H") < card_cost("7H", "H")


# --------------------------------------------------------------------------- random


def test_random_seeded_deterministic():
    legal = [A("attack", c) for c in DECK[:10]]
    obs = make_obs(DECK[:10], phase="attack")
    a = [random_choose(obs, legal, random.Random(42)) for _ in range(5)]
    b = [random_choose(obs, legal, random.Random(42)) for _ in range(5)]
    assert all(x is y for x, y in zip(a, b, strict=True))
    rng1, rng2 = random.Random(7), random.Random(7)
    seq1 = [id(random_choose(obs, legal, rng1)) for _ in range(50)]
    seq2 = [id(random_choose(obs, legal, rng2)) for _ in range(50)]
    assert seq1 == seq2


def test_random_uniformish_and_identity():
    legal = [A("throw_in", "6S"), A("throw_in", "6D"), A("pass"), A("throw_in", "7C")]
    obs = make_obs(["6S", "6D", "7C"], phase="throw_in")
    rng = random.Random(1234)
    n = 8000
    counts = Counter()
    for _ in range(n):
        choice = random_choose(obs, legal, rng)
        idx = next(i for i, a in enumerate(legal) if a is choice)
        counts[idx] += 1
    assert set(counts) == {0, 1, 2, 3}
    for i in range(4):
        assert abs(counts[i] - n / 4) < 0.1 * n / 4  # within 10%


# --------------------------------------------------------------------------- exchange / forced


def test_exchange_always():
    legal = [A("pass"), A("exchange")]
    assert pick(make_obs(["6H", "AS"], phase="exchange"), legal) is legal[1]


@pytest.mark.parametrize("kind", ["take", "pass"])
def test_single_option(kind):
    legal = [A(kind)]
    assert pick(make_obs(["6S"]), legal) is legal[0]


# --------------------------------------------------------------------------- attack


def test_attack_lowest_non_trump():
    hand = ["6H", "9S", "7C", "KD", "AH"]  # trump H: 6H is a trump
    legal = [A("attack", c) for c in hand]
    assert pick(make_obs(hand, phase="attack"), legal)["card"] == "7C"


def test_attack_lowest_rank_ties_deterministic():
    hand = ["8S", "7D", "7C", "9C"]
    legal = [A("attack", c) for c in hand]
    assert pick(make_obs(hand, phase="attack"), legal)["card"] == "7C"  # suit order C D H S
    legal.reverse()
    assert pick(make_obs(hand, phase="attack"), legal)["card"] == "7C"


def test_attack_only_trumps():
    hand = ["KH", "8H", "AH"]
    legal = [A("attack", c) for c in hand]
    assert pick(make_obs(hand, phase="attack"), legal)["card"] == "8H"


# --------------------------------------------------------------------------- cover


def test_cover_cheapest_non_trump_across_slots():
    hand = ["9S", "QS", "8D", "7H", "AD"]
    table = [["6S", "7S"], ["7D", None], ["8S", None]]
    legal = [
        A("cover", "8D", 1), A("cover", "AD", 1), A("cover", "7H", 1),
        A("cover", "9S", 2), A("cover", "QS", 2), A("cover", "7H", 2),
        A("take"),
    ]
    assert pick(make_obs(hand, table=table), legal) is legal[0]  # 8D on slot 1


def test_cover_non_trump_before_lower_trump():
    hand = ["6H", "AS"]
    legal = [A("cover", "6H", 0), A("cover", "AS", 0), A("take")]
    assert pick(make_obs(hand, table=[["KS", None]]), legal) is legal[1]


def test_cover_plan_keeps_cards_distinct():
    # 8S is the cheapest cover for both slots; slot 1 (7S) has otherwise only a trump,
    # slot 0 (6S) also has 9S.  The plan puts 8S on slot 1 and plays it first.
    hand = ["8S", "9S", "AH"]
    table = [["6S", None], ["7S", None]]
    legal = [
        A("cover", "8S", 0), A("cover", "9S", 0), A("cover", "AH", 0),
        A("cover", "8S", 1), A("cover", "AH", 1),
        A("take"),
    ]
    assert pick(make_obs(hand, table=table, talon=0), legal) is legal[3]


def test_cover_with_low_trump_when_talon_thick():
    legal = [A("cover", "JH", 0), A("take")]
    assert pick(make_obs(["JH"], table=[["AS", None]], talon=20), legal) is legal[0]


def test_take_instead_of_high_trump_when_talon_thick():
    legal = [A("cover", "QH", 0), A("cover", "AH", 0), A("take")]
    assert pick(make_obs(["QH", "AH"], table=[["AS", None]], talon=11), legal) is legal[2]


def test_high_trump_cover_when_talon_thin():
    legal = [A("cover", "QH", 0), A("cover", "AH", 0), A("take")]
    assert pick(make_obs(["QH", "AH"], table=[["AS", None]], talon=10), legal) is legal[0]


def test_take_when_two_trumps_needed_one_at_least_ten():
    hand = ["7H", "TH"]
    table = [["AS", None], ["AD", None]]
    legal = [
        A("cover", "7H", 0), A("cover", "TH", 0),
        A("cover", "7H", 1), A("cover", "TH", 1),
        A("take"),
    ]
    assert pick(make_obs(hand, table=table, talon=15), legal)["type"] == "take"


def test_two_low_trumps_cover_when_talon_thick():
    hand = ["7H", "9H"]
    table = [["AS", None], ["AD", None]]
    legal = [
        A("cover", "7H", 0), A("cover", "9H", 0),
        A("cover", "7H", 1), A("cover", "9H", 1),
        A("take"),
    ]
    assert pick(make_obs(hand, table=table, talon=15), legal) is legal[0]


def test_take_right_away_when_a_slot_cannot_be_covered():
    hand = ["7S", "8C"]
    table = [["6S", None], ["AD", None]]
    legal = [A("cover", "7S", 0), A("take")]
    assert pick(make_obs(hand, table=table, talon=0), legal) is legal[1]


def test_take_when_one_card_needed_for_two_slots():
    # each slot has a cover option, but it is the same single card
    hand = ["8S", "9C"]
    table = [["6S", None], ["7S", None]]
    legal = [A("cover", "8S", 0), A("cover", "8S", 1), A("take")]
    assert pick(make_obs(hand, table=table, talon=0), legal) is legal[2]


# --------------------------------------------------------------------------- transfer


def test_transfer_with_non_trump_when_cover_needs_trump():
    hand = ["7C", "6H", "8S"]
    legal = [A("cover", "6H", 0), A("transfer", "7C"), A("take")]
    assert pick(make_obs(hand, table=[["7D", None]]), legal) is legal[1]


def test_no_transfer_when_cheap_non_trump_cover():
    hand = ["7C", "8D", "6H"]
    legal = [A("cover", "8D", 0), A("cover", "6H", 0), A("transfer", "7C"), A("take")]
    assert pick(make_obs(hand, table=[["7D", None]]), legal) is legal[0]


def test_no_transfer_with_trump():
    hand = ["7H", "9H"]
    legal = [A("cover", "9H", 0), A("transfer", "7H"), A("take")]
    assert pick(make_obs(hand, table=[["7D", None]], talon=0), legal) is legal[0]


def test_transfer_when_cover_impossible():
    hand = ["7C", "6S"]
    legal = [A("transfer", "7C"), A("take")]
    assert pick(make_obs(hand, table=[["7D", None]]), legal) is legal[0]


def test_show_trump_preferred_over_transfer():
    hand = ["7C", "7H"]
    legal = [A("transfer", "7C"), A("transfer", "7H"), A("show_trump", "7H"), A("take")]
    assert pick(make_obs(hand, table=[["7D", None]]), legal) is legal[2]


# --------------------------------------------------------------------------- throw in


def test_throw_in_lowest_non_trump_below_queen():
    hand = ["JS", "9D", "9H", "KC"]
    legal = [A("throw_in", c) for c in hand] + [A("pass")]
    obs = make_obs(hand, phase="throw_in", table=[["9S", "JD"]])
    assert pick(obs, legal)["card"] == "9D"


def test_throw_in_never_trump_or_high_while_talon():
    hand = ["QS", "KD", "6H"]
    legal = [A("throw_in", c) for c in hand] + [A("pass")]
    obs = make_obs(hand, phase="throw_in", talon=5)
    assert pick(obs, legal)["type"] == "pass"


def test_throw_in_anything_when_talon_empty():
    hand = ["QS", "KD"]
    legal = [A("throw_in", "KD"), A("throw_in", "QS"), A("pass")]
    obs = make_obs(hand, phase="throw_in", talon=0)
    assert pick(obs, legal) is legal[1]
    legal = [A("throw_in", "6H"), A("pass")]
    assert pick(make_obs(["6H"], phase="throw_in", talon=0), legal) is legal[0]


def test_throw_in_non_trump_first_when_talon_empty():
    legal = [A("throw_in", "6H"), A("throw_in", "AS"), A("pass")]
    assert pick(make_obs(["6H", "AS"], phase="throw_in", talon=0), legal) is legal[1]


def test_throw_in_when_taking_below_jack_only():
    legal = [A("throw_in", "JS"), A("pass")]
    obs = make_obs(["JS"], phase="throw_in", taking=True, talon=3)
    assert pick(obs, legal)["type"] == "pass"
    legal = [A("throw_in", "JS"), A("throw_in", "TS"), A("pass")]
    assert pick(make_obs(["JS", "TS"], phase="throw_in", taking=True, talon=3), legal) is legal[1]
    legal = [A("throw_in", "JS"), A("pass")]
    assert pick(make_obs(["JS"], phase="throw_in", taking=False, talon=3), legal) is legal[0]


def test_throw_in_when_taking_and_talon_empty():
    legal = [A("throw_in", "KS"), A("pass")]
    assert pick(make_obs(["KS"], phase="throw_in", taking=True, talon=0), legal) is legal[0]


# --------------------------------------------------------------------------- robustness


@st.composite
def situations(draw):
    trump = draw(st.sampled_from(DECK))
    cards = draw(st.lists(st.sampled_from(DECK), min_size=1, max_size=12, unique=True))
    talon = draw(st.integers(0, 24))
    n_slots = draw(st.integers(0, 6))
    table = []
    for _ in range(n_slots):
        atk = draw(st.sampled_from(DECK))
        cov = draw(st.one_of(st.none(), st.sampled_from(DECK)))
        table.append([atk, cov])
    kinds = ["attack", "cover", "throw_in", "transfer", "show_trump", "take", "pass", "exchange"]
    legal = []
    for _ in range(draw(st.integers(1, 15))):
        kind = draw(st.sampled_from(kinds))
        if kind in ("take", "pass", "exchange"):
            legal.append(A(kind))
        elif kind == "cover":
            slot = draw(st.integers(0, max(0, n_slots - 1)))
            legal.append(A(kind, draw(st.sampled_from(cards)), slot))
        else:
            legal.append(A(kind, draw(st.sampled_from(cards))))
    taking = draw(st.booleans())
    obs = make_obs(cards, trump=trump, table=table, talon=talon, taking=taking)
    if draw(st.booleans()):
        obs.pop("table")
    return obs, legal


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(situations())
def test_greedy_returns_identity_on_random_synthetic(case):
    obs, legal = case
    choice = greedy_choose(obs, legal)
    assert any(choice is a for a in legal)
    assert greedy_choose(obs, legal) is choice  # deterministic


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(situations(), st.integers(0, 2**32))
def test_random_returns_identity(case, seed):
    obs, legal = case
    choice = random_choose(obs, legal, random.Random(seed))
    assert any(choice is a for a in legal)
