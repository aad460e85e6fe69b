r"""Generalised SPRT on the logistic Elo scale (as fastchess / fishtest); pure maths, no I/O.

Question: is bot A better than bot B? Hypotheses on the logistic Elo difference of A over
B: ``H0: elo = elo0`` against ``H1: elo = elo1`` (``elo0 < elo1``), with error rates
``alpha`` (accepting H1 when H0 holds) and ``beta`` (accepting H0 when H1 holds).

Outcomes (A's score; for Durak, A "wins" a two-player game when B is the durak):

* trinomial: per game, scores ``a = (0, 1/2, 1)`` for loss, draw, win;
* pentanomial: per duplicate-deal pair (same deck, seats swapped), the pair score
  ``0, 1/2, 1, 3/2, 2`` divided by 2, i.e. ``a = (0, 1/4, 1/2, 3/4, 1)``; bin ``k``
  counts pairs with pair score ``k/2`` (fastchess's LL, LD, WL+DD, WD, WW).

Log-likelihood ratio (Michel Van den Bergh, "Comments on Normalized Elo", prop. 1.1):
with the empirical frequencies ``phat_i = n_i / N`` and for a hypothesis ``elo`` the
expected score ``s = 1 / (1 + 10**(-elo/400))``, the maximum-likelihood distribution
with mean ``s`` is::

    p_i(s) = phat_i / (1 + theta * (a_i - s)),  where theta solves
    sum_i phat_i (a_i - s) / (1 + theta (a_i - s)) = 0,
    theta in (-1/(a_max - s), -1/(a_min - s))   (the left side decreases in theta)

    LLR = N * sum_i phat_i * (ln p_i(s1) - ln p_i(s0))

``theta`` is found by Newton's method safeguarded by bisection to ~1e-12.
Bounds (Wald): ``lower = ln(beta / (1 - alpha))``, ``upper = ln((1 - beta) / alpha)``;
``LLR >= upper`` accepts H1, ``LLR <= lower`` accepts H0, otherwise continue.

Degenerate cases (as fastchess): with no results at all the LLR is exactly 0. Otherwise
every *empty* bin gets a pseudo-count of 0.001 (non-empty bins are untouched) and ``N``
is the regularised total; this keeps every ``p_i`` positive (e.g. all results in one
bin give a finite LLR).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from referee.scoring.ratings import elo_from_pentanomial, elo_from_wdl, elo_to_score

from ..errors import UserError

__all__ = [
    "PSEUDO_COUNT", "TRINOMIAL_SCORES", "PENTANOMIAL_SCORES", "sprt_bounds",
    "llr_trinomial", "llr_pentanomial", "llr_from_counts", "penta_from_fastchess",
    "pair_bin", "Sprt",
]

#: Pseudo-count given to an empty bin.
PSEUDO_COUNT = 1e-3
#: Per-game scores of the trinomial bins (loss, draw, win).
TRINOMIAL_SCORES = (0.0, 0.5, 1.0)
#: Per-pair scores / 2 of the pentanomial bins.
PENTANOMIAL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)

CONTINUE, ACCEPT_H0, ACCEPT_H1 = "continue", "accept_h0", "accept_h1"


class SprtParamError(UserError, ValueError):
    """The user's test cannot be run: its Elo hypotheses are not finite with elo0 < elo1,
    or its error rates not 0 < alpha, beta with alpha + beta < 1."""

    hint = "give --elo0 below --elo1, and --alpha and --beta that sum to less than 1"


def _check(elo0: float, elo1: float) -> None:
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
        raise SprtParamError(f"SPRT needs finite elo0 < elo1, got [{elo0}, {elo1}]")


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds ``(ln(beta/(1-alpha)), ln((1-beta)/alpha))``; needs 0 < alpha, beta and
    alpha + beta < 1 (SprtParamError otherwise)."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise SprtParamError(f"need 0 < alpha, beta and alpha + beta < 1, got {alpha}, {beta}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _solve_theta(scores: Sequence[float], probs: Sequence[float], s: float) -> float:
    d = [a - s for a in scores]
    lo, hi = -1.0 / max(d), -1.0 / min(d)  # open interval; f(lo+) = +inf, f(hi-) = -inf

    def f(t: float) -> tuple[float, float]:
        v = dv = 0.0
        for p, x in zip(probs, d, strict=True):
            q = x / (1.0 + t * x)
            v += p * q
            dv -= p * q * q
        return v, dv

    t = 0.0
    for _ in range(200):
        v, dv = f(t)
        if v == 0.0:
            return t
        if v > 0.0:
            lo = t
        else:
            hi = t
        nt = t - v / dv if dv < 0.0 else math.nan
        if not lo < nt < hi:
            nt = 0.5 * (lo + hi)
        if abs(nt - t) <= 1e-13 * max(1.0, abs(t)):
            return nt
        t = nt
    return t


def llr_from_counts(scores: Sequence[float], counts: Sequence[float], elo0: float,
                    elo1: float) -> float:
    """The generalised LLR for counts over bins with the given per-unit scores (all in
    [0, 1], at least one below and one above every hypothesis score). See the module
    docstring for the formula and the regularisation."""
    _check(elo0, elo1)
    if len(scores) != len(counts):
        raise ValueError("scores and counts differ in length")
    if any(c < 0 for c in counts):
        raise ValueError(f"counts must be non-negative, got {tuple(counts)!r}")
    if sum(counts) == 0:
        return 0.0
    reg = [c if c > 0 else PSEUDO_COUNT for c in counts]
    total = sum(reg)
    probs = [c / total for c in reg]
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    t0 = _solve_theta(scores, probs, s0)
    t1 = _solve_theta(scores, probs, s1)
    llr = 0.0
    for a, p in zip(scores, probs, strict=True):
        # ln p1_i - ln p0_i; phat_i cancels.
        llr += p * (math.log1p(t0 * (a - s0)) - math.log1p(t1 * (a - s1)))
    return total * llr


def llr_trinomial(wins: int, losses: int, draws: int, elo0: float, elo1: float) -> float:
    """LLR of ``H1: elo1`` against ``H0: elo0`` from A's wins, losses and draws."""
    return llr_from_counts(TRINOMIAL_SCORES, (losses, draws, wins), elo0, elo1)


