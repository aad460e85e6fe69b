"""``durak-ref bench distributed``: games/s of 1, 2, 3 ... ``durak-ref worker`` processes
sharing one PostgreSQL store (distributed runs, measured on one machine).

Each measured run is a real distributed tournament without its coordinator: the round
robin is registered and its schedule queued in the store exactly as ``tournament
--distributed`` does (league/distributed.py ``enqueue``), then N real worker processes
(``python -m referee worker --tournament ID --exit-when-idle``) claim, play and store
every game; the run's wall time goes from starting the workers to the last one's exit
(their start-up and connecting included, as a user pays it). Afterwards the run is
marked finished and its stored games are counted: every game stored, none twice.

Against ``--db postgresql://...`` the runs stay in that store, as any tournament's do.
Without it a private server is made for the benchmark (records/pgserver.py) with
PostgreSQL's durable defaults, and removed afterwards.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..console.lifetime import tied_to_parent
from ..league.distributed import enqueue
from ..league.tournament import TournamentSettings, iter_schedule, register_tournament, schedule_size
from ..records.pgserver import cluster
from ..records.store import open_store
from ..records.storedb import PgUrl
from .bench import children_cpu, machine_info, tournament_bots

POLL_S = 0.05  #: how often an idle worker looks at the queue (short: the tail of a run counts)
WATCH_S = 0.1  #: how often the benchmark counts the stored games


class BenchDistributedError(Exception):
    """A worker of the benchmark failed, or a run did not store every game exactly once."""


@contextmanager
def _server_url(db: PgUrl | None) -> Iterator[tuple[str, str]]:
    """The store to measure against (URL, and how it was got): ``db``, or a fresh database
    on a private durable server made here (records/pgserver.PgServerError if it cannot)."""
    if db is not None:
        yield db.url, "given (--db)"
        return
    with cluster(durable=True) as server:
        yield server.create_database("bench"), "private (initdb in a temporary directory, durable defaults)"


def _workers_run(url: str, kind: str, games: int, workers: int, log_dir: Path) -> dict[str, Any]:
    """Queue one round robin of ``kind`` bots (``games`` per pairing) in the store at
    ``url`` and time ``workers`` worker processes playing it to the end."""
    bots = tournament_bots(kind)
    settings = TournamentSettings(bots, games=games, seed="7")
    with open_store(PgUrl(url)) as store:
        tid = register_tournament(store, settings)
        enqueue(store, tid, iter_schedule(settings))
    argv = [sys.executable, "-m", "referee", "worker", "--db", url, "--tournament", tid, "--exit-when-idle",
            "--poll", str(POLL_S), "--log-dir", str(log_dir), "--json"]
    env = dict(os.environ, DURAK_REF_PROGRESS_INTERVAL="0")
    cpu0 = children_cpu()
    t0 = time.perf_counter()
    procs = []
    for n in range(workers):
        with open(log_dir / f"{tid}-worker{n}.out", "w+b") as out, open(log_dir / f"{tid}-worker{n}.err", "w+b") as err:
            # Tied to this process: a benchmark killed (SIGKILL too) leaves no worker playing on.
            procs.append((subprocess.Popen(argv, stdout=out, stderr=err, env=env, preexec_fn=tied_to_parent()),
                          out.name, err.name))
    stored_at = _watch(url, tid, [p for p, _, _ in procs])
    wall = time.perf_counter() - t0
    cpu = children_cpu() - cpu0
    stored_by = []
    for p, out_name, err_name in procs:
        if p.returncode != 0:
            err_text = Path(err_name).read_text(errors="replace").strip()[-2000:]
            raise BenchDistributedError(f"a worker of run {tid} exited with {p.returncode}: "
                                        f"{err_text or '(nothing on stderr)'}")
        stored_by.append(int(json.loads(Path(out_name).read_text())["stored"]))
    with open_store(PgUrl(url)) as store:
        store.set_status(tid, "finished")
        rows, distinct = store.db.execute(
            "SELECT count(*), count(DISTINCT game_index) FROM games WHERE tournament_id = ?", (tid,)).fetchone()
    total = schedule_size(settings)
    if rows != total or distinct != total or sum(stored_by) != total:
        raise BenchDistributedError(f"run {tid}: {total} games scheduled, {rows} stored ({distinct} distinct), "
                                    f"the workers say they stored {sum(stored_by)}")
    (first_t, first_n), (last_t, last_n) = stored_at
    steady = (last_n - first_n) / (last_t - first_t) if last_t > first_t else None
    return {"tournament": tid, "games": total, "wall_s": wall, "games_per_s": total / wall,
            "steady_games_per_s": steady, "stored_by_worker": stored_by, "workers_cpu_s": cpu}


def _watch(url: str, tid: str, procs: list[subprocess.Popen[bytes]]) -> tuple[tuple[float, int], tuple[float, int]]:
    """Wait for ``procs`` to exit, counting run ``tid``'s stored games every WATCH_S: when
    (perf_counter) the first were seen stored and how many, and when the count last grew
    and to what. Between the two the workers were all started and playing: their
    steady rate, start-up and the last game's tail left out."""
    first = last = (0.0, 0)
    with open_store(PgUrl(url)) as store:
        while any(p.poll() is None for p in procs):
            time.sleep(WATCH_S)
            done = int(store.db.execute("SELECT count(*) FROM queue WHERE tournament_id = ? AND state = 'done'",
                                        (tid,)).fetchone()[0])
            now = time.perf_counter()
            if done and not first[1]:
                first = (now, done)
            if done > last[1]:
                last = (now, done)
    for p in procs:
        p.wait()
    return first, last


