"""Benchmarks (``durak-ref bench ...``). Speed is measured here, never asserted in tests.

Each benchmark returns a JSON-ready map with the figures and what was measured, so a
report can quote medians and ratios from one run.
"""

from __future__ import annotations

import functools
import os
import platform
import random
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..rules import Game, make_rules
from ..rules.game import OVER


def machine_info() -> dict[str, Any]:
    """What a bench's figures were measured on: Python, the compiled hot path, the CPUs."""
    from ..native.loader import status
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "compiled": status()["compiled"],
            "cpus": os.cpu_count(), "affinity": sorted(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity") else None}


def _engine_round(rules: Any, players: int, games: int, seed: str, checked: bool) -> tuple[float, int]:
    """Seconds and actions for ``games`` random games: a uniform random legal action each
    decision, applied through the checked ``apply`` (what a referee uses for an answer it
    did not compute) or the unchecked ``apply_legal`` (a trusted in-process caller)."""
    rng = random.Random(seed)
    actions = 0
    t0 = time.perf_counter()
    for i in range(games):
        g = Game.new(rules, players, seed=f"{seed}:{i}")
        legal_actions, rand = g.legal_actions, rng.random
        apply = g.apply if checked else g.apply_legal
        while g.phase != OVER:
            legal = legal_actions()
            apply(legal[int(rand() * len(legal))])
        actions += g.action_count
    return time.perf_counter() - t0, actions


def bench_engine(games: int = 2000, repeats: int = 5, seed: int = 1, players: int = 2,
                 preset: str = "classic") -> dict[str, Any]:
    """Random games in-process: deal, legal actions, apply, to the end of the game.

    Runs ``repeats`` rounds of ``games`` games with the unchecked ``apply_legal`` and
    as many with the checked ``apply``, alternating (so machine noise hits both alike;
    both play the same games), and reports each one's median round and the ratio
    checked/unchecked of their speeds. The top-level figures are the unchecked ones.
    One core: this process only.
    """
    rules = make_rules(preset)
    rounds: dict[bool, list[float]] = {False: [], True: []}
    actions_total = 0
    for r in range(repeats):
        for with_check in (False, True):
            seconds, actions = _engine_round(rules, players, games, f"{seed}:{r}", with_check)
            rounds[with_check].append(seconds)
        actions_total += actions
    actions_per_game = actions_total / (games * repeats)

    def figures(with_check: bool) -> dict[str, Any]:
        median = statistics.median(rounds[with_check])
        return {"round_seconds": [round(x, 4) for x in rounds[with_check]],
                "games_per_s": round(games / median, 1),
                "actions_per_s": round(games * actions_per_game / median, 1),
                "us_per_action": round(1e6 * median / (games * actions_per_game), 3)}

    unchecked, checked = figures(False), figures(True)
    return {
        "benchmark": "engine",
        "preset": preset, "players": players, "deck": rules.deck,
        "games_per_round": games, "rounds": repeats,
        **unchecked,
        "actions_per_game": round(actions_per_game, 2),
        "unchecked": unchecked,
        "checked": checked,
        "ratio_checked_vs_unchecked": round(checked["games_per_s"] / unchecked["games_per_s"], 3),
        "machine": machine_info(),
    }


# --------------------------------------------------------------------------- protocol

_ECHO_CHILD = r"""
import os, sys
answer = bytes.fromhex(sys.argv[1])
def read_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(0, n - len(buf))
        if not chunk:
            sys.exit(0)
        buf += chunk
    return buf
while True:
    size = int.from_bytes(read_exact(4), "big")
    read_exact(size)
    os.write(1, answer)
"""


def typical_request(request_id: int = 1) -> dict[str, Any]:
    """A mid-game request: the defender of a two-card bout with a 6-card hand."""
    from protocol import messages as msg

    from ..rules.actions import action_to_wire

    g = Game.new(make_rules(), 2, seed="bench")
    while not (g.phase == 2 and len(g.attacks) >= 1 and g.bout >= 3):
        g.apply_legal(g.legal_actions()[0])
    return msg.request_msg(id=request_id, game=0, observation=g.observe(g.defender),
                           legal=[action_to_wire(a) for a in g.legal_actions()],
                           clock={"remaining_ms": 59500, "increment_ms": 500, "move_ms": None})


def pin_to_cpu(cpu: int | None) -> list[int] | None:
    """Pin this process to CPU ``cpu`` and return the CPUs it may run on; None (nothing
    done) for ``cpu`` None or where the system cannot pin."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return None
    os.sched_setaffinity(0, {cpu})
    return sorted(os.sched_getaffinity(0))


def _blocking_round_trips(argv: list[str], request: dict[str, Any], n: int, handshake: bool) -> list[float]:
    """Round trips (seconds each) from a plain blocking parent over pipes."""
    import subprocess

    from protocol import messages as msg
    from protocol.codec import FrameDecoder, encode

    from ..seats.sandbox_view import bot_environment

    # Unsandboxed (the floor is the bare pipes), but with a bot's environment all the same.
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                         env=bot_environment(None))
    assert p.stdin is not None and p.stdout is not None
    dec = FrameDecoder()

    def receive() -> dict[str, Any]:
        while True:
            m = dec.next_message()
            if m is not None:
                return m
            dec.feed(os.read(p.stdout.fileno(), 65536))  # type: ignore[union-attr]

    try:
        if handshake:
            p.stdin.write(encode(msg.hello_msg("bench")))
            receive()
        times = []
        for i in range(n):
            request["id"] = i + 1
            frame = encode(request)
            t0 = time.perf_counter()
            p.stdin.write(frame)
            receive()
            times.append(time.perf_counter() - t0)
        return times
    finally:
        p.stdin.close()
        p.wait(5)


async def time_decisions(player: Any, request: dict[str, Any], n: int) -> list[float]:
    """Seconds of each of ``n`` request/answer round trips through a started player,
    asked as the table asks every seat: ``Player.attempt``, then the awaited
    ``Player.finish`` when the attempt leaves the request open. Each request is
    ``request`` with the next id, encoded by ``encode`` within the timing (the bytes
    the table's joined frames are held to); an answer is recognised by the table's
    canonical action bytes (``requests.ACTIONS_BY_BYTES``), as a game's are."""
    from protocol.codec import encode

    from ..rules.actions import action_from_wire
    from ..seats.pipelane import Request
    from ..table.requests import ACTIONS_BY_BYTES, action_bytes

    for action in request["legal"]:
        action_bytes(action_from_wire(action))  # (registers its bytes, as a request frame does)
    times = []
    for i in range(n):
        request["id"] = i + 1
        t0 = time.perf_counter()
        ask = Request(i + 1, None, ACTIONS_BY_BYTES, encode(request))
        if player.attempt(ask) is None:
            await player.finish(ask)
        times.append(time.perf_counter() - t0)
    return times


def referee_round_trips(argv: list[str], request: dict[str, Any], n: int) -> list[float]:
    """Round trips (seconds each) through the referee's own ProcessPlayer under trio."""
    import trio

    from ..seats.players import BotSpec
    from ..seats.process import ProcessPlayer

    async def main() -> list[float]:
        player = ProcessPlayer("bench", BotSpec("command", "bench", tuple(argv)))
        async with trio.open_nursery() as nursery:
            await player.start(nursery)
            times = await time_decisions(player, request, n)
            await player.close()
            nursery.cancel_scope.cancel()
        return times

    return trio.run(main)


def bench_protocol(codec_n: int = 20000, round_trips: int = 2000, cpu: int | None = 0,
                   bot: list[str] | None = None) -> dict[str, Any]:
    """Codec speed on a typical request frame, and request/answer round trips over pipes:

    - ``floor``: a blocking Python parent and a Python child that echoes a fixed answer
      frame without decoding anything (the pipes and the framing, with an interpreter on
      each side), whatever ``bot`` is;
    - ``blocking_sdk``: a blocking Python parent and ``bot`` (default: the Python example
      random bot), which adds the bot's own decoding, choosing and encoding;
    - ``referee``: the referee's trio ProcessPlayer and the same ``bot``, each request
      asked through the seat interface a table uses (``time_decisions``: ``attempt``,
      then ``finish``), encoded and written, the answer read and recognised.

    ``programs`` names the parent and the child of each figure. ``referee`` over
    ``blocking_sdk`` is the referee's own cost with any bot. ``referee`` over ``floor``
    judges the referee only when the bot costs about what the echo child does
    (``ratio_blocking_vs_floor`` near 1, e.g. the C example bot): with the Python bot the
    bot's own work (``bot_us_over_floor``) is most of that ratio.

    Parent and children are pinned to CPU ``cpu`` (None: not pinned) so that the pipes
    hand over on one core, as a loaded tournament machine would.
    """
    import sys

    from protocol import messages as msg
    from protocol.codec import FrameDecoder, encode

    pinned = pin_to_cpu(cpu)
    request = typical_request()
    frame = encode(request)
    def codec_us(strict: bool) -> float:
        # One decoder for the whole stream, as a bot or the referee keeps one per peer.
        rounds = []
        for _ in range(5):
            dec = FrameDecoder(strict=strict)
            t0 = time.perf_counter()
            for _ in range(codec_n):
                dec.feed(encode(request))
                dec.next_message()
            rounds.append((time.perf_counter() - t0) / codec_n)
        return statistics.median(rounds) * 1e6

    sdk_us, strict_us = codec_us(False), codec_us(True)
    bot = bot or [sys.executable, str(example_bots() / "python" / "random_bot.py"), "1"]
    answer = encode(msg.action_msg(1, request["legal"][0]))
    floor = _blocking_round_trips([sys.executable, "-c", _ECHO_CHILD, answer.hex()], request,
                                  round_trips, handshake=False)
    sdk = _blocking_round_trips(bot, request, round_trips, handshake=True)
    ref = referee_round_trips(bot, request, round_trips)
    med = {k: statistics.median(v) * 1e6 for k, v in (("floor", floor), ("blocking_sdk", sdk),
                                                     ("referee", ref))}
    echo = "python echo child (answers every frame with a fixed action frame, decodes nothing)"
    return {
        "benchmark": "protocol",
        "request_frame_bytes": len(frame),
        "codec_us_per_encode_decode": round(sdk_us, 3),
        "codec_messages_per_s": round(1e6 / sdk_us, 1),
        "codec_us_per_encode_decode_strict": round(strict_us, 3),
        "round_trips": round_trips,
        "round_trip_us_median": {k: round(v, 1) for k, v in med.items()},
        "ratio_referee_vs_floor": round(med["referee"] / med["floor"], 3),
        "ratio_referee_vs_blocking_sdk": round(med["referee"] / med["blocking_sdk"], 3),
        "referee_overhead_us": round(med["referee"] - med["blocking_sdk"], 1),
        "ratio_blocking_vs_floor": round(med["blocking_sdk"] / med["floor"], 3),
        "bot_us_over_floor": round(med["blocking_sdk"] - med["floor"], 1),
        "programs": {"floor": {"parent": "blocking python parent", "child": echo},
                     "blocking_sdk": {"parent": "blocking python parent", "child": bot},
                     "referee": {"parent": "referee ProcessPlayer (trio)", "child": bot}},
        "pinned_cpus": pinned,
        "bot": bot,
        "machine": machine_info(),
    }


def example_bots() -> Path:
    """The checkout's examples/ folder (the example bots the benches play)."""
    return Path(__file__).resolve().parents[2] / "examples"  # referee/bench/ -> the checkout


# --------------------------------------------------------------------------- match / tournament


def bench_match_sandbox(games: int = 200, cpu: int | None = 0, starts: int = 20) -> dict[str, Any]:
    """``bench_match`` unsandboxed and in bubblewrap, one after the other: each run's
    numbers and the ratios bwrap/none of start-up time and time per decision."""
    runs = {mode: bench_match(games, cpu, sandbox=mode, cold_starts=starts) for mode in ("none", "bwrap")}
    keys = ("startup_ms_median", "decision_us_mean")
    return {"benchmark": "match-sandbox", "runs": runs,
            "ratio_bwrap_vs_none": {k: round(runs["bwrap"][k] / runs["none"][k], 3)
                                    if runs["none"][k] and runs["bwrap"][k] else None for k in keys},
            "cost_bwrap_minus_none": {k: round(runs["bwrap"][k] - runs["none"][k], 1)
                                      if runs["none"][k] is not None else None for k in keys}}


def _startup_ms(argv: list[str], sandbox: Any, n: int) -> list[float]:
    """Start a bot ``n`` times (spawn, handshake), closing it each time: milliseconds each."""
    import trio

    from ..seats.players import BotSpec
    from ..seats.process import ProcessPlayer

    spec = BotSpec("command", "bot", tuple(argv), " ".join(argv), named=True)

    async def main() -> list[float]:
        out = []
        async with trio.open_nursery() as nursery:
            for _ in range(n):
                player = ProcessPlayer("bot", spec, sandbox=sandbox)
                t0 = time.perf_counter()
                await player.start(nursery)
                out.append((time.perf_counter() - t0) * 1000)
                await player.close()
            nursery.cancel_scope.cancel()
        return out
    return trio.run(main)


#: ``bench match --bots NAME``: the pairs of bots a match benchmark plays with.
BOT_PAIRS = {
    "python": "the two Python example bots (greedy_bot.py, random_bot.py 1), over pipes",
    "c": "two C example bots (examples/c/bot; build it with make -C examples/c), over pipes",
    "builtin": "builtin:greedy and builtin:random, in-process (no pipes, no codec)",
}


class BenchBotsError(UserError, ValueError):
    """A ``--bots`` pair cannot be used (unknown name, the C bot not built). Says why."""

    hint = "give a --bots pair the message lists (the C bots are built with make)"


def bot_pair(name: str) -> list[list[str]] | None:
    """The argv lists of the ``BOT_PAIRS`` pair ``name`` (None for the built-ins, which
    are no programs). Raises BenchBotsError."""
    import sys

    if name == "builtin":
        return None
    if name == "python":
        return [[sys.executable, str(example_bots() / "python" / "greedy_bot.py")],
                [sys.executable, str(example_bots() / "python" / "random_bot.py"), "1"]]
    if name == "c":
        bot = example_bots() / "c" / "bot"
        if not os.access(bot, os.X_OK):
            raise BenchBotsError(f"--bots c: the C example bot {bot} is not built; run "
                                 f"make -C {bot.parent} first")
        return [[str(bot)], [str(bot)]]
    raise BenchBotsError(f"--bots {name!r}: expected one of {', '.join(BOT_PAIRS)}")


def bench_match(games: int = 200, cpu: int | None = 0, bots: list[list[str]] | None = None,
                sandbox: str = "auto", cold_starts: int = 20,
                builtin: bool = False, ponder: bool | None = None) -> dict[str, Any]:
    """A match between two bots over pipes (the Python example bots, or ``bots``: argv
    lists): games and decisions per second, the referee's own cost per decision (its CPU
    as the match summary reports it, the same measured here around the whole run, and
    its wall time not charged to the bots), the bots' CPU per decision (rusage of the
    reaped bot processes), the raw pipe floor of the same run, and how many bot
    processes were started. With ``sandbox`` (auto, bwrap, none) the bots run so;
    ``cold_starts`` more cold starts of the first bot give its start-up time (spawn to
    handshake done); the bots' mean time per decision is as the referee charges it. With ``builtin`` the match is builtin:greedy against builtin:random in-process
    (``bots``, the sandbox and the cold starts do not apply; the bots' CPU is then the
    in-process bots' deciding time). ``ponder``: run the bots with or without off-move
    freezing (None: the run's default limits). Raises SandboxError if the sandbox cannot
    be used."""
    import sys

    from protocol import messages as msg
    from protocol.codec import encode

    from ..seats import cgroups
    from ..seats.players import BotSpec
    from ..seats.sandbox import Sandbox
    from ..table.match import MatchConfig

    pinned = pin_to_cpu(cpu)
    py = sys.executable
    bots = bots or bot_pair("python")
    assert bots is not None
    if builtin:
        specs = [BotSpec("builtin", name, (name,), f"builtin:{name}") for name in ("greedy", "random")]
        box = Sandbox("none")
        startup = []
    else:
        specs = [BotSpec("command", f"bot{i}", tuple(argv), " ".join(argv), named=True)
                 for i, argv in enumerate(bots)]
        box = Sandbox(sandbox).resolve()
        startup = _startup_ms(bots[0], box, cold_starts) if cold_starts else []
    config = MatchConfig(rules=make_rules(), games=games, seed="1")
    limits = cgroups.default_limits()
    if ponder is not None:
        limits = replace(limits, ponder=ponder)
    run = _timed_match(specs, config, box.mode, limits)
    result, wall, referee_cpu, bots_cpu = run.result, run.wall, run.referee_cpu, run.bots_cpu
    if builtin:  # the bots decided inside this process: their CPU is theirs, not ours
        referee_cpu, bots_cpu = referee_cpu - result.inprocess_cpu_s, result.inprocess_cpu_s
    starts, writes = run.starts, run.freezer_writes
    summary = result.summary()
    request = typical_request()
    answer = encode(msg.action_msg(1, request["legal"][0]))
    floor = statistics.median(_blocking_round_trips([py, "-c", _ECHO_CHILD, answer.hex()], request,
                                                    1000, handshake=False)) * 1e6
    decisions = summary["decisions"]
    means = [b["mean_decision_ms"] for b in summary["bots"] if b["mean_decision_ms"] is not None]
    return {
        "benchmark": "match",
        "bots": [s.text for s in specs],
        "sandbox": summary["sandbox"],
        "startup_ms_median": round(statistics.median(startup), 2) if startup else None,
        "startup_ms_min": round(min(startup), 2) if startup else None,
        "decision_us_mean": round(1000 * sum(means) / len(means), 1) if means else None,
        "games": summary["games"],
        "wall_s": round(wall, 3),
        "games_per_s": round(summary["games"] / wall, 2),
        "decisions_per_s": round(decisions / wall, 1),
        "mean_decision_ms": [b["mean_decision_ms"] for b in summary["bots"]],
        "referee_us_per_decision": summary["overhead_us_per_decision"],
        "referee_cpu_us_per_decision": summary["referee_cpu_us_per_decision"],
        "referee_wall_us_per_decision": summary["referee_wall_us_per_decision"],
        "referee_cpu_us_per_decision_measured": round(1e6 * referee_cpu / decisions, 1) if decisions else None,
        "bots_cpu_us_per_decision": round(1e6 * bots_cpu / decisions, 1) if decisions else None,
        "raw_pipe_floor_us": round(floor, 1),
        "bot_processes_started": starts,
        "ponder": limits.ponder,
        "wall_us_per_decision": round(1e6 * wall / decisions, 2) if decisions else None,
        "freezer_writes_per_decision": round(writes / decisions, 4) if decisions else None,
        "forfeits": [b["forfeits"] for b in summary["bots"]],
        "pinned_cpus": pinned,
        "machine": machine_info(),
    }


@dataclass
class _TimedMatch:
    """One measured match: its result, wall and CPU seconds (the referee's, every thread;
    the bot processes' reaped children's), bot processes started and freezer writes."""

    result: Any
    wall: float
    referee_cpu: float
    bots_cpu: float
    starts: int
    freezer_writes: int


def _timed_match(specs: list[Any], config: Any, sandbox: str, limits: Any) -> _TimedMatch:
    """Play the match as ``durak-ref match`` does (``run_match_async``, no log), counting
    each bot process started (a bot restarted after a failure counts again)."""
    import trio

    from ..seats import cgroups
    from ..seats.process import PROCESSES_STARTED
    from ..table.runner import SeatOptions, run_match_async

    async def main() -> Any:
        return await run_match_async(specs, config, log_dir=None,
                                     options=SeatOptions(sandbox=sandbox, limits=limits))

    writes0, starts0 = cgroups.FREEZER_WRITES[0], PROCESSES_STARTED[0]
    t0, cpu0, bots0 = time.perf_counter(), time.process_time(), children_cpu()
    result = trio.run(main)
    return _TimedMatch(result, time.perf_counter() - t0, time.process_time() - cpu0,
                       children_cpu() - bots0, PROCESSES_STARTED[0] - starts0,
                       cgroups.FREEZER_WRITES[0] - writes0)


def bench_freezing(games: int = 200, cpu: int | None = 0, bots: list[list[str]] | None = None,
                   sandbox: str = "auto", rounds: int = 5) -> dict[str, Any]:
    """``bench_match`` with off-move freezing and with ``--ponder``, alternating
    (``rounds`` each, so machine noise hits both alike): the medians of each one's wall
    time per decision (the whole match's wall time over its decisions: freezing's cost
    is the referee's writes to the freezer and the bots' resumption), the referee's CPU
    per decision (less noisy on a shared machine), decisions per second and freezer
    writes per decision, and the cost of freezing as a share of a decision (wall)."""
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for _ in range(rounds):
        for ponder in (False, True):
            runs[ponder].append(bench_match(games, cpu, bots=bots, sandbox=sandbox,
                                            cold_starts=0, ponder=ponder))

    def med(ponder: bool, key: str) -> float:
        return round(statistics.median(r[key] for r in runs[ponder]), 2)

    frozen, pondering = med(False, "wall_us_per_decision"), med(True, "wall_us_per_decision")
    return {
        "benchmark": "match-freezing", "rounds": rounds, "games": games,
        "bots": runs[False][0]["bots"], "sandbox": runs[False][0]["sandbox"],
        "frozen": {"wall_us_per_decision": frozen,
                   "decisions_per_s": med(False, "decisions_per_s"),
                   "freezer_writes_per_decision": med(False, "freezer_writes_per_decision"),
                   "referee_cpu_us_per_decision": med(False, "referee_cpu_us_per_decision_measured"),
                   "rounds_wall_us_per_decision": [r["wall_us_per_decision"] for r in runs[False]]},
        "ponder": {"wall_us_per_decision": pondering,
                   "decisions_per_s": med(True, "decisions_per_s"),
                   "freezer_writes_per_decision": med(True, "freezer_writes_per_decision"),
                   "referee_cpu_us_per_decision": med(True, "referee_cpu_us_per_decision_measured"),
                   "rounds_wall_us_per_decision": [r["wall_us_per_decision"] for r in runs[True]]},
        "freezing_cost_pct": round(100 * (frozen - pondering) / pondering, 1) if pondering else None,
        "pinned_cpus": runs[False][0]["pinned_cpus"],
        "machine": machine_info(),
    }


def children_cpu() -> float:
    """User + system CPU seconds of this process's reaped children (and theirs)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tournament_bots(kind: str) -> list[Any]:
    """The three bots of a ``bench tournament`` round robin: the built-ins (in-process:
    the referee's own cost dominates) or the Python example bots (programs over pipes)."""
    import sys

    from ..league.tournament import BotEntry

    if kind == "builtin":
        return [BotEntry("greedy", "builtin:greedy"), BotEntry("random1", "builtin:random"),
                BotEntry("random2", "builtin:random")]
    py = sys.executable
    ex = example_bots() / "python"
    return [BotEntry("greedy", f"{py} {ex / 'greedy_bot.py'}"),
            BotEntry("random1", f"{py} {ex / 'random_bot.py'} 1"),
            BotEntry("random2", f"{py} {ex / 'random_bot.py'} 2")]


def _median_ms_per_game(results: list[dict[str, Any]], games: int, key: str) -> float:
    """The median over rounds of ``key`` (seconds per round) in milliseconds per game."""
    return round(1000 * statistics.median(x[key] for x in results) / games, 3)


def _play_bench_tournament(kind: str, games: int, level: int, tmp: Path, name: str) -> dict[str, Any]:
    """One timed tournament (logged and stored, as a real one is): games, wall seconds,
    games/s, CPU seconds of this process (the parent) and of its reaped children (worker
    processes and bots), the sandbox of its program bots."""
    from ..league.tournament import TournamentSettings, play_tournament
    from ..records.store import open_store

    bots = tournament_bots(kind)
    settings = TournamentSettings(bots, games=games, concurrency=level, seed="7")
    with open_store(tmp / f"{name}.sqlite") as store:
        with store.transaction():
            for b in bots:
                store.ensure_bot(b.name, b.command)
        store.create_tournament("bench", "tournament", settings.as_dict())
        t0, cpu0, children0 = time.perf_counter(), time.process_time(), children_cpu()
        progress = play_tournament(settings, store, "bench", log_dir=tmp / name)
        wall = time.perf_counter() - t0
        cpu, children = time.process_time() - cpu0, children_cpu() - children0
    return {"games": progress.done, "wall_s": wall, "games_per_s": progress.done / wall,
            "parent_cpu_s": cpu, "children_cpu_s": children, "sandbox": progress.sandbox}


def bench_tournament(games: int = 60, builtin_games: int = 2000, rounds: int = 3,
                     concurrency_levels: tuple[int, ...] = (1, 2),
                     kinds: tuple[str, ...] = ("builtin", "program")) -> dict[str, Any]:
    """Round robins of three bots at each concurrency level: the built-ins
    (``builtin_games`` games per pairing) and the Python example bots over pipes
    (``games`` per pairing), logged and stored as a real tournament is.

    Each of ``rounds`` rounds plays every kind at every level in turn (so a change in the
    machine's load touches every level alike); per kind and level it reports each
    round's games/s and their median, and ``<kind>_speedup``: the median games/s at the
    highest level over the median at the lowest. Nothing is pinned (a tournament uses
    every core); the load average before and after says how busy the machine was. CPU
    per game (medians) shows where the work went whatever the load: in this process
    (``parent_cpu_ms_per_game``: at concurrency > 1 only logging, storing and dispatch)
    and in its children (workers and program bots).
    """
    import tempfile

    levels = tuple(sorted(set(concurrency_levels)))
    per_pairing = {"builtin": builtin_games, "program": games}
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    raw: dict[str, dict[int, list[dict[str, Any]]]] = {k: {lv: [] for lv in levels} for k in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for kind in kinds:
                for level in levels:
                    raw[kind][level].append(_play_bench_tournament(
                        kind, per_pairing[kind], level, Path(tmp), f"{kind}-c{level}-r{r}"))
    out: dict[str, Any] = {"benchmark": "tournament", "rounds": rounds,
                           "concurrency_levels": list(levels), "pinned_cpus": None}
    for kind in kinds:
        runs = {}
        for level, results in raw[kind].items():
            rates = [x["games_per_s"] for x in results]
            games_played = results[0]["games"]
            per_game_ms = functools.partial(_median_ms_per_game, results, games_played)
            runs[str(level)] = {"games": games_played,
                                "wall_s": [round(x["wall_s"], 3) for x in results],
                                "games_per_s": [round(x, 2) for x in rates],
                                "games_per_s_median": round(statistics.median(rates), 2),
                                "parent_cpu_ms_per_game": per_game_ms("parent_cpu_s"),
                                "children_cpu_ms_per_game": per_game_ms("children_cpu_s")}
        base = runs[str(levels[0])]["games_per_s_median"]
        out[kind] = {"bots": [b.name for b in tournament_bots(kind)],
                     "games_per_pairing": per_pairing[kind],
                     "sandbox": raw[kind][levels[0]][0]["sandbox"], "runs": runs,
                     "speedup": {k: round(v["games_per_s_median"] / base, 3) for k, v in runs.items()}}
        out[f"{kind}_speedup"] = out[kind]["speedup"][str(levels[-1])]
    out["load_average_before"] = list(load_before) if load_before else None
    out["load_average_after"] = list(os.getloadavg()) if load_before else None
    out["machine"] = machine_info()
    return out
