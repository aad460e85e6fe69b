"""Stores for report tests (tests/report, tests/browser): real tournaments played by the CLI, and hand-made stores
(for names no tournament would accept and results chosen by the test)."""

from __future__ import annotations

import json
from pathlib import Path

from referee.records.store import GameRow, SeatRow, open_store
from support import cli

#: A bot name that would run script or load an image if a page let it in as markup.
HOSTILE_NAME = '<img src=x onerror=window.pwned=1><script>pwned=2</script>'  # at most 64: the store's limit


def played_tournament(tmp_path: Path, *extra: str) -> tuple[Path, str]:
    """Play a small real tournament of built-ins; returns (store, id)."""
    db = tmp_path / "logs" / "durak.sqlite"
    done = cli("tournament", "--bot", "g=builtin:greedy", "--bot", "r=builtin:random",
               "--bot", "g2=builtin:greedy", "--seed", "report", "--db", db,
               "--log-dir", tmp_path / "logs", "--json", *extra, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return db, json.loads(done.stdout)["tournament"]


def hand_made(tmp_path: Path, games: list[tuple[list[str], str | None, str | None]],
              tid: str = "t-hand") -> Path:
    """A store with one tournament ``tid`` of ``games``: (players in seat order, the
    durak or None for a draw of the whole table, the durak's forfeit kind or None)."""
    db = tmp_path / "hand.sqlite"
    with open_store(db) as store:
        store.create_tournament(tid, "tournament", {})
        for name in {n for players, _, _ in games for n in players}:
            store.ensure_bot(name, "builtin:greedy")
        for i, (players, durak, forfeit) in enumerate(games):
            seats = [SeatRow(s, name, "durak" if name == durak else "draw" if durak is None else "safe",
                             forfeit if name == durak else None, 3, 0.01)
                     for s, name in enumerate(players)]
            store.add_game(GameRow(tid, i, f"t:{i}", 0, {}, None, None,
                                   forfeit or ("normal" if durak else "draw"), durak,
                                   "2026-12-01T10:00:00+00:00", "2026-12-01T10:00:01+00:00", seats))
    return db
