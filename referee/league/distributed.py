"""Distributed runs: one PostgreSQL store, a coordinator, and workers on any machines.

The coordinator (``durak-ref tournament|sprt ... --db postgresql://... --distributed``)
registers the run as usual and writes its schedule to the store's ``queue`` table, one
row per game: what to play (deal, rotation, seats in order, deal id) and who holds it
until when. It then only watches: every game a worker stores is written to the
coordinator's match log (so ``replay`` and ``verify`` work as for a local run) and
counted; an SPRT decides from the pairs as they arrive and, once decided, sets the run's
status to ``finished``, which tells every worker to stop claiming and to drop the games
it is playing for that run.

A worker (``durak-ref worker --db postgresql://...``) claims one game per free slot
with ``SELECT ... FOR UPDATE SKIP LOCKED`` (workers never wait for each other), taking a
*lease* of ``lease_s`` seconds by the database server's clock (machines' clocks need not
agree), and renews it every third of that while the game runs (the heartbeat). It plays
the game with the bots as the run's settings name them, resolved and sandboxed on its
own machine as a local tournament would (one referee process per slot:
referee/league/worker.py), then stores the game, its seats and its log record in one
transaction that first locks the game's queue row: a game is stored at most once (a
slow worker whose lease ran out and whose game was played again by another finds it
done and drops its copy) and at least once (a worker that dies, even by kill -9, stops
renewing, and once the lease runs out any worker claims the game again). A worker that
cannot start a bot of a run reports it once, gives the game back, and claims no more
games of that run.

The games are those of the same schedule played locally: the rows are made by
``tournament.iter_schedule`` (or the SPRT's pairs) with the same deal ids, and the
seed that keys the decks travels in the run's stored settings.

Every statement that only PostgreSQL understands (the claim) lives here; the portable
ones are the store's.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from ..console import jsonout
from ..console.usererror import lifted
from ..records.matchlog import FORMAT, MatchLogWriter, fresh_log_path, safe_name, utc_now
from ..records.store import GameRow, SeatRow, Store, StoreError
from ..records.storedb import PASSFILE_AT_START
from ..rules.deal import DEAL_TEXT
from ..seats.players import BotStartError
from ..seats.sandbox import SandboxError
from ..table.match import GameRecord, MatchConfig, record_from_dict
from .tournament import (
    Progress,
    ScheduledGame,
    TournamentError,
    TournamentSettings,
    iter_schedule,
    resolve_sandbox,
    schedule_size,
)
from .workerclient import WorkerClient, WorkerStopped

DEFAULT_LEASE_S = 60.0  #: how long a claimed game is a worker's without a heartbeat
DEFAULT_POLL_S = 1.0  #: how often idle workers and the coordinator look again
_BATCH = 1000  #: queue rows written per statement
_NOW = "extract(epoch from clock_timestamp())"  #: the server's clock, in seconds


def require_server(store: Store, what: str = "--distributed") -> None:
    """TournamentError unless ``store`` is on a PostgreSQL server (workers on other
    machines must reach it, and claiming needs row locks)."""
    if store.path is not None:
        raise TournamentError(f"{what} needs a PostgreSQL store that every worker can reach "
                              f"(--db postgresql://USER@HOST:PORT/DB), not the file {store.path}")


# -- the queue


def enqueue(store: Store, tid: str, games: Iterable[ScheduledGame]) -> int:
    """Put ``games`` of run ``tid`` in the queue, skipping any already queued or stored
    (a resumed run); how many were added. One transaction: the queue is whole or empty."""
    have = {r[0] for r in store.db.execute("SELECT game_index FROM queue WHERE tournament_id = ?", (tid,))}
    have |= store.finished_indices(tid)
    added = 0
    with store.transaction():
        batch: list[tuple[Any, ...]] = []
        for sg in games:
            if sg.index in have:
                continue
            batch.append((tid, sg.index, sg.deal, sg.rotation, json.dumps(list(sg.table)), sg.seed))
            if len(batch) >= _BATCH:
                added += _insert(store, batch)
                batch = []
        added += _insert(store, batch)
    return added


def _insert(store: Store, rows: list[tuple[Any, ...]]) -> int:
    if rows:
        store.db.executemany(
            "INSERT INTO queue (tournament_id, game_index, deal, rotation, seats, deal_id, state, worker, "
            "lease_until, attempts) VALUES (?, ?, ?, ?, ?, ?, 'todo', NULL, NULL, 0)", rows)
    return len(rows)


def is_queued(store: Store, tid: str) -> bool:
    """Whether run ``tid`` was queued for workers (it must be resumed ``--distributed``:
    played here, its games would race the workers')."""
    return store.db.execute("SELECT 1 FROM queue WHERE tournament_id = ? LIMIT 1", (tid,)).fetchone() is not None


@dataclass(frozen=True)
class Claim:
    """A game this worker holds: the run, the game, and the lease's attempt number."""

    tid: str
    game: ScheduledGame
    attempt: int


def claim(store: Store, worker: str, lease_s: float, only: str | None = None,
          skip: Sequence[str] = ()) -> Claim | None:
    """Claim the first unheld game (never claimed, or its lease ran out) of a running
    run (``only`` that one; none in ``skip``) for ``lease_s`` seconds; None if there is
    none. Rows another worker is claiming this instant are skipped, not waited for."""
    where, filters = _runs_filter("q2", only, skip)
    row = store.db.execute(
        f"UPDATE queue q SET worker = ?, lease_until = {_NOW} + ?, attempts = q.attempts + 1 "
        "FROM (SELECT q2.tournament_id, q2.game_index FROM queue q2 JOIN tournaments t "
        "ON t.id = q2.tournament_id WHERE q2.state = 'todo' AND t.status = 'running' "
        f"AND (q2.worker IS NULL OR q2.lease_until < {_NOW}){where} "
        "ORDER BY q2.tournament_id, q2.game_index LIMIT 1 FOR UPDATE OF q2 SKIP LOCKED) c "
        "WHERE q.tournament_id = c.tournament_id AND q.game_index = c.game_index "
        "RETURNING q.tournament_id, q.game_index, q.deal, q.rotation, q.seats, q.deal_id, q.attempts",
        [worker, lease_s, *filters]).fetchone()
    if row is None:
        return None
    return Claim(row[0], ScheduledGame(row[1], row[2], row[3], tuple(json.loads(row[4])), row[5]), row[6])


def _runs_filter(alias: str, only: str | None, skip: Sequence[str]) -> tuple[str, list[Any]]:
    """The SQL condition (and its arguments) for "of run ``only``, of none in ``skip``"."""
    where = ""
    args: list[Any] = []
    if only is not None:
        where += f" AND {alias}.tournament_id = ?"
        args.append(only)
    if skip:
        where += f" AND {alias}.tournament_id <> ALL(?)"
        args.append(list(skip))
    return where, args


def heartbeat(store: Store, worker: str, c: Claim, lease_s: float) -> bool:
    """Renew the lease on ``c``; False if the run no longer wants the game (stopped,
    finished, or the game already stored by another worker)."""
    row = store.db.execute(
        f"UPDATE queue q SET lease_until = {_NOW} + ? FROM tournaments t WHERE t.id = q.tournament_id "
        "AND q.tournament_id = ? AND q.game_index = ? AND q.worker = ? AND q.state = 'todo' "
        "RETURNING t.status", (lease_s, c.tid, c.game.index, worker)).fetchone()
    if row is not None:
        return bool(row[0] == "running")
    # Not ours any more (our lease ran out and another worker claimed it): play on, the
    # first to store it wins, unless it is stored already or the run is over.
    row = store.db.execute(
        "SELECT q.state, t.status FROM queue q JOIN tournaments t ON t.id = q.tournament_id "
        "WHERE q.tournament_id = ? AND q.game_index = ?", (c.tid, c.game.index)).fetchone()
    return row is not None and row[0] == "todo" and row[1] == "running"


def add_note(store: Store, worker: str, tid: str, note: str) -> None:
    """Record, once per worker and run, why this worker does not play run ``tid``: the
    coordinator shows it (a run no worker can play would otherwise just never end)."""
    with store.transaction():
        if store.db.execute("SELECT 1 FROM worker_notes WHERE tournament_id = ? AND worker = ?",
                            (tid, worker)).fetchone() is None:
            store.db.execute("INSERT INTO worker_notes (tournament_id, worker, at, note) VALUES (?, ?, ?, ?)",
                             (tid, worker, utc_now(), note[:2000]))


class Notes:
    """The workers' notes on one run, each handed out once (``new()``)."""

    def __init__(self, store: Store, tid: str) -> None:
        self.store, self.tid, self.seen = store, tid, set[str]()

    def new(self) -> list[str]:
        out = []
        for worker, note in self.store.db.execute(
                "SELECT worker, note FROM worker_notes WHERE tournament_id = ? ORDER BY at", (self.tid,)):
            if worker not in self.seen:
                self.seen.add(worker)
                out.append(f"worker {worker}: {note}")
        return out


def release(store: Store, worker: str, c: Claim) -> None:
    """Give ``c`` back unplayed (this worker cannot play it): another may claim it now."""
    store.db.execute("UPDATE queue SET worker = NULL, lease_until = NULL WHERE tournament_id = ? "
                     "AND game_index = ? AND worker = ? AND state = 'todo'", (c.tid, c.game.index, worker))


def store_result(store: Store, worker: str, row: GameRow, record: dict[str, Any]) -> bool:
    """Store one played game with its seats and its log record, and mark it done, in one
    transaction; False (nothing written) if it is stored already or its run is over.
    The queue row is locked first, so two workers finishing one game store it once."""
    with store.transaction():
        state = store.db.execute(
            "SELECT q.state, t.status FROM queue q JOIN tournaments t ON t.id = q.tournament_id "
            "WHERE q.tournament_id = ? AND q.game_index = ? FOR UPDATE OF q",
            (row.tournament_id, row.game_index)).fetchone()
        if state is None or state[0] != "todo" or state[1] != "running":
            return False
        store.insert_game(row)
        store.db.execute("INSERT INTO game_records (tournament_id, game_index, worker, record) "
                         "VALUES (?, ?, ?, ?)", (row.tournament_id, row.game_index, worker,
                                                 jsonout.dumps(record)))
        store.db.execute("UPDATE queue SET state = 'done', worker = ?, lease_until = NULL "
                         "WHERE tournament_id = ? AND game_index = ?",
                         (worker, row.tournament_id, row.game_index))
    return True


def open_games(store: Store, only: str | None, skip: Sequence[str]) -> int:
    """Games of running runs (``only`` that one; none in ``skip``) not yet stored, held or not."""
    where, args = _runs_filter("q", only, skip)
    return int(store.db.execute(
        "SELECT count(*) FROM queue q JOIN tournaments t ON t.id = q.tournament_id "
        f"WHERE q.state = 'todo' AND t.status = 'running'{where}", args).fetchone()[0])


def lost(store: Store, exc: BaseException) -> StoreError:
    """The error for a server that failed us mid-run (gone, restarted, out of space)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return StoreError(f"the store {store.name} failed: {text}; everything stored before is "
                      f"intact (a worker's unstored games return to the queue when their leases run out)")


class ServerLock:
    """A run held by this coordinator: a PostgreSQL session advisory lock, dropped by the
    server when the connection ends however the process ends (kill -9 included)."""

    def __init__(self, store: Store, key: int) -> None:
        self.store, self.key = store, key

    def release(self) -> None:
        try:
            self.store.db.execute("SELECT pg_advisory_unlock(?)", (self.key,))
        except self.store.errors.Error:
            pass  # the connection is gone, and the lock with it

    def __enter__(self) -> ServerLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def hold_tournament_on_server(store: Store, tid: str) -> ServerLock:
    """Hold run ``tid`` for this process; storelock.LockedError if another holds it."""
    from ..records.storelock import LockedError

    key = int.from_bytes(hashlib.sha256(b"durak-ref run " + tid.encode()).digest()[:7], "big")
    if not store.db.execute("SELECT pg_try_advisory_lock(?)", (key,)).fetchone()[0]:
        raise LockedError(f"tournament {tid} is being coordinated right now by another durak-ref "
                          f"connected to {store.name}; wait for that run to end (or stop it)")
    return ServerLock(store, key)


# -- the coordinator


class Collector:
    """Brings the games workers stored into this coordinator's match log, in the order
    they arrive: each game's record is appended and the game's row points at it."""

    def __init__(self, store: Store, tid: str, writer: MatchLogWriter) -> None:
        self.store, self.tid, self.writer = store, tid, writer
        self.line = 1  # the header

    def collect(self) -> list[tuple[int, GameRecord]]:
        """The games stored since the last call (index, record), logged."""
        rows = list(self.store.db.execute(
            "SELECT g.game_index, r.record FROM games g JOIN game_records r ON r.tournament_id = "
            "g.tournament_id AND r.game_index = g.game_index WHERE g.tournament_id = ? AND "
            "g.log_line IS NULL ORDER BY g.game_index", (self.tid,)))
        out = []
        places = []
        for index, text in rows:
            record = json.loads(text)
            self.line += 1
            self.writer.write(record)
            places.append((str(self.writer.path), self.line, self.tid, index))
            out.append((index, record_from_dict(record)))
        if places:
            with self.store.transaction():
                self.store.db.executemany("UPDATE games SET log_file = ?, log_line = ? WHERE "
                                          "tournament_id = ? AND game_index = ?", places)
        return out


def coordinate_tournament(settings: TournamentSettings, store: Store, tid: str, *, log_dir: Path,
                          fresh: bool = True, poll_s: float = DEFAULT_POLL_S,
                          on_game: Callable[[GameRecord, Progress], None] | None = None,
                          on_note: Callable[[str], None] = lambda text: None) -> Progress:
    """Queue every game of tournament ``tid`` not yet stored, then wait until workers
    have stored them all, logging each as it arrives. Ctrl-C (KeyboardInterrupt) stops
    the waiting only: the queue stays and workers play on; ``--resume`` watches again."""
    require_server(store)
    config = settings.validate()
    enqueue(store, tid, iter_schedule(settings))
    progress = Progress(schedule_size(settings), 0, time.monotonic(), sandbox=settings.sandbox)
    writer = _open_log(log_dir, "tournament", tid, fresh, settings.as_dict(), config, _created(store, tid))
    collector = Collector(store, tid, writer)
    notes = Notes(store, tid)
    try:
        _count_stored(store, tid, progress)
        collector.collect()  # stored while nobody watched: logged, counted above
        while progress.done < progress.total:
            for text in notes.new():
                on_note(text)
            for _, record in collector.collect():
                _count(progress, record)
                if on_game is not None:
                    on_game(record, progress)
            if progress.done < progress.total:
                time.sleep(poll_s)
    except store.errors.Error as exc:
        raise lost(store, exc) from None
    finally:
        writer.write({"type": "footer", "ended": utc_now(), "interrupted": progress.done < progress.total,
                      "summary": {"games": progress.done, "total": progress.total}})
        writer.close()
    store.set_status(tid, "finished")
    return progress


def coordinate_sprt(job: Any, store: Store, tid: str, *, log_dir: Path, fresh: bool = True,
                    poll_s: float = DEFAULT_POLL_S, on_pair: Callable[[Any], None] | None = None,
                    on_note: Callable[[str], None] = lambda text: None) -> Any:
    """Queue the pairs of SPRT run ``tid`` (an ``abtest.SprtJob``) not yet stored, then add
    each pair to the test as workers store its two games, in the order pairs complete.
    Once the test decides (or every pair is in) the run is ``finished``: workers stop
    claiming its games and drop those they are playing. Returns the ``abtest.SprtRun``.
    Ctrl-C stops the watching only; ``--resume`` watches again."""
    from .abtest import SprtRun, pair_games, pair_scores, restore_pairs, row_score

    require_server(store)
    a, b, others = job.a.name, job.b.name, [o.name for o in job.opponents]
    run = SprtRun(job.sprt, forfeits={}, sandbox=job.settings.sandbox, tid=tid)
    done = restore_pairs(run, store, tid, a, b, bool(others))
    if job.sprt.state != "continue" or run.pairs >= job.max_pairs:
        store.set_status(tid, "finished")
        return run
    pending: dict[int, dict[int, Callable[[str], float]]] = {}
    for row in store.games(tid):  # a lone stored game of a pair waits for its partner
        if row.game_index // 2 not in done:
            pending.setdefault(row.game_index // 2, {})[row.game_index % 2] = partial(row_score, row)

    def games() -> Iterable[ScheduledGame]:
        for deal in range(job.max_pairs):
            if deal not in done:
                yield from pair_games(a, b, others, deal)[0]

    enqueue(store, tid, games())
    _, settings, _ = store.tournament(tid)
    writer = _open_log(log_dir, "sprt", tid, fresh, settings, job.config, _created(store, tid))
    run.log_path = str(writer.path)
    collector = Collector(store, tid, writer)
    notes = Notes(store, tid)
    try:
        collector.collect()  # stored while nobody watched: counted by restore_pairs or pending
        while job.sprt.state == "continue" and run.pairs < job.max_pairs:
            for text in notes.new():
                on_note(text)
            for index, record in collector.collect():
                if job.sprt.state != "continue":
                    break  # stored after the decision: kept in the store and log, not counted
                deal, g = divmod(index, 2)
                run.games += 1
                run.tally.add(record)
                if record.forfeit:
                    key = f"{record.forfeit['bot']}:{record.forfeit['kind']}"
                    run.forfeits[key] = run.forfeits.get(key, 0) + 1
                pending.setdefault(deal, {})[g] = partial(_record_score, record)
                if len(pending[deal]) == 2:
                    scores = pending.pop(deal)
                    job.sprt.add_pair(*pair_scores((scores[0], scores[1]), a, b, bool(others)))
                    run.pairs += 1
                    if on_pair is not None:
                        on_pair(run)
            if job.sprt.state == "continue" and run.pairs < job.max_pairs:
                time.sleep(poll_s)
        store.set_status(tid, "finished")  # tells the workers to stop
    except store.errors.Error as exc:
        raise lost(store, exc) from None
    finally:
        writer.write({"type": "footer", "ended": utc_now(),
                      "interrupted": job.sprt.state == "continue" and run.pairs < job.max_pairs,
                      "summary": {"pairs": run.pairs, "games": run.games, "state": job.sprt.state}})
        writer.close()
    return run


def _created(store: Store, tid: str) -> str:
    return str(store.db.execute("SELECT created FROM tournaments WHERE id = ?", (tid,)).fetchone()[0])


def _record_score(record: GameRecord, name: str) -> float:
    return record.score(record.players.index(name))


def _open_log(log_dir: Path, kind: str, tid: str, fresh: bool, settings: dict[str, Any],
              config: MatchConfig, created: str) -> MatchLogWriter:
    suffix = "" if fresh else "-resumed-" + time.strftime("%H%M%S")
    writer = MatchLogWriter(fresh_log_path(log_dir, f"{kind}-{safe_name(tid)}{suffix}"))
    # The log takes in games played since the run was queued, watched or not: it starts
    # when the run was created (``verify`` checks that no game started before its log).
    header = {"type": "header", "format": FORMAT, "tournament": tid, "started": created,
              "preset": config.rules.preset, "rules": config.rules.as_dict(),
              "bots": settings["bots"], "settings": settings, "time_control": config.tc.as_dict(),
              "seed": settings["seed"], "sandbox": settings.get("sandbox"), "duplicates": None,
              "distributed": True, "deal": DEAL_TEXT}
    if kind == "sprt":
        header["kind"] = "sprt"
    writer.write(header)
    return writer


def _count_stored(store: Store, tid: str, progress: Progress) -> None:
    for row in store.games(tid):
        progress.done += 1
        for s in row.seats:
            progress.games[s.bot] = progress.games.get(s.bot, 0) + 1
            progress.durak[s.bot] = progress.durak.get(s.bot, 0) + (s.result == "durak")


def _count(progress: Progress, record: GameRecord) -> None:
    progress.done += 1
    progress.decisions += sum(1 for d in record.decisions if not d.forced)
    for seat, name in enumerate(record.players):
        progress.games[name] = progress.games.get(name, 0) + 1
        progress.durak[name] = progress.durak.get(name, 0) + (seat == record.durak)


# -- the worker


@dataclass
class WorkerOptions:
    concurrency: int = 1
    tournament: str | None = None  #: claim only this run's games
    exit_when_idle: bool = False  #: exit once no running run has a game left to store
    lease_s: float = DEFAULT_LEASE_S
    poll_s: float = DEFAULT_POLL_S
    log_dir: Path | None = None  #: where the bots' stderr logs go (None: discarded)
    name: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}")


@dataclass
class WorkerSummary:
    worker: str
    stored: int = 0  #: games this worker stored
    dropped: int = 0  #: games it played that were stored already, or whose run ended
    refused: dict[str, str] = field(default_factory=dict)  #: run -> why its games are not claimed

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def pg_password_file() -> Path:
    """libpq's password file (``$PGPASSFILE`` as it was, or ``~/.pgpass``): hidden from
    sandboxed bots."""
    return Path(PASSFILE_AT_START or Path.home() / ".pgpass")


class _Db:
    """The worker's one connection, used from trio: each operation runs in a thread, one
    at a time (an operation is a whole transaction, so slots never interleave inside one)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.lock = trio.Lock()

    async def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        async with self.lock:
            try:
                return await trio.to_thread.run_sync(fn, self.store, *args)
            except self.store.errors.Error as exc:
                raise lost(self.store, exc) from None


async def run_worker(store: Store, options: WorkerOptions,
                     report: Callable[[str], None] = lambda text: None) -> WorkerSummary:
    """Claim, play and store games until Ctrl-C (or, with ``exit_when_idle``, until no
    running run has a game left to store). ``report`` gets one line per event worth a
    human's attention (a run whose bots cannot start here: once per run)."""
    require_server(store, "durak-ref worker")
    pgpass = pg_password_file()
    db = _Db(store)
    summary = WorkerSummary(options.name)
    runs: dict[str, tuple[TournamentSettings, dict[str, Any], Any]] = {}

    async def refuse(tid: str, why: str) -> None:
        if tid not in summary.refused:
            summary.refused[tid] = why
            report(f"worker {options.name}: not playing run {tid}: {why}")
            await db(add_note, options.name, tid, f"not playing this run: {why}")

    async def slot(number: int) -> None:
        client: WorkerClient | None = None
        client_tid: str | None = None
        held: Claim | None = None  # claimed and neither stored nor given back yet
        try:
            while True:
                held = c = await db(claim, options.name, options.lease_s, options.tournament,
                                    sorted(summary.refused))
                if c is None:
                    if options.exit_when_idle and not await db(open_games, options.tournament,
                                                                sorted(summary.refused)):
                        return
                    await trio.sleep(options.poll_s)
                    continue
                if c.tid not in runs:
                    try:
                        runs[c.tid] = await db(_load_run, c.tid, options.log_dir, pgpass)
                    except (StoreError, TournamentError, SandboxError, KeyError, TypeError,
                            ValueError) as exc:
                        await refuse(c.tid, f"its settings cannot be used here ({exc})")
                        await db(release, options.name, c)
                        continue
                settings, rules, sandbox = runs[c.tid]
                if client_tid != c.tid:
                    if client is not None:
                        await client.close()
                    client = WorkerClient(number, settings, _stderr_stem(options, c.tid), sandbox)
                    client_tid = c.tid
                    await client.start()
                assert client is not None
                try:
                    played = await _play_holding(db, client, c, options)
                except BotStartError as exc:
                    await refuse(c.tid, str(exc))
                    await db(release, options.name, c)
                    await client.close()
                    client = client_tid = None
                    continue
                if played is None:  # the run is over, or another worker stored the game
                    summary.dropped += 1
                    await client.close()  # it was cut off mid-game
                    client = client_tid = None
                    continue
                if await _store_played(db, options.name, c, rules, played):
                    summary.stored += 1
                else:
                    summary.dropped += 1
                held = None
        finally:
            with trio.CancelScope(shield=True):
                if held is not None:  # stopped (Ctrl-C, SIGTERM) mid-game: free it for others now
                    try:
                        await db(release, options.name, held)
                    except StoreError:
                        pass  # the server is gone: the lease runs out instead
                if client is not None:
                    await client.close()

    async with trio.open_nursery() as nursery:
        for number in range(options.concurrency):
            nursery.start_soon(slot, number)
    return summary


def _load_run(store: Store, tid: str, log_dir: Path | None,
              pgpass: Path) -> tuple[TournamentSettings, dict[str, Any], Any]:
    """A queued run's settings, its rules (as stored with each game) and the sandbox its
    program bots run in here (``log_dir`` and the password file hidden from them)."""
    _, saved, _ = store.tournament(tid)
    settings = TournamentSettings.from_dict({k: v for k, v in saved.items() if k != "sprt"})
    config = settings.validate()
    return settings, config.rules.as_dict(), resolve_sandbox(settings, log_dir, pgpass)


def _stderr_stem(options: WorkerOptions, tid: str) -> Path | None:
    """Where this worker's bots of run ``tid`` write their stderr logs (None: nowhere)."""
    if options.log_dir is None:
        return None
    return options.log_dir / f"worker-{safe_name(options.name)}-{safe_name(tid)}"


async def _store_played(db: _Db, worker: str, c: Claim, rules: dict[str, Any],
                        played: tuple[GameRecord, list[SeatRow], str, str]) -> bool:
    """Store claimed game ``c`` as played, with its log record; False if another worker
    stored it first or its run ended (store_result)."""
    record, seats, started, ended = played
    row = GameRow(c.tid, c.game.index, c.game.seed, c.game.rotation, rules, None, None,
                  record.termination, None if record.durak is None else record.players[record.durak],
                  started, ended, seats)
    return bool(await db(store_result, worker, row, record.as_dict()))


async def _play_holding(db: _Db, client: Any, c: Claim,
                        options: WorkerOptions) -> tuple[GameRecord, list[SeatRow], str, str] | None:
    """Play ``c`` in ``client`` while renewing its lease; None if the run stopped wanting
    the game meanwhile (the game is abandoned)."""
    result: list[Any] = []
    with lifted(BotStartError, WorkerStopped):
        await _race(db, client, c, options, result)
    return result[0] if result else None


async def _race(db: _Db, client: Any, c: Claim, options: WorkerOptions, result: list[Any]) -> None:
    async with trio.open_nursery() as nursery:
        async def play() -> None:
            result.append(await client.play(c.game))
            nursery.cancel_scope.cancel()

        async def beat() -> None:
            while True:
                await trio.sleep(options.lease_s / 3)
                if not await db(heartbeat, options.name, c, options.lease_s):
                    nursery.cancel_scope.cancel()
                    return

        nursery.start_soon(play)
        nursery.start_soon(beat)
