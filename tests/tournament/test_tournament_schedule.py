"""The tournament schedule: deterministic, fair, duplicate deals.

Pure checks of ``schedule(settings)`` for every format, then real play with the
built-in bots through ``run_tournament`` into a temporary store and log: the
rotations of one deal share the deal seed *and* the deck order, and the seats are
rotated; ``duplicate=False`` gives every game its own deal; concurrency gives the same
games as sequential play.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from referee.league.tournament import BotEntry, TournamentSettings, run_tournament, schedule, tables
from referee.records.matchlog import read_log
from referee.records.store import Store
from referee.rules.deal import deal_deck

NAMES = ["a", "b", "c", "d", "e", "f"]


def make(n: int = 3, **kw: object) -> TournamentSettings:
    cmds = ["builtin:random", "builtin:greedy"]
    return TournamentSettings([BotEntry(NAMES[i], cmds[i % 2]) for i in range(n)], **kw)  # type: ignore[arg-type]


def pairs_met(games: list) -> Counter:  # type: ignore[type-arg]
    met: Counter = Counter()  # type: ignore[type-arg]
    for g in games:
        for x, y in itertools.combinations(sorted(g.table), 2):
            met[x, y] += 1
    return met


# -- the schedule alone --------------------------------------------------------------


def test_schedule_is_deterministic_from_settings() -> None:
    s = make(4, games=6, seed=7)
    assert schedule(s) == schedule(make(4, games=6, seed=7))
    assert schedule(s) == schedule(TournamentSettings.from_dict(s.as_dict()))  # as resumed
    other = schedule(make(4, games=6, seed=8))
    # Another seed: the same tables, seats and public deal ids; the seed keys the decks
    # (rules.deal), so the same deal ids give other decks.
    assert [(g.index, g.table, g.deal, g.rotation, g.seed) for g in other] == \
           [(g.index, g.table, g.deal, g.rotation, g.seed) for g in schedule(s)]
    assert all(deal_deck("7", g.seed, 36) != deal_deck("8", g.seed, 36) for g in other)


def test_round_robin_covers_every_pair_with_seats_swapped() -> None:
    games = schedule(make(4, games=4))
    assert [g.index for g in games] == list(range(len(games)))
    met = pairs_met(games)
    assert set(met) == set(itertools.combinations(NAMES[:4], 2))
    assert set(met.values()) == {4}
    for x, y in met:  # each bot of a pair sits first as often as the other
        firsts = Counter(g.table[0] for g in games if set(g.table) == {x, y})
        assert firsts == {x: 2, y: 2}
    # Interleaved deal by deal: the first deal of every table comes before any second deal.
    first_round = games[:2 * 6]
    assert {frozenset(g.table) for g in first_round} == {frozenset(p) for p in met}


def test_gauntlet_pairs_the_first_bot_with_each_other() -> None:
    games = schedule(make(4, games=2, format="gauntlet"))
    assert set(tables(make(4, format="gauntlet"))) == {("a", "b"), ("a", "c"), ("a", "d")}
    assert Counter(frozenset(g.table) for g in games) == {
        frozenset("ab"): 2, frozenset("ac"): 2, frozenset("ad"): 2}


def test_three_player_tables_cover_every_combination_equally() -> None:
    s = make(5, players=3, games=3)
    games = schedule(s)
    combos = Counter(frozenset(g.table) for g in games)
    assert set(combos) == {frozenset(c) for c in itertools.combinations(NAMES[:5], 3)}
    assert set(combos.values()) == {3}
    met = pairs_met(games)
    assert len(met) == 10 and len(set(met.values())) == 1  # every bot meets every other equally
    seats = Counter((name, seat) for g in games for seat, name in enumerate(g.table))
    assert len(set(seats.values())) == 1 and len(seats) == 5 * 3  # every bot in every seat equally


def test_games_round_up_to_whole_duplicate_deals() -> None:
    assert len(schedule(make(2, games=5))) == 6
    assert len(schedule(make(3, players=3, games=4))) == 6
    assert len(schedule(make(2, games=5, duplicate=False))) == 5


def test_no_duplicate_gives_every_game_its_own_deal() -> None:
    games = schedule(make(3, games=4, duplicate=False))
    assert len(games) == 3 * 4
    assert len({g.seed for g in games}) == len(games) == len({g.deal for g in games})
    assert {g.rotation for g in games} == {0}


@hyp_settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 6), players=st.integers(2, 6), games=st.integers(1, 7),
       duplicate=st.booleans(), fmt=st.sampled_from(["round-robin", "gauntlet"]),
       seed=st.integers(0, 10**6))
def test_schedule_invariants(n: int, players: int, games: int, duplicate: bool, fmt: str,
                             seed: int) -> None:
    players = min(players, n)
    s = make(n, players=players, games=games, duplicate=duplicate, format=fmt, seed=seed)
    out = schedule(s)
    assert [g.index for g in out] == list(range(len(out)))
    rotations = players if duplicate else 1
    per_table = math.ceil(games / rotations) * rotations
    assert Counter(frozenset(g.table) for g in out) == {frozenset(t): per_table for t in tables(s)}
    for g in out:
        assert len(g.table) == players == len(set(g.table))
        assert g.seed == f"tournament:{g.deal}"
        if fmt == "gauntlet":
            assert "a" in g.table
    by_deal: dict[int, list] = {}  # type: ignore[type-arg]
    for g in out:
        by_deal.setdefault(g.deal, []).append(g)
    for deal_games in by_deal.values():
        assert [g.rotation for g in deal_games] == list(range(rotations))
        base = deal_games[0].table
        for g in deal_games:
            assert g.table == base[g.rotation:] + base[:g.rotation]
    if fmt == "round-robin":
        met = pairs_met(out)
        assert set(met) == set(itertools.combinations(NAMES[:n], 2))
        assert len(set(met.values())) == 1


# -- played with the built-in bots ---------------------------------------------------


def open_tournament(path: Path, s: TournamentSettings, tid: str = "t1") -> Store:
    store = Store(path)
    with store.transaction():
        for b in s.bots:
            store.ensure_bot(b.name, b.command)
    store.create_tournament(tid, "tournament", s.as_dict())
    return store


async def play(tmp_path: Path, s: TournamentSettings, tag: str) -> tuple[Store, list[dict]]:  # type: ignore[type-arg]
    store = open_tournament(tmp_path / f"{tag}.sqlite", s)
    log_dir = tmp_path / f"logs-{tag}"
    progress = await run_tournament(s, store, "t1", log_dir=log_dir)
    assert progress.done == progress.total == len(schedule(s))
    assert store.tournament("t1")[2] == "finished"
    log = read_log(log_dir / "tournament-t1.jsonl")
    assert log.error is None and log.footer is not None and not log.footer["interrupted"]
    return store, log.games


async def test_duplicate_rotations_share_seed_and_deck(tmp_path: Path) -> None:
    s = make(3, games=4, seed=5)
    store, games = await play(tmp_path, s, "two")
    planned = {g.index: g for g in schedule(s)}
    assert sorted(g["game"] for g in games) == sorted(planned)
    by_seed: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for g in games:
        assert g["seed"] == planned[g["game"]].seed
        assert tuple(g["players"]) == planned[g["game"]].table
        by_seed.setdefault(g["seed"], []).append(g)
    assert len(by_seed) == len(games) // 2
    for pair in by_seed.values():
        first, second = sorted(pair, key=lambda g: planned[g["game"]].rotation)
        assert first["deck"] == second["deck"]
        assert second["players"] == first["players"][::-1]
        assert first["dealer"] == second["dealer"] == 1
    assert len({tuple(p[0]["deck"]) for p in by_seed.values()}) == len(by_seed)
    # The store agrees with the log, line by line.
    rows = store.games("t1")
    assert [r.game_index for r in rows] == list(range(len(planned)))
    for r in rows:
        log_game = next(g for g in games if g["game"] == r.game_index)
        assert r.log_line == log_game["_line"] and r.deal_seed == log_game["seed"]
        assert r.players == log_game["players"] and r.rotation == planned[r.game_index].rotation
    store.close()


async def test_three_player_duplicate_rotates_seats_on_one_deck(tmp_path: Path) -> None:
    s = make(3, players=3, games=3, seed=2)
    store, games = await play(tmp_path, s, "three")
    store.close()
    assert len(games) == 3 and len({g["seed"] for g in games}) == 1
    assert games[0]["deck"] == games[1]["deck"] == games[2]["deck"]
    p0 = games[0]["players"]
    assert [g["players"] for g in games] == [p0, p0[1:] + p0[:1], p0[2:] + p0[:2]]


async def test_no_duplicate_plays_a_new_deal_every_game(tmp_path: Path) -> None:
    s = make(2, games=4, duplicate=False)
    store, games = await play(tmp_path, s, "nodup")
    store.close()
    assert len(games) == 4
    assert len({g["seed"] for g in games}) == 4
    assert len({tuple(g["deck"]) for g in games}) == 4
    assert all(g["players"] == ["a", "b"] for g in games)


@pytest.mark.process
async def test_concurrency_gives_the_same_games_as_sequential(tmp_path: Path) -> None:
    results = []
    for k in (1, 2):
        s = make(3, games=6, seed=11, concurrency=k)
        store, games = await play(tmp_path, s, f"k{k}")
        results.append((
            [(r.game_index, r.termination, r.durak, [(x.bot, x.result) for x in r.seats])
             for r in store.games("t1")],
            sorted((g["game"], tuple(g["deck"]), tuple(tuple(d[:2]) for d in g["decisions"]))
                   for g in games)))
        store.close()
    assert len(results[0][0]) == 18
    assert results[0] == results[1]


# -- resuming in-process -----------------------------------------------------------------


def drop_games(store: Store, tid: str, first: int) -> None:
    """Forget games ``first``.. as if the run had been killed before them."""
    with store.transaction():
        store.db.execute("DELETE FROM seats WHERE tournament_id = ? AND game_index >= ?", (tid, first))
        store.db.execute("DELETE FROM games WHERE tournament_id = ? AND game_index >= ?", (tid, first))
    store.set_status(tid, "running")


def check_log_lines(store: Store, tid: str) -> None:
    """Every stored game's (log_file, log_line) is that very game in that log."""
    for r in store.games(tid):
        assert r.log_file is not None
        game = next(g for g in read_log(Path(r.log_file)).games if g["_line"] == r.log_line)
        assert (game["game"], game["seed"], game["players"]) == (r.game_index, r.deal_seed, r.players)


