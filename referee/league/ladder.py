"""The ladder: a standing pool of bots rated incrementally, game by game, in the store.

``ladder run`` plays games between the ladder's bots: each pairing takes the bot with
the fewest ladder games and gives it the opponent closest in rating (ties broken by
the run's seed), and each pairing plays both seat rotations of one deal: deal id
``ladder:<index of its first game>``, keyed by the run's seed (secret unless given; kept
in the log header and in the ladder's ``runs`` setting of the store). After every game the
incremental update R_j += K (p_j - w_j) (``referee.scoring.ratings.ladder_update``) is written
in the same transaction as the game, so the ratings and the games never disagree.
Ladder games are stored under the tournament id ``ladder``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..records.matchlog import FORMAT, MatchLogWriter, fresh_log_path, timestamp, utc_now
from ..records.store import GameRow, Store, StoreError
from ..rules.deal import DEAL_TEXT, deal_id
from ..scoring.ratings import DEFAULT_K, DEFAULT_START, RatedGame, ladder_update
from ..seats.cgroups import run_header
from ..seats.sandbox import duplicate_soundness, seccomp_state, warn_unsound_duplicates
from ..table.match import GameRecord, MatchConfig
from .results import seat_rows
from .tournament import (
    BotEntry,
    PlayerPool,
    ScheduledGame,
    TournamentError,
    TournamentSettings,
    resolve_sandbox,
    stderr_logs_of,
    with_pool,
)

LADDER_ID = "ladder"
#: The lobby's games (``serve --http``): stored apart from the ladder's, never rated on it
#: (referee/league/tables.py), so a person at a lobby table cannot choose whom a ladder
#: bot plays in rated games.
LOBBY_ID = "lobby"


def ensure_ladder(store: Store, k: float = DEFAULT_K, start: float = DEFAULT_START) -> dict[str, Any]:
    """The ladder's settings, creating the ladder row on first use."""
    try:
        _, settings, _ = store.tournament(LADDER_ID)
        return settings
    except StoreError:  # no ladder yet
        settings = {"k": k, "start": start, "seed": 1}
        store.create_tournament(LADDER_ID, "ladder", settings)
        return settings


def add_bot(store: Store, name: str, command: str) -> None:
    """Register a bot on the ladder at the start rating. Raises TournamentError if the
    name is taken by a different command or the spec is unusable."""
    from ..seats.players import BotSpecError, parse_bot_spec

    try:
        spec = parse_bot_spec(command)
    except BotSpecError as exc:
        raise TournamentError(str(exc)) from None
    if spec.kind == "tcp":
        raise TournamentError(f"{command}: a bot that connects over TCP is registered with "
                              f"durak-ref register NAME and plays in durak-ref serve")
    settings = ensure_ladder(store)
    existing = store.bot_command(name)
    if existing is not None and existing != command:
        raise TournamentError(f"bot {name!r} is already registered with command {existing!r}")
    with store.transaction():
        store.ensure_bot(name, command)
        if store.ladder_rating(name) is None:
            store.set_ladder(name, float(settings["start"]), 0)


def pairing(ratings: dict[str, tuple[float, int]], rng: random.Random,
            busy: set[str] = frozenset()) -> tuple[str, str] | None:  # type: ignore[assignment]
    """The next pairing: the free bot with the fewest games, against the free bot closest
    in rating. None if fewer than two bots are free."""
    free = [b for b in ratings if b not in busy]
    if len(free) < 2:
        return None
    rng.shuffle(free)
    first = min(free, key=lambda b: ratings[b][1])
    second = min((b for b in free if b != first),
                 key=lambda b: (abs(ratings[b][0] - ratings[first][0]), ratings[b][1]))
    return first, second


