"""How an SPRT run counts results and decides, as specifications: the documented defaults,
games of a pair counted one by one in trinomial mode, a decision when the LLR lands
exactly on a bound (Wald: ``LLR >= upper`` accepts H1, ``LLR <= lower`` accepts H0), and
the exact texts of the refusals."""

from __future__ import annotations

import math

import pytest

from referee.scoring.sprt import Sprt, llr_from_counts, llr_pentanomial, llr_trinomial, pair_bin, sprt_bounds


def test_the_defaults_are_elo0_0_elo1_10_alpha_beta_5_percent_pentanomial() -> None:
    st = Sprt().status()
    assert (st["elo0"], st["elo1"], st["alpha"], st["beta"], st["model"]) == (
        0.0, 10.0, 0.05, 0.05, "pentanomial")
    assert (st["lower"], st["upper"]) == pytest.approx((-2.9444389791664403, 2.9444389791664403),
                                                      rel=1e-12)
    assert st["counts"] == [0, 0, 0, 0, 0] and st["n"] == 0


def test_a_trinomial_run_counts_both_games_of_every_pair() -> None:
    test = Sprt(0, 10, pentanomial=False)
    test.add_pair(1.0, 0.5)
    test.add_pair(1.0, 1.0)
    test.add_pair(0.0, 0.5)
    test.add_pair(0.5, 1.0)
    assert test.counts == [1, 3, 4]  # losses, draws, wins
    assert test.n == 8
    assert test.llr == llr_trinomial(4, 1, 3, 0, 10)


def _alpha_putting_the_upper_bound_at(llr: float, beta: float) -> float:
    """An alpha whose upper Wald bound ln((1 - beta) / alpha) is exactly ``llr`` as a float."""
    alpha = (1.0 - beta) / math.exp(llr)
    for _ in range(200):
        upper = sprt_bounds(alpha, beta)[1]
        if upper == llr:
            return alpha
        alpha = math.nextafter(alpha, math.inf if upper > llr else 0.0)
    pytest.fail(f"no float alpha puts the upper bound exactly at {llr!r}")


def _beta_putting_the_lower_bound_at(llr: float, alpha: float) -> float:
    """A beta whose lower Wald bound ln(beta / (1 - alpha)) is exactly ``llr`` as a float."""
    beta = (1.0 - alpha) * math.exp(llr)
    for _ in range(200):
        lower = sprt_bounds(alpha, beta)[0]
        if lower == llr:
            return beta
        beta = math.nextafter(beta, 0.0 if lower > llr else math.inf)
    pytest.fail(f"no float beta puts the lower bound exactly at {llr!r}")


def test_an_llr_exactly_on_the_upper_bound_accepts_h1() -> None:
    counts = [0, 5, 10, 30, 45]  # an LLR of about 2.55
    llr = llr_pentanomial(counts, 0, 10)
    assert llr > 0
    alpha = _alpha_putting_the_upper_bound_at(llr, beta=0.05)
    test = Sprt(0, 10, alpha, 0.05)
    assert test.add_counts(counts) == "accept_h1"
    assert test.llr == test.upper and test.decided_after == 90


def test_an_llr_exactly_on_the_lower_bound_accepts_h0() -> None:
    counts = [45, 30, 10, 5, 0]  # an LLR of about -2.63
    llr = llr_pentanomial(counts, 0, 10)
    assert llr < 0
    beta = _beta_putting_the_lower_bound_at(llr, alpha=0.05)
    test = Sprt(0, 10, 0.05, beta)
    assert test.add_counts(counts) == "accept_h0"
    assert test.llr == test.lower and test.decided_after == 90


def test_refusals_say_exactly_what_was_wrong() -> None:
    with pytest.raises(ValueError) as refused:
        Sprt().add_game(1.0)
    assert str(refused.value) == "a pentanomial SPRT takes pairs (add_pair), not single games"
    for bad in (pair_bin, Sprt().add_pair, Sprt(pentanomial=False).add_pair):
        with pytest.raises(ValueError) as refused:
            bad(1.0, 0.25)
        assert str(refused.value) == "a game score is 0, 0.5 or 1, got 0.25"
    with pytest.raises(ValueError) as refused:
        Sprt(pentanomial=False).add_game(2)
    assert str(refused.value) == "a game score is 0, 0.5 or 1, got 2"
    with pytest.raises(ValueError) as refused:
        llr_from_counts((0.0, 0.5, 1.0), (1, 2), 0, 10)
    assert str(refused.value) == "scores and counts differ in length"
    with pytest.raises(ValueError) as refused:
        llr_from_counts((0.0, 0.5, 1.0), (1, -2, 3), 0, 10)
    assert str(refused.value) == "counts must be non-negative, got (1, -2, 3)"