def _median_or_none(values: list[float | None]) -> float | None:
    known = [x for x in values if x is not None]
    return round(statistics.median(known), 2) if known else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def bench_distributed(db: PgUrl | None = None, builtin_games: int = 200, games: int = 20,
                      rounds: int = 3, max_workers: int = 3, kinds: Sequence[str] = ("builtin",),
                      on_run: Callable[[str, int, int, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Round robins of three bots played by 1 .. ``max_workers`` worker processes (one game
    at a time each) against one PostgreSQL store: ``db``, or a private server.

    ``kinds``: "builtin" (the built-in bots, ``builtin_games`` games per pairing) and/or
    "program" (the Python example bots over pipes, ``games`` per pairing). Each of
    ``rounds`` rounds plays every kind with every worker count in turn (so a change in
    the machine's load touches every count alike). Per kind and count: each round's
    games/s over the whole run and their median (``speedup``: over the median of one
    worker); the steady games/s while every worker is playing (from the first games
    seen stored to the last; None for a run too short to see two counts) and their
    median (``steady_speedup``); the workers' CPU per game (median; the workers, their
    referee processes and bots). ``on_run(kind, workers, round, figures)`` hears of each run as it ends.
    Raises BenchDistributedError, StoreError, or pgserver.PgServerError (no private
    server could be made).
    """
    counts = list(range(1, max_workers + 1))
    per_pairing = {"builtin": builtin_games, "program": games}
    load_before = os.getloadavg()
    raw: dict[str, dict[int, list[dict[str, Any]]]] = {k: {n: [] for n in counts} for k in kinds}
    with _server_url(db) as (url, server), tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for kind in kinds:
                for n in counts:
                    result = _workers_run(url, kind, per_pairing[kind], n, Path(tmp))
                    raw[kind][n].append(result)
                    if on_run is not None:
                        on_run(kind, n, r, result)
    out: dict[str, Any] = {"benchmark": "distributed", "server": server, "rounds": rounds,
                           "worker_counts": counts, "worker_concurrency": 1, "pinned_cpus": None}
    for kind in kinds:
        runs = {}
        for n, results in raw[kind].items():
            rates = [x["games_per_s"] for x in results]
            played = results[0]["games"]
            runs[str(n)] = {"games": played,
                            "wall_s": [round(x["wall_s"], 3) for x in results],
                            "games_per_s": [round(x, 2) for x in rates],
                            "games_per_s_median": round(statistics.median(rates), 2),
                            "steady_games_per_s": [None if x["steady_games_per_s"] is None
                                                   else round(x["steady_games_per_s"], 2) for x in results],
                            "steady_games_per_s_median": _median_or_none(
                                [x["steady_games_per_s"] for x in results]),
                            "workers_cpu_ms_per_game": round(
                                1000 * statistics.median(x["workers_cpu_s"] for x in results) / played, 3),
                            "stored_by_worker": [x["stored_by_worker"] for x in results]}
        base = runs["1"]["games_per_s_median"]
        out[kind] = {"bots": [b.name for b in tournament_bots(kind)],
                     "games_per_pairing": per_pairing[kind], "runs": runs,
                     "speedup": {k: round(v["games_per_s_median"] / base, 3) for k, v in runs.items()},
                     "steady_speedup": {k: _ratio(v["steady_games_per_s_median"], runs["1"]["steady_games_per_s_median"])
                                        for k, v in runs.items()}}
    out["load_average_before"] = list(load_before)
    out["load_average_after"] = list(os.getloadavg())
    out["machine"] = machine_info()
    return out