def store_ladder_game(store: Store, record: GameRecord, deal_seed: str, rotation: int,
                      config: MatchConfig, *, k: float, start: float, started: str,
                      log_file: str | None) -> dict[str, float]:
    """Write a ladder game and every seat's rating update in one transaction; returns
    the new ratings of the table."""
    table = record.players
    durak = None if record.durak is None else table[record.durak]
    rated = (RatedGame(tuple(table), durak=durak) if durak else
             RatedGame(tuple(table), last_two=tuple(table[s] for s in record.drawn_seats)))
    before = {b: (store.ladder_rating(b) or (start, 0)) for b in table}
    after = ladder_update({b: r for b, (r, _) in before.items()}, rated, k=k, start=start)
    row = game_row(LADDER_ID, record, deal_seed, rotation, config, started=started, log_file=log_file)
    with store.transaction():
        store.insert_game(row)
        for b in table:
            store.set_ladder(b, after[b], before[b][1] + 1)
            store.add_history(b, LADDER_ID, record.index, before[b][0], after[b])
    return {b: after[b] for b in table}


def game_row(tid: str, record: GameRecord, deal_seed: str, rotation: int, config: MatchConfig, *,
             started: str, log_file: str | None) -> GameRow:
    """The store's row of ``record``, a game of run ``tid`` that ended now."""
    durak = None if record.durak is None else record.players[record.durak]
    return GameRow(tid, record.index, deal_seed, rotation, config.rules.as_dict(), log_file,
                   None, record.termination, durak, started, utc_now(), seat_rows(record))


def next_ladder_index(store: Store, also: Sequence[str] = ()) -> Iterator[int]:
    """The ladder's next game numbers: past every stored game of the ladder and of the
    runs ``also`` (the lobby's, which shares the arena's numbers)."""
    done = max(max(store.finished_indices(tid), default=-1) for tid in (LADDER_ID, *also))
    return itertools.count(done + 1)


@dataclass
class LadderRun:
    """What one ``ladder run`` did."""

    played: int = 0  #: games played and stored by this run
    log_path: str | None = None  #: this run's game log (None: not logged)
    #: bot name -> the stderr logs of its processes in this run (beside the game log)
    stderr_logs: dict[str, list[str]] = field(default_factory=dict)


def local_ladder_bots(store: Store) -> dict[str, str]:
    """The ladder's local bots (name -> command); TournamentError if fewer than two. TCP
    bots share the ladder's ratings but play only when connected: in durak-ref serve."""
    bots = {name: cmd for name, cmd, _ in store.bots()
            if store.ladder_rating(name) is not None and not cmd.startswith("tcp:")}
    if len(bots) < 2:
        raise TournamentError("ladder run needs at least two local bots: durak-ref ladder add "
                              "NAME CMD (TCP bots play in durak-ref serve)")
    return bots


def _note_run(store: Store, settings: dict[str, Any], seed: str) -> None:
    """Record this run's seed, for reproducing its deals: with the games, out of the bots'
    reach (the ladder's ``settings`` gain it, stored)."""
    first = max(store.finished_indices(LADDER_ID), default=-1) + 1
    settings["runs"] = [*settings.get("runs", []), {"first_game": first, "seed": seed,
                                                    "started": utc_now()}]
    store.set_settings(LADDER_ID, settings)


def _open_log(log_dir: Path, config: MatchConfig, entries: list[BotEntry], box: Any,
              duplicates: str | None) -> MatchLogWriter:
    """A new ladder game log in ``log_dir``, its header written (``duplicates``: what
    could carry a pair's deal to its second game: sandbox.duplicate_soundness)."""
    writer = MatchLogWriter(fresh_log_path(log_dir, f"ladder-{timestamp()}"))
    mode = None if box is None else box.mode
    writer.write({"type": "header", "format": FORMAT, "ladder": True, "started": utc_now(),
                  "preset": config.rules.preset, "rules": config.rules.as_dict(),
                  "bots": [{"name": e.name, "command": e.command} for e in entries],
                  "time_control": config.tc.as_dict(), "seed": config.seed,
                  "deal": DEAL_TEXT, "sandbox": mode, "seccomp": seccomp_state(mode),
                  "duplicates": duplicates,
                  "confinement": run_header(box)})
    return writer


