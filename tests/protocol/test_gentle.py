"""The built-in ``gentle`` bot (protocol/strategies.py): one card at a time; while the
talon lasts it covers only low and spends a trump only on a high card; then it covers to
shed cards but keeps its last trump unless it goes out with it, and heads-up it takes a
low card rather than spend a trump and throws in whatever fits."""

from __future__ import annotations

from protocol.strategies import gentle_choose
from tests.protocol.test_strategies import A, make_obs


def pick(obs, legal):
    choice = gentle_choose(obs, legal)
    assert any(choice is a for a in legal), "must return an element of legal itself"
    return choice


def test_leads_its_cheapest_card_a_single_card():
    obs = make_obs(["9C", "6S", "7H", "AS"], phase="attack", trump="TH")
    legal = [A("attack", c) for c in obs["hand"]]
    assert pick(obs, legal) == A("attack", "6S")


def test_leads_a_trump_only_when_it_holds_nothing_else():
    obs = make_obs(["9H", "7H"], phase="attack", trump="TH")
    assert pick(obs, [A("attack", "9H"), A("attack", "7H")]) == A("attack", "7H")


def three_in(hand, **extra):
    """A 3-player observation, seat 1 defending against seat 0, nobody out."""
    return make_obs(hand, players=3, hand_sizes=[6, len(hand), 6], out=[False] * 3,
                    known=[[]] * 3, **extra)


def test_never_throws_in_while_the_talon_lasts_or_others_are_still_in():
    legal = [A("throw_in", "6S"), A("throw_in", "6C"), A("pass")]
    heads_up_talon = make_obs(["6S", "6C"], phase="throw_in", table=[["6D", "7D"]], talon=4)
    assert pick(heads_up_talon, legal) == A("pass")
    crowd = three_in(["6S", "6C"], phase="throw_in", table=[["6D", "7D"]], talon=0)
    assert pick(crowd, legal) == A("pass")


def test_heads_up_with_the_talon_gone_it_throws_in_its_cheapest_fitting_card_trumps_too():
    obs = make_obs(["6H", "AS"], phase="throw_in", table=[["6D", "7D"]], talon=0)
    assert pick(obs, [A("throw_in", "6H"), A("pass")]) == A("throw_in", "6H")
    obs = make_obs(["6H", "6S"], phase="throw_in", table=[["6D", "7D"]], talon=0)
    assert pick(obs, [A("throw_in", "6H"), A("throw_in", "6S"), A("pass")]) == A("throw_in", "6S")
    # One of four players left behind is still heads-up.
    two_left = make_obs(["6S"], phase="throw_in", table=[["6D", "7D"]], talon=0, players=4,
                        hand_sizes=[3, 0, 1, 0], out=[False, True, False, True], known=[[]] * 4)
    assert pick(two_left, [A("throw_in", "6S"), A("pass")]) == A("throw_in", "6S")


def test_covers_cheaply_with_a_non_trump_while_the_talon_lasts():
    obs = make_obs(["8S", "KS", "7H"], table=[["6S", None]], talon=10)
    legal = [A("cover", "8S", 0), A("cover", "KS", 0), A("cover", "7H", 0), A("take")]
    assert pick(obs, legal) == A("cover", "8S", 0)


def test_takes_rather_than_spend_a_trump_while_the_talon_lasts():
    obs = make_obs(["7H", "AH"], table=[["6S", None]], talon=10)
    assert pick(obs, [A("cover", "7H", 0), A("cover", "AH", 0), A("take")]) == A("take")


def test_covers_lower_the_more_players_sit_at_the_table():
    legal = [A("cover", "QS", 0), A("take")]
    two = make_obs(["QS"], table=[["6S", None]], talon=10)
    four = make_obs(["QS"], table=[["6S", None]], talon=10, players=4,
                    hand_sizes=[6, 1, 6, 6], out=[False] * 4, known=[[]] * 4)
    assert pick(two, legal) == A("cover", "QS", 0)
    assert pick(four, legal) == A("take")


def test_spends_a_trump_while_the_talon_lasts_only_on_a_jack_or_higher():
    # Hearts are trump. Two players: a jack is worth a trump, a ten is not.
    legal = [A("cover", "7H", 0), A("take")]
    assert pick(make_obs(["7H", "8C"], table=[["JS", None]]), legal) == A("cover", "7H", 0)
    assert pick(make_obs(["7H", "8C"], table=[["TS", None]]), legal) == A("take")
    # A trump attack can only be beaten by a trump: that is no waste.
    assert pick(make_obs(["9H", "8C"], table=[["6H", None]]), [A("cover", "9H", 0), A("take")]) \
        == A("cover", "9H", 0)


