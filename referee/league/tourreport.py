"""The report of one stored run (``durak-ref report --tournament ID``): its facts as one
JSON-ready map, built from the store.

- ``standings``: ``standings.standings`` as it is (rank, durak rate, rating ± 95%, LOS,
  forfeits by kind): the one place that ranks a tournament;
- ``crosstable``: per pair of bots, the games they sat in together and how often each was
  the durak of them; at two-player tables that is the first bot's wins, losses and draws;
- ``history``: each bot's rating after each game. For the ladder, the ratings the ladder
  stored (``ladder_history``); for any other run, the ladder's incremental update
  (``ratings.Ladder``, the same formula) replayed over the run's games in order, so the
  plot shows how the picture formed;
- ``forfeits``: per bot, its forfeits by kind (from the standings).

HTML: ``referee/web/report_html.py``; text: ``referee/printing/report.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..records.store import GameRow, Store, iter_rated
from ..scoring.ratings import DEFAULT_K, DEFAULT_START, Ladder
from .standings import standings

#: A plotted series keeps at most this many points (evenly spaced, the last always).
MAX_POINTS = 400


def report_data(store: Store, tid: str) -> dict[str, Any]:
    """Everything ``report`` shows about run ``tid``. Raises StoreError when there is no
    such run or the store is damaged."""
    kind, settings, status = store.tournament(tid)
    rows = store.games(tid)
    table = standings(store, tid)
    bots = [b["bot"] for b in table["table"]]
    return {
        "tournament": tid, "kind": kind, "status": status, "games": len(rows),
        "players_per_table": sorted({len(g.seats) for g in rows}),
        "rules": rows[0].rules if rows else settings.get("rules"),
        "standings": table,
        "crosstable": crosstable(rows, bots),
        "history": rating_history(store, tid, rows, kind),
        "forfeits": {b["bot"]: dict(b["forfeits"]) for b in table["table"] if b["forfeits"]},
    }


def crosstable(rows: Sequence[GameRow], bots: Sequence[str]) -> dict[str, Any]:
    """``cells[a][b]`` for every two bots that met: ``games`` together, ``durak`` (times
    ``a`` was the durak of them), ``opponent_durak`` (times ``b`` was), ``durak_share`` (a's
    share of the two: durak / (durak + opponent_durak), None if neither ever was), and at
    two-player tables ``wins``/``losses``/``draws`` of ``a`` against ``b``. ``two_player``:
    every game had two seats."""
    two_player = bool(rows) and all(len(g.seats) == 2 for g in rows)
    cells: dict[str, dict[str, dict[str, Any]]] = {a: {} for a in bots}
    for g in rows:
        seated = g.players
        for a in seated:
            for b in seated:
                if a == b:
                    continue
                c = cells.setdefault(a, {}).setdefault(
                    b, {"games": 0, "durak": 0, "opponent_durak": 0, "draws": 0})
                c["games"] += 1
                c["durak"] += g.durak == a
                c["opponent_durak"] += g.durak == b
                c["draws"] += g.durak is None
    for row in cells.values():
        for c in row.values():
            both = c["durak"] + c["opponent_durak"]
            c["durak_share"] = round(c["durak"] / both, 4) if both else None
            if two_player:
                c["wins"], c["losses"] = c["opponent_durak"], c["durak"]
            else:
                del c["draws"]  # a draw at a bigger table is not between these two
    return {"two_player": two_player, "bots": list(bots), "cells": cells}


def rating_history(store: Store, tid: str, rows: Sequence[GameRow], kind: str) -> dict[str, Any]:
    """``series[bot]``: [game number (1-based, in the run's order), rating after it]
    for every game the bot played, thinned to at most MAX_POINTS points."""
    series: dict[str, list[list[float]]] = {}
    order = {g.game_index: n + 1 for n, g in enumerate(sorted(rows, key=lambda g: g.game_index))}
    if kind == "ladder":
        source = "the ladder's stored ratings"
        for bot in sorted({s.bot for g in rows for s in g.seats}):
            series[bot] = [[order[index], round(after, 1)]
                           for t, index, _before, after, _at in store.history(bot)
                           if t == tid and index in order]
    else:
        source = f"incremental Elo (K={DEFAULT_K:g}, start {DEFAULT_START:g}) over the games in order"
        ladder = Ladder()
        ordered = sorted(rows, key=lambda g: g.game_index)
        for g, rated in zip(ordered, iter_rated(ordered), strict=True):
            ladder.update(rated)
            for bot in g.players:
                series.setdefault(bot, []).append([order[g.game_index], round(ladder.rating(bot), 1)])
    return {"source": source, "games": len(rows),
            "series": {bot: _thin(points) for bot, points in series.items()}}


def _thin(points: list[list[float]]) -> list[list[float]]:
    if len(points) <= MAX_POINTS:
        return points
    step = len(points) / (MAX_POINTS - 1)
    kept = [points[int(i * step)] for i in range(MAX_POINTS - 1)]
    return kept + [points[-1]]
