"""What the other seats' decisions say of their hands (referee/bots/inference.py).

A seat that takes a card it could cheaply cover, leads a high card while holding a low
one, or passes with a card of the table's ranks in hand plays unlike a sensible player:
the search's deals give it such hands less often. The inference reads the observations
of the seat's own decisions (and its own answers), never the game; nothing is ruled out.
"""

from __future__ import annotations

import random

import pytest

from referee.bots.inference import Inference
from referee.bots.ismcts import Determinizer, IsmctsParamError, parse_params
from referee.rules import Game, action_to_wire, make_rules
from referee.rules.actions import action_str
from referee.rules.cards import parse_card

CLASSIC = make_rules("classic")


def weight(inference: Inference, seat: int, card: str) -> float:
    w = inference.weights()
    assert w is not None
    return w[seat][parse_card(card)] if w[seat] else 1.0


def take_of_the_seven() -> Game:
    """Seat 0 led 7H; seat 1 (spades are trumps, fourteen cards in the talon) took it."""
    return Game.from_position(
        CLASSIC, ["7C 6D 8C TD JD QC", "6H 8H 6C 9D KD AS"], trump="9S",
        talon="7D 8D 9C TC JC KC AC 9H TH JH QH 6S 7S 8S 9S", table="7H/--", taking=True,
        attacker=0)


def test_a_take_says_the_taker_had_no_cheap_cover() -> None:
    g = take_of_the_seven()
    inference = Inference(0.8)
    inference.observe(g.observe(0))
    # Hearts above the seven, and trumps below the queen (the talon is thick), would
    # have covered it cheaply: each is a fifth as likely in seat 1's hand.
    for card in ("8H", "9H", "TH", "JH", "QH", "6S", "7S", "8S"):
        assert weight(inference, 1, card) == pytest.approx(0.2)
    # The ace of trumps is kept rather than spent so early; the clubs say nothing.
    for card in ("AS", "6C", "KC", "7D"):
        assert weight(inference, 1, card) == 1.0


def test_the_deals_give_the_taker_its_cheap_covers_less_often() -> None:
    g = take_of_the_seven()
    obs = g.observe(0)
    inference = Inference(0.8)
    inference.observe(obs)
    tilted = Determinizer(CLASSIC, obs, random.Random(0), inference.weights())
    uniform = Determinizer(CLASSIC, obs, random.Random(0))
    rng = random.Random(1)
    covers = sum(1 << parse_card(c) for c in ("8H", "9H", "TH", "JH", "QH", "6S", "7S", "8S"))

    def mean_covers(dealer: Determinizer) -> float:
        return sum((dealer.deal(rng).hands[1] & covers).bit_count() for _ in range(2000)) / 2000

    # 20 unseen cards, 6 in seat 1's hand: 8 * 6/20 = 2.4 covers a deal when uniform.
    assert mean_covers(uniform) == pytest.approx(2.4, abs=0.15)
    assert mean_covers(tilted) < 1.2
    sample = tilted.deal(rng)
    assert sample.observe(0) == obs  # still a deal of this observation


def test_a_lead_says_the_leader_held_nothing_cheaper() -> None:
    g = Game.from_position(CLASSIC, ["7C 6D 8C TD JD QC", "6H 8H 6C 9D KD AS"], trump="9S",
                           talon="7D 8D 9S", table="9C/--", attacker=1)
    inference = Inference(0.5)
    inference.observe(g.observe(0))
    for card in ("6H", "7H", "8H", "8D", "7D", "6C"):
        assert weight(inference, 1, card) == pytest.approx(0.5)
    for card in ("TH", "9D", "6S", "AS"):  # higher, as high, or trumps
        assert weight(inference, 1, card) == 1.0


def test_a_pass_after_the_last_cover_is_kept_and_softened_by_the_draws() -> None:
    # Seat 1 leads 6H, seat 0 covers with 8H; seat 1 has no six or eight to add: the
    # bout is beaten, seat 1 draws one card, seat 0 one, seat 0 attacks next.
    g = Game.from_position(CLASSIC, ["8H 7C 7D QD QH KH", "6H 9C TD JC KD AS"], trump="9S",
                           talon="6C 6D 8C 8D 7S TH JH 9H AC 9S", attacker=1)
    inference = Inference(0.8)
    g.apply_legal(next(a for a in g.legal_actions() if action_str(a) == "attack 6H"))
    obs = g.observe(0)
    inference.observe(obs)
    cover = next(a for a in g.legal_actions() if action_str(a) == "cover 0 8H")
    inference.answered(action_to_wire(cover))
    g.apply_legal(cover)
    while g.seat_to_move() != 0:
        g.apply_legal(g.legal_actions()[-1])  # seat 1's (forced) pass
    assert g.observe(0)["bout"] == 2
    inference.observe(g.observe(0))
    # It held no non-trump six or eight (the table's ranks) when it passed; then it drew
    # one of the ten talon cards: each stays 1 - 0.8 * 9/10 as likely.
    for card in ("6C", "6D", "8C", "8D"):
        assert weight(inference, 1, card) == pytest.approx(1 - 0.8 * 0.9)
    for card in ("7S", "TH", "AC"):
        assert weight(inference, 1, card) == 1.0


def test_no_strength_no_evidence() -> None:
    inference = Inference(0.0)
    inference.observe(take_of_the_seven().observe(0))
    assert inference.weights() is None


def test_infer_is_a_parameter_of_the_search_bots_below_one() -> None:
    assert parse_params({"infer": "0.5"}, "expert").infer == 0.5
    assert parse_params({}, "ismcts").infer == 0.0
    with pytest.raises(IsmctsParamError, match="infer=1: must be >= 0 and <= 0.99"):
        parse_params({"infer": "1"}, "expert")
