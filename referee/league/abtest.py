"""A/B tests of two bots with the SPRT, on duplicate deal pairs.

The unit of independence is a pair of games on one deal:

- two players: the deal is played with A in seat 0 and B in seat 1, then with the
  seats swapped; B's score in a game is 1 if A was the durak, 0 if B was, 1/2 for a
  draw, and the pair's score (0, 1/2, ..., 2) is one pentanomial count;
- with opponents (a table of A or B plus them, at most MAX_SEATS players): the deal is played
  with A in a seat against the opponents,
  then with B in the same seat against the same opponents in the same seats; B's pair
  score is ``score(B) + 1 - score(A)`` with score 1 when safe, 1/2 in a shared draw,
  0 when the durak. The seat moves round the table from deal to deal.

H1 is "B is stronger than A by ``elo1``" against H0 "by ``elo0``" on the logistic Elo
scale; the generalised SPRT (referee.scoring.sprt) stops as soon as the LLR crosses a bound.
Games in flight at that moment are cancelled. With ``--concurrency`` > 1 pairs are
played by referee worker processes (as in tournaments), one pair at a time each.

Given a store, an SPRT is a run like a tournament's: a ``tournaments`` row of kind
``sprt`` whose settings are the tournament settings that rebuild the games plus an
``sprt`` entry (the bots A and B, the opponents, elo0/elo1/alpha/beta, the model and the
pair budget); every game in the log (a tournament log: ``replay`` and ``verify`` read it)
and in the store. Pair ``d`` is games ``2d`` and ``2d+1``, written to the log and the
store together when both are finished, so the store holds whole pairs; a resumed run
rebuilds the SPRT state from the stored pairs and plays the others (a pair found half
stored is played again whole, its stored game replaced).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..records.matchlog import FORMAT, MatchLogWriter, fresh_log_path, safe_name, utc_now
from ..records.store import GameRow, Store, StoreError
from ..rules.deal import DEAL_TEXT, deal_id
from ..scoring.sprt import Sprt
from ..seats.cgroups import run_header
from ..seats.sandbox import duplicate_soundness, seccomp_state, warn_unsound_duplicates
from ..table.failfast import ForfeitTally
from ..table.match import GameRecord, MatchConfig
from .results import seat_rows
from .tournament import (
    BotEntry,
    PlayerPool,
    ScheduledGame,
    TournamentError,
    TournamentSettings,
    new_tournament_id,
    resolve_sandbox,
    stderr_logs_of,
    with_pool,
)


@dataclass
class SprtRun:
    sprt: Sprt
    pairs: int = 0
    games: int = 0
    forfeits: dict[str, int] = field(default_factory=dict)
    sandbox: str | None = None  #: the sandbox program bots ran in (None: no program bots)
    duplicates: str | None = None  #: tournament.duplicate_soundness of the pairs
    tally: ForfeitTally = field(default_factory=ForfeitTally)  #: games, forfeits by kind per bot
    tid: str | None = None  #: the run's id in the store (None: not stored)
    log_path: str | None = None  #: this session's log (None: no log)
    resumed_pairs: int = 0  #: pairs taken from the store, not played in this session
    #: bot name -> this session's stderr logs of its processes (beside the log)
    stderr_logs: dict[str, list[str]] = field(default_factory=dict)

    def status(self) -> dict[str, Any]:
        out = self.sprt.status()
        out.update(pairs=self.pairs, games=self.games, forfeits=self.forfeits,
                   sandbox=self.sandbox, duplicates=self.duplicates,
                   bots=self.tally.as_dict(), warnings=self.tally.warnings())
        if self.tid is not None:
            out.update(run=self.tid, log=self.log_path, resumed_pairs=self.resumed_pairs,
                       stderr_logs=self.stderr_logs)
        return out


@dataclass
class SprtJob:
    """Everything a stored SPRT run needs to be played again (``load_sprt``)."""

    a: BotEntry
    b: BotEntry
    opponents: list[BotEntry]
    config: MatchConfig
    sprt: Sprt
    max_pairs: int
    seed: str
    settings: TournamentSettings


def stored_settings(a: BotEntry, b: BotEntry, opponents: list[BotEntry], config: MatchConfig,
                    sprt: Sprt, max_pairs: int, seed: str, sandbox: str = "auto",
                    bind: Sequence[str] = (), fresh_bots: bool = False) -> dict[str, Any]:
    """The settings of an SPRT's ``tournaments`` row (and of its logs' headers): the
    tournament settings that rebuild its games, plus ``sprt``: the bots' roles and the
    test's parameters."""
    n = 1 + len(opponents) if opponents else 2
    settings = settings_for([a, b, *opponents], dataclasses.replace(config, seed=seed), n, seed,
                            sandbox, bind, fresh_bots)
    return dict(settings.as_dict(), sprt={
        "a": a.name, "b": b.name, "opponents": [o.name for o in opponents],
        "elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha, "beta": sprt.beta,
        "model": "pentanomial" if sprt.pentanomial else "trinomial", "max_pairs": max_pairs})