async def test_resume_plays_only_missing_games_and_never_overwrites_a_log(
        tmp_path: Path, monkeypatch: object) -> None:
    s = make(3, games=4, seed=9)
    store, _ = await play(tmp_path, s, "resume")
    full = store.games("t1")
    # Two resumes within the same second (forced here): each gets a log of its own.
    monkeypatch.setattr("referee.league.tournament.time.strftime", lambda fmt, *a: "120000")  # type: ignore[attr-defined]
    log_dir = tmp_path / "logs-resume"
    for first in (4, 8):
        drop_games(store, "t1", first)
        progress = await run_tournament(s, store, "t1", log_dir=log_dir, fresh=False)
        assert progress.done == progress.total == 12
        assert store.tournament("t1")[2] == "finished"
    assert sorted(p.name for p in log_dir.glob("*.jsonl")) == [
        "tournament-t1-resumed-120000-2.jsonl", "tournament-t1-resumed-120000.jsonl",
        "tournament-t1.jsonl"]
    again = store.games("t1")
    def same(rows: list) -> list:  # type: ignore[type-arg]
        return [(r.game_index, r.deal_seed, r.termination, r.durak,
                 [(x.bot, x.result, x.forfeit, x.decisions) for x in r.seats]) for r in rows]
    assert same(again) == same(full)  # replayed games come out the same
    assert {Path(r.log_file).name for r in again[4:8]} == {"tournament-t1-resumed-120000.jsonl"}  # type: ignore[arg-type]
    check_log_lines(store, "t1")
    store.close()


