"""The tournament parent stays cheap: workers send each game ready to
write, the parent logs and stores games in batches, and a game counts as done only once
it is committed (referee/league/results.py, referee/league/worker.py, tournament._drive_worker).

Real components: real worker processes, a real SQLite store read through a second
connection, real logs read back by ``verify``. Batching by time runs on trio's virtual
clock, so no test waits for a real delay or depends on how fast the machine is."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from referee.league.results import FinishedGame, ResultSink
from referee.league.tournament import (
    BotEntry,
    PlayerPool,
    TournamentSettings,
    play_tournament,
    register_tournament,
    schedule,
)
from referee.league.workerclient import WorkerClient
from referee.records.matchlog import encode_line, read_log
from referee.records.store import GameRow, SeatRow, Store, open_store
from support import cli

BOTS = [BotEntry("greedy", "builtin:greedy"), BotEntry("random", "builtin:random"),
        BotEntry("other", "builtin:random")]


def stored(db: Path, tid: str) -> set[int]:
    """The game indices another process would see in the store now (a second
    connection sees committed transactions only)."""
    with sqlite3.connect(db) as other:
        return {r[0] for r in other.execute(
            "SELECT game_index FROM games WHERE tournament_id = ?", (tid,))}


@pytest.mark.process
@pytest.mark.parametrize("concurrency", [1, 2])
def test_every_game_reported_done_is_already_committed(tmp_path: Path, concurrency: int) -> None:
    """What ``on_game`` (the progress line) reports is durable: by then the game is in
    the store for any other connection, so a kill -9 right after loses none of it."""
    db = tmp_path / "t.sqlite"
    settings = TournamentSettings(BOTS, games=8, concurrency=concurrency, seed="5")
    reported: list[int] = []

    def on_game(game: Any, progress: Any) -> None:
        reported.append(game.index)
        seen = stored(db, tid)
        assert game.index in seen
        assert progress.done <= len(seen)

    with open_store(db) as store:
        tid = register_tournament(store, settings)
        progress = play_tournament(settings, store, tid, log_dir=tmp_path / "logs", on_game=on_game)
    assert progress.done == len(schedule(settings)) == len(reported) == len(set(reported))
    assert stored(db, tid) == set(reported)


@pytest.mark.process
def test_worker_logs_are_canonical_lines_that_verify(tmp_path: Path) -> None:
    """The parent writes the lines its workers encoded: each game line is exactly the
    log encoding of its record (as the parent would have written it), the log reads back,
    and ``verify --db`` finds the store and the log in agreement, line numbers included."""
    db = tmp_path / "t.sqlite"
    settings = TournamentSettings(BOTS, games=10, concurrency=2, seed="9")
    with open_store(db) as store:
        tid = register_tournament(store, settings)
        play_tournament(settings, store, tid, log_dir=tmp_path / "logs")
        rows = store.games(tid)
    (log,) = sorted((tmp_path / "logs").glob("tournament-*.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)
    games = [line for line in lines if json.loads(line)["type"] == "game"]
    assert len(games) == len(rows) == 30
    for line in games:
        assert encode_line(json.loads(line)) == line
    contents = read_log(log)
    assert contents.error is None and contents.footer is not None
    by_line = {g["_line"]: g["game"] for g in contents.games}
    assert {r.log_line: r.game_index for r in rows} == by_line
    run = cli("verify", "--db", db, "--json", cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["differences"] == []


@pytest.mark.process
def test_a_worker_answers_a_chunk_of_games_in_order(tmp_path: Path) -> None:
    """Games sent in one write are played in the order sent and answered in that order,
    each exactly as the same game played in the parent (deck, decisions, result)."""
    # Two deterministic bots: the same game gives the same decisions wherever it is played.
    settings = TournamentSettings([BotEntry("g1", "builtin:greedy"), BotEntry("g2", "builtin:greedy")],
                                  games=6, seed="3")
    games = schedule(settings)

    async def main() -> tuple[list[FinishedGame], list[FinishedGame]]:
        client = WorkerClient(0, settings, None)
        try:
            await client.start()
            await client.send_games(games)
            remote = [await client.receive_game(sg) for sg in games]
        finally:
            await client.close()
        local = []
        async with trio.open_nursery() as nursery:
            pool = PlayerPool(settings, settings.validate(), nursery, None)
            for sg in games:
                record, started = await pool.play(sg)
                local.append(FinishedGame.from_record(record, started, started, 0.0))
            await pool.close()
        return remote, local

    remote, local = trio.run(main)
    assert [g.index for g in remote] == [sg.index for sg in games]

    def game(g: FinishedGame) -> dict[str, Any]:
        record = json.loads(g.line)
        return {k: record[k] for k in ("game", "seed", "deck", "players", "termination", "durak")} | {
            "actions": [d[:3] for d in record["decisions"]],
            "seats": [(s.seat, s.bot, s.result, s.forfeit, s.decisions) for s in g.seats]}

    assert [game(g) for g in remote] == [game(g) for g in local]


# -- the sink itself, on trio's virtual clock ----------------------------------------------


def finished(index: int) -> FinishedGame:
    seats = [SeatRow(0, "a", "safe", None, 3, 0.01), SeatRow(1, "b", "durak", None, 3, 0.01)]
    return FinishedGame(index, ["a", "b"], 1, "normal", None, seats,
                        encode_line({"type": "game", "game": index}), 6, 0.0, 0.0, "t0", "t1")


def sink_for(store: Store, committed: list[int], **limits: Any) -> ResultSink:
    def row(key: Any, game: FinishedGame, log_line: int | None) -> GameRow:
        return GameRow("t", game.index, f"tournament:{game.index}", 0, {}, None, log_line,
                       game.termination, "b", game.started, game.ended, game.seats)
    return ResultSink(store, None, row, lambda g: committed.append(g.index), **limits)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "s.sqlite")
    with s.transaction():
        s.ensure_bot("a", "builtin:greedy")
        s.ensure_bot("b", "builtin:random")
    s.create_tournament("t", "tournament", {})
    return s


def test_a_batch_commits_when_full_or_when_its_first_game_has_waited_the_delay(store: Store) -> None:
    committed: list[int] = []

    async def main() -> None:
        sink = sink_for(store, committed, max_games=3, max_delay=0.2)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sink.run_timer)
            for i in range(3):  # full: committed at once, no waiting
                sink.add(None, finished(i))
            assert committed == [0, 1, 2]
            sink.add(None, finished(3))
            await trio.sleep(0.1)
            sink.add(None, finished(4))
            await trio.sleep(0.09)
            assert committed == [0, 1, 2]  # the first of this batch has waited 0.19 s
            await trio.sleep(0.02)
            assert committed == [0, 1, 2, 3, 4]
            await trio.sleep(5)  # an empty batch is never "committed"
            assert committed == [0, 1, 2, 3, 4]
            sink.add(None, finished(5))
            sink.flush()  # the run ends: whatever waits is committed now
            assert committed == [0, 1, 2, 3, 4, 5]
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert store.finished_indices("t") == set(range(6))


def test_a_batch_that_cannot_be_stored_is_not_counted(store: Store) -> None:
    """A batch is stored whole or not at all, and only a stored game is counted."""
    committed: list[int] = []

    async def main() -> None:
        sink = sink_for(store, committed, max_games=10)
        sink.add(None, finished(0))
        sink.flush()
        sink.add(None, finished(1))
        sink.add(None, finished(0))  # already stored: the transaction fails
        with pytest.raises(sqlite3.IntegrityError):
            sink.flush()
        assert sink.pending == []

    trio.run(main)
    assert committed == [0]
    assert store.finished_indices("t") == {0}


def test_a_worker_holds_a_result_back_at_most_hold_s_even_during_a_slow_game() -> None:
    """A worker answers a chunk of quick games in one write, but a slow game after quick
    ones does not hold their results back: they go out HOLD_S after the first."""
    from referee.league.worker import HOLD_S, _Outbox

    async def main() -> None:
        stream = trio.testing.MemorySendStream()
        outbox = _Outbox(stream)

        def sent() -> bytes:
            try:
                return stream.get_data_nowait()
            except trio.WouldBlock:  # nothing written yet
                return b""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(outbox.run_timer)
            outbox.hold(b"one")
            outbox.hold(b"two")
            await trio.sleep(HOLD_S * 0.9)  # the next game of the chunk is still running
            assert sent() == b""
            await trio.sleep(HOLD_S * 0.2)
            assert sent() == b"onetwo"
            outbox.hold(b"three")
            assert await outbox.send()  # no game left waiting: sent at once
            assert sent() == b"three"
            await trio.sleep(10 * HOLD_S)  # nothing held: nothing sent
            assert sent() == b""
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
