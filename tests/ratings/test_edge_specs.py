"""Ratings and SPRT at their edges, as specifications with the expected values written
out: draws shared by 3 to 6 players, all-loss and all-win records, Wald bounds with
alpha != beta, the sign of the trinomial Elo, the pseudo-count of an empty bin, and the
inputs that are refused (negative counts, elo0 == elo1, a wrong number of bins, a prior
of zero width)."""

from __future__ import annotations

import math

import pytest

from referee.ratings import (
    RatedGame, RatingError, durak_probabilities, elo_from_pentanomial, elo_from_wdl, fit_ratings,
    ladder_update, log_likelihood, outcome_weights,
)
from referee.sprt import Sprt, llr_from_counts, llr_pentanomial, llr_trinomial, sprt_bounds

NAMES = ("a", "b", "c", "d", "e", "f")
RATINGS = {"a": 0.0, "b": 100.0, "c": -50.0, "d": 250.0, "e": -200.0, "f": 30.0}


def p_durak(table: tuple[str, ...], ratings: dict[str, float]) -> dict[str, float]:
    """Formula (1) written out: P(i is the durak) = exp(-g_i) / sum_j exp(-g_j), g = R ln10/400."""
    e = {n: math.exp(-ratings[n] * math.log(10) / 400) for n in table}
    return {n: e[n] / sum(e.values()) for n in table}


@pytest.mark.parametrize("players,sharing", [(3, 3), (4, 3), (4, 4), (5, 3), (6, 4), (6, 6)])
def test_a_draw_shared_by_k_players_weighs_one_kth_for_each_of_them(players: int, sharing: int) -> None:
    table = NAMES[:players]
    game = RatedGame(table, last_two=table[:sharing])
    assert outcome_weights(game) == {n: (1 / sharing if i < sharing else 0.0) for i, n in enumerate(table)}
    p = p_durak(table, RATINGS)
    expected = sum(math.log(p[n]) / sharing for n in table[:sharing])
    assert log_likelihood([game], RATINGS) == pytest.approx(expected, rel=1e-12)
    new = ladder_update(RATINGS, game, k=32)
    for i, n in enumerate(table):
        w = 1 / sharing if i < sharing else 0.0
        assert new[n] == pytest.approx(RATINGS[n] + 32 * (p[n] - w), rel=1e-12, abs=1e-9)


def test_a_stalemate_shares_the_draw_over_the_whole_table() -> None:
    table = NAMES[:5]
    game = RatedGame(table, last_two=table)
    assert outcome_weights(game) == dict.fromkeys(table, 0.2)
    equal = dict.fromkeys(table, 1500.0)
    assert ladder_update(equal, game) == equal  # p = w = 1/5 for everyone: nothing moves


def test_fitted_ratings_solve_the_score_equations_with_shared_draws() -> None:
    """At the fit, for every bot j: sum over its games of (p_j - w_j) = g_j / s**2, with
    s = prior_sd * ln(10) / 400 and the ratings summing to zero (the prior's term)."""
    t = ("a", "b", "c", "d")
    games = [RatedGame(t, durak="a"), RatedGame(t, durak="b"), RatedGame(t, last_two=("a", "c", "d")),
             RatedGame(t, last_two=t), RatedGame(t, durak="c"), RatedGame(("a", "b", "c"), durak="a"),
             RatedGame(("b", "d"), last_two=("b", "d")), RatedGame(t, last_two=("b", "c", "d")),
             RatedGame(t, durak="d"), RatedGame(("a", "d", "c"), last_two=("a", "d", "c"))]
    fit = fit_ratings(games)
    r = fit.ratings
    assert sum(r.values()) == pytest.approx(0.0, abs=1e-6)
    s2 = (400.0 * math.log(10) / 400) ** 2
    for j in t:
        residual = 0.0
        for g in games:
            if j in g.players:
                residual += p_durak(g.players, r)[j] - outcome_weights(g)[j]
        assert residual == pytest.approx(r[j] * math.log(10) / 400 / s2, abs=1e-6)


def test_durak_probabilities_follow_formula_one() -> None:
    table = NAMES[:4]
    expected = p_durak(table, RATINGS)
    assert durak_probabilities([RATINGS[n] for n in table]) == pytest.approx([expected[n] for n in table])


@pytest.mark.parametrize("wins,losses,draws,elo,los", [
    (0, 4, 0, -math.inf, 0.0),  # every game lost: no division by zero, minus infinity
    (4, 0, 0, math.inf, 1.0),
])
def test_a_perfect_or_null_record_gives_an_infinite_elo_not_an_error(
        wins: int, losses: int, draws: int, elo: float, los: float) -> None:
    est = elo_from_wdl(wins, losses, draws)
    assert est.elo == elo and est.error95 == math.inf and est.los == los and est.n == 4


def test_all_draws_is_an_even_score_with_no_spread() -> None:
    est = elo_from_wdl(0, 0, 6)
    assert est.elo == 0.0 and est.los == 0.5 and est.error95 == 0.0 and est.score == 0.5