async def run_ladder(store: Store, config: MatchConfig, *, games: int, concurrency: int = 1,
                     log_dir: Path | None = None,
                     on_game: Callable[[GameRecord], None] | None = None,
                     sandbox: str = "auto", bind: Sequence[str] = (),
                     recover: bool = False) -> LadderRun:
    """Play ``games`` ladder games (in deal pairs); returns how many were played, and
    where the game log and (with a log dir) each program bot's stderr log are.
    ``sandbox``, ``bind``: how program bots are confined (referee/seats/sandbox.py); the log dir
    and the store are hidden from them. Raises SandboxError for an unusable sandbox, and
    (unless ``recover``) BotFirstStartError when a bot fails its first start-up (every game
    played before is stored; see referee/table/failfast.py)."""
    settings = ensure_ladder(store)
    k, start = float(settings["k"]), float(settings["start"])
    bots = local_ladder_bots(store)
    entries = [BotEntry(name, cmd) for name, cmd in sorted(bots.items())]
    pool_settings = TournamentSettings(entries, seed=config.seed, sandbox=sandbox, bind=list(bind))
    box = resolve_sandbox(pool_settings, log_dir, getattr(store, "path", None))
    duplicates = duplicate_soundness(True, None if box is None else box.mode, config.keep_bots_across_twins)
    warn_unsound_duplicates(duplicates)
    next_index = next_ladder_index(store)
    _note_run(store, settings, config.seed)
    rng = random.Random(f"{config.seed}:pairing")  # ties; string seeding hashes the seed
    busy: set[str] = set()
    run = LadderRun()
    reserved = 0  # games handed to a worker (played or in flight)
    writer = None if log_dir is None else _open_log(log_dir, config, entries, box, duplicates)
    run.log_path = None if writer is None else str(writer.path)
    stem = None if writer is None else writer.path.with_suffix("")  # the bots' stderr logs' names

    async def play_one(pool: PlayerPool, table: list[str], deal_seed: str | None,
                       rotation: int) -> str:
        """Play and store one game of deal ``deal_seed`` (None: a new deal); its deal id."""
        index = next(next_index)
        if deal_seed is None:
            deal_seed = deal_id("ladder", index)
        record, started = await pool.play(ScheduledGame(index, 0, rotation, tuple(table), deal_seed))
        if writer is not None:
            writer.write(record.as_dict())
        store_ladder_game(store, record, deal_seed, rotation, config, k=k, start=start,
                          started=started, log_file=str(writer.path) if writer else None)
        run.played += 1
        if on_game is not None:
            on_game(record)
        return deal_seed

    async def worker(pool: PlayerPool) -> None:
        nonlocal reserved
        while reserved < games:
            # Builtin bots play a whole game without yielding: without this a ladder of
            # builtins never reaches a checkpoint, so Ctrl-C and SIGTERM never stop it.
            await trio.lowlevel.checkpoint()
            ratings = {b: store.ladder_rating(b) or (start, 0) for b in bots}
            pair = pairing(ratings, rng, busy)
            if pair is None:  # every bot is busy in another worker's game
                await trio.sleep(0.01)
                continue
            busy.update(pair)
            try:
                deal_seed = None  # the deal is named after its first game
                for rotation, table in enumerate((list(pair), list(pair[::-1]))):
                    if reserved >= games:
                        break
                    reserved += 1
                    deal_seed = await play_one(pool, table, deal_seed, rotation)
            finally:
                busy.difference_update(pair)

    def start_tasks(pool: PlayerPool, tasks: trio.Nursery) -> None:
        for _ in range(max(1, min(concurrency, len(bots) // 2))):
            tasks.start_soon(worker, pool)

    try:
        await with_pool(pool_settings, config, stem, start_tasks, box, recover)
    finally:
        run.stderr_logs = stderr_logs_of(stem, list(bots))
        if writer is not None:
            writer.write({"type": "footer", "ended": utc_now(), "interrupted": run.played < games,
                          "summary": {"games": run.played}})
            writer.close()
    return run


def play_ladder(store: Store, config: MatchConfig, **kwargs: Any) -> LadderRun:
    """``run_ladder`` under ``trio.run`` (Ctrl-C and SIGTERM only at checkpoints)."""
    from ..console.interrupt import run_interruptible
    return run_interruptible(lambda: run_ladder(store, config, **kwargs))
