r"""Ratings for Durak bots: a pure maths module (standard library only, no I/O).

Model
-----
A game is played at a table ``S`` of MIN_SEATS to MAX_SEATS (rules.options) distinct bots
and has exactly one loser, the durak. With ratings ``R`` on the Elo scale and ``g = R * ln(10) / 400``::

    P(d is the durak | S) = exp(-g_d) / sum_{j in S} exp(-g_j)                  (1)

With two players this is exactly Elo: ``P(A loses to B) = 1 / (1 + 10**((R_A - R_B)/400))``.

Outcome weights ``w_j`` (they sum to 1 over the table)::

    durak d:               w_d = 1, every other seat 0
    draw between a and b:  w_a = w_b = 1/2, every other seat 0

``a`` and ``b`` are the last two players of a drawn game (``RatedGame.last_two``).

Ladder (incremental)
--------------------
After each game, for every seat ``j`` of the table (``p_j`` from (1) with the ratings
before the game)::

    R_j += K * (p_j - w_j)                                                      (2)

Defaults ``K = 32`` (``DEFAULT_K``) and start rating 1500 (``DEFAULT_START``). The
update is zero-sum over the table. (2) is one stochastic-gradient ascent step on the
log-likelihood (3) of that game, so the ladder and the tournament fit share one model.

Tournament fit (maximum likelihood)
-----------------------------------
Log-likelihood of a list of games (``G`` the tables, ``w`` as above)::

    L(g) = sum_games sum_{i in S} w_i * log P(i is the durak | S)               (3)

A draw is therefore half an observation of "a is the durak of S" plus half an
observation of "b is the durak of S" over the *whole* table: the seats that went out
earlier are credited with not being the durak, and the score equations of (3),
``sum_games (p_j - w_j) = 0``, are exactly "the expected ladder update (2) is zero".
With two players it is the usual Elo draw (half a win, half a loss).

Prior: a Gaussian prior on the deviations of the ratings from their mean,
``R_i - mean(R) ~ N(0, prior_sd**2)`` (Elo points; default ``DEFAULT_PRIOR_SD = 400``),
i.e. the penalised log-likelihood::

    F(g) = L(g) - sum_i (g_i - mean(g))**2 / (2 s**2),   s = prior_sd * ln(10)/400   (4)

It is shift-invariant (equivalently a Gaussian prior on all rating differences), adds
``1/s**2 ~ 0.19`` to the information of each bot (about as much as 0.75 of an even
two-player game) and keeps a bot that never lost (or always lost) finite.
``prior_sd=math.inf`` gives the plain MLE (it then diverges for such a bot).

Derivatives (``p`` from (1) at each game's table)::

    dF/dg_j        = sum_{games with j} (p_j - w_j)  -  (g_j - mean(g)) / s**2
    d2F/dg_j dg_k  = -sum_{games with j, k} (p_j [j = k] - p_j p_k)  -  ([j = k] - 1/n) / s**2

The model is an exponential family, so the observed and expected information coincide.
``F`` is concave; it is maximised by Newton's method (with step halving, Cholesky
solves) with the last bot pinned at ``g = 0``, then the ratings are shifted to sum to
zero (or so that ``anchor`` has ``anchor_rating``).

Error bars: the covariance of the ratings is the inverse of the information
``-d2F`` at the optimum (pinned parametrisation), mapped linearly to the chosen
centring; ``error95 = 1.959964 * sigma``. The variance of a difference
``var_a + var_b - 2 cov_ab`` does not depend on the centring. Likelihood of
superiority::

    LOS(a, b) = Phi((R_a - R_b) / sqrt(var_a + var_b - 2 cov_ab))

The pool must be connected (every pair of bots linked by a chain of shared tables),
otherwise ``RatingError`` names the separate groups.

Elo estimate from head-to-head results (chess style, as fastchess)
-------------------------------------------------------------------
Per-game scores ``x`` (1 win, 1/2 draw, 0 loss) or per-pair scores of duplicate deal
pairs divided by 2 (``0, 1/4, 1/2, 3/4, 1``), ``N`` games or pairs::

    mu = mean(x),  var = mean((x - mu)**2),  sigma = sqrt(var / N)
    elo(s) = -400 * log10(1/s - 1)
    diff = elo(mu),  error95 = (elo(mu + z*sigma) - elo(mu - z*sigma)) / 2,  z = 1.959964
    LOS = Phi((mu - 1/2) / sigma)

For Durak a "win" of bot A against B in a two-player game means B was the durak.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import UserError
from ..rules.options import seat_count_error

__all__ = [
    "DEFAULT_K", "DEFAULT_START", "DEFAULT_PRIOR_SD", "Z95", "ELO_TO_NATURAL",
    "RatingError", "RatedGame", "durak_probabilities", "outcome_weights",
    "ladder_update", "Ladder", "RatingFit", "fit_ratings", "log_likelihood",
    "normal_cdf", "score_to_elo", "elo_to_score", "EloEstimate", "elo_from_wdl",
    "elo_from_pentanomial", "duel_score",
]

#: Ladder step size (Elo points per unit of surprise).
DEFAULT_K = 32.0
#: Ladder rating of a bot never seen before.
DEFAULT_START = 1500.0
#: Standard deviation (Elo points) of the Gaussian prior of the tournament fit.
DEFAULT_PRIOR_SD = 400.0
#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054
#: g = R * ELO_TO_NATURAL.
ELO_TO_NATURAL = math.log(10.0) / 400.0

class RatingError(UserError, ValueError):
    """Bad input for a rating computation (e.g. a pool that is not connected)."""

    hint = "rate games in which every bot is linked to every other through opponents"


@dataclass(frozen=True)
class RatedGame:
    """One finished game as the ratings see it.

    ``players``: the MIN_SEATS..MAX_SEATS distinct bot names at the table (order irrelevant).
    ``durak``: the loser, or ``None`` for a draw, in which case ``last_two`` names the
    players who share the draw: normally the last two, more when more went out in the
    same final bout, the whole table after a stalemate (all must be at the table; each
    gets weight ``1/len(last_two)``). Exactly one of ``durak`` and ``last_two`` is given.
    Raises ``RatingError`` otherwise.
    """

    players: tuple[str, ...]
    durak: str | None = None
    last_two: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        players = tuple(self.players)
        object.__setattr__(self, "players", players)
        problem = seat_count_error(len(players))
        if problem:
            raise RatingError(f"{problem}: {players!r}")
        if len(set(players)) != len(players):
            raise RatingError(f"a player appears twice at the table: {players!r}")
        if self.durak is not None:
            if self.last_two is not None:
                raise RatingError("a game has either a durak or a drawn last two, not both")
            if self.durak not in players:
                raise RatingError(f"durak {self.durak!r} is not at the table {players!r}")
        else:
            if self.last_two is None:
                raise RatingError("a drawn game (durak None) must name its last two players")
            last_two = tuple(self.last_two)
            object.__setattr__(self, "last_two", last_two)
            if (len(last_two) < 2 or len(set(last_two)) != len(last_two)
                    or not set(last_two) <= set(players)):
                raise RatingError(
                    f"last_two {last_two!r} must be two or more distinct players of {players!r}")


def durak_probabilities(ratings: Sequence[float]) -> list[float]:
    """P(seat i is the durak) for a table with these Elo ratings, formula (1).

    Numerically stable (shifted softmax); the result sums to 1.
    """
    if not ratings:
        raise RatingError("a table needs players")
    g = [r * ELO_TO_NATURAL for r in ratings]
    low = min(g)
    e = [math.exp(low - x) for x in g]
    z = sum(e)
    return [x / z for x in e]


def outcome_weights(game: RatedGame) -> dict[str, float]:
    """The weights ``w_j`` of every seat: 1 for the durak, 1/k each for the k players
    sharing a draw (1/2 for the usual last two), 0 otherwise."""
    w = dict.fromkeys(game.players, 0.0)
    if game.durak is not None:
        w[game.durak] = 1.0
    else:
        assert game.last_two is not None
        for name in game.last_two:
            w[name] = 1.0 / len(game.last_two)
    return w


def ladder_update(ratings: Mapping[str, float], game: RatedGame, *, k: float = DEFAULT_K,
                  start: float = DEFAULT_START) -> dict[str, float]:
    """Formula (2): a new rating dict (``ratings`` is not modified) with every seat of
    ``game`` updated; bots missing from ``ratings`` start at ``start``."""
    new = dict(ratings)
    before = [new.get(name, start) for name in game.players]
    p = durak_probabilities(before)
    w = outcome_weights(game)
    for name, r, pj in zip(game.players, before, p, strict=True):
        new[name] = r + k * (pj - w[name])
    return new


class Ladder:
    """A running ladder: ratings updated game by game with formula (2)."""

    def __init__(self, *, k: float = DEFAULT_K, start: float = DEFAULT_START,
                 ratings: Mapping[str, float] | None = None) -> None:
        self.k = float(k)
        self.start = float(start)
        self.ratings: dict[str, float] = dict(ratings or {})
        self.games = 0

    def rating(self, name: str) -> float:
        """Current rating of ``name`` (``start`` if it has not played)."""
        return self.ratings.get(name, self.start)

    def update(self, game: RatedGame) -> dict[str, float]:
        """Apply one game; returns the rating changes of its seats."""
        before = {n: self.rating(n) for n in game.players}
        self.ratings = ladder_update(self.ratings, game, k=self.k, start=self.start)
        self.games += 1
        return {n: self.ratings[n] - before[n] for n in game.players}


# --------------------------------------------------------------------------- fit


@dataclass(frozen=True)
class RatingFit:
    """Result of ``fit_ratings``. Ratings and covariance are in Elo points.

    ``players`` fixes the order of ``covariance`` rows/columns. ``log_likelihood`` is
    (3) at the optimum (without the prior term).
    """

    players: tuple[str, ...]
    ratings: dict[str, float]
    covariance: tuple[tuple[float, ...], ...]
    log_likelihood: float
    iterations: int

    def _i(self, name: str) -> int:
        try:
            return self.players.index(name)
        except ValueError:
            raise RatingError(f"unknown bot {name!r}") from None

    def variance(self, name: str) -> float:
        i = self._i(name)
        return self.covariance[i][i]

    def cov(self, a: str, b: str) -> float:
        return self.covariance[self._i(a)][self._i(b)]

    def stderr(self, name: str) -> float:
        """One standard deviation of the rating of ``name`` (given the centring)."""
        return math.sqrt(max(self.variance(name), 0.0))

    def error95(self, name: str) -> float:
        """Half-width of the 95% interval: 1.959964 * stderr."""
        return Z95 * self.stderr(name)

    def diff_stderr(self, a: str, b: str) -> float:
        """sqrt(var_a + var_b - 2 cov_ab): the standard deviation of R_a - R_b."""
        v = self.variance(a) + self.variance(b) - 2.0 * self.cov(a, b)
        return math.sqrt(max(v, 0.0))

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority of ``a`` over ``b``: Phi((R_a - R_b) / diff_stderr)."""
        d = self.ratings[a] - self.ratings[b]
        sd = self.diff_stderr(a, b)
        if sd == 0.0:
            return 0.5 if d == 0 else (1.0 if d > 0 else 0.0)
        return normal_cdf(d / sd)


