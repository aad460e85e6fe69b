"""Ratings and SPRT at their edges, as specifications with the expected values written
out: draws shared by 3 to 6 players, all-loss and all-win records, Wald bounds with
alpha != beta, the sign of the trinomial Elo, the pseudo-count of an empty bin, and the
inputs that are refused (negative counts, elo0 == elo1, a wrong number of bins, a prior
of zero width)."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from referee.scoring.ratings import (
    RatedGame,
    RatingError,
    durak_probabilities,
    elo_from_pentanomial,
    elo_from_wdl,
    fit_outcomes,
    fit_ratings,
    ladder_update,
    log_likelihood,
    outcome_of,
    outcome_weights,
)
from referee.scoring.sprt import Sprt, llr_from_counts, llr_pentanomial, llr_trinomial, sprt_bounds

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
    with pytest.raises(ValueError, match=f"^need 0 < alpha, beta and alpha \\+ beta < 1, got {alpha}, {beta}$"):
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
    with pytest.raises(ValueError, match=r"^SPRT needs finite elo0 < elo1, got \[5, 5\]$"):
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


def test_the_running_ladder_counts_games_uses_its_k_and_returns_each_seats_change() -> None:
    from referee.scoring.ratings import Ladder

    ladder = Ladder(k=16, start=1000, ratings={"a": 1100.0})
    assert ladder.games == 0 and ladder.rating("a") == 1100.0 and ladder.rating("new") == 1000.0
    game = RatedGame(("a", "new"), durak="a")
    p = p_durak(("a", "new"), {"a": 1100.0, "new": 1000.0})
    change = ladder.update(game)
    assert ladder.games == 1
    assert change == pytest.approx({"a": 16 * (p["a"] - 1), "new": 16 * p["new"]}, rel=1e-12)
    assert ladder.rating("a") == pytest.approx(1100.0 + change["a"])
    ladder.update(RatedGame(("a", "new", "c"), last_two=("new", "c")))
    assert ladder.games == 2 and ladder.rating("c") != 1000.0


def test_counts_of_zero_are_results_too() -> None:
    test = Sprt()
    test.add_counts([0, 0, 1, 0, 0])
    assert test.counts == [0, 0, 1, 0, 0]
    with pytest.raises(ValueError, match=r"need 5 non-negative counts, got \[1, 1, -1, 1, 1\]"):
        Sprt().add_counts([1, 1, -1, 1, 1])
    with pytest.raises(ValueError, match="need 3 non-negative counts"):
        Sprt(pentanomial=False).add_counts([1, 1, 1, 1, 1])


def test_duel_score_is_for_two_player_games_of_that_bot() -> None:
    from referee.scoring.ratings import duel_score

    assert duel_score(RatedGame(("a", "b"), durak="b"), "a") == 1.0
    assert duel_score(RatedGame(("a", "b"), durak="a"), "a") == 0.0
    assert duel_score(RatedGame(("a", "b"), last_two=("a", "b")), "b") == 0.5
    with pytest.raises(RatingError, match=r"'c' did not play the two-player game \('a', 'b'\)"):
        duel_score(RatedGame(("a", "b"), durak="a"), "c")
    with pytest.raises(RatingError, match="did not play the two-player game"):
        duel_score(RatedGame(("a", "b", "c"), durak="a"), "a")


def test_the_trinomial_status_in_full() -> None:
    test = Sprt(0, 10, alpha=0.05, beta=0.1, pentanomial=False)
    for score in [1, 1, 0, 0.5, 1, 1, 1, 0, 1, 1]:
        test.add_game(score)
    st = test.status()
    exact = {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.1, "model": "trinomial",
             "counts": [2, 1, 7], "n": 10, "state": "continue", "decided_after": None}
    figures = {"lower": -2.251291798606495, "upper": 2.8903717578961645, "llr": 0.15543786955280164,
               "elo": 190.848501887865, "elo_error95": 763.2029285047873, "los": 0.9750698981215465}
    assert set(st) == set(exact) | set(figures)
    assert {k: st[k] for k in exact} == exact
    assert {k: st[k] for k in figures} == pytest.approx(figures, rel=1e-9)


def test_a_decision_is_kept_with_the_count_at_which_it_was_made() -> None:
    test = Sprt(0, 50)
    pairs = 0
    while test.state == "continue":
        test.add_pair(1.0, 0.5)
        pairs += 1
    assert pairs == 23
    st = test.status()
    assert (st["state"], st["decided_after"], st["model"], st["counts"]) == ("accept_h1", 23, "pentanomial",
                                                                            [0, 0, 0, 23, 0])
    assert st["elo_error95"] == 0.0 and st["los"] == 1.0  # every pair the same: no spread
    test.add_pair(0.0, 0.0)  # a game in flight at the decision still counts, the decision stays
    assert test.state == "accept_h1" and test.status()["decided_after"] == 23 and test.n == 24


def test_without_a_game_clock_there_is_no_increment() -> None:
    from referee.table.clock import TimeControl

    for t in (TimeControl.parse(), TimeControl.parse(None, move=3.0)):
        assert t.increment == 0.0 and t.as_dict()["increment_s"] == 0.0


def test_error_messages_say_what_was_wrong() -> None:
    with pytest.raises(ValueError, match=r"a pentanomial SPRT takes pairs \(add_pair\), not single games"):
        Sprt().add_game(1.0)
    with pytest.raises(ValueError, match="a game score is 0, 0.5 or 1, got 0.25"):
        Sprt(pentanomial=False).add_game(0.25)
    with pytest.raises(RatingError, match=r"counts must be non-negative, got \(1, -1, 0\)"):
        elo_from_wdl(1, -1, 0)
    with pytest.raises(RatingError, match="^no results to estimate an Elo difference from$"):
        elo_from_wdl(0, 0, 0)
    with pytest.raises(RatingError, match="pentanomial counts need 5 bins, got 4"):
        elo_from_pentanomial([1, 2, 3, 4])
    with pytest.raises(ValueError, match="pentanomial counts need 5 bins, got 4"):
        llr_pentanomial([1, 2, 3, 4], 0, 10)
    fit = fit_ratings([RatedGame(("a", "b"), durak="a"), RatedGame(("a", "b"), durak="b")])
    with pytest.raises(RatingError, match="unknown bot 'zed'"):
        fit.stderr("zed")


def test_errors_and_los_of_a_fit_follow_its_covariance() -> None:
    from referee.scoring.ratings import RatingFit

    def fit(cov: float) -> RatingFit:
        return RatingFit(players=("a", "b"), ratings={"a": 10.0, "b": -10.0},
                         covariance=((cov, -cov), (-cov, cov)), log_likelihood=0.0, iterations=1)

    small = fit(0.01)  # a very precise fit: variances well under 1 Elo squared
    assert small.stderr("a") == pytest.approx(0.1)
    assert small.diff_stderr("a", "b") == pytest.approx(0.2)  # var a + var b - 2 cov
    exact = fit(0.0)  # no spread at all: the LOS is certain, by the sign of the difference
    assert exact.los("a", "b") == 1.0 and exact.los("b", "a") == 0.0 and exact.los("a", "a") == 0.5
    assert fit(1e4).los("a", "b") == pytest.approx(0.5 + 0.5 * math.erf(20 / math.sqrt(4e4) / math.sqrt(2)))


def test_fit_refusals_say_what_is_wrong() -> None:
    with pytest.raises(RatingError, match="^no games to rate$"):
        fit_ratings([])
    games = [RatedGame(("a", "b"), durak="a"), RatedGame(("a", "b"), durak="b")]
    with pytest.raises(RatingError, match=r"prior_sd must be positive, got 0\.0"):
        fit_ratings(games, prior_sd=0.0)
    with pytest.raises(RatingError, match="anchor 'zed' played no game"):
        fit_ratings(games, anchor="zed")
    apart = games + [RatedGame(("c", "z"), durak="c"), RatedGame(("d", "e", "f"), durak="e"),
                     RatedGame(("g", "h"), durak="h")]
    # Groups listed by their first name, each in name order.
    with pytest.raises(RatingError, match=r"not connected: 4 groups .*: \{a, b\}; \{c, z\}; \{d, e, f\}; "
                                          r"\{g, h\}$"):
        fit_ratings(apart)


def test_a_narrow_prior_is_a_prior_too() -> None:
    games = [RatedGame(("a", "b"), durak="a"), RatedGame(("a", "b"), durak="a")]
    narrow = fit_ratings(games, prior_sd=0.5).ratings
    wide = fit_ratings(games, prior_sd=400).ratings
    assert 0 < narrow["b"] < 1 < wide["b"]  # half an Elo point of prior keeps b near 0


FIT_GAMES = [RatedGame(("a", "b", "c"), durak="a"), RatedGame(("a", "b", "c"), durak="b"),
             RatedGame(("a", "b", "c"), durak="a"), RatedGame(("a", "b"), durak="b"),
             RatedGame(("b", "c"), durak="c"), RatedGame(("a", "b", "c"), last_two=("a", "c")),
             RatedGame(("a", "c"), durak="c")]


def test_a_small_fit_against_its_reference_values() -> None:
    """Ratings (summing to zero), covariance (Elo squared, of ratings that sum to zero),
    95% errors and LOS of a fixed pool, against values of the published model (3)+(4)."""
    fit = fit_ratings(FIT_GAMES)
    assert fit.ratings == pytest.approx({"a": -13.070104770359311, "b": 26.140209540718608,
                                         "c": -13.070104770359297}, rel=1e-7)
    expected_cov = ((8716.791566704052, -4673.782408902073, -4043.0091578019787),
                    (-4673.782408902073, 9347.564817804147, -4673.782408902073),
                    (-4043.0091578019787, -4673.782408902073, 8716.791566704047))
    for row, want in zip(fit.covariance, expected_cov, strict=True):
        assert row == pytest.approx(want, rel=1e-6)
    for row in fit.covariance:  # the ratings sum to zero, so do their covariances
        assert sum(row) == pytest.approx(0.0, abs=1e-6)
    assert {n: fit.error95(n) for n in fit.players} == pytest.approx(
        {"a": 182.98960585800344, "b": 189.49481608045062, "c": 182.9896058580034}, rel=1e-6)
    assert fit.los("a", "b") == pytest.approx(0.40639563487788766, rel=1e-6)
    assert fit.log_likelihood == pytest.approx(-6.433408043777261, rel=1e-9)


def test_an_anchored_fit_puts_the_anchor_at_its_rating_with_no_variance() -> None:
    fit = fit_ratings(FIT_GAMES, anchor="b", anchor_rating=1500)
    free = fit_ratings(FIT_GAMES)
    assert fit.ratings["b"] == 1500.0
    for n in ("a", "c"):  # the differences are the fit's, only shifted
        assert fit.ratings[n] - 1500.0 == pytest.approx(free.ratings[n] - free.ratings["b"], rel=1e-7)
    assert fit.variance("b") == 0.0 and fit.covariance[1] == (0.0, 0.0, 0.0)
    assert fit.variance("a") == pytest.approx(27411.921202312344, rel=1e-6)
    assert fit.cov("a", "c") == pytest.approx(14652.120477806313, rel=1e-6)


def test_a_fit_that_cannot_converge_says_so() -> None:
    games = [RatedGame(("a", "b", "c"), durak="a")] * 3 + [
        RatedGame(("b", "c"), durak="b"), RatedGame(("b", "c"), durak="c")]
    with pytest.raises(RatingError, match=r"^rating fit did not converge in 5 iterations \(a bot that "
                                          r"never lost or always lost, with no prior\?\)$"):
        fit_ratings(games, prior_sd=math.inf, max_iter=5)
    with pytest.raises(RatingError, match="not positive definite"):
        fit_ratings(games, prior_sd=math.inf)
    assert fit_ratings(games).ratings["a"] < -100  # the prior keeps it finite


@pytest.mark.parametrize("kwargs,message", [
    ({"players": ("a",), "durak": "a"}, r"a table has 2 to 6 players, not 1: \('a',\)"),
    ({"players": tuple("abcdefg"), "durak": "a"}, "a table has 2 to 6 players, not 7"),
    ({"players": ("a", "a"), "durak": "a"}, r"a player appears twice at the table: \('a', 'a'\)"),
    ({"players": ("a", "b"), "durak": "a", "last_two": ("a", "b")},
     "^a game has either a durak or a drawn last two, not both$"),
    ({"players": ("a", "b"), "durak": "c"}, r"durak 'c' is not at the table \('a', 'b'\)"),
    ({"players": ("a", "b")}, r"^a drawn game \(durak None\) must name its last two players$"),
    ({"players": ("a", "b", "c"), "last_two": ("a",)}, "must be two or more distinct players"),
    ({"players": ("a", "b", "c"), "last_two": ("a", "a")}, "must be two or more distinct players"),
    ({"players": ("a", "b", "c"), "last_two": ("a", "z")}, "must be two or more distinct players"),
])
def test_a_game_the_ratings_cannot_use_is_refused_saying_why(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(RatingError, match=message):
        RatedGame(**kwargs)  # type: ignore[arg-type]


# ------------------------------------------- the fit's options and degenerate pools, exactly

def test_a_drawn_games_last_two_are_kept_as_a_tuple_whatever_sequence_was_given() -> None:
    """A RatedGame is a frozen value: a list given as ``last_two`` is stored as a tuple,
    so the game equals (and hashes like) the one given tuples, and counts as one outcome."""
    game = RatedGame(["a", "b", "c"], last_two=["a", "c"])  # type: ignore[arg-type]
    assert game.players == ("a", "b", "c") and game.last_two == ("a", "c")
    same = RatedGame(("a", "b", "c"), last_two=("a", "c"))
    assert game == same and hash(game) == hash(same) and len({game, same}) == 1


def test_refusals_of_the_fit_say_exactly_what_was_wrong() -> None:
    with pytest.raises(RatingError, match="^a table needs players$"):
        durak_probabilities([])
    with pytest.raises(RatingError, match="^outcome counts must be whole numbers of games, at least 0$"):
        fit_outcomes({outcome_of(RatedGame(("a", "b"), durak="a")): -2})
    # a never lost at the 3-seat table and b, c only met each other: with no prior, a's
    # rating runs off until the information matrix is singular.
    games = [RatedGame(("a", "b", "c"), durak="a")] * 3 + [
        RatedGame(("b", "c"), durak="b"), RatedGame(("b", "c"), durak="c")]
    with pytest.raises(RatingError, match=r"^information matrix is not positive definite "
                                          r"\(too little data, or no prior\)$"):
        fit_ratings(games, prior_sd=math.inf)


def test_with_no_spread_any_positive_difference_is_a_certain_superiority() -> None:
    """los() with a zero standard deviation of the difference: 1 for a lead of a fraction
    of an Elo point as for a lead of hundreds, 0 the other way round."""
    from referee.scoring.ratings import RatingFit

    fit = RatingFit(players=("a", "b"), ratings={"a": 0.5, "b": 0.0},
                    covariance=((0.0, 0.0), (0.0, 0.0)), log_likelihood=0.0, iterations=1)
    assert fit.diff_stderr("a", "b") == 0.0
    assert fit.los("a", "b") == 1.0 and fit.los("b", "a") == 0.0


# Two bots, no prior: b was the durak 3 times, a once. With x = g_a - g_b (natural units,
# g = R ln10/400), P(b durak) = sigma(x), so the log-likelihood is
# L(x) = 3 log sigma(x) + log sigma(-x); L'(x) = 3 - 4 sigma(x), L''(x) = -4 sigma(x)(1 - sigma(x)).
# The fit starts at x = 0: L'(0) = 1, L''(0) = -1, so its first Newton step is x = 1
# (and L(1) > L(0): no halving). The optimum is sigma(x) = 3/4, x = ln 3. Centred ratings
# are +-x/2 in natural units, +-x * 200/ln10 in Elo.
THREE_TO_ONE = [RatedGame(("a", "b"), durak="b")] * 3 + [RatedGame(("a", "b"), durak="a")]


def test_the_tolerance_is_what_stops_the_fit_one_newton_step_under_an_infinite_tolerance() -> None:
    done = fit_ratings(THREE_TO_ONE, prior_sd=math.inf)
    assert done.ratings == pytest.approx({"a": 200 * math.log(3) / math.log(10),
                                          "b": -200 * math.log(3) / math.log(10)}, rel=1e-9)
    one_step = fit_ratings(THREE_TO_ONE, prior_sd=math.inf, tol=math.inf)
    assert one_step.iterations == 1
    assert one_step.ratings == pytest.approx({"a": 200 / math.log(10), "b": -200 / math.log(10)},
                                             rel=1e-12)
    assert fit_outcomes(Counter(outcome_of(g) for g in THREE_TO_ONE), prior_sd=math.inf,
                        tol=math.inf) == one_step


def test_max_iter_is_the_number_of_newton_steps_allowed() -> None:
    """An even record (each bot the durak once) is already optimal at the start, ratings 0:
    the first Newton step is zero and the fit stops after it. So it needs one step: it
    succeeds with max_iter=1, reporting 1 iteration, and fails with max_iter=0."""
    even = {outcome_of(RatedGame(("a", "b"), durak="a")): 1,
            outcome_of(RatedGame(("a", "b"), durak="b")): 1}
    fit = fit_outcomes(even, prior_sd=math.inf, max_iter=1)
    assert fit.iterations == 1 and fit.ratings == {"a": 0.0, "b": 0.0}
    assert fit.log_likelihood == pytest.approx(2 * math.log(0.5), rel=1e-15)
    with pytest.raises(RatingError, match=r"^rating fit did not converge in 0 iterations "):
        fit_outcomes(even, prior_sd=math.inf, max_iter=0)


def test_anchor_rating_applies_only_with_an_anchor_and_defaults_to_zero() -> None:
    counts = Counter(outcome_of(g) for g in FIT_GAMES)
    free = fit_outcomes(counts)
    assert sum(free.ratings.values()) == pytest.approx(0.0, abs=1e-9)
    # Without an anchor the ratings sum to zero, whatever anchor_rating says.
    assert fit_outcomes(counts, anchor_rating=1500.0) == free
    assert fit_ratings(FIT_GAMES, anchor_rating=1500.0) == free
    anchored = fit_outcomes(counts, anchor="b")
    assert anchored.ratings["b"] == 0.0
    for n in ("a", "c"):
        assert anchored.ratings[n] == pytest.approx(free.ratings[n] - free.ratings["b"], rel=1e-7)


def test_a_pool_of_one_bot_has_nothing_to_compare() -> None:
    """Counts whose every outcome names one bot (fit_outcomes does not check that a table
    holds two): its rating is the centre (or the anchor's rating), with no variance, found
    without a Newton step; it was surely the durak, so the log-likelihood is log 1 = 0."""
    alone = {(("a", 1.0),): 3}
    fit = fit_outcomes(alone)
    assert fit.players == ("a",) and fit.ratings == {"a": 0.0}
    assert fit.covariance == ((0.0,),) and fit.iterations == 0 and fit.log_likelihood == 0.0
    assert fit_outcomes(alone, anchor="a", anchor_rating=1500.0).ratings == {"a": 1500.0}


# b was the durak of a, b, c 5000 times and d lost to a 5000 times: a is far above the
# rest, and with no prior Newton's full step from equal ratings overshoots on the way
# (in its 8th step it would lower the likelihood from about e^-34 to e^-39709): the fit
# must shorten that step (halving it until the likelihood rises) to reach the maximum.
OVERSHOOT = {RatedGame(("a", "b", "c", "d"), durak="a"): 1, RatedGame(("a", "d"), durak="d"): 5000,
             RatedGame(("a", "b", "c"), durak="b"): 5000, RatedGame(("a", "c", "d"), durak="c"): 5,
             RatedGame(("b", "c", "d"), durak="c"): 1}


def test_a_lopsided_pool_where_the_full_newton_step_overshoots_still_reaches_the_maximum() -> None:
    fit = fit_outcomes({outcome_of(g): k for g, k in OVERSHOOT.items()}, prior_sd=math.inf)
    # The maximum of (3): for every bot, its expected durak count under formula (1)
    # equals its actual count (the gradient of (3) is sum over games of P_i - w_i).
    for bot in "abcd":
        expected = sum(k * p_durak(g.players, fit.ratings)[bot]
                       for g, k in OVERSHOOT.items() if bot in g.players)
        actual = sum(k for g, k in OVERSHOOT.items() if g.durak == bot)
        assert expected == pytest.approx(actual, abs=1e-6), bot
    assert fit.ratings == pytest.approx({"a": 1569.9664251150477, "b": -1509.7647667580543,
                                         "c": -150.56273381457157, "d": 90.36107545757835}, rel=1e-9)
    assert fit.log_likelihood == pytest.approx(-29.668097017317137, rel=1e-12)
