"""The live page's standings are tallied incrementally (league/standings.py): each refresh
reads only the games stored since the last, yet always equals a full recount of the store,
whatever order the games were stored in."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
import trio

from livekit import sse_events
from referee.league.standings import StandingsTally, standings
from referee.league.tournament import (
    BotEntry,
    TournamentSettings,
    play_tournament,
    register_tournament,
)
from referee.records.store import Store
from referee.web.live import STANDINGS_EVERY_S, LiveHub, standings_rows

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


def _empty_copy(path: Path, tid: str, settings: Any) -> Store:
    """A fresh store at ``path`` with run ``tid`` registered and no game stored yet."""
    store = Store(path)
    with store.transaction():
        for b in BOTS:
            store.ensure_bot(b.name, b.command)
    store.create_tournament(tid, "tournament", settings)
    return store


@pytest.mark.process
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
    with _empty_copy(tmp_path / "copy.sqlite", tid, settings) as copy:
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
    with _empty_copy(tmp_path / "gap.sqlite", tid, {}) as gap:
        tally = StandingsTally(gap, tid)
        for row in rows[:3] + rows[4:8]:  # game 3 is still being played
            gap.add_game(row)
        assert tally.update()["games"] == 7
        assert tally.watermark == 3 and tally.read_above == {4, 5, 6, 7}
        gap.add_game(rows[3])
        assert tally.update()["games"] == 8 and tally.watermark == 8 and not tally.read_above


@pytest.fixture
def played(tmp_path: Path) -> tuple[str, Any, list]:
    """The tid, settings and stored games of a small real tournament (played outside the
    test's trio run: play_tournament runs its own)."""
    source, tid, _ = _played(tmp_path, games=20, concurrency=1)
    with source:
        return tid, source.tournament(tid)[1], source.games(tid)


async def test_the_live_page_shows_fresh_ratings_within_its_refresh_time(
        tmp_path: Path, played: tuple[str, Any, list], autojump_clock: Any) -> None:
    """On trio's virtual clock: games are stored in bursts and announced to the live hub;
    within STANDINGS_EVERY_S of each burst the page gets standings equal to a full recount
    of the store at that moment (ratings included), and never two refreshes closer than
    that. The refit works from outcome counts: however many games, a few per pair."""
    tid, settings, rows = played
    with _empty_copy(tmp_path / "live.sqlite", tid, settings) as store:
        tally = StandingsTally(store, tid)
        refreshed_at: list[float] = []  # when the hub refitted

        def source() -> dict[str, Any]:
            refreshed_at.append(trio.current_time())
            return tally.update()

        hub = LiveHub("t", standings=source)
        client = hub.subscribe()
        assert client is not None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(hub.run_standings)
            for burst in range(0, len(rows), 7):
                await trio.sleep(0.5)  # the games of a burst end while the page is idle
                for row in rows[burst:burst + 7]:
                    store.add_game(row)
                    hub.finished({"rules": {}}, {"game": row.game_index, "players": row.players,
                                                 "termination": row.termination, "durak": 0, "bouts": 1})
                announced = trio.current_time()
                expected = standings_rows(standings(store, tid))
                with trio.fail_after(10 * STANDINGS_EVERY_S):  # stale standings: fail, not hang
                    while True:
                        events = sse_events(await client.take() or b"")
                        shown = [data["standings"] for name, data in events if name == "standings"]
                        if shown and shown[-1] == expected:
                            break
                assert trio.current_time() - announced <= STANDINGS_EVERY_S + 0.01
                assert all(b["rating"] is not None for b in expected)
            hub.close()
            nursery.cancel_scope.cancel()
    gaps = [b - a for a, b in itertools.pairwise(refreshed_at)]
    assert gaps and min(gaps) >= STANDINGS_EVERY_S - 1e-9
    assert tally.games == len(rows) == 60
    assert len(tally.outcomes) <= 3 * 3  # 3 pairs of bots, 3 outcomes each (a, b, a draw)


def test_a_tally_with_a_read_limit_catches_up_in_steps_and_then_equals_a_recount(
        tmp_path: Path, played: tuple[str, Any, list]) -> None:
    """A live page opened on a run with many stored games reads them ``read_at_once``
    indices at a time, says ``partial`` while it may have left some unread, and ends
    equal to a full recount; a game still in flight does not stop it."""
    tid, settings, rows = played
    with _empty_copy(tmp_path / "long.sqlite", tid, settings) as store:
        for row in rows:
            if row.game_index != 10:  # game 10 is still being played
                store.add_game(row)
        tally = StandingsTally(store, tid, read_at_once=25)
        steps = [tally.update() for _ in range(3)]
        assert [(s["games"], s["partial"]) for s in steps] == [(24, True), (49, True), (59, False)]
        assert {k: v for k, v in steps[-1].items() if k != "partial"} == standings(store, tid)
        store.add_game(rows[10])
        last = tally.update()
        assert last["partial"] is False and last["games"] == 60
        assert {k: v for k, v in last.items() if k != "partial"} == standings(store, tid)
        assert "partial" not in standings(store, tid)  # the final table reads everything at once


async def test_the_live_page_catches_up_with_a_long_run_without_waiting_for_a_game(
        tmp_path: Path, played: tuple[str, Any, list], autojump_clock: Any) -> None:
    """Opened on 60 stored games, reading 25 at a time, with no game finishing: the page
    updates again after each pause until it shows the full recount."""
    tid, settings, rows = played
    with _empty_copy(tmp_path / "long.sqlite", tid, settings) as store:
        for row in rows:
            store.add_game(row)
        expected = standings_rows(standings(store, tid))
        hub = LiveHub("t", standings=StandingsTally(store, tid, read_at_once=25).update)
        client = hub.subscribe()
        assert client is not None
        shown: list[tuple[float, list]] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(hub.run_standings)
            with trio.fail_after(10 * STANDINGS_EVERY_S):
                while not shown or shown[-1][1] != expected:
                    events = sse_events(await client.take() or b"")
                    shown += [(trio.current_time(), d["standings"]) for n, d in events if n == "standings"]
            hub.close()
            nursery.cancel_scope.cancel()
    assert [sum(b["games"] for b in table) // 2 for _, table in shown] == [25, 50, 60]
    assert [t for t, _ in shown] == pytest.approx([0, STANDINGS_EVERY_S, 2 * STANDINGS_EVERY_S], abs=0.01)
