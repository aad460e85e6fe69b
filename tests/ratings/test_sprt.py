"""Tests for referee/scoring/sprt.py: generalised SPRT on the logistic Elo scale.

Reference LLR values: fastchess test suite, app/tests/sprt_test.cpp ("logistic trinomial 1/2",
"logistic pentanomial 1/2"; Stats(wins, losses, draws) and Stats(LL, LD, WL, DD, WD, WW));
formula: fastchess app/src/matchmaking/sprt/sprt.cpp (getLLR_logistic), after Michel Van
den Bergh, "Comments on Normalized Elo", proposition 1.1.
"""

from __future__ import annotations

import math
import random

import pytest

from referee.scoring.ratings import elo_to_score
from referee.scoring.sprt import (
    PSEUDO_COUNT,
    Sprt,
    llr_pentanomial,
    llr_trinomial,
    pair_bin,
    penta_from_fastchess,
    sprt_bounds,
)


def test_pentanomial_llr_reference():
    # Reference: fastchess sprt_test.cpp "logistic pentanomial 2": Stats(871, 26175, 55003,
    # 980, 26678, 821), elo [0, 2] -> LLR -4.98.
    counts = penta_from_fastchess(871, 26175, 55003, 980, 26678, 821)
    assert round(llr_pentanomial(counts, 0, 2), 2) == -4.98
    # "logistic pentanomial 1": Stats(223, 9863, 20279, 1000, 10037, 246), [0.5, 2.5] -> -3.07.
    counts = penta_from_fastchess(223, 9863, 20279, 1000, 10037, 246)
    assert round(llr_pentanomial(counts, 0.5, 2.5), 2) == -3.07


def test_trinomial_llr_reference():
    # Reference: fastchess sprt_test.cpp "logistic trinomial 2": Stats(57433, 57030, 106593)
    # = wins, losses, draws, elo [0, 2] -> LLR -2.59.
    assert round(llr_trinomial(57433, 57030, 106593, 0, 2), 2) == -2.59
    # "logistic trinomial 1": Stats(21404, 21184, 40708), [0.5, 2.5] -> -1.57.
    assert round(llr_trinomial(21404, 21184, 40708, 0.5, 2.5), 2) == -1.57


def _brute_trinomial_llr(w, l, d, elo0, elo1):
    """Independent reference: for each hypothesis maximise sum n_i ln p_i over the one-
    parameter family of trinomials with mean s (p_W = x, p_D = 2(s - x), p_L = 1 - p_D - x)
    by golden-section search on x."""
    def best(s):
        def ll(x):
            pw, pd = x, 2 * (s - x)
            pl = 1 - pw - pd
            return w * math.log(pw) + d * math.log(pd) + l * math.log(pl)
        lo, hi = max(0.0, 2 * s - 1) + 1e-15, s - 1e-15
        phi = (math.sqrt(5) - 1) / 2
        for _ in range(200):
            a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
            if ll(a) < ll(b):
                lo = a
            else:
                hi = b
        return ll((lo + hi) / 2)
    return best(elo_to_score(elo1)) - best(elo_to_score(elo0))


@pytest.mark.parametrize("wld,elos", [((120, 100, 80), (0, 20)), ((40, 61, 300), (-10, 5)),
                                      ((5000, 4800, 9000), (0, 5))])
def test_trinomial_llr_matches_brute_force(wld, elos):
    w, l, d = wld
    assert llr_trinomial(w, l, d, *elos) == pytest.approx(_brute_trinomial_llr(w, l, d, *elos),
                                                          abs=1e-7)


def test_bounds():
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-math.log(19)) and upper == pytest.approx(math.log(19))
    with pytest.raises(ValueError):
        sprt_bounds(0.5, 0.5)
    with pytest.raises(ValueError):
        Sprt(5, 0)


def test_degenerate_cases():
    assert llr_trinomial(0, 0, 0, 0, 5) == 0.0
    assert llr_pentanomial([0] * 5, 0, 5) == 0.0
    # All pairs in the top bin: finite, strongly for H1 (empty bins get PSEUDO_COUNT).
    top = llr_pentanomial([0, 0, 0, 0, 104], 0, 5)
    assert math.isfinite(top) and top > 0
    # Regularisation touches only empty bins: equal to the explicit pseudo-count version.
    from referee.scoring.sprt import PENTANOMIAL_SCORES, llr_from_counts
    explicit = llr_from_counts(PENTANOMIAL_SCORES, [PSEUDO_COUNT, 3, PSEUDO_COUNT, 7, 9], 0, 50)
    assert llr_pentanomial([0, 3, 0, 7, 9], 0, 50) == pytest.approx(explicit)
    # Only draws: evidence for elo = 0 (H0) against H1 = 5.
    assert llr_trinomial(0, 0, 1000, 0, 5) < 0
    with pytest.raises(ValueError):
        llr_pentanomial([1, 2, 3], 0, 5)
    with pytest.raises(ValueError):
        llr_trinomial(-1, 2, 3, 0, 5)