def _components(names: Sequence[str], tables: Sequence[Sequence[str]]) -> list[list[str]]:
    parent = {n: n for n in names}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for players in tables:
        root = find(players[0])
        for other in players[1:]:
            r = find(other)
            if r != root:
                parent[r] = root
    groups: dict[str, list[str]] = {}
    for n in names:
        groups.setdefault(find(n), []).append(n)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])


def log_likelihood(games: Iterable[RatedGame], ratings: Mapping[str, float]) -> float:
    """Formula (3) for Elo ratings ``ratings`` (every player of every game must be there)."""
    total = 0.0
    for game in games:
        p = durak_probabilities([ratings[n] for n in game.players])
        w = outcome_weights(game)
        total += sum(w[n] * math.log(pj) for n, pj in zip(game.players, p, strict=True) if w[n])
    return total


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    """Lower-triangular L with L L^T = a (a symmetric positive definite)."""
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                if not s > 0.0:
                    raise RatingError("information matrix is not positive definite "
                                      "(too little data, or no prior)")
                low[i][i] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    return low


def _chol_solve(low: list[list[float]], b: Sequence[float]) -> list[float]:
    n = len(low)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


#: One table of the fit: the players' indices, their outcome weights, how many games.
_Table = tuple[list[int], list[float], int]