def register_sprt(store: Store, settings: dict[str, Any]) -> str:
    """Record a new SPRT run (settings from ``stored_settings``) and its bots; its id."""
    tid = "s" + new_tournament_id()[1:]
    with store.transaction():
        for bot in settings["bots"]:
            store.ensure_bot(bot["name"], bot["command"])
    store.create_tournament(tid, "sprt", settings)
    return tid


def load_sprt(store: Store, tid: str) -> SprtJob:
    """The stored SPRT run ``tid``, ready for ``run_sprt``. Raises StoreError if there is
    none, TournamentError if its settings are unusable (a damaged or foreign row)."""
    kind, saved, _ = store.tournament(tid)
    if kind != "sprt":
        raise StoreError(f"{store.name}: {tid} is a {kind}, not an sprt run; resume it with "
                         f"durak-ref {kind} --resume {tid}")
    try:
        data = dict(saved)
        test = data.pop("sprt")
        settings = TournamentSettings.from_dict(data)
        config = settings.validate()
        by_name = {e.name: e for e in settings.bots}
        job = SprtJob(by_name[test["a"]], by_name[test["b"]],
                      [by_name[o] for o in test["opponents"]], config,
                      Sprt(test["elo0"], test["elo1"], test["alpha"], test["beta"],
                           pentanomial=test["model"] == "pentanomial"),
                      int(test["max_pairs"]), settings.seed, settings)
    except (KeyError, TypeError, ValueError) as exc:
        raise TournamentError(f"{store.name}: sprt run {tid}'s settings are unusable ({exc})") from None
    return job


_SCORES = {"durak": 0.0, "draw": 0.5, "safe": 1.0}


def row_score(row: GameRow, name: str) -> float:
    """``name``'s score in a stored game: 1 safe, 1/2 sharing a draw, 0 the durak.
    StoreError if the row has no such seat or an unknown result (a damaged store)."""
    for s in row.seats:
        if s.bot == name and s.result in _SCORES:
            return _SCORES[s.result]
    raise StoreError(f"sprt run {row.tournament_id}, game {row.game_index}: no seat of {name} with "
                     f"a result (durak, draw or safe) in the store; it is damaged")


def pair_scores(scores: tuple[Callable[[str], float], Callable[[str], float]], a: str, b: str,
                 opponents: bool) -> tuple[float, float]:
    """B's two scores of a pair, from each game's score function."""
    if not opponents:
        return scores[0](b), scores[1](b)
    # Paired difference: B's score in game 2, and 1 - A's score in game 1.
    return scores[1](b), 1.0 - scores[0](a)


