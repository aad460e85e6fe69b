"""The live page's standings are tallied incrementally (league/standings.py): each refresh
reads only the games stored since the last, yet always equals a full recount of the store,
whatever order the games were stored in."""

from __future__ import annotations

import random
from pathlib import Path

from referee.league.standings import StandingsTally, standings
from referee.league.tournament import (
    BotEntry, TournamentSettings, play_tournament, register_tournament,
)
from referee.records.store import Store

BOTS = [BotEntry("greedy", "builtin:greedy"), BotEntry("random1", "builtin:random"),
        BotEntry("gentle", "builtin:gentle")]


def _played(tmp_path: Path, games: int, concurrency: int, watch_every: int = 0) -> tuple[Store, str, list]:
    """A real tournament of built-in bots stored in a fresh store; with ``watch_every``, a
    tally of the same store is refreshed every that many finished games while it runs
    (it sees games stored and games still being stored, as the live page does)."""
    store = Store(tmp_path / "run.sqlite")
    settings = TournamentSettings(BOTS, games=games, concurrency=concurrency, seed="standings")
    tid = register_tournament(store, settings)
    tally = StandingsTally(store, tid)
    seen: list[dict] = []

    def on_game(game: object, progress: object) -> None:
        if watch_every and len(seen) % watch_every == 0:
            seen.append(tally.update())
        else:
            seen.append({})
    play_tournament(settings, store, tid, log_dir=tmp_path / "logs", on_game=on_game)
    seen.append(tally.update())
    return store, tid, seen


def test_a_long_runs_live_standings_equal_a_full_recount(tmp_path: Path) -> None:
    store, tid, seen = _played(tmp_path, games=100, concurrency=2, watch_every=3)
    with store:
        final = seen[-1]
        assert final == standings(store, tid)  # the live page's last table is the final one
        assert final["games"] == 300 and sum(b["games"] for b in final["table"]) == 600
        refreshes = [s for s in seen[:-1] if s]
        assert len(refreshes) >= 90
        # Every refresh counted games, never more than the run had, never fewer than before.
        counts = [s["games"] for s in refreshes] + [final["games"]]
        assert counts == sorted(counts) and counts[-1] == 300


def test_games_stored_in_any_order_are_each_counted_once(tmp_path: Path) -> None:
    source, tid, _ = _played(tmp_path, games=20, concurrency=1)
    with source:
        rows = source.games(tid)
        _, settings, _ = source.tournament(tid)
    rng = random.Random(12)
    rng.shuffle(rows)  # stored out of order, with gaps filled late, as concurrent games are
    with Store(tmp_path / "copy.sqlite") as copy:
        with copy.transaction():
            for b in BOTS:
                copy.ensure_bot(b.name, b.command)
        copy.create_tournament(tid, "tournament", settings)
        tally = StandingsTally(copy, tid)
        assert tally.update()["games"] == 0
        for n, row in enumerate(rows, 1):
            copy.add_game(row)
            if n % 5 == 0 or n == len(rows):
                assert tally.update() == standings(copy, tid), f"after {n} games"
        # Every game read: the watermark is past them all, and a refresh with nothing new
        # reads nothing.
        assert tally.watermark == len(rows) and not tally.read_above
        assert copy.games(tid, from_index=tally.watermark) == []
        assert tally.update() == standings(copy, tid)


def test_a_refresh_reads_only_from_the_first_game_not_yet_read(tmp_path: Path) -> None:
    source, tid, _ = _played(tmp_path, games=4, concurrency=1)
    with source:
        rows = source.games(tid)
        tally = StandingsTally(source, tid)
        tally.update()
    assert [r.game_index for r in rows] == list(range(12))
    with Store(tmp_path / "gap.sqlite") as gap:
        with gap.transaction():
            for b in BOTS:
                gap.ensure_bot(b.name, b.command)
        gap.create_tournament(tid, "tournament", {})
        tally = StandingsTally(gap, tid)
        for row in rows[:3] + rows[4:8]:  # game 3 is still being played
            gap.add_game(row)
        assert tally.update()["games"] == 7
        assert tally.watermark == 3 and tally.read_above == {4, 5, 6, 7}
        gap.add_game(rows[3])
        assert tally.update()["games"] == 8 and tally.watermark == 8 and not tally.read_above