def _objective(tables: list[_Table], g: Sequence[float], inv_s2: float) -> float:
    total = 0.0
    for idx, w, count in tables:
        gs = [g[i] for i in idx]
        low = min(gs)
        log_z = -low + math.log(sum(math.exp(low - x) for x in gs))
        total += count * sum(wi * (-gi - log_z) for wi, gi in zip(w, gs, strict=True) if wi)
    if inv_s2:
        mean = sum(g) / len(g)
        total -= 0.5 * inv_s2 * sum((x - mean) ** 2 for x in g)
    return total


def _grad_hess(tables: list[_Table], g: Sequence[float],
               inv_s2: float) -> tuple[list[float], list[list[float]]]:
    """Gradient of F and the information matrix -d2F (full n x n)."""
    n = len(g)
    grad = [0.0] * n
    info = [[0.0] * n for _ in range(n)]
    for idx, w, count in tables:
        gs = [g[i] for i in idx]
        low = min(gs)
        e = [math.exp(low - x) for x in gs]
        z = sum(e)
        p = [x / z for x in e]
        for a, i in enumerate(idx):
            grad[i] += count * (p[a] - w[a])
            row = info[i]
            row[i] += count * p[a]
            for b, j in enumerate(idx):
                row[j] -= count * p[a] * p[b]
    if inv_s2:
        mean = sum(g) / n
        for i in range(n):
            grad[i] -= inv_s2 * (g[i] - mean)
            for j in range(n):
                info[i][j] += inv_s2 * ((1.0 if i == j else 0.0) - 1.0 / n)
    return grad, info


