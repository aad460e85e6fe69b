"""Finished tournament games on their way to the log and the store, cheaply and in batches.

Why. A tournament with ``--concurrency K`` plays its games in K worker processes, but
every result passes through the one parent process that owns the log and the store. If
the parent decodes each full game record, re-encodes it as JSON for the log and commits
it to the store alone, it spends about a third of a worker's CPU per game and K workers
cannot go K times as fast on K cores. So:

- whoever plays a game makes its ``FinishedGame`` there: the log line already encoded
  (``matchlog.encode_line``, byte for byte what the parent would have written), the
  seat rows and the few figures the parent counts. A worker sends it as one small
  msgpack map with the line as one ``bin`` value; the parent never parses the record;
- ``ResultSink`` writes those lines and rows in batches: the log lines of a batch in one
  write, then the batch's games in one store transaction (``Store.add_games``), at the
  latest ``max_delay`` seconds after the batch's first game arrived, or as soon as it
  holds ``max_games`` games, and always when the run ends (normally, by Ctrl-C or
  SIGTERM, or by an error).

What is guaranteed. A game is *counted* (``progress.done``, the ``on_game`` callback,
the progress line) only once its transaction is committed, so every game a run reports
as done is in the store and is skipped by ``--resume``. A run killed with SIGKILL loses
at most the games of the batch not yet committed (at most ``max_delay`` seconds of
games, plus the results a worker holds back for its chunk: worker.HOLD_S); they were
never reported as done, and ``--resume`` plays them again. Their log
lines may already be in that run's log, as a game in flight between its log line and its
commit always could: ``verify`` accepts a logged game that a later run stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from ..records.matchlog import MatchLogWriter, encode_line
from ..records.store import GameRow, SeatRow, Store
from ..table.match import GameRecord, record_from_dict

#: Commit at most this long after a batch's first game arrived (seconds): how much a
#: SIGKILL can lose, and how often the progress line moves at most.
MAX_DELAY_S = 0.2
#: ... or as soon as this many games wait (one transaction each that many games).
MAX_GAMES = 64


def seat_rows(record: GameRecord) -> list[SeatRow]:
    """The store's seat rows of a game: result, forfeit, decisions asked and time used."""
    decisions = [0] * len(record.players)
    seconds = [0.0] * len(record.players)
    for d in record.decisions:
        if not d.forced:
            decisions[d.seat] += 1
            seconds[d.seat] += d.seconds
    rows = []
    drawn = record.drawn_seats
    for seat, name in enumerate(record.players):
        result = "durak" if seat == record.durak else "draw" if seat in drawn else "safe"
        forfeit = record.forfeit["kind"] if record.forfeit and record.forfeit["seat"] == seat else None
        rows.append(SeatRow(seat, name, result, forfeit, decisions[seat], round(seconds[seat], 6)))
    return rows


@dataclass
class FinishedGame:
    """One finished game as the log, the store and the progress counts need it.

    ``line``: its log record, encoded (``matchlog.encode_line``). ``decisions``: the
    decisions its bots were asked (forced ones excluded). ``overhead_s``: game wall time
    not charged to any bot. ``cpu_s``: referee CPU seconds this game adds to the run's
    measured total on top of the parent's own process CPU: a worker's own CPU for the
    game; for a game played in the parent, minus the CPU its in-process bots spent there
    (the parent's process CPU includes theirs)."""

    index: int
    players: list[str]
    durak: int | None
    termination: str
    forfeit: dict[str, Any] | None
    seats: list[SeatRow]
    line: bytes
    decisions: int
    overhead_s: float
    cpu_s: float
    started: str
    ended: str

    @classmethod
    def from_record(cls, record: GameRecord, started: str, ended: str, cpu_s: float) -> FinishedGame:
        return cls(record.index, list(record.players), record.durak, record.termination,
                   record.forfeit, seat_rows(record), encode_line(record.as_dict()),
                   sum(1 for d in record.decisions if not d.forced), record.overhead_s, cpu_s,
                   started, ended)

    def record(self) -> GameRecord:
        """The full game record, decoded from the log line (every decision; slow, for
        callers that need more than the result)."""
        return record_from_dict(json.loads(self.line))

    def as_message(self) -> dict[str, Any]:
        """This game as a worker sends it to the parent (msgpack types only)."""
        return {"index": self.index, "players": self.players, "durak": self.durak,
                "termination": self.termination, "forfeit": self.forfeit,
                "seats": [[s.seat, s.bot, s.result, s.forfeit, s.decisions, s.time_used]
                          for s in self.seats],
                "line": self.line, "decisions": self.decisions, "overhead_s": self.overhead_s,
                "cpu_s": self.cpu_s, "started": self.started, "ended": self.ended}

    @classmethod
    def from_message(cls, m: dict[str, Any]) -> FinishedGame:
        """The inverse of ``as_message`` (the worker is ours: its map is trusted)."""
        return cls(m["index"], m["players"], m["durak"], m["termination"], m["forfeit"],
                   [SeatRow(*s) for s in m["seats"]], m["line"], m["decisions"],
                   m["overhead_s"], m["cpu_s"], m["started"], m["ended"])


class ResultSink:
    """Logs and stores a run's finished games in batches (see the module docstring).

    ``add(key, game)`` takes a game; ``row(key, game, log_line)`` makes its store row
    (``key``: what the caller gave with it, e.g. its ScheduledGame; ``log_line``: its line
    in the log, None without a log); ``on_commit(game)`` is called for each game once it
    is committed, in the order the games arrived. Run ``run_timer`` in a task while games arrive and call ``flush`` when
    the run ends, whatever the way (``flush`` in a ``finally``)."""

    def __init__(self, store: Store, writer: MatchLogWriter | None,
                 row: Callable[[Any, FinishedGame, int | None], GameRow],
                 on_commit: Callable[[FinishedGame], None], *,
                 max_delay: float = MAX_DELAY_S, max_games: int = MAX_GAMES) -> None:
        self.store, self.writer = store, writer
        self.row, self.on_commit = row, on_commit
        self.max_delay, self.max_games = max_delay, max_games
        self.pending: list[tuple[Any, FinishedGame]] = []
        self._first_at = 0.0
        self._waiting = trio.Event()  #: set while games wait

    def add(self, key: Any, game: FinishedGame) -> None:
        """Take one finished game; commits the batch if it is full."""
        if not self.pending:
            self._first_at = trio.current_time()
            self._waiting.set()
        self.pending.append((key, game))
        if len(self.pending) >= self.max_games:
            self.flush()

    def flush(self) -> None:
        """Log and store every waiting game now (log lines first, then one transaction),
        then count them. Raises LogError or StoreError if they cannot be written; then
        none of them is counted (nor stored) and they are dropped from the batch."""
        batch, self.pending = self.pending, []
        self._waiting = trio.Event()
        if not batch:
            return
        writer = self.writer
        first = None if writer is None else writer.lines + 1  # the batch's first line
        if writer is not None:
            writer.write_lines([g.line for _, g in batch])
        self.store.add_games([self.row(key, g, None if first is None else first + i)
                              for i, (key, g) in enumerate(batch)])
        for _, g in batch:
            self.on_commit(g)

    async def run_timer(self) -> None:
        """Forever: commit each batch at the latest ``max_delay`` after its first game
        (a slow game after a few fast ones must not hold them back)."""
        while True:
            await self._waiting.wait()
            await trio.sleep_until(self._first_at + self.max_delay)
            if self.pending and trio.current_time() >= self._first_at + self.max_delay:
                self.flush()