async def test_resume_with_every_game_stored_marks_the_tournament_finished(tmp_path: Path) -> None:
    s = make(2, games=2)
    store, _ = await play(tmp_path, s, "done")
    store.set_status("t1", "running")  # killed between the last game and the status update
    log_dir = tmp_path / "logs-done"
    progress = await run_tournament(s, store, "t1", log_dir=log_dir, fresh=False)
    assert progress.done == progress.total == 2
    assert store.tournament("t1")[2] == "finished"
    assert sorted(p.name for p in log_dir.iterdir()) == ["tournament-t1.jsonl"]  # nothing new
    store.close()


@pytest.mark.process
def test_fresh_bots_restart_program_bots_before_every_game(tmp_path: Path) -> None:
    """--fresh-bots: one process start per bot per game, so no bot can remember a deal
    from its other seat rotation; restarts for freshness do not use up max_restarts."""
    import sys

    from referee.league.tournament import BotEntry, TournamentSettings, play_tournament
    from referee.records.store import open_store
    from referee.seats.process import ProcessPlayer

    root = Path(__file__).resolve().parents[2]
    bot = f"{sys.executable} {root / 'examples' / 'python' / 'greedy_bot.py'}"
    settings = TournamentSettings([BotEntry("g", bot), BotEntry("r", "builtin:random")], games=4,
                                  fresh_bots=True, max_restarts=0)
    starts = []
    original = ProcessPlayer._spawn

    async def counting(self: ProcessPlayer) -> None:
        starts.append(self.name)
        await original(self)

    ProcessPlayer._spawn = counting  # type: ignore[method-assign]
    try:
        with open_store(tmp_path / "s.sqlite") as store:
            with store.transaction():
                for b in settings.bots:
                    store.ensure_bot(b.name, b.command)
            store.create_tournament("t", "tournament", settings.as_dict())
            progress = play_tournament(settings, store, "t", log_dir=None)
            forfeits = [s.forfeit for g in store.games("t") for s in g.seats if s.forfeit]
    finally:
        ProcessPlayer._spawn = original  # type: ignore[method-assign]
    assert progress.done == 4
    assert forfeits == []
    assert starts.count("g") == 1 + 4  # the first start, then one fresh start per game
