"""Games to rate from a JSON Lines file, and the rating report (the ``ratings`` command).

Each line: ``{"players": ["a", "b", ...], "durak": "a"}``; a draw has ``"durak": null``
and names who shared it in ``"last_two"``. Blank lines are skipped. (A durak-ref log is
read for ratings by ``records.matchlog.rated_games``.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import UserError
from .ratings import RatedGame, RatingError, RatingFit


class RatingsInputError(UserError, ValueError):
    """The games file is unreadable or a line is not a valid game; names file and line."""

    hint = "give a JSON Lines file of games, one game per line; fix the line named"


def read_games_jsonl(path: Path) -> list[RatedGame]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise RatingsInputError(f"{path}: cannot read: {exc}") from None
    games = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RatingsInputError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict) or not isinstance(data.get("players"), list):
            raise RatingsInputError(f'{path}:{lineno}: expected {{"players": [...], "durak": ...}}')
        durak, last = data.get("durak"), data.get("last_two")
        if durak is not None and not isinstance(durak, str):
            raise RatingsInputError(f'{path}:{lineno}: "durak" must be a name or null, got {durak!r}')
        if last is not None and not (isinstance(last, list) and all(isinstance(p, str) for p in last)):
            raise RatingsInputError(f'{path}:{lineno}: "last_two" must be a list of names, got {last!r}')
        try:
            games.append(RatedGame(tuple(str(p) for p in data["players"]), durak=durak,
                                   last_two=tuple(last) if last is not None else None))
        except RatingError as exc:
            raise RatingsInputError(f"{path}:{lineno}: {exc}") from None
    return games


def rating_report(games: list[RatedGame], fit: RatingFit) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for g in games:
        for p in g.players:
            counts[p] = counts.get(p, 0) + 1
    order = sorted(fit.players, key=lambda p: -fit.ratings[p])
    table = []
    for i, p in enumerate(order):
        table.append({"rank": i + 1, "bot": p, "games": counts.get(p, 0), "rating": round(fit.ratings[p], 2),
                      "error95": round(fit.error95(p), 2),
                      "los_next": round(fit.los(p, order[i + 1]), 4) if i + 1 < len(order) else None})
    return {"games": len(games), "table": table,
            "los": {a: {b: round(fit.los(a, b), 4) for b in order if b != a} for a in order}}
