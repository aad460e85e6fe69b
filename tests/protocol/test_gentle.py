"""The built-in ``gentle`` bot: one card at a time, never throws in, takes rather than
cover high or with a trump while the talon lasts (protocol/strategies.py)."""

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


def test_never_throws_in_even_with_a_matching_low_card():
    obs = make_obs(["6S", "6C"], phase="throw_in", table=[["6D", "7D"]], talon=0)
    assert pick(obs, [A("throw_in", "6S"), A("throw_in", "6C"), A("pass")]) == A("pass")


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


def test_covers_with_a_trump_once_the_talon_is_empty_but_not_with_its_last_card():
    legal = [A("cover", "7H", 0), A("take")]
    assert pick(make_obs(["7H", "8C"], table=[["6S", None]], talon=0), legal) == A("cover", "7H", 0)
    assert pick(make_obs(["7H"], table=[["6S", None]], talon=0), legal) == A("take")


def test_late_in_a_long_game_it_covers_as_if_the_talon_were_empty():
    # Takes alone could cycle for ever while the talon lasts (nobody draws when every
    # hand holds six or more): from bout 41 on it covers whenever it can.
    legal = [A("cover", "7H", 0), A("take")]
    obs = make_obs(["7H", "8C"], table=[["6S", None]], talon=3, bout=41)
    assert pick(obs, legal) == A("cover", "7H", 0)


def test_exchanges_and_never_transfers():
    assert pick(make_obs(["6H"], phase="exchange"), [A("exchange"), A("pass")]) == A("exchange")
    obs = make_obs(["6C", "9S"], table=[["6S", None]], talon=10)
    legal = [A("cover", "9S", 0), A("transfer", "6C"), A("take")]
    assert pick(obs, legal) == A("cover", "9S", 0)