def pair_games(a: str, b: str, opponents: list[str], deal: int) -> tuple[list[ScheduledGame], list[int]]:
    """The two games of pair ``deal`` (games ``2*deal`` and ``2*deal+1``, deal id
    ``sprt:<deal>``) and the seat whose score each game contributes (see the module
    docstring): head to head, A and B swap seats; with opponents, A then B takes the
    seat ``deal mod n`` among them."""
    seed_text = deal_id("sprt", deal)
    if not opponents:
        tables = [[a, b], [b, a]]
        watch = [1, 0]  # B's seat in each game
    else:
        seat = deal % (1 + len(opponents))
        tables = []
        for name in (a, b):
            table = opponents[:]
            table.insert(seat, name)
            tables.append(table)
        watch = [seat, seat]
    return [ScheduledGame(2 * deal + g, deal, g, tuple(t), seed_text) for g, t in enumerate(tables)], watch


def settings_for(bots: list[BotEntry], config: MatchConfig, players: int, seed: str,
                 sandbox: str = "auto", bind: Sequence[str] = (),
                 fresh_bots: bool = False) -> TournamentSettings:
    """Tournament settings that rebuild ``config`` (rules and clock) in a worker process."""
    from ..rules.options import OPTIONS

    rules = config.rules
    tc = config.tc
    return TournamentSettings(
        bots, players=players, seed=seed, preset=rules.preset,
        rules={o.name: o.format(getattr(rules, o.name)) for o in OPTIONS},
        tc=None if tc.base is None else f"{tc.base:g}+{tc.increment:g}", move_time=tc.move,
        startup_time=tc.startup, clock=tc.clock, backstop=tc.backstop, max_restarts=config.max_restarts,
        on_illegal="forfeit" if not config.illegal_retries else f"retry:{config.illegal_retries}",
        adjudicate=None if config.adjudicate is None else config.adjudicate.text,
        sandbox=sandbox, bind=list(bind), fresh_bots=fresh_bots,
        keep_bots_across_twins=config.keep_bots_across_twins)


async def run_sprt(a: BotEntry, b: BotEntry, opponents: list[BotEntry], config: MatchConfig, *,
                   sprt: Sprt, max_pairs: int, concurrency: int = 1, seed: str | None = None,
                   on_pair: Callable[[SprtRun], None] | None = None,
                   sandbox: str = "auto", bind: Sequence[str] = (), fresh_bots: bool = False,
                   hide: Sequence[str | Path] = (), recover: bool = False,
                   store: Store | None = None, tid: str | None = None,
                   log_dir: Path | None = None) -> SprtRun:
    """Play pairs until the SPRT decides or ``max_pairs`` pairs are done. With
    ``concurrency`` > 1 the pairs are played by that many referee worker processes (see
    referee/league/worker.py), one pair at a time each. Pair ``d`` is deal id ``sprt:<d>``,
    keyed by ``seed`` (default ``config.seed``: secret unless given). ``sandbox``, ``bind``:
    how program bots are confined (referee/seats/sandbox.py; ``hide``: paths they must not see);
    ``fresh_bots``: restart them before every game (without it, before the second game of
    a pair unless ``config.keep_bots_across_twins``: ``match.twin_guard``). Raises
    SandboxError for an unusable sandbox, and (unless ``recover``) BotFirstStartError when
    a bot fails its first start-up (referee/table/failfast.py).

    With ``store`` and ``tid`` (a run ``register_sprt`` recorded) every finished pair
    goes to the store and, with ``log_dir``, to a log there; the pairs already stored
    count first (the state is rebuilt from them) and only the others are played.
    KeyboardInterrupt propagates after every bot is closed; finished pairs are stored."""
    n = 1 + len(opponents) if opponents else 2
    config.rules.check_table(n)
    seed = config.seed if seed is None else seed
    settings = settings_for([a, b, *opponents], config, n, seed, sandbox, bind, fresh_bots)
    config = dataclasses.replace(config, seed=seed)  # as the workers' config (settings)
    box = resolve_sandbox(settings, log_dir, None if store is None else store.path, *hide)
    run = SprtRun(sprt, forfeits={}, sandbox=None if box is None else box.mode,
                  duplicates=duplicate_soundness(True, None if box is None else box.mode,
                                                 config.keep_bots_across_twins),
                  tid=tid)
    done: set[int] = set()
    writer: MatchLogWriter | None = None
    if store is not None and tid is not None:
        done = restore_pairs(run, store, tid, a.name, b.name, bool(opponents))
        if sprt.state != "continue" or run.pairs >= max_pairs:
            store.set_status(tid, "finished")
            return run
        if log_dir is not None:
            writer = _open_log(log_dir, tid, bool(done), store, settings, config, run)
            run.log_path = str(writer.path)
    warn_unsound_duplicates(run.duplicates)
    stem = None if writer is None else writer.path.with_suffix("")
    play = _PairPlay(run, a.name, b.name, [o.name for o in opponents], on_pair,
                     iter(d for d in range(max_pairs) if d not in done), store, tid, writer,
                     config.rules.as_dict(), settings, stem, box, recover, fresh_bots)

    def start_tasks(pool: PlayerPool, tasks: trio.Nursery) -> None:
        if concurrency > 1:
            for number in range(concurrency):
                tasks.start_soon(play.in_worker, number, tasks)
        else:
            tasks.start_soon(play.in_process, pool, tasks)

    try:
        await with_pool(settings, config, stem, start_tasks, box, recover)
    finally:
        run.stderr_logs = stderr_logs_of(stem, [x.name for x in settings.bots])
        if writer is not None:
            writer.write({"type": "footer", "ended": utc_now(),
                          "interrupted": sprt.state == "continue" and run.pairs < max_pairs,
                          "summary": {"pairs": run.pairs, "games": run.games, "state": sprt.state}})
            writer.close()
    if store is not None and tid is not None and (sprt.state != "continue" or run.pairs >= max_pairs):
        store.set_status(tid, "finished")
    return run


