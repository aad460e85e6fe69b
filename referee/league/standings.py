"""A run's standings (rank, games, durak rate, rating ± 95%, LOS over the next bot,
forfeits), tallied from the store.

``StandingsTally`` keeps the tally of one run and, on each ``update()``, reads only the
games stored since its last read: the live page of a long tournament or of the arena
refreshes its standings without re-reading the whole store each time. ``standings()`` is
a fresh tally read once: the full recount (the final table, reports). Both are one code
path, so the live page's last standings are the final table's.

Which games are new: games are stored in any order (concurrent games finish out of
order), so the tally keeps a *watermark* W, every game index below which it has read, and
the indices at or above W it has read too. Each update reads the stored games from W on
and skips those; W then moves up past every index read. Normally the games at or above
W are the few in flight, so an update reads about the games finished since the last.

The sums are order-independent (exact fractions for the time used; for the rating fit,
how many games had each outcome: ``ratings.fit_outcomes``, which does not depend on their
order), so the tally equals a recount whatever order games came in. A refresh refits
from those counts: its cost grows with the number of distinct outcomes (at most 3 per
pair of bots at 2-seat tables), not with the number of games, so the live page of a run
of 100,000 games refreshes as fast as one of 100.
A game replaced in the store after it was read (an SPRT's half-stored pair, which no
live page shows) is not read again.

Catching up. A page opened on a run that already has many games (a ``--resume``) would
read them all in its first update, in the referee's thread (10,000 games: about 2 s,
100,000: about 20 s, during which no bot is read or timed). With ``read_at_once`` an
update reads at most that many game indices past the highest it has read, and says
``partial`` while it may have left stored games unread; the live page then updates again
after its pause, so it catches up in steps instead of in one long stall.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from ..records.store import GameRow, Store, iter_rated

#: Most game indices a live page's update reads past the highest it has read (see
#: "Catching up"): about 0.2 s of the referee's thread.
LIVE_READ_AT_ONCE = 1000


class StandingsTally:
    """The standings of run ``tid`` in ``store``, updated from the games stored since the
    last ``update()``; with ``read_at_once``, at most that many indices further each time
    (see "Catching up" in the module docstring)."""

    def __init__(self, store: Store, tid: str, read_at_once: int | None = None) -> None:
        self.store, self.tid = store, tid
        self.read_at_once = read_at_once
        self.watermark = 0  #: every game index below this has been read
        self.frontier = 0  #: one past the highest game index read
        self.read_above: set[int] = set()  #: indices read at or above the watermark
        self.bots: dict[str, dict[str, Any]] = {}
        self.outcomes: Counter[Any] = Counter()  #: ratings.Outcome -> games read with it
        self.games = 0

    def update(self) -> dict[str, Any]:
        """Read the games stored since the last update; the standings of every game read.
        With ``read_at_once``, the result also says ``partial``: True when this update
        stopped at its limit, so stored games may be left for the next."""
        below = None if self.read_at_once is None else self.frontier + self.read_at_once
        for row in self.store.games(self.tid, from_index=self.watermark, below=below):
            if row.game_index not in self.read_above:
                self._add(row)
                self.read_above.add(row.game_index)
                self.frontier = max(self.frontier, row.game_index + 1)
        while self.watermark in self.read_above:
            self.read_above.remove(self.watermark)
            self.watermark += 1
        data = self.table()
        if below is not None:
            data["partial"] = self.frontier == below
        return data

    def _add(self, g: GameRow) -> None:
        self.games += 1
        for s in g.seats:
            b = self.bots.setdefault(s.bot, {"bot": s.bot, "games": 0, "durak": 0, "draws": 0,
                                             "forfeits": {}, "decisions": 0, "time_used": Fraction(0)})
            b["games"] += 1
            b["durak"] += s.result == "durak"
            b["draws"] += s.result == "draw"
            b["decisions"] += s.decisions
            b["time_used"] += Fraction(s.time_used)
            if s.forfeit:
                b["forfeits"][s.forfeit] = b["forfeits"].get(s.forfeit, 0) + 1
        from ..scoring.ratings import outcome_of
        self.outcomes[outcome_of(next(iter_rated([g])))] += 1

    def table(self) -> dict[str, Any]:
        """The standings of the games read so far. Ratings come from the maximum-likelihood
        fit of every game read (from the counts of their outcomes)."""
        from ..scoring.ratings import RatingError, fit_outcomes
        from ..table.failfast import all_forfeit_warning, forfeited_all

        error = None
        fit = None
        try:
            fit = fit_outcomes(self.outcomes) if self.outcomes else None
        except RatingError as exc:
            error = str(exc)
        table = []
        for tally in self.bots.values():
            b = dict(tally, forfeits=dict(tally["forfeits"]))
            del b["time_used"]
            b["durak_rate"] = round(b["durak"] / b["games"], 4) if b["games"] else None
            b["rating"] = round(fit.ratings[b["bot"]], 1) if fit else None
            b["error95"] = round(fit.error95(b["bot"]), 1) if fit else None
            b["mean_decision_ms"] = (round(float(1000 * tally["time_used"] / b["decisions"]), 3)
                                     if b["decisions"] else None)
            table.append(b)
        table.sort(key=lambda b: (-(b["rating"] if b["rating"] is not None else -b["durak_rate"]), b["bot"]))
        for i, b in enumerate(table):
            b["rank"] = i + 1
            b["los_next"] = (round(fit.los(b["bot"], table[i + 1]["bot"]), 4)
                             if fit and i + 1 < len(table) else None)
        for b in table:
            b["forfeited_all"] = forfeited_all(b["games"], b["forfeits"])
        return {"tournament": self.tid, "games": self.games, "table": table, "rating_error": error,
                "warnings": [all_forfeit_warning(b["bot"], b["games"], b["forfeits"])
                             for b in table if b["forfeited_all"]],
                "los": ({a: {b: round(fit.los(a, b), 4) for b in fit.players if b != a}
                         for a in fit.players} if fit else None)}


def standings(store: Store, tid: str) -> dict[str, Any]:
    """The final table of run ``tid``: every stored game counted afresh (see the module
    docstring for what it holds)."""
    return StandingsTally(store, tid).update()