def test_pair_bin():
    assert [pair_bin(0, 0), pair_bin(0, 0.5), pair_bin(1, 0), pair_bin(0.5, 0.5),
            pair_bin(0.5, 1), pair_bin(1, 1)] == [0, 1, 2, 2, 3, 4]
    with pytest.raises(ValueError):
        pair_bin(0.3, 1)


def test_sprt_incremental_equals_batch_and_state_is_sticky():
    sprt = Sprt(0, 50, 0.05, 0.05)
    pairs = [(1, 1), (1, 0.5), (1, 0), (0, 1), (1, 1), (0.5, 1)] * 6
    states = [sprt.add_pair(a, b) for a, b in pairs]
    assert sprt.counts == [0, 0, 12, 12, 12]
    assert sprt.llr == pytest.approx(llr_pentanomial([0, 0, 12, 12, 12], 0, 50))
    assert states[-1] == "accept_h1" and sprt.llr >= sprt.upper
    first = states.index("accept_h1")
    assert sprt.decided_after == first + 1 and all(s == "continue" for s in states[:first])
    # Later results do not undo the decision.
    for _ in range(40):
        sprt.add_pair(0, 0)
    assert sprt.llr < sprt.upper and sprt.state == "accept_h1"
    status = sprt.status()
    assert status["state"] == "accept_h1" and status["n"] == 76 and status["model"] == "pentanomial"
    assert set(status) >= {"llr", "lower", "upper", "counts", "elo", "elo_error95", "los"}
    with pytest.raises(ValueError):
        sprt.add_game(1)


def test_sprt_trinomial_mode():
    sprt = Sprt(0, 10, pentanomial=False)
    assert sprt.status()["elo"] is None and sprt.state == "continue" and sprt.llr == 0.0
    sprt.add_game(1)
    sprt.add_pair(0.5, 0)
    sprt.add_counts([1, 2, 3])
    assert sprt.counts == [2, 3, 4]
    assert sprt.llr == pytest.approx(llr_trinomial(4, 2, 3, 0, 10))


def _simulate(true_elo, rng, elo0=0.0, elo1=60.0, alpha=0.05, beta=0.05, max_pairs=5000):
    """One SPRT run on simulated duplicate Durak pairs between A and B.

    A's expected score per game is exactly elo_to_score(true_elo) (so the simulated bot
    really is at true_elo on the logistic scale). Each deal favours one seat by u ~ U(-c, c)
    in score; A plays the deal once on each seat (m + u, then m - u), so the two games of a
    pair are negatively correlated, as with duplicate deals. Two-player Durak: A scores 1
    if B is the durak, 0 if A is, 0.5 on a draw (probability 5%)."""
    sprt = Sprt(elo0, elo1, alpha, beta)
    m, draw = elo_to_score(true_elo), 0.05
    c = min(0.3, m - draw / 2, 1 - draw / 2 - m)
    for _ in range(max_pairs):
        u = rng.uniform(-c, c)
        scores = []
        for mean in (m + u, m - u):
            r = rng.random()
            scores.append(0.5 if r < draw else 1.0 if r < mean + draw / 2 else 0.0)
        if sprt.add_pair(*scores) != "continue":
            return sprt.state
    return sprt.state


@pytest.mark.slow
def test_sprt_simulated_error_rates():
    rng = random.Random(5)
    runs = 200
    equal = [_simulate(0.0, rng) for _ in range(runs)]
    at_elo1 = [_simulate(60.0, rng) for _ in range(runs)]
    clearly = [_simulate(150.0, rng) for _ in range(50)]
    assert "continue" not in equal + at_elo1 + clearly
    # alpha = beta = 0.05; allow ~3 binomial standard deviations over 200 runs.
    slack = 3 * math.sqrt(0.05 * 0.95 / runs)
    assert equal.count("accept_h1") / runs <= 0.05 + slack
    assert at_elo1.count("accept_h0") / runs <= 0.05 + slack
    assert equal.count("accept_h0") / runs >= 0.9
    assert all(s == "accept_h1" for s in clearly)