def test_elo_from_wdl_counts_wins_for_a_and_losses_against_it() -> None:
    est = elo_from_wdl(7, 3, 0)
    assert est.score == pytest.approx(0.7)
    assert est.elo == pytest.approx(147.19071411783776, rel=1e-12)  # -400 log10(1/0.7 - 1)
    assert elo_from_wdl(3, 7, 0).elo == pytest.approx(-147.19071411783776, rel=1e-12)
    assert elo_from_wdl(2, 2, 4).elo == 0.0


def test_wald_bounds_use_alpha_and_beta_each_in_its_place() -> None:
    # lower = ln(beta / (1 - alpha)), upper = ln((1 - beta) / alpha)
    assert sprt_bounds(0.05, 0.10) == pytest.approx((math.log(0.10 / 0.95), math.log(0.90 / 0.05)))
    assert sprt_bounds(0.05, 0.10) == pytest.approx((-2.251291798606495, 2.8903717578961645), rel=1e-12)
    assert sprt_bounds(0.01, 0.2) == pytest.approx((-1.5993875765805987, 4.382026634673881), rel=1e-12)
    test = Sprt(0, 10, alpha=0.01, beta=0.2)
    assert (test.lower, test.upper) == pytest.approx((-1.5993875765805987, 4.382026634673881), rel=1e-12)
    st = test.status()
    assert (st["alpha"], st["beta"], st["lower"], st["upper"]) == (0.01, 0.2, test.lower, test.upper)


@pytest.mark.parametrize("alpha,beta", [(0.0, 0.1), (0.1, 0.0), (0.6, 0.5), (1.0, 0.1), (0.1, 1.0)])
def test_wald_bounds_refuse_error_rates_out_of_range(alpha: float, beta: float) -> None:
    with pytest.raises(ValueError):
        sprt_bounds(alpha, beta)


def test_the_trinomial_status_gives_a_positive_elo_when_a_wins_more() -> None:
    test = Sprt(0, 10, pentanomial=False)
    for score in [1.0] * 7 + [0.0] * 3:
        test.add_game(score)
    st = test.status()
    assert st["counts"] == [3, 0, 7]  # losses, draws, wins
    assert st["elo"] == pytest.approx(147.19071411783776, rel=1e-12)
    assert st["los"] > 0.5 and st["llr"] == pytest.approx(0.11099846668084856, rel=1e-9)


def test_an_empty_bin_gets_a_pseudo_count_of_one_thousandth() -> None:
    # Reference values computed with pseudo-count 0.001 for every empty bin (fastchess's).
    assert llr_trinomial(5, 0, 0, 0, 10) == pytest.approx(0.14183996009493297, rel=1e-9)
    assert llr_pentanomial([0, 0, 0, 0, 5], 0, 10) == pytest.approx(0.1418966569198506, rel=1e-9)
    assert llr_pentanomial([1, 2, 3, 4, 5], -5, 5) == pytest.approx(0.28779226416756454, rel=1e-9)
    assert llr_trinomial(0, 0, 0, 0, 10) == 0.0  # nothing at all: exactly 0


def test_refused_sprt_inputs() -> None:
    with pytest.raises(ValueError):
        Sprt(5, 5)  # elo0 == elo1: no test
    with pytest.raises(ValueError):
        Sprt(10, 0)
    with pytest.raises(ValueError):
        llr_from_counts((0.0, 0.5, 1.0), (1, 1, 1), 3, 3)
    with pytest.raises(ValueError):
        llr_from_counts((0.0, 0.5, 1.0), (1, -1, 1), 0, 10)  # a negative count
    with pytest.raises(ValueError):
        llr_from_counts((0.0, 0.5, 1.0), (1, 1), 0, 10)
    for wrong in ([1, 2, 3, 4], [1, 2, 3, 4, 5, 6]):
        with pytest.raises(ValueError):
            llr_pentanomial(wrong, 0, 10)
        with pytest.raises(ValueError):
            Sprt().add_counts(wrong)
        with pytest.raises(RatingError):
            elo_from_pentanomial(wrong)
    with pytest.raises(ValueError):
        Sprt().add_counts([1, 1, -1, 1, 1])
    test = Sprt()
    test.add_counts([1, 2, 3, 2, 1])
    assert test.counts == [1, 2, 3, 2, 1] and test.n == 9
    with pytest.raises(ValueError):
        Sprt().add_game(1.0)  # pentanomial takes pairs
    with pytest.raises(ValueError):
        Sprt(pentanomial=False).add_game(0.25)


def test_refused_rating_inputs() -> None:
    with pytest.raises(RatingError):
        elo_from_wdl(1, -1, 0)
    with pytest.raises(RatingError):
        elo_from_wdl(0, 0, 0)
    games = [RatedGame(("a", "b"), durak="a"), RatedGame(("a", "b"), durak="b")]
    for prior in (0.0, -1.0, math.nan):
        with pytest.raises(RatingError):
            fit_ratings(games, prior_sd=prior)