def _open_log(log_dir: Path, tid: str, resumed: bool, store: Store, settings: TournamentSettings,
              config: MatchConfig, run: SprtRun) -> MatchLogWriter:
    """A new game log of stored SPRT run ``tid`` in ``log_dir`` (a resumed run's is named
    so), its header written."""
    suffix = "" if not resumed else "-resumed-" + time.strftime("%H%M%S")
    writer = MatchLogWriter(fresh_log_path(log_dir, f"sprt-{safe_name(tid)}{suffix}"))
    writer.write({"type": "header", "format": FORMAT, "tournament": tid, "kind": "sprt",
                  "started": utc_now(), "preset": config.rules.preset,
                  "rules": config.rules.as_dict(),
                  "bots": [asdict(x) for x in settings.bots],
                  "settings": store.tournament(tid)[1],
                  "time_control": config.tc.as_dict(), "seed": config.seed,
                  "sandbox": run.sandbox, "seccomp": seccomp_state(run.sandbox),
                  "duplicates": run.duplicates, "deal": DEAL_TEXT,
                  "confinement": run_header(run.sandbox)})
    return writer


Played = tuple[GameRecord, str, str]  #: a game's record, when it started and ended
PlayOne = Callable[[ScheduledGame], Awaitable[Played]]


@dataclass
class _PairPlay:
    """Plays an SPRT run's pairs (``deals``: the deal numbers left) until the test
    decides, in this process or in worker processes; logs and stores each pair as it
    finishes and counts it in ``run``."""

    run: SprtRun
    a: str
    b: str
    opponents: list[str]
    on_pair: Callable[[SprtRun], None] | None
    deals: Iterator[int]
    store: Store | None
    tid: str | None
    writer: MatchLogWriter | None
    rules: dict[str, Any]
    settings: TournamentSettings
    stem: Path | None
    box: Any
    recover: bool
    fresh_bots: bool
    line: int = 1  #: the log's last line written

    def store_pair(self, played: list[tuple[ScheduledGame, Played]]) -> None:
        """Log both games of a pair, then store them in one transaction."""
        rows = []
        log_path = None if self.writer is None else str(self.writer.path)
        for sg, (record, started, ended) in played:
            log_line = None
            if self.writer is not None:
                self.line += 1
                log_line = self.line
                self.writer.write(record.as_dict())
            assert self.tid is not None
            rows.append(GameRow(self.tid, sg.index, sg.seed, sg.rotation, self.rules,
                                log_path, log_line, record.termination,
                                None if record.durak is None else record.players[record.durak],
                                started, ended, seat_rows(record)))
        assert self.store is not None
        with self.store.transaction():
            for row in rows:  # a half-stored pair (never written by us, but) is replaced whole
                self.store.delete_game(row.tournament_id, row.game_index)
                self.store.insert_game(row)

    async def play_pair(self, play_one: PlayOne, deal: int) -> tuple[float, float]:
        """Play, store and count the pair of ``deal``; B's two scores for the test."""
        games, watch = pair_games(self.a, self.b, self.opponents, deal)
        played = []
        for sg in games:
            played.append((sg, await play_one(sg)))
        if self.store is not None:
            self.store_pair(played)
        scores = []
        for g, (_, (record, _, _)) in enumerate(played):
            self.run.games += 1
            self.run.tally.add(record)
            if record.forfeit:
                key = f"{record.forfeit['bot']}:{record.forfeit['kind']}"
                self.run.forfeits[key] = self.run.forfeits.get(key, 0) + 1
            scores.append(record.score(watch[g]))
        if not self.opponents:
            return scores[0], scores[1]
        # Paired difference: B's score in game 2, and 1 - A's score in game 1.
        return scores[1], 1.0 - scores[0]

    async def pairs(self, play_one: PlayOne, workers: trio.Nursery) -> None:
        """Play pairs with ``play_one`` until none is left or the test decides (then
        ``workers``, every task playing pairs, is cancelled)."""
        for deal in self.deals:
            s1, s2 = await self.play_pair(play_one, deal)
            self.run.pairs += 1
            state = self.run.sprt.add_pair(s1, s2)
            if self.on_pair is not None:
                self.on_pair(self.run)
            if state != "continue":
                workers.cancel_scope.cancel()
                return

    async def in_process(self, pool: PlayerPool, workers: trio.Nursery) -> None:
        async def play_one(sg: ScheduledGame) -> Played:
            record, started = await pool.play(sg, self.fresh_bots)
            return record, started, utc_now()
        await self.pairs(play_one, workers)

    async def in_worker(self, number: int, workers: trio.Nursery) -> None:
        from .workerclient import WorkerClient

        client = WorkerClient(number, self.settings, self.stem, self.box, self.recover)
        try:
            await client.start()

            async def play_one(sg: ScheduledGame) -> Played:
                record, _, started, ended = await client.play(sg)
                return record, started, ended
            await self.pairs(play_one, workers)
        finally:
            await client.close()


