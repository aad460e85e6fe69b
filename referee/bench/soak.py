"""``durak-ref bench soak``: a long tournament with honest and hostile bots, watched.

The run is one tournament (another when one ends early) at concurrency 2, with the
built-in bots, the Python example bots and the hostile bots of ``referee.bots.benchbots``
(crashing, hanging, garbage bytes, stderr flood), a short move time and unlimited
restarts, for a given number of minutes. It reports the games played, the forfeits by
kind, the referee's resident memory and open file descriptors (this process and its
workers, read from /proc) at the start, after warm-up and at the end, with growth in %
from warm-up to the end (what is judged: the growth of an empty process filling its
caches up to their caps is no leak) and from the start (for information), the
processes left behind afterwards (every descendant still there, zombies included;
this process is a child subreaper meanwhile, so orphans count too) and internal
errors (exceptions that are the referee's bug). ``memory_figure`` measures a builtin
match's peak RSS at two lengths, each in a fresh process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import trio

from ..seats.leftovers import Watch, descendants, subreaper

#: Bots of the soak: name -> command (``{py}``: this Python; ``{bots}``: benchbots dir;
#: ``{ex}``: the examples' Python dir).
HONEST = {"greedy": "builtin:greedy", "random": "builtin:random"}
EXAMPLES = {"pygreedy": "{py} {ex}/greedy_bot.py", "pyrandom": "{py} {ex}/random_bot.py"}
HOSTILE = {"crasher": "{py} {bots}/hostile.py crash 0.03",
           "hanger": "{py} {bots}/hostile.py hang 0.01",
           "garbage": "{py} {bots}/hostile.py garbage 0.03",
           "flooder": "{py} {bots}/hostile.py flood"}
SAMPLE_EVERY_S = 2.0
#: Growth from warm-up to the end (RSS and fds) above this is a failed soak, in %.
TARGET_GROWTH_PCT = 5.0


def _proc_figures(pid: int) -> tuple[int, int] | None:
    """(RSS in KiB, open fds) of ``pid``; None if it is gone."""
    try:
        rss = 0
        # open(), not Path: pathlib interns every path part, and a new pid per sample
        # would grow the interpreter's interned-strings table: the soak's own noise.
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, ValueError):
        return None
    return rss, fds


def sample() -> dict[str, Any]:
    """RSS (KiB) and fds of this process and of its tournament workers now."""
    parent = _proc_figures(os.getpid()) or (0, 0)
    workers = {}
    for p in descendants().values():
        if "referee.league.worker" in p.cmdline and not p.zombie:
            fig = _proc_figures(p.pid)
            if fig is not None:
                workers[p.pid] = fig
    return {"parent_rss_kib": parent[0], "parent_fds": parent[1],
            "workers": len(workers),
            "workers_rss_kib": sum(r for r, _ in workers.values()),
            "workers_fds": sum(f for _, f in workers.values())}


def _growth(start: float, end: float) -> float | None:
    return round(100.0 * (end - start) / start, 2) if start else None


def _growths(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, float | None] | None:
    """Growth in % from sample ``a`` to sample ``b`` of each figure (None: a sample is missing)."""
    if a is None or b is None:
        return None
    return {"parent_rss": _growth(a["parent_rss_kib"], b["parent_rss_kib"]),
            "parent_fds": _growth(a["parent_fds"], b["parent_fds"]),
            "workers_rss": _growth(a["workers_rss_kib"], b["workers_rss_kib"]),
            "workers_fds": _growth(a["workers_fds"], b["workers_fds"])}


def soak_bots() -> dict[str, str]:
    """The soak's bots, name -> command."""
    referee_dir = Path(__file__).resolve().parents[1]
    ex = referee_dir.parent / "examples" / "python"
    values = {"py": sys.executable, "bots": str(referee_dir / "bots" / "benchbots"),
              "ex": str(ex)}
    bots = dict(HONEST)
    if (ex / "greedy_bot.py").exists() and (ex / "random_bot.py").exists():
        bots.update(EXAMPLES)
    else:  # an installed copy without the examples: an honest program bot instead
        bots["pyplay"] = "{py} {bots}/hostile.py play"
    bots.update(HOSTILE)
    return {name: cmd.format(**values) for name, cmd in bots.items()}


class _SoakTally:
    """The soak's running counts (games, terminations, forfeits by kind and by bot) and
    its three samples of the referee's figures: at the start, once warm (``warmup``
    seconds in) and the latest, each taken only while all ``concurrency`` workers run."""

    def __init__(self, t0: float, warmup: float, concurrency: int) -> None:
        self.t0, self.warmup, self.concurrency = t0, warmup, concurrency
        self.forfeits: dict[str, int] = {}
        self.forfeits_by_bot: dict[str, dict[str, int]] = {}
        self.terminations: dict[str, int] = {}
        self.state: dict[str, Any] = {"games": 0, "start": None, "warm": None, "end": None,
                                      "last": 0.0, "tournaments": 0}

    def on_game(self, record: Any, progress: Any) -> None:
        """The tournament's per-game hook: count the game, sample every SAMPLE_EVERY_S."""
        state = self.state
        state["games"] += 1
        self.terminations[record.termination] = self.terminations.get(record.termination, 0) + 1
        if record.forfeit is not None:
            kind = record.forfeit["kind"]
            self.forfeits[kind] = self.forfeits.get(kind, 0) + 1
            per = self.forfeits_by_bot.setdefault(record.forfeit["bot"], {})
            per[kind] = per.get(kind, 0) + 1
        now = time.monotonic()
        if now - state["last"] < SAMPLE_EVERY_S:
            return
        state["last"] = now
        figures = dict(sample(), at_s=round(now - self.t0, 1), games=state["games"])
        if figures["workers"] != self.concurrency:
            return  # a worker starting or ending: not comparable
        if state["start"] is None:
            state["start"] = figures
        elif state["warm"] is None:
            if now - self.t0 >= self.warmup:
                state["warm"] = figures
        else:
            state["end"] = figures


