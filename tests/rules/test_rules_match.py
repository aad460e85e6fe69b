"""RULES.md, "Matches" and the dealer rule of "Seats, dealer, deal, trump"."""

import random

from referee.rules import Game, make_rules, next_dealer
from referee.rules.deal import deal_deck, deal_id
from referee.rules.match import first_dealer


def test_game_one_is_dealt_by_the_last_seat():
    assert [first_dealer(n) for n in range(2, 7)] == [1, 2, 3, 4, 5]


def test_the_durak_deals_the_next_game():
    assert next_dealer(dealer=3, durak=1) == 1
    assert next_dealer(dealer=0, durak=0) == 0


def test_after_a_draw_the_dealer_stays():
    assert next_dealer(dealer=2, durak=None) == 2


def test_game_decks_are_keyed_by_the_match_seed_and_distinct_per_game():
    ids = [deal_id("match", i) for i in range(5)]
    assert ids == ["match:0", "match:1", "match:2", "match:3", "match:4"]
    decks = [deal_deck("42", i, 36) for i in ids]
    assert len({tuple(d) for d in decks}) == 5
    assert deal_deck("43", ids[0], 36) != decks[0]
    assert Game.new(make_rules(), 2, deck=deal_deck("42", "match:1", 36)).deck == decks[1]


def test_a_match_chain_of_games():
    rules = make_rules()
    dealer = first_dealer(3)
    for i in range(6):
        g = Game.new(rules, 3, deck=deal_deck("7", deal_id("match", i), 36), dealer=dealer)
        assert g.dealer == dealer
        rng = random.Random(i)
        while not g.is_over:
            g.apply(rng.choice(g.legal_actions()))
        new = next_dealer(dealer, g.outcome.durak)
        assert new == (dealer if g.outcome.durak is None else g.outcome.durak)
        dealer = new