def test_at_three_players_it_spends_a_trump_only_on_an_ace_and_covers_up_to_a_queen():
    legal = [A("cover", "7H", 0), A("take")]
    assert pick(three_in(["7H", "8C"], table=[["KS", None]]), legal) == A("take")
    assert pick(three_in(["7H", "8C"], table=[["AS", None]]), legal) == A("cover", "7H", 0)
    assert pick(three_in(["QS"], table=[["6S", None]]), [A("cover", "QS", 0), A("take")]) \
        == A("cover", "QS", 0)
    assert pick(three_in(["KS"], table=[["6S", None]]), [A("cover", "KS", 0), A("take")]) \
        == A("take")


def test_at_four_players_it_covers_a_non_trump_only_up_to_a_six_while_the_talon_lasts():
    # With 36 cards no non-trump ranks below the 6: at four players it takes them all
    # (52 cards: a 6 still covers a 4).
    four = dict(players=4, hand_sizes=[6, 2, 6, 6], out=[False] * 4, known=[[]] * 4)
    assert pick(make_obs(["7S", "8C"], table=[["6S", None]], **four),
                [A("cover", "7S", 0), A("take")]) == A("take")
    assert pick(make_obs(["6S", "8C"], table=[["4S", None]], **four),
                [A("cover", "6S", 0), A("take")]) == A("cover", "6S", 0)
    assert pick(make_obs(["6D", "8C"], table=[["JS", None]], **four, trump="TD"),
                [A("cover", "6D", 0), A("take")]) == A("cover", "6D", 0)  # a trump on a jack


def test_goes_out_with_its_last_card_even_a_trump_which_can_draw_the_game():
    # Talon empty, heads-up, the attacker led its last card: covering with the last
    # trump puts both out in the same bout (a draw) where taking would lose.
    obs = make_obs(["7H"], table=[["6S", None]], talon=0, hand_sizes=[0, 1])
    assert pick(obs, [A("cover", "7H", 0), A("take")]) == A("cover", "7H", 0)


def test_once_the_talon_is_empty_it_keeps_its_last_trump_in_reserve():
    legal = [A("cover", "7H", 0), A("take")]
    assert pick(three_in(["7H", "8C", "9D"], table=[["AS", None]], talon=0), legal) == A("take")
    two_trumps = three_in(["7H", "9H", "8C"], table=[["6S", None]], talon=0)
    assert pick(two_trumps, [A("cover", "7H", 0), A("cover", "9H", 0), A("take")]) \
        == A("cover", "7H", 0)
    # Non-trumps it spends freely: the cheapest that beats.
    obs = three_in(["KS", "8S", "7H"], table=[["7S", None]], talon=0)
    assert pick(obs, [A("cover", "KS", 0), A("cover", "8S", 0), A("cover", "7H", 0),
                      A("take")]) == A("cover", "8S", 0)


def test_heads_up_with_the_talon_gone_it_takes_a_card_below_a_queen_rather_than_trump_it():
    legal = [A("cover", "7H", 0), A("cover", "9H", 0), A("take")]
    assert pick(make_obs(["7H", "9H", "8C"], table=[["JS", None]], talon=0), legal) == A("take")
    assert pick(make_obs(["7H", "9H", "8C"], table=[["QS", None]], talon=0), legal) \
        == A("cover", "7H", 0)
    # With three still in the same jack is worth the trump.
    assert pick(three_in(["7H", "9H", "8C"], table=[["JS", None]], talon=0), legal) \
        == A("cover", "7H", 0)


def test_late_in_a_long_game_it_covers_as_if_the_talon_were_empty():
    # Takes alone could cycle for ever while the talon lasts (nobody draws when every
    # hand holds six or more): from bout 31 on it covers a low card with a spare trump.
    legal = [A("cover", "7H", 0), A("take")]
    early = three_in(["7H", "9H", "8C"], table=[["6S", None]], talon=3, bout=30)
    late = three_in(["7H", "9H", "8C"], table=[["6S", None]], talon=3, bout=31)
    assert pick(early, legal) == A("take")
    assert pick(late, legal) == A("cover", "7H", 0)


def test_a_malformed_observation_does_not_crash_it():
    # A cover naming a slot the table lacks: the attack counts as a low non-trump.
    obs = make_obs(["7H", "8C"], table=[], talon=5)
    obs.pop("out")
    legal = [A("cover", "7H", 3), A("cover", "8C", "x"), A("take")]
    assert pick(obs, legal) == A("cover", "8C", "x")


def test_exchanges_and_never_transfers():
    assert pick(make_obs(["6H"], phase="exchange"), [A("exchange"), A("pass")]) == A("exchange")
    obs = make_obs(["6C", "9S"], table=[["6S", None]], talon=10)
    legal = [A("cover", "9S", 0), A("transfer", "6C"), A("take")]
    assert pick(obs, legal) == A("cover", "9S", 0)