def run_soak(minutes: float, move_time: float = 0.25, concurrency: int = 2,
             warmup_s: float | None = None, sandbox: str = "auto") -> dict[str, Any]:
    """Play the soak for ``minutes``; return the report (see the module docstring).
    ``warmup_s``: when the warm sample is taken (default: 10% of the run, 5 to 120 s:
    long enough for the store's page cache, PAGE_CACHE_KIB, to fill)."""
    from ..league.tournament import BotEntry, TournamentSettings, run_tournament
    from ..records.store import open_store

    seconds = minutes * 60.0
    warmup = warmup_s if warmup_s is not None else min(120.0, max(5.0, seconds / 10)) if seconds >= 10 else seconds / 4
    bots = [BotEntry(name, cmd) for name, cmd in soak_bots().items()]
    errors: list[str] = []
    t0 = time.monotonic()
    tally = _SoakTally(t0, warmup, concurrency)
    state = tally.state
    on_game = tally.on_game

    # Enough games per table that one tournament outlasts the run at a generous rate.
    tables = len(bots) * (len(bots) - 1) // 2
    games = max(20, int(seconds * 50 / tables) + 2)

    async def main(store: Any) -> None:
        deadline = trio.current_time() + seconds
        while trio.current_time() < deadline:
            settings = TournamentSettings(bots, games=games, concurrency=concurrency,
                                          move_time=move_time, max_restarts=10**9,
                                          sandbox=sandbox)
            tid = f"soak{state['tournaments']}"
            with store.transaction():
                for b in bots:
                    store.ensure_bot(b.name, b.command)
            store.create_tournament(tid, "tournament", settings.as_dict())
            state["tournaments"] += 1
            with trio.move_on_after(max(0.0, deadline - trio.current_time())):
                try:
                    await run_tournament(settings, store, tid, log_dir=None, on_game=on_game)
                except Exception:  # noqa: BLE001 - what the soak is looking for
                    errors.append(traceback.format_exc(limit=8))
                    return

    with tempfile.TemporaryDirectory(prefix="durak-soak-") as tmp, subreaper() as tracked:
        watch = Watch()
        with open_store(Path(tmp) / "soak.sqlite") as store:
            try:
                trio.run(main, store)
            except KeyboardInterrupt:  # Ctrl-C: stop early, still report and check leftovers
                state["interrupted"] = True
            except Exception:  # noqa: BLE001
                errors.append(traceback.format_exc(limit=8))
        wall = time.monotonic() - t0
        after = sample()
        leftovers = trio.run(watch.wait_gone, 5.0)
        zombies = [p for p in watch.new().values() if p.zombie and p.ppid != os.getpid()]
        if leftovers:
            trio.run(watch.kill_all)
    start, warm, end = state["start"], state["warm"], state["end"]
    report: dict[str, Any] = {
        "benchmark": "soak", "minutes": minutes, "wall_s": round(wall, 1),
        "interrupted": state.get("interrupted", False),
        "concurrency": concurrency, "move_time_s": move_time, "sandbox": sandbox,
        "bots": {b.name: b.command for b in bots},
        "tournaments": state["tournaments"], "games": state["games"],
        "games_per_s": round(state["games"] / wall, 2) if wall else None,
        "terminations": tally.terminations, "forfeits": tally.forfeits,
        "forfeits_by_bot": tally.forfeits_by_bot,
        "warmup_s": round(warmup, 1), "start": start, "warm": warm, "end": end, "after": after,
        "growth_pct": _growths(warm, end), "growth_from_start_pct": _growths(start, end),
        "target_growth_pct": TARGET_GROWTH_PCT,
        "leftover_tracking": tracked,
        "leftover_processes": [p.as_dict() for p in leftovers.values()] + [p.as_dict() for p in zombies],
        "internal_errors": len(errors), "errors": errors,
    }
    return report


# ---------------------------------------------------------------------- memory figure

_MEMORY_CHILD = r"""
import resource, sys
from referee.cli import app
sys.argv = ["durak-ref", "match", "builtin:greedy", "builtin:random", "--games", sys.argv[1],
            "--no-log", "--seed", "1", "--json"]
try:
    app()
except SystemExit:
    pass
print("PEAK_KIB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def memory_figure(small: int = 2000, large: int = 20000) -> dict[str, Any]:
    """Peak RSS of a builtin ``match`` (greedy vs random, no log) at ``small`` and
    ``large`` games, each in a fresh Python process; growth in %."""
    runs = {}
    for games in (small, large):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(games)],
                              capture_output=True, text=True, check=False)
        peak = [line for line in proc.stderr.splitlines() if line.startswith("PEAK_KIB")]
        if not peak:
            raise RuntimeError(f"memory run of {games} games failed: {proc.stderr[-2000:]}")
        runs[str(games)] = {"peak_rss_kib": int(peak[-1].split()[1]),
                            "wall_s": round(time.perf_counter() - t0, 2)}
    a, b = runs[str(small)]["peak_rss_kib"], runs[str(large)]["peak_rss_kib"]
    return {"benchmark": "memory", "match": "builtin:greedy vs builtin:random, --no-log",
            "runs": runs, "growth_pct": _growth(a, b), "target_pct": 15.0}
