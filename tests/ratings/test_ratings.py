"""Tests for referee/scoring/ratings.py: ladder, maximum-likelihood fit, head-to-head Elo estimates.

Reference values and their sources:
* ladder figures: the project's design statement of the ladder (README "Tournaments, A/B tests, ratings");
  formula R_j += K (p_j - w_j).
* head-to-head Elo figures: fastchess test suite, app/tests/elo_test.cpp (EloWDL*,
  EloPentanomial*); formulas from fastchess app/src/elo/elo_wdl.cpp and elo_pentanomial.cpp.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.scoring.ratings import (
    ELO_TO_NATURAL,
    Z95,
    Ladder,
    RatedGame,
    RatingError,
    duel_score,
    durak_probabilities,
    elo_from_pentanomial,
    elo_from_wdl,
    elo_to_score,
    fit_outcomes,
    fit_ratings,
    ladder_update,
    log_likelihood,
    normal_cdf,
    outcome_of,
    score_to_elo,
)
from referee.scoring.sprt import penta_from_fastchess

# ----------------------------------------------------------------------------- helpers


def independent_objective(games, ratings, prior_sd):
    """Penalised log-likelihood written straight from the spec, in Elo units:
    sum_games sum_i w_i log(exp(-g_i) / sum_j exp(-g_j)) - sum_i (R_i - mean R)^2 / (2 sd^2)."""
    total = 0.0
    for game in games:
        z = sum(math.exp(-ratings[p] * math.log(10) / 400) for p in game.players)
        if game.durak is not None:
            w = {game.durak: 1.0}
        else:
            w = {game.last_two[0]: 0.5, game.last_two[1]: 0.5}
        for p, wp in w.items():
            total += wp * (-ratings[p] * math.log(10) / 400 - math.log(z))
    mean = sum(ratings.values()) / len(ratings)
    return total - sum((r - mean) ** 2 for r in ratings.values()) / (2 * prior_sd ** 2)


def nelder_mead(f, x0, step=100.0, iters=4000, tol=1e-13):
    """Plain Nelder-Mead minimiser (brute-force reference, no derivatives)."""
    n = len(x0)
    simplex = [list(x0)] + [[x + (step if i == j else 0.0) for j, x in enumerate(x0)]
                            for i in range(n)]
    vals = [f(x) for x in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=vals.__getitem__)
        simplex = [simplex[i] for i in order]
        vals = [vals[i] for i in order]
        if vals[-1] - vals[0] < tol:
            break
        centroid = [sum(x[j] for x in simplex[:-1]) / n for j in range(n)]
        worst = simplex[-1]

        def towards(t, centroid=centroid, worst=worst):
            return [c + t * (w - c) for c, w in zip(centroid, worst, strict=True)]

        xr = towards(-1.0)
        fr = f(xr)
        if fr < vals[0]:
            xe = towards(-2.0)
            fe = f(xe)
            simplex[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = xr, fr
        else:
            xc = towards(0.5)
            fc = f(xc)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = xc, fc
            else:
                best = simplex[0]
                simplex = [best] + [[b + 0.5 * (x - b) for b, x in zip(best, xs, strict=True)]
                                    for xs in simplex[1:]]
                vals = [vals[0]] + [f(x) for x in simplex[1:]]
    i = min(range(n + 1), key=vals.__getitem__)
    return simplex[i], vals[i]


def synthetic_games(true, n_games, rng, max_seats=6, draw_rate=0.0):
    names = list(true)
    games = []
    for _ in range(n_games):
        table = rng.sample(names, rng.randint(2, min(max_seats, len(names))))
        p = durak_probabilities([true[x] for x in table])
        durak = rng.choices(table, p)[0]
        if rng.random() < draw_rate:
            other = rng.choice([x for x in table if x != durak])
            games.append(RatedGame(tuple(table), None, (durak, other)))
        else:
            games.append(RatedGame(tuple(table), durak))
    return games


SMALL_GAMES = [
    RatedGame(("a", "b"), "b"), RatedGame(("a", "b"), "b"), RatedGame(("a", "b"), "a"),
    RatedGame(("a", "b", "c"), "c"), RatedGame(("a", "b", "c"), "b"),
    RatedGame(("a", "b", "c"), None, ("b", "c")),
    RatedGame(("b", "c", "d", "a"), "d"), RatedGame(("b", "c", "d", "a"), "c"),
    RatedGame(("c", "d"), "d"), RatedGame(("c", "d"), None, ("c", "d")),
    RatedGame(("a", "d"), "d"), RatedGame(("a", "b", "c", "d"), "a"),
    RatedGame(("b", "d"), "b"),
]

# ------------------------------------------------------------------------------ ladder


def test_ladder_two_players_reference():
    # Reference: the design statement (K=32, 1600 vs 1400, the 1600 bot is the durak).
    new = ladder_update({"hi": 1600.0, "lo": 1400.0}, RatedGame(("hi", "lo"), "hi"), k=32)
    assert round(new["hi"], 2) == 1575.69
    assert round(new["lo"], 2) == 1424.31


def test_ladder_four_players_reference():
    # Reference: the design statement (K=32, four bots at 1500, one durak).
    ladder = Ladder(k=32, start=1500)
    changes = ladder.update(RatedGame(("a", "b", "c", "d"), "d"))
    assert [round(ladder.rating(x), 2) for x in "abcd"] == [1508.0, 1508.0, 1508.0, 1476.0]
    assert changes == pytest.approx({"a": 8, "b": 8, "c": 8, "d": -24})


def test_ladder_draw_gives_half_loss_to_last_two():
    new = ladder_update({}, RatedGame(("a", "b", "c"), None, ("b", "c")), k=30, start=1000)
    # p = 1/3 each; w = 0, 1/2, 1/2.
    assert new == pytest.approx({"a": 1010.0, "b": 995.0, "c": 995.0})


def test_two_player_model_is_elo():
    for diff in (-350.0, -40.0, 0.0, 123.0):
        p_a_durak, _ = durak_probabilities([1500 + diff, 1500])
        assert p_a_durak == pytest.approx(1 / (1 + 10 ** (diff / 400)))
        assert 1 - p_a_durak == pytest.approx(elo_to_score(diff))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-3000, 3000), min_size=2, max_size=6), st.data())
def test_ladder_update_is_zero_sum(ratings, data):
    names = [f"b{i}" for i in range(len(ratings))]
    p = durak_probabilities(ratings)
    assert sum(p) == pytest.approx(1.0)
    if data.draw(st.booleans()):
        game = RatedGame(tuple(names), data.draw(st.sampled_from(names)))
    else:
        a, b = data.draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
        game = RatedGame(tuple(names), None, (a, b))
    before = dict(zip(names, ratings, strict=True))
    after = ladder_update(before, game)
    assert sum(after.values()) == pytest.approx(sum(before.values()), abs=1e-6)


def test_rated_game_validation():
    with pytest.raises(RatingError):
        RatedGame(("a",), "a")
    with pytest.raises(RatingError):
        RatedGame(tuple("abcdefg"), "a")
    with pytest.raises(RatingError):
        RatedGame(("a", "a"), "a")
    with pytest.raises(RatingError):
        RatedGame(("a", "b"), "c")
    with pytest.raises(RatingError):
        RatedGame(("a", "b"), None)
    with pytest.raises(RatingError):
        RatedGame(("a", "b", "c"), None, ("a", "d"))
    with pytest.raises(RatingError):
        RatedGame(("a", "b"), "a", ("a", "b"))
    assert RatedGame(["a", "b"], "a").players == ("a", "b")


def test_duel_score():
    assert duel_score(RatedGame(("a", "b"), "b"), "a") == 1.0
    assert duel_score(RatedGame(("a", "b"), "b"), "b") == 0.0
    assert duel_score(RatedGame(("a", "b"), None, ("a", "b")), "a") == 0.5
    with pytest.raises(RatingError):
        duel_score(RatedGame(("a", "b", "c"), "b"), "a")

# ---------------------------------------------------------------- head-to-head estimates


def test_elo_from_wdl_reference():
    # Reference: fastchess app/tests/elo_test.cpp "EloWDL 2": Stats(136, 96, 111) = W, L, D
    # -> diff 40.70, error 30.43, LOS "99.60 %"; formula fastchess app/src/elo/elo_wdl.cpp.
    est = elo_from_wdl(136, 96, 111)
    assert round(est.elo, 2) == 40.70
    assert round(est.error95, 2) == 30.43
    assert round(100 * est.los, 2) == 99.60
    assert est.n == 343
    # fastchess "EloWDL 1": Stats(76, 89, 123) -> LOS "15.53 %".
    assert round(100 * elo_from_wdl(76, 89, 123).los, 2) == 15.53


def test_elo_from_pentanomial_reference():
    # Reference: fastchess app/tests/elo_test.cpp "EloPentanomial 1..3": Stats(LL, LD, WL,
    # DD, WD, WW); formula fastchess app/src/elo/elo_pentanomial.cpp (WL and DD share the
    # middle bin, per-pair score / 2, N = pairs).
    est = elo_from_pentanomial(penta_from_fastchess(34, 54, 31, 32, 64, 75))
    assert (round(est.elo, 2), round(est.error95, 2)) == (55.58, 27.65)
    assert round(100 * est.los, 2) == 100.00
    assert est.n == 290
    est = elo_from_pentanomial(penta_from_fastchess(332, 433, 457, 41, 333, 334))
    assert (round(est.elo, 2), round(est.error95, 2)) == (-8.64, 10.33)
    assert round(100 * est.los, 2) == 5.05
    est = elo_from_pentanomial(penta_from_fastchess(7895, 8757, 5485, 200, 568, 9999))
    assert (round(est.elo, 2), round(est.error95, 2)) == (-21.04, 2.95)


def test_elo_estimate_degenerate():
    with pytest.raises(RatingError):
        elo_from_wdl(0, 0, 0)
    perfect = elo_from_wdl(10, 0, 0)
    assert perfect.elo == math.inf and perfect.error95 == math.inf and perfect.los == 1.0
    even = elo_from_wdl(0, 0, 7)
    assert even.elo == 0.0 and even.error95 == 0.0 and even.los == 0.5
    assert score_to_elo(elo_to_score(87.5)) == pytest.approx(87.5)

# ---------------------------------------------------------------------------- ML fit


def test_fit_matches_brute_force_optimiser():
    # Brute force: Nelder-Mead on the spec's penalised log-likelihood written independently.
    prior_sd = 400.0
    names = ["a", "b", "c", "d"]

    def neg(x):
        r = dict(zip(names, list(x) + [-sum(x)], strict=True))
        return -independent_objective(SMALL_GAMES, r, prior_sd)

    best_x, best_val = nelder_mead(neg, [0.0, 0.0, 0.0])
    best_x, best_val = nelder_mead(neg, best_x, step=20.0)  # restart
    brute = dict(zip(names, best_x + [-sum(best_x)], strict=True))
    fit = fit_ratings(SMALL_GAMES, prior_sd=prior_sd)
    assert sum(fit.ratings.values()) == pytest.approx(0.0, abs=1e-9)
    for n in names:
        assert fit.ratings[n] == pytest.approx(brute[n], abs=0.1)
    assert -independent_objective(SMALL_GAMES, fit.ratings, prior_sd) <= best_val + 1e-9
    assert fit.log_likelihood == pytest.approx(
        independent_objective(SMALL_GAMES, fit.ratings, math.inf), rel=1e-12)
    assert fit.log_likelihood == pytest.approx(log_likelihood(SMALL_GAMES, fit.ratings))


def test_fit_covariance_is_inverse_of_numerical_information():
    # Independent check of the analytic information: finite-difference Hessian of the
    # independent objective with "d" pinned, times the fit's covariance of differences = I.
    prior_sd = 300.0
    fit = fit_ratings(SMALL_GAMES, prior_sd=prior_sd)
    free, ref, h = ["a", "b", "c"], "d", 1.0

    def f(shift):
        r = dict(fit.ratings)
        for k, v in shift.items():
            r[k] += v
        return independent_objective(SMALL_GAMES, r, prior_sd)

    info = [[0.0] * 3 for _ in range(3)]
    for i, a in enumerate(free):
        for j, b in enumerate(free):
            if a == b:
                d2 = f({a: 2 * h}) - 2 * f({}) + f({a: -2 * h})
            else:
                d2 = f({a: h, b: h}) - f({a: h, b: -h}) - f({a: -h, b: h}) + f({a: -h, b: -h})
            info[i][j] = -d2 / (4 * h * h)
    cov = [[fit.cov(a, b) - fit.cov(a, ref) - fit.cov(b, ref) + fit.variance(ref)
            for b in free] for a in free]
    for i in range(3):
        for j in range(3):
            prod = sum(cov[i][k] * info[k][j] for k in range(3))
            assert prod == pytest.approx(1.0 if i == j else 0.0, abs=1e-4)


def test_two_player_fit_without_prior_is_closed_form_elo():
    # With two bots and no prior the MLE is elo(score) and var = 1 / (N s (1 - s)) in g units.
    games = ([RatedGame(("a", "b"), "b")] * 30 + [RatedGame(("a", "b"), "a")] * 18
             + [RatedGame(("a", "b"), None, ("a", "b"))] * 12)
    fit = fit_ratings(games, prior_sd=math.inf)
    s = (30 + 6) / 60
    assert fit.ratings["a"] - fit.ratings["b"] == pytest.approx(score_to_elo(s), abs=1e-6)
    sd = 1 / math.sqrt(60 * s * (1 - s)) / ELO_TO_NATURAL
    assert fit.diff_stderr("a", "b") == pytest.approx(sd, rel=1e-6)
    assert fit.los("a", "b") == pytest.approx(normal_cdf(score_to_elo(s) / sd), rel=1e-6)


def test_fit_recovers_known_ratings_within_error_bars():
    rng = random.Random(20240505)
    true = {"ace": 250.0, "bob": 80.0, "cat": 0.0, "dog": -60.0, "eel": -120.0, "fox": -150.0}
    mean = sum(true.values()) / len(true)
    inside = total = 0
    for rep in range(12):
        games = synthetic_games(true, 400, rng, draw_rate=0.03 if rep % 2 else 0.0)
        fit = fit_ratings(games)
        for name, r in true.items():
            z = (fit.ratings[name] - (r - mean)) / fit.stderr(name)
            assert abs(z) < 4.0, (rep, name, z)
            inside += abs(z) < Z95
            total += 1
    # 95% intervals: coverage of the 72 estimates should be near 0.95.
    assert inside / total >= 0.85


def test_fit_large_sample_accuracy_and_los():
    rng = random.Random(7)
    true = {"a": 200.0, "b": 0.0, "c": -100.0, "d": 50.0, "e": -150.0}
    fit = fit_ratings(synthetic_games(true, 3000, rng))
    mean = sum(true.values()) / 5
    for n, r in true.items():
        assert abs(fit.ratings[n] - (r - mean)) < 3 * fit.stderr(n)
        assert fit.error95(n) == pytest.approx(Z95 * fit.stderr(n))
        assert fit.error95(n) < 30
    assert fit.los("a", "d") > 0.999
    assert fit.los("a", "d") + fit.los("d", "a") == pytest.approx(1.0)
    d = fit.ratings["b"] - fit.ratings["d"]
    assert fit.los("b", "d") == pytest.approx(normal_cdf(d / fit.diff_stderr("b", "d")))


def test_anchor_shifts_but_keeps_differences_and_los():
    centred = fit_ratings(SMALL_GAMES)
    anchored = fit_ratings(SMALL_GAMES, anchor="c", anchor_rating=1500.0)
    assert anchored.ratings["c"] == pytest.approx(1500.0)
    assert anchored.variance("c") == pytest.approx(0.0, abs=1e-9)
    for a in "abcd":
        for b in "abcd":
            assert (anchored.ratings[a] - anchored.ratings[b]
                    == pytest.approx(centred.ratings[a] - centred.ratings[b], abs=1e-9))
            if a != b:
                assert anchored.diff_stderr(a, b) == pytest.approx(centred.diff_stderr(a, b))
                assert anchored.los(a, b) == pytest.approx(centred.los(a, b))
    with pytest.raises(RatingError):
        fit_ratings(SMALL_GAMES, anchor="zed")


def test_bot_that_never_lost_stays_finite_with_prior():
    games = [RatedGame(("king", "x"), "x")] * 10 + [RatedGame(("x", "y", "king"), "y")] * 5
    fit = fit_ratings(games)
    assert all(math.isfinite(v) for v in fit.ratings.values())
    assert fit.ratings["king"] == max(fit.ratings.values())
    assert math.isfinite(fit.error95("king"))
    with pytest.raises(RatingError):
        fit_ratings(games, prior_sd=math.inf)


def test_disconnected_pool_is_refused():
    games = [RatedGame(("a", "b"), "a"), RatedGame(("b", "c", "a"), "c"),
             RatedGame(("x", "y"), "y"), RatedGame(("z", "y"), None, ("z", "y"))]
    with pytest.raises(RatingError, match="not connected") as info:
        fit_ratings(games)
    assert "{a, b, c}" in str(info.value) and "{x, y, z}" in str(info.value)
    assert isinstance(info.value, ValueError)
    with pytest.raises(RatingError):
        fit_ratings([])


# --------------------------------------------------------------- the fit from outcome counts

def test_the_fit_depends_only_on_how_many_games_had_each_outcome():
    """A live page refits after every few games of a long run: the fit reads the counts
    of outcomes (a few per pair of bots), not the games, and gives the same fit bit for
    bit whatever order the games came in."""
    rng = random.Random(11)
    games = synthetic_games({"a": 100.0, "b": 0.0, "c": -80.0}, 2000, rng, max_seats=3,
                            draw_rate=0.1)
    counts = Counter(outcome_of(g) for g in games)
    assert len(counts) < 60  # 2000 games, a few dozen distinct outcomes
    fit = fit_ratings(games)
    shuffled = games[:]
    rng.shuffle(shuffled)
    assert fit_ratings(shuffled) == fit == fit_outcomes(counts)
    assert fit_outcomes(dict(reversed(list(counts.items())))) == fit
    # A table's seat order does not matter either.
    flipped = [RatedGame(tuple(reversed(g.players)), durak=g.durak, last_two=g.last_two)
               for g in games]
    assert fit_ratings(flipped) == fit
    assert fit.log_likelihood == pytest.approx(log_likelihood(games, fit.ratings), rel=1e-9)


def test_outcome_counts_must_be_whole_numbers_of_games():
    outcome = outcome_of(RatedGame(("a", "b"), durak="a"))
    other = outcome_of(RatedGame(("a", "b"), durak="b"))
    assert fit_outcomes({outcome: 3, other: 2, outcome_of(RatedGame(("a", "c"), durak="c")): 0}) \
        == fit_ratings([RatedGame(("a", "b"), durak="a")] * 3 + [RatedGame(("a", "b"), durak="b")] * 2)
    for bad in (-1, 1.5):
        with pytest.raises(RatingError, match="whole numbers of games"):
            fit_outcomes({outcome: bad, other: 1})
    with pytest.raises(RatingError, match="no games to rate"):
        fit_outcomes({outcome: 0})