#: A game as the fit sees it: each player's outcome weight (``outcome_weights``), as
#: (player, weight) pairs sorted by player. Every sum of the fit is a sum over games of
#: a term that depends on the game only through this, so the fit needs only how many
#: games had each outcome: ``fit_outcomes``.
Outcome = tuple[tuple[str, float], ...]


def outcome_of(game: RatedGame) -> Outcome:
    """``game``'s Outcome (see there)."""
    return tuple(sorted(outcome_weights(game).items()))


def fit_ratings(games: Iterable[RatedGame], *, prior_sd: float = DEFAULT_PRIOR_SD,
                anchor: str | None = None, anchor_rating: float = 0.0,
                tol: float = 1e-10, max_iter: int = 200) -> RatingFit:
    """Maximum a posteriori fit of model (1) to ``games`` with prior (4).

    Ratings sum to zero, or, if ``anchor`` is given, are shifted so that
    ``ratings[anchor] == anchor_rating`` (then that bot's variance is 0 and the others'
    are relative to it). Raises ``RatingError`` for no games, an unknown anchor, or a
    pool that is not connected (the message lists the groups). ``prior_sd`` (Elo) must be
    positive; ``math.inf`` disables the prior. Converges when the Newton step is below
    ``tol`` (natural units) in every coordinate. The same as ``fit_outcomes`` of the
    games' outcomes counted.
    """
    return fit_outcomes(Counter(outcome_of(game) for game in games), prior_sd=prior_sd,
                        anchor=anchor, anchor_rating=anchor_rating, tol=tol, max_iter=max_iter)


def fit_outcomes(outcomes: Mapping[Outcome, int], *, prior_sd: float = DEFAULT_PRIOR_SD,
                 anchor: str | None = None, anchor_rating: float = 0.0,
                 tol: float = 1e-10, max_iter: int = 200) -> RatingFit:
    """``fit_ratings`` of games given as counts: ``outcomes`` maps each Outcome to how many
    games had it (outcomes counted 0 are left out). Its cost grows with the number of
    distinct outcomes, not of games (a tournament of n bots at 2-seat tables has at most
    3 per pair), so a running tally can keep the counts and refit cheaply
    (league/standings.py). The result does not depend on the order of ``outcomes``."""
    items = _rateable(outcomes, prior_sd, anchor)
    names = sorted({player for outcome, _ in items for player, _ in outcome})
    n = len(names)
    index = {name: i for i, name in enumerate(names)}
    tables: list[_Table] = [([index[p] for p, _ in outcome], [w for _, w in outcome], count)
                            for outcome, count in items]
    s = prior_sd * ELO_TO_NATURAL
    inv_s2 = 0.0 if math.isinf(s) else 1.0 / (s * s)
    g, iterations = _newton(tables, n, inv_s2, tol, max_iter)
    cov = _covariance(tables, g, inv_s2, None if anchor is None else index[anchor])
    shift = -sum(g) / n if anchor is None else -g[index[anchor]]
    scale = 1.0 / ELO_TO_NATURAL
    base = anchor_rating if anchor is not None else 0.0
    ratings = {name: (g[index[name]] + shift) * scale + base for name in names}
    # Formula (3) at the optimum: _objective without the prior, in natural units.
    at = [ratings[name] * ELO_TO_NATURAL for name in names]
    return RatingFit(players=tuple(names), ratings=ratings,
                     covariance=tuple(tuple(r) for r in cov),
                     log_likelihood=_objective(tables, at, 0.0), iterations=iterations)


