"""A/B tests of two bots with the SPRT, on duplicate deal pairs.

The unit of independence is a pair of games on one deal:

- two players: the deal is played with A in seat 0 and B in seat 1, then with the
  seats swapped; B's score in a game is 1 if A was the durak, 0 if B was, 1/2 for a
  draw, and the pair's score (0, 1/2, ..., 2) is one pentanomial count;
- with opponents (a table of A or B plus them: 2 to 6 players): the deal is played
  with A in a seat against the opponents,
  then with B in the same seat against the same opponents in the same seats; B's pair
  score is ``score(B) + 1 - score(A)`` with score 1 when safe, 1/2 in a shared draw,
  0 when the durak. The seat moves round the table from deal to deal.

H1 is "B is stronger than A by ``elo1``" against H0 "by ``elo0``" on the logistic Elo
scale; the generalised SPRT (referee.sprt) stops as soon as the LLR crosses a bound.
Games in flight at that moment are cancelled. With ``--concurrency`` > 1 pairs are
played by referee worker processes (as in tournaments), one pair at a time each.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from .failfast import ForfeitTally
from .match import GameRecord, MatchConfig
from .rules.deal import deal_id
from .sandbox import duplicate_soundness, warn_unsound_duplicates
from .sprt import Sprt
from .tournament import (
    BotEntry, PlayerPool, ScheduledGame, TournamentSettings, resolve_sandbox, with_pool,
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

    def status(self) -> dict[str, Any]:
        out = self.sprt.status()
        out.update(pairs=self.pairs, games=self.games, forfeits=self.forfeits,
                   sandbox=self.sandbox, duplicates=self.duplicates,
                   bots=self.tally.as_dict(), warnings=self.tally.warnings())
        return out


def settings_for(bots: list[BotEntry], config: MatchConfig, players: int, seed: str,
                 sandbox: str = "auto", bind: Sequence[str] = (),
                 fresh_bots: bool = False) -> TournamentSettings:
    """Tournament settings that rebuild ``config`` (rules and clock) in a worker process."""
    from .rules.options import OPTIONS

    rules = config.rules
    tc = config.tc
    return TournamentSettings(
        bots, players=players, seed=seed, preset=rules.preset,
        rules={o.name: o.format(getattr(rules, o.name)) for o in OPTIONS},
        tc=None if tc.base is None else f"{tc.base:g}+{tc.increment:g}", move_time=tc.move,
        startup_time=tc.startup, max_restarts=config.max_restarts,
        on_illegal="forfeit" if not config.illegal_retries else f"retry:{config.illegal_retries}",
        sandbox=sandbox, bind=list(bind), fresh_bots=fresh_bots)


async def run_sprt(a: BotEntry, b: BotEntry, opponents: list[BotEntry], config: MatchConfig, *,
                   sprt: Sprt, max_pairs: int, concurrency: int = 1, seed: str | None = None,
                   on_pair: Callable[[SprtRun], None] | None = None,
                   sandbox: str = "auto", bind: Sequence[str] = (), fresh_bots: bool = False,
                   hide: Sequence[str] = (), recover: bool = False) -> SprtRun:
    """Play pairs until the SPRT decides or ``max_pairs`` pairs are done. With
    ``concurrency`` > 1 the pairs are played by that many referee worker processes (see
    referee/worker.py), one pair at a time each. Pair ``d`` is deal id ``sprt:<d>``,
    keyed by ``seed`` (default ``config.seed``: secret unless given). ``sandbox``, ``bind``:
    how program bots are confined (referee/sandbox.py; ``hide``: paths they must not see);
    ``fresh_bots``: restart them before every game. Raises SandboxError for an unusable
    sandbox, and (unless ``recover``) BotFirstStartError when a bot fails its first
    start-up (referee/failfast.py)."""
    from .worker import WorkerClient

    n = 1 + len(opponents) if opponents else 2
    config.rules.check_table(n)
    seed = config.seed if seed is None else seed
    settings = settings_for([a, b, *opponents], config, n, seed, sandbox, bind, fresh_bots)
    config = dataclasses.replace(config, seed=seed)  # as the workers' config (settings)
    box = resolve_sandbox(settings, *hide)
    run = SprtRun(sprt, forfeits={}, sandbox=None if box is None else box.mode,
                  duplicates=duplicate_soundness(True, None if box is None else box.mode, fresh_bots))
    warn_unsound_duplicates(run.duplicates)
    deals = iter(range(max_pairs))
    PlayOne = Callable[[ScheduledGame], Awaitable[GameRecord]]

    async def play_pair(play_one: PlayOne, deal: int) -> tuple[float, float]:
        seed_text = deal_id("sprt", deal)
        if not opponents:
            tables = [[a.name, b.name], [b.name, a.name]]
            watch = [1, 0]  # B's seat in each game
        else:
            seat = deal % n
            others = [o.name for o in opponents]
            tables = []
            for name in (a.name, b.name):
                table = others[:]
                table.insert(seat, name)
                tables.append(table)
            watch = [seat, seat]
        scores = []
        for g, table in enumerate(tables):
            record = await play_one(ScheduledGame(2 * deal + g, deal, g, tuple(table), seed_text))
            run.games += 1
            run.tally.add(record)
            if record.forfeit:
                key = f"{record.forfeit['bot']}:{record.forfeit['kind']}"
                run.forfeits[key] = run.forfeits.get(key, 0) + 1
            scores.append(record.score(watch[g]))
        if not opponents:
            return scores[0], scores[1]
        # Paired difference: B's score in game 2, and 1 - A's score in game 1.
        return scores[1], 1.0 - scores[0]

    async def pairs(play_one: PlayOne, workers: trio.Nursery) -> None:
        for deal in deals:
            s1, s2 = await play_pair(play_one, deal)
            run.pairs += 1
            state = sprt.add_pair(s1, s2)
            if on_pair is not None:
                on_pair(run)
            if state != "continue":
                workers.cancel_scope.cancel()
                return

    async def in_process(pool: PlayerPool, workers: trio.Nursery) -> None:
        async def play_one(sg: ScheduledGame) -> GameRecord:
            return (await pool.play(sg, fresh_bots))[0]
        await pairs(play_one, workers)

    async def in_worker(number: int, workers: trio.Nursery) -> None:
        client = WorkerClient(number, settings, None, box, recover)
        try:
            await client.start()

            async def play_one(sg: ScheduledGame) -> GameRecord:
                return (await client.play(sg))[0]
            await pairs(play_one, workers)
        finally:
            await client.close()

    def start_tasks(pool: PlayerPool, tasks: trio.Nursery) -> None:
        if concurrency > 1:
            for number in range(concurrency):
                tasks.start_soon(in_worker, number, tasks)
        else:
            tasks.start_soon(in_process, pool, tasks)

    await with_pool(settings, config, None, start_tasks, box, recover)
    return run


def run_sprt_sync(*args: Any, **kwargs: Any) -> SprtRun:
    """``run_sprt`` under ``trio.run`` (Ctrl-C and SIGTERM only at checkpoints)."""
    from .interrupt import run_interruptible
    return run_interruptible(lambda: run_sprt(*args, **kwargs))