def restore_pairs(run: SprtRun, store: Store, tid: str, a: str, b: str, opponents: bool) -> set[int]:
    """Count the whole pairs stored for run ``tid`` into ``run`` (its SPRT too), in deal
    order; their deal numbers. A lone game of a pair does not count."""
    by_deal: dict[int, dict[int, GameRow]] = {}
    for row in store.games(tid):
        by_deal.setdefault(row.game_index // 2, {})[row.game_index % 2] = row
    done = set()
    for deal in sorted(by_deal):
        games = by_deal[deal]
        if len(games) != 2:
            continue
        fns = []
        for g in (0, 1):
            row = games[g]
            for s in row.seats:
                if s.forfeit:
                    key = f"{s.bot}:{s.forfeit}"
                    run.forfeits[key] = run.forfeits.get(key, 0) + 1
            fns.append(lambda name, r=row: row_score(r, name))
        s1, s2 = pair_scores((fns[0], fns[1]), a, b, opponents)
        run.sprt.add_pair(s1, s2)
        run.pairs += 1
        run.games += 2
        done.add(deal)
    run.resumed_pairs = len(done)
    return done


def run_sprt_sync(*args: Any, **kwargs: Any) -> SprtRun:
    """``run_sprt`` under ``trio.run`` (Ctrl-C and SIGTERM only at checkpoints)."""
    from ..console.interrupt import run_interruptible
    return run_interruptible(lambda: run_sprt(*args, **kwargs))