def _rateable(outcomes: Mapping[Outcome, int], prior_sd: float,
              anchor: str | None) -> list[tuple[Outcome, int]]:
    """The outcomes that count, sorted; RatingError for anything that cannot be rated (no
    games, a bad prior or count, an anchor that never played, a pool in pieces)."""
    items = sorted((outcome, count) for outcome, count in outcomes.items() if count)
    if not items:
        raise RatingError("no games to rate")
    if not prior_sd > 0:
        raise RatingError(f"prior_sd must be positive, got {prior_sd!r}")
    if any(not isinstance(count, int) or count < 0 for _, count in items):
        raise RatingError("outcome counts must be whole numbers of games, at least 0")
    seen = {player for outcome, _ in items for player, _ in outcome}
    if anchor is not None and anchor not in seen:
        raise RatingError(f"anchor {anchor!r} played no game")
    groups = _components(sorted(seen), [[player for player, _ in outcome] for outcome, _ in items])
    if len(groups) > 1:
        shown = "; ".join("{" + ", ".join(g) + "}" for g in groups)
        raise RatingError(f"cannot rate a pool that is not connected: {len(groups)} groups of "
                          f"bots never shared a table, directly or through others: {shown}")
    return items


def _newton(tables: list[_Table], n: int, inv_s2: float, tol: float,
            max_iter: int) -> tuple[list[float], int]:
    """The maximum of the objective in natural units, with the last player pinned at 0 (it
    is shift-invariant): damped Newton on the first n-1 coordinates; and its iterations."""
    m = n - 1
    g = [0.0] * n
    f_old = _objective(tables, g, inv_s2)
    iterations = 0
    converged = m == 0
    while not converged:
        if iterations >= max_iter:
            raise RatingError(f"rating fit did not converge in {max_iter} iterations "
                              "(a bot that never lost or always lost, with no prior?)")
        iterations += 1
        grad, info = _grad_hess(tables, g, inv_s2)
        step = _chol_solve(_cholesky([row[:m] for row in info[:m]]), grad[:m])
        t = 1.0
        while True:
            trial = [g[i] + t * step[i] for i in range(m)] + [0.0]
            f_new = _objective(tables, trial, inv_s2)
            if f_new >= f_old - 1e-12 * abs(f_old) or t < 1e-8:
                break
            t *= 0.5
        g, f_old = trial, f_new
        converged = max(abs(x) for x in step) < tol
    return g, iterations


def _covariance(tables: list[_Table], g: list[float], inv_s2: float,
                anchor: int | None) -> list[list[float]]:
    """The ratings' covariance in Elo squared at the optimum ``g``: the inverse of the
    pinned information matrix, mapped to the reported ratings (centred on 0, or relative
    to the ``anchor``'s index)."""
    n = len(g)
    m = n - 1
    inv_pinned: list[list[float]] = []
    if m:
        _, info = _grad_hess(tables, g, inv_s2)
        low = _cholesky([row[:m] for row in info[:m]])
        inv_pinned = [_chol_solve(low, [1.0 if i == j else 0.0 for i in range(m)])
                      for j in range(m)]
    # Linear map pinned (m coords) -> reported full vector: x = T y.
    if anchor is None:
        tmat = [[(1.0 if i == j else 0.0) - 1.0 / n for j in range(m)] for i in range(n)]
    else:
        tmat = [[(1.0 if i == j else 0.0) - (1.0 if anchor == j else 0.0) for j in range(m)]
                for i in range(n)]
    scale = 1.0 / ELO_TO_NATURAL
    cov = [[0.0] * n for _ in range(n)]
    tc = [[sum(tmat[i][k] * inv_pinned[k][j] for k in range(m)) for j in range(m)]
          for i in range(n)]
    for i in range(n):
        for j in range(i, n):
            v = sum(tc[i][k] * tmat[j][k] for k in range(m)) * scale * scale
            cov[i][j] = cov[j][i] = v
    return cov


# --------------------------------------------------------------- head to head