def llr_pentanomial(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """LLR from the five pentanomial bins ``counts[k]`` = pairs where A scored ``k/2``."""
    if len(counts) != 5:
        raise ValueError(f"pentanomial counts need 5 bins, got {len(counts)}")
    return llr_from_counts(PENTANOMIAL_SCORES, counts, elo0, elo1)


def penta_from_fastchess(ll: int, ld: int, wl: int, dd: int, wd: int,
                         ww: int) -> tuple[int, int, int, int, int]:
    """Five bins from fastchess's six pair counts (its ``Stats`` argument order); WL and
    DD both score 1 and share the middle bin."""
    return (ll, ld, wl + dd, wd, ww)


def pair_bin(score1: float, score2: float) -> int:
    """Pentanomial bin (0..4) of a duplicate pair from A's two game scores (0, 1/2, 1)."""
    for s in (score1, score2):
        if s not in (0.0, 0.5, 1.0):
            raise ValueError(f"a game score is 0, 0.5 or 1, got {s!r}")
    return int(round(2 * (score1 + score2)))


class Sprt:
    """An SPRT run fed result by result.

    ``pentanomial=True`` (default) counts duplicate-deal pairs (``add_pair``);
    ``pentanomial=False`` counts games (``add_game``; ``add_pair`` then adds both games).
    Defaults ``elo0=0, elo1=10, alpha=beta=0.05``.

    ``llr`` is the LLR of everything added so far. ``state`` is ``"continue"`` until a bound
    is first crossed, then stays at that decision (``"accept_h0"`` or ``"accept_h1"``) even
    if results still arrive afterwards (games in flight); ``decided_after`` records the
    number of units (pairs or games) at the decision.
    """

    def __init__(self, elo0: float = 0.0, elo1: float = 10.0, alpha: float = 0.05,
                 beta: float = 0.05, *, pentanomial: bool = True) -> None:
        _check(elo0, elo1)
        self.elo0, self.elo1 = float(elo0), float(elo1)
        self.alpha, self.beta = float(alpha), float(beta)
        self.lower, self.upper = sprt_bounds(alpha, beta)
        self.pentanomial = pentanomial
        self.counts = [0] * (5 if pentanomial else 3)  # by ascending score
        self.llr = 0.0
        self.state = CONTINUE
        self.decided_after: int | None = None

    @property
    def n(self) -> int:
        """Pairs (pentanomial) or games (trinomial) so far."""
        return sum(self.counts)

    def _update(self) -> str:
        scores = PENTANOMIAL_SCORES if self.pentanomial else TRINOMIAL_SCORES
        self.llr = llr_from_counts(scores, self.counts, self.elo0, self.elo1)
        if self.state == CONTINUE:
            if self.llr >= self.upper:
                self.state = ACCEPT_H1
            elif self.llr <= self.lower:
                self.state = ACCEPT_H0
            if self.state != CONTINUE:
                self.decided_after = self.n
        return self.state

    def add_game(self, score: float) -> str:
        """Add one game with A's score (0, 0.5, 1); trinomial mode only. Returns ``state``."""
        if self.pentanomial:
            raise ValueError("a pentanomial SPRT takes pairs (add_pair), not single games")
        if score not in TRINOMIAL_SCORES:
            raise ValueError(f"a game score is 0, 0.5 or 1, got {score!r}")
        self.counts[int(2 * score)] += 1
        return self._update()

    def add_pair(self, score1: float, score2: float) -> str:
        """Add a duplicate pair with A's scores in its two games. Returns ``state``."""
        k = pair_bin(score1, score2)
        if self.pentanomial:
            self.counts[k] += 1
        else:
            self.counts[int(2 * score1)] += 1
            self.counts[int(2 * score2)] += 1
        return self._update()

    def add_counts(self, counts: Sequence[int]) -> str:
        """Add several results at once (bins by ascending score: 5 or 3 counts)."""
        if len(counts) != len(self.counts) or any(c < 0 for c in counts):
            raise ValueError(f"need {len(self.counts)} non-negative counts, got {counts!r}")
        self.counts = [a + b for a, b in zip(self.counts, counts, strict=True)]
        return self._update()

    def status(self) -> dict[str, Any]:
        """A JSON-friendly summary: hypotheses, bounds, counts, LLR, state, Elo estimate."""
        out: dict[str, Any] = {
            "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
            "lower": self.lower, "upper": self.upper,
            "model": "pentanomial" if self.pentanomial else "trinomial",
            "counts": list(self.counts), "n": self.n, "llr": self.llr,
            "state": self.state, "decided_after": self.decided_after,
            "elo": None, "elo_error95": None, "los": None,
        }
        if self.n:
            if self.pentanomial:
                est = elo_from_pentanomial(self.counts)
            else:
                losses, draws, wins = self.counts
                est = elo_from_wdl(wins, losses, draws)
            out.update(elo=est.elo, elo_error95=est.error95, los=est.los)
        return out
