"""RULES.md, "Matches" and the dealer rule of "Seats, dealer, deal, trump"."""

import random

from referee.rules import Game, make_rules, next_dealer
from referee.rules.match import first_dealer, game_seed


def test_game_one_is_dealt_by_the_last_seat():
    assert [first_dealer(n) for n in range(2, 7)] == [1, 2, 3, 4, 5]


def test_the_durak_deals_the_next_game():
    assert next_dealer(dealer=3, durak=1) == 1
    assert next_dealer(dealer=0, durak=0) == 0


def test_after_a_draw_the_dealer_stays():
    assert next_dealer(dealer=2, durak=None) == 2


def test_game_seeds_are_recorded_strings_distinct_per_game():
    seeds = [game_seed(42, i) for i in range(5)]
    assert seeds == ["42:0", "42:1", "42:2", "42:3", "42:4"]
    assert game_seed(43, 0) != game_seed(42, 0)
    decks = [Game.new(make_rules(), 2, seed=s).deck for s in seeds]
    assert len({tuple(d) for d in decks}) == 5
    assert Game.new(make_rules(), 2, seed=game_seed(42, 1)).deck == decks[1]


def test_a_match_chain_of_games():
    rules = make_rules()
    dealer = first_dealer(3)
    for i in range(6):
        g = Game.new(rules, 3, seed=game_seed(7, i), dealer=dealer)
        assert g.dealer == dealer
        rng = random.Random(i)
        while not g.is_over:
            g.apply(rng.choice(g.legal_actions()))
        new = next_dealer(dealer, g.outcome.durak)
        assert new == (dealer if g.outcome.durak is None else g.outcome.durak)
        dealer = new