def normal_cdf(x: float) -> float:
    """Standard normal distribution function Phi(x)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def elo_to_score(elo: float) -> float:
    """Expected score of a logistic Elo difference: 1 / (1 + 10**(-elo/400))."""
    power: float = 10.0 ** (-elo / 400.0)  # float ** float is typed Any (it may be complex)
    return 1.0 / (1.0 + power)


def score_to_elo(score: float) -> float:
    """Inverse of ``elo_to_score``: -400 log10(1/score - 1); +-inf at 1 and 0."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference of A over B estimated from A's scores (see module docstring).

    ``score`` is the mean per-game (or per-pair / 2) score, ``n`` the number of games
    (or pairs), ``elo`` the logistic Elo difference, ``error95`` the half-width of the
    95% interval, ``los`` the likelihood of superiority (0..1).
    """

    score: float
    n: int
    elo: float
    error95: float
    los: float


def _estimate(scores: Sequence[float], counts: Sequence[int]) -> EloEstimate:
    if any(c < 0 for c in counts):
        raise RatingError(f"counts must be non-negative, got {tuple(counts)!r}")
    n = sum(counts)
    if n == 0:
        raise RatingError("no results to estimate an Elo difference from")
    mu = sum(s * c for s, c in zip(scores, counts, strict=True)) / n
    var = sum(c * (s - mu) ** 2 for s, c in zip(scores, counts, strict=True)) / n
    sigma = math.sqrt(var / n)
    hi, lo = score_to_elo(mu + Z95 * sigma), score_to_elo(mu - Z95 * sigma)
    error = (hi - lo) / 2.0 if math.isfinite(hi) and math.isfinite(lo) else math.inf
    if sigma == 0.0:
        los = 0.5 if mu == 0.5 else (1.0 if mu > 0.5 else 0.0)
    else:
        los = normal_cdf((mu - 0.5) / sigma)
    return EloEstimate(score=mu, n=n, elo=score_to_elo(mu), error95=error, los=los)


def elo_from_wdl(wins: int, losses: int, draws: int) -> EloEstimate:
    """Elo of A over B from A's wins, losses and draws (per-game trinomial).

    Raises ``RatingError`` with no games. A perfect or null score gives elo +-inf and
    error95 inf.
    """
    return _estimate((1.0, 0.0, 0.5), (wins, losses, draws))


def elo_bound95(wins: int, losses: int, draws: int) -> tuple[float, float]:
    """The 95% interval ``(low, high)`` of A's Elo over B from per-game W/L/D, for the case
    ``elo_from_wdl`` cannot give a finite half-width. One end is infinite there; the other
    is finite: the normal interval's end where that lies inside (0, 1), and where every
    game went one way (no spread to estimate) the one-sided exact binomial bound: with
    all n games won, the score is above 0.05 ** (1/n) at 95% (all lost: below 1 minus it).
    Raises ``RatingError`` with no games."""
    est = elo_from_wdl(wins, losses, draws)
    n = est.n
    if est.score in (0.0, 1.0):
        edge = score_to_elo(0.05 ** (1.0 / n))
        return (edge, math.inf) if est.score == 1.0 else (-math.inf, -edge)
    sigma = math.sqrt(sum(c * (s - est.score) ** 2 for s, c in
                          zip((1.0, 0.0, 0.5), (wins, losses, draws), strict=True)) / n / n)
    return score_to_elo(est.score - Z95 * sigma), score_to_elo(est.score + Z95 * sigma)


def elo_from_pentanomial(counts: Sequence[int]) -> EloEstimate:
    """Elo of A over B from duplicate-deal pairs: ``counts[k]`` = number of pairs in which
    A scored ``k/2`` points over the two games (k = 0..4: LL, LD, WL+DD, WD, WW)."""
    if len(counts) != 5:
        raise RatingError(f"pentanomial counts need 5 bins, got {len(counts)}")
    return _estimate((0.0, 0.25, 0.5, 0.75, 1.0), counts)


def duel_score(game: RatedGame, bot: str) -> float:
    """Score of ``bot`` in a two-player game: 1 if the opponent was the durak, 0 if
    ``bot`` was, 1/2 for a draw."""
    if len(game.players) != 2 or bot not in game.players:
        raise RatingError(f"{bot!r} did not play the two-player game {game.players!r}")
    if game.durak is None:
        return 0.5
    return 0.0 if game.durak == bot else 1.0
