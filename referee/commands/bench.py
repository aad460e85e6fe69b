"""`bench ...`: measuring the referee (figures to compare within one run, not verdicts)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from ..printing.jsonresult import emit_result
from ..printing.jsonresult import result as json_result
from ..records.storedb import PgUrl
from ..rules.options import MAX_SEATS, MIN_SEATS, make_rules
from ..table.clock import DEFAULT_BACKSTOP, TimeControl
from .common import (
    check_range,
    err,
    fail,
    out,
    print_seed,
    reproduce_fields,
    run_seed,
    sandbox_options,
    store_target,
)
from .options import (
    CLOCK_KIND_HELP,
    SANDBOX_HELP,
    BackstopOption,
    BotUidsOption,
    BuiltinGamesOption,
    CpuOption,
    JsonFlag,
    MoveTimeOption,
    ReportJsonFlag,
    RoundsOption,
    RulesOption,
    SeedOption,
)


def engine(
    games: Annotated[int, typer.Option(min=1, help="Games per round.")] = 2000,
    rounds: Annotated[int, typer.Option(min=1, help="Rounds; the median is reported.")] = 5,
    players: Annotated[int, typer.Option(min=MIN_SEATS, max=MAX_SEATS, help="Seats at the table.")] = 2,
    rules: RulesOption = "classic",
    as_json: JsonFlag = False,
) -> None:
    """Random games in-process: games and actions per second (median of rounds), with
    the checked apply (as for a bot's answer) and the unchecked one side by side."""
    from ..bench.bench import bench_engine

    make_rules(rules).check_table(players)
    result = bench_engine(games=games, repeats=rounds, players=players, preset=rules)
    if as_json:
        emit_result("bench engine", result)
        return
    for label in ("unchecked", "checked"):
        r = result[label]
        out.print(f"engine, {label} apply: {r['games_per_s']:.0f} games/s, {r['actions_per_s']:.0f} "
                  f"actions/s ({r['us_per_action']:.2f} µs/action)")
    out.print(f"checked/unchecked: {result['ratio_checked_vs_unchecked']:.3f}x; "
              f"{result['actions_per_game']:.1f} actions/game; median of {rounds} rounds of {games} "
              f"random {players}-player games each, rules {rules}, deck {result['deck']}; one core")
    _print_native()


def env(
    games: Annotated[int, typer.Option(min=1, help="Games per round and loop.")] = 300,
    rounds: Annotated[int, typer.Option(min=1, help="Rounds of each loop, alternating; medians reported.")] = 5,
    players: Annotated[int, typer.Option(min=MIN_SEATS, max=MAX_SEATS, help="Seats at the table (agents).")] = 2,
    rules: RulesOption = "classic",
    cpu: Annotated[int, typer.Option(help="Pin this process to this CPU (-1: do not pin).")] = 0,
    as_json: JsonFlag = False,
) -> None:
    """Steps per second of the PettingZoo env (referee.env, docs/ENV.md) with random masked
    actions, observation tensors included: the raw env, the env with PettingZoo's guards,
    and the bare engine on the same deals (median of alternating rounds; one core).
    Needs the env extra: pip install -e '.[env]'."""
    from ..bench.bench_env import KINDS, bench_env

    make_rules(rules).check_table(players)
    result = bench_env(games, rounds, players, rules, None if cpu < 0 else cpu)
    if as_json:
        emit_result("bench env", result)
        return
    for kind in KINDS:
        r = result[kind]
        out.print(f"{kind:>8}: {r['steps_per_s_median']} steps/s ({r['us_per_step']} µs/step; rounds "
                  f"{', '.join(map(str, r['steps_per_s']))})", markup=False, highlight=False)
    out.print(f"raw env {result['raw_env_share_of_engine']:.3f} and guarded env "
              f"{result['env_share_of_engine']:.3f} of the bare engine's speed; "
              f"{result['steps_per_game']} steps/game; {rounds} rounds of {games} random "
              f"{players}-player games, rules {rules}, deck {result['deck']}; pinned to "
              f"{result['pinned'] or 'no CPU'}", markup=False, highlight=False)
    _print_native()


def solver(
    games: Annotated[int, typer.Option("--games", "-n", min=1, help="Seeded two-seat games.")] = 100,
    budget_ms: Annotated[float, typer.Option(min=0.1, max=600_000, help="The solver's budget per "
                                             "game, in milliseconds (as --adjudicate 100ms).")] = 100.0,
    play: Annotated[str, typer.Option(help="How the games reach their endgame: greedy (both "
                                      "seats greedy) or random.")] = "greedy",
    seed: Annotated[int, typer.Option(help="Seeds the deals (and random play).")] = 1,
    rules: RulesOption = "classic",
    as_json: JsonFlag = False,
) -> None:
    """The endgame solver: positions per second, and the share of two-seat games it
    decides within the budget once the talon is empty, in one search at that moment and
    as --adjudicate does it (a slice after every decision). One core; figures depend on
    the machine's speed."""
    from ..bench.bench_solver import PLAYS, bench_solver
    from ..console.progress import progress_for

    if play not in PLAYS:
        fail(f"--play {play!r}: one of {', '.join(PLAYS)}")
    make_rules(rules)
    with progress_for(games, "bench solver", enabled=not as_json, console=err) as advance:
        r = bench_solver(games, budget_ms, seed, play, rules, on_game=lambda n: advance(""))
    if as_json:
        emit_result("bench solver", r)
        return

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    out.print(f"solver: {r['positions_per_s']} positions/s; of {r['endgames']} endgames (median "
              f"{r['cards_in_play_median']} cards in play) decided within {budget_ms:g} ms at talon "
              f"empty: {r['decided_at_talon_empty']} ({pct(r['share_decided_at_talon_empty'])}; "
              f"median {r['decided_ms_median']} ms, max {r['decided_ms_max']} ms); adjudicated "
              f"with slices after each decision: {r['adjudicated']} ({pct(r['share_adjudicated'])}); "
              f"{play} play, rules {rules}, seed {seed}", markup=False, highlight=False)
    _print_native()


def _print_native() -> None:
    """Which hot modules ran compiled: a benchmark's figures depend on it."""
    from ..native.loader import describe, status
    out.print(describe(status()), markup=False, highlight=False)


def protocol(
    codec_n: Annotated[int, typer.Option(min=100, help="Encode+decode repetitions per round.")] = 20000,
    round_trips: Annotated[int, typer.Option(min=10, help="Request/answer round trips per setup.")] = 2000,
    cpu: CpuOption = 0,
    bot: Annotated[str | None, typer.Option(
        "--bot", help="The bot command line for the round trips (default: the Python example "
        "random bot), e.g. --bot examples/c/bot.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Codec speed on a typical request, and round trips over pipes: referee vs floor."""
    import shutil

    from ..bench.bench import bench_protocol

    argv = None
    if bot is not None:
        argv = bot_argv(bot)
        if shutil.which(argv[0]) is None:
            fail(f"--bot: cannot find the program {argv[0]!r} (not on PATH, or not executable)")
    result = bench_protocol(codec_n, round_trips, None if cpu < 0 else cpu, bot=argv)
    if as_json:
        emit_result("bench protocol", result)
        return
    rt = result["round_trip_us_median"]
    out.print(f"codec: {result['codec_us_per_encode_decode']:.2f} µs per encode+decode of a "
              f"{result['request_frame_bytes']}-byte request as a bot decodes it "
              f"({result['codec_us_per_encode_decode_strict']:.2f} µs with the referee's strict checks)")
    out.print(f"bot: {shlex.join(result['bot'])}")
    out.print(f"round trip (median of {round_trips}, pinned to {result['pinned_cpus']}): "
              f"raw echo floor (Python parent + Python echo child) {rt['floor']:.1f} µs, "
              f"blocking Python parent + the bot {rt['blocking_sdk']:.1f} µs, "
              f"referee + the bot {rt['referee']:.1f} µs")
    out.print(f"ratios: referee/blocking parent {result['ratio_referee_vs_blocking_sdk']:.2f}, "
              f"referee/raw floor {result['ratio_referee_vs_floor']:.2f}; referee overhead "
              f"{result['referee_overhead_us']:.1f} µs per decision")
    out.print(f"the bot itself: blocking/floor {result['ratio_blocking_vs_floor']:.2f} "
              f"({result['bot_us_over_floor']:+.1f} µs); referee/floor judges the referee only "
              f"when this is near 1 (a fast bot, e.g. examples/c/bot)")


def match(
    games: Annotated[int, typer.Option(min=1, help="Games in the match.")] = 200,
    cpu: CpuOption = 0,
    sandbox: Annotated[str, typer.Option(
        help="How the bots run: auto, bwrap, none, or both (none, then bwrap, and the ratio "
        "of start-up and per-decision times).")] = "auto",
    bot_uids: BotUidsOption = None,
    starts: Annotated[int, typer.Option(min=0, help="Extra cold starts of a bot, to time its start-up.")] = 20,
    bot: Annotated[list[str] | None, typer.Option(
        "--bot", help="A bot command line (give it twice; default: --bots python), "
        "e.g. --bot examples/c/bot --bot 'python3 mybot.py'.")] = None,
    bots: Annotated[str, typer.Option(
        "--bots", help="Which pair of bots plays: python (the two Python example bots), "
        "c (two C example bots; make -C examples/c first) or builtin (builtin:greedy and "
        "builtin:random in-process: the referee's match loop without pipes).")] = "python",
    freezing: Annotated[int, typer.Option(
        min=0, help="Also play this many rounds each with off-move freezing and with --ponder, "
        "alternating, and print the medians side by side (0: not).")] = 0,
    as_json: JsonFlag = False,
) -> None:
    """Two bots over pipes: games/s, decisions/s, the referee's CPU and wall time per
    decision, the bots' CPU per decision, a bot's start-up time and its time per decision
    (sandboxed or not); with --freezing, what freezing the bot not on move costs."""
    from ..bench.bench import bench_freezing, bench_match, bench_match_sandbox, bot_pair

    pin = None if cpu < 0 else cpu
    argvs = bot_pair(bots)
    if bot and bots != "python":
        fail("give either --bot (twice) or --bots, not both")
    if bots == "builtin" and sandbox == "both":
        fail("--bots builtin: built-in bots run in-process; --sandbox both does not apply")
    if bot:
        if len(bot) != 2:
            fail(f"--bot: give exactly two bot command lines (got {len(bot)})")
        argvs = [bot_argv(b) for b in bot]
    if sandbox == "both":
        both = bench_match_sandbox(games, pin, starts)
        if as_json:
            emit_result("bench match", both)
        else:
            _print_sandbox_both(both, starts)
        return
    r = bench_match(games, pin, bots=argvs, sandbox=sandbox, cold_starts=starts,
                    builtin=bots == "builtin" and not bot)
    compared = (bench_freezing(games, pin, bots=argvs, sandbox=sandbox, rounds=freezing)
                if freezing and bots != "builtin" else None)
    if as_json:
        emit_result("bench match", r if compared is None else dict(r, freezing=compared))
        return
    out.print(f"bots {' vs '.join(r['bots'])}; sandbox {r['sandbox']}: bot start-up "
              f"{r['startup_ms_median']} ms (median), {r['decision_us_mean']} µs per decision "
              f"(round trip included)", markup=False, highlight=False)
    out.print(f"match: {r['games']} games in {r['wall_s']:.2f} s: {r['games_per_s']:.1f} games/s, "
              f"{r['decisions_per_s']:.0f} decisions/s (pinned to {r['pinned_cpus']})")
    out.print(f"referee per decision: {r['referee_cpu_us_per_decision']} µs CPU as reported "
              f"({r['referee_cpu_us_per_decision_measured']} µs measured around the whole run), "
              f"{r['referee_wall_us_per_decision']} µs wall not charged to the bots; bots' CPU per "
              f"decision: {r['bots_cpu_us_per_decision']} µs", markup=False, highlight=False)
    out.print(f"raw pipe round trip floor: {r['raw_pipe_floor_us']} µs; bot processes started: "
              f"{r['bot_processes_started']} for {r['games']} games")
    if compared is not None:
        _print_freezing(compared, freezing)
    _print_native()


def bot_argv(text: str) -> list[str]:
    """A --bot command line split as a shell would; a UserError if it cannot be, or is empty."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        fail(f"--bot: cannot split the command line: {exc}")
    if not argv:
        fail("--bot: the command line is empty")
    return argv


def _print_sandbox_both(both: dict[str, Any], starts: int) -> None:
    """``bench match --sandbox both``: each mode's figures, then bwrap's over none's."""
    for mode, run in both["runs"].items():
        out.print(f"{mode}: start-up {run['startup_ms_median']} ms (median of {starts}), "
                  f"{run['decision_us_mean']} µs per decision, "
                  f"{run['games_per_s']:.1f} games/s", markup=False, highlight=False)
    ratio = both["ratio_bwrap_vs_none"]
    out.print(f"bwrap/none: start-up x{ratio['startup_ms_median']}, per decision "
              f"x{ratio['decision_us_mean']}", markup=False, highlight=False)


def _print_freezing(compared: dict[str, Any], rounds: int) -> None:
    """``bench match --freezing N``: off-move freezing and --ponder side by side."""
    for name, text in (("frozen", "off-move frozen"), ("ponder", "--ponder")):
        c = compared[name]
        out.print(f"{text:>16}: {c['wall_us_per_decision']} µs per decision (wall, median of "
                  f"{rounds}), referee CPU {c['referee_cpu_us_per_decision']} µs, "
                  f"{c['decisions_per_s']:.0f} decisions/s, "
                  f"{c['freezer_writes_per_decision']} freezer writes per decision",
                  markup=False, highlight=False)
    out.print(f"freezing costs {compared['freezing_cost_pct']}% of a decision",
              markup=False, highlight=False)


def tournament(
    games: Annotated[int, typer.Option(min=2, help="Games per pairing with the Python example bots (programs).")] = 60,
    builtin_games: BuiltinGamesOption = 2000,
    rounds: RoundsOption = 3,
    as_json: ReportJsonFlag = False,
) -> None:
    """Round robins of three built-in bots and of three Python example bots at concurrency
    1 and 2, logged and stored: games/s per round, medians, and the speed-up of 2 over 1
    (builtin_speedup, program_speedup)."""
    from ..bench.bench import bench_tournament

    r = bench_tournament(games, builtin_games, rounds)
    if as_json:
        emit_result("bench tournament", r)
        return
    for kind in ("builtin", "program"):
        for level, run in r[kind]["runs"].items():
            out.print(f"{kind} concurrency {level}: {_rates_text(run, r[kind]['speedup'][level])}; "
                      f"CPU per game: this process "
                      f"{run['parent_cpu_ms_per_game']} ms, workers and bots "
                      f"{run['children_cpu_ms_per_game']} ms", markup=False, highlight=False)
    out.print(f"{_load_text(r)}; not pinned", markup=False, highlight=False)


def _rates_text(run: dict[str, Any], speedup: float) -> str:
    """A benchmark's figures at one level: games, median games/s, each round's, speed-up."""
    return (f"{run['games']} games, median {run['games_per_s_median']:.1f} games/s (rounds: "
            f"{', '.join(f'{x:.1f}' for x in run['games_per_s'])}) (x{speedup:.2f})")


def _load_text(r: dict[str, Any]) -> str:
    return f"load average before {r['load_average_before']}, after {r['load_average_after']}"


def _maybe(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def distributed(
    db: Annotated[str | None, typer.Option(
        "--db", help="The PostgreSQL server to measure: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB "
        "(the benchmark's runs stay in it, finished). Default: a private server made for the "
        "benchmark with the machine's initdb/postgres (a child that ends with the benchmark) and "
        "removed afterwards. $DURAK_DB is not read: a benchmark never writes to a store by accident.", metavar="DB", show_default=False)] = None,
    builtin_games: BuiltinGamesOption = 200,
    programs: Annotated[bool, typer.Option(
        "--programs", help="Also measure the Python example bots (programs over pipes).")] = False,
    games: Annotated[int, typer.Option(min=2, help="Games per pairing with the Python example bots "
                                       "(with --programs).")] = 20,
    max_workers: Annotated[int, typer.Option(min=1, max=16, help="Measure 1, 2, ... this many "
                                             "worker processes.")] = 3,
    rounds: RoundsOption = 3,
    as_json: ReportJsonFlag = False,
) -> None:
    """Games/s of 1, 2, 3 `durak-ref worker` processes sharing one PostgreSQL store.

    Each run queues a round robin of three built-in bots as `tournament --distributed`
    does and times that many workers (--exit-when-idle, one game at a time each) from
    their start to the last one's exit; every game must be stored exactly once. Reports
    each round's games/s, the medians, and the speed-up over one worker; the same for
    the steady rate (while every worker plays: start-up and the last game's tail left
    out, as in a long run). On a machine
    with C cores, more than C workers cannot go faster (each worker and its referee
    want a core).
    """
    from ..bench.bench_distributed import BenchDistributedError, bench_distributed
    from ..records.pgserver import PgServerError

    target = None if db is None else store_target(db)
    if target is not None and not isinstance(target, PgUrl):
        fail(f"bench distributed measures a PostgreSQL server (--db postgresql://USER@HOST:PORT/DB), "
             f"not the file {target}")

    def heard(kind: str, workers: int, round_: int, run: dict[str, Any]) -> None:
        err.print(f"round {round_ + 1}, {kind}, {workers} worker(s): {run['games']} games in "
                  f"{run['wall_s']:.2f} s, {run['games_per_s']:.1f} games/s", markup=False, highlight=False)

    try:
        r = bench_distributed(target, builtin_games, games, rounds, max_workers,
                              ("builtin", "program") if programs else ("builtin",), on_run=heard)
    except PgServerError as exc:
        fail(f"bench distributed: no --db given, and no private server could be made: {exc}",
             2 if exc.unavailable else 1)
    except BenchDistributedError as exc:
        fail(f"bench distributed: {exc}", 1)
    if as_json:
        emit_result("bench distributed", r)
        return
    out.print(f"server: {r['server']}; workers play one game at a time each", markup=False, highlight=False)
    for kind in ("builtin", "program"):
        for n, run in r.get(kind, {}).get("runs", {}).items():
            out.print(f"{kind}, {n} worker(s): {_rates_text(run, r[kind]['speedup'][n])}; "
                      f"steady median {_maybe(run['steady_games_per_s_median'])} "
                      f"games/s (x{_maybe(r[kind]['steady_speedup'][n])}); workers' CPU per game "
                      f"{run['workers_cpu_ms_per_game']} ms", markup=False, highlight=False)
    out.print(f"{_load_text(r)}; {r['machine']['cpus']} CPUs, not pinned", markup=False, highlight=False)


def soak(
    minutes: Annotated[float, typer.Option(min=0.01, help="How long to play, in minutes.")] = 5.0,
    move_time: Annotated[float, typer.Option("--move-time", min=0.01, max=60.0,
                                             help="Seconds per decision (short: the hanging bot "
                                                  "costs one each time).")] = 0.25,
    sandbox: Annotated[str, typer.Option(help="auto | bwrap | none, for the program bots.")] = "auto",
    bot_uids: BotUidsOption = None,
    games_memory: Annotated[bool, typer.Option(
        "--games-memory", help="Instead of the soak: peak RSS of a builtin match at 2,000 and "
                               "20,000 games, each in a fresh process (target: within 15%).")] = False,
    as_json: JsonFlag = False,
    json_file: Annotated[Path | None, typer.Option(
        "--json-file", help="Also write the --json report to this file (the text goes to stdout).",
        show_default=False)] = None,
) -> None:
    """A tournament at concurrency 2 with honest and hostile bots (crashing, hanging,
    garbage bytes, stderr flood) for --minutes: games, forfeits by kind, the referee's
    RSS and open fds (parent and workers) at the start, after warm-up and at the end,
    growth after warm-up (judged against 5%) and from the start, leftover processes,
    internal errors. Exit 1 if any internal error or leftover process."""
    from ..bench.soak import memory_figure, run_soak

    if games_memory:
        try:
            mem = memory_figure()
        except RuntimeError as exc:
            fail(f"bench soak --games-memory: {exc}", 3)
        if as_json:
            emit_result("bench soak", mem)
            return
        for games, run in mem["runs"].items():
            out.print(f"builtin match, {int(games):,} games: peak RSS {run['peak_rss_kib'] / 1024:.1f} MiB",
                      markup=False, highlight=False)
        out.print(f"growth {mem['growth_pct']:+.1f}% (target within {mem['target_pct']:g}%)",
                  markup=False, highlight=False)
        return
    if sandbox not in ("auto", "bwrap", "none"):
        fail(f"--sandbox {sandbox!r}: expected auto, bwrap or none")
    r = run_soak(minutes, move_time=move_time, sandbox=sandbox)
    if json_file is not None:
        try:
            from ..console.jsonout import dumps
            json_file.write_text(dumps(json_result("bench soak", r), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            fail(f"--json-file {json_file}: cannot write: {exc.strerror or exc}")
    if as_json:
        emit_result("bench soak", r)
    else:
        _print_soak(r)
    if r["internal_errors"] or r["leftover_processes"]:
        raise typer.Exit(1)
    if r["interrupted"]:
        err.print("durak-ref: soak interrupted; the figures above cover the games played")
        raise typer.Exit(130)


def _print_soak(r: dict[str, Any]) -> None:
    """The soak's report as text: games, forfeits, samples, growth, leftovers, errors."""
    out.print(f"soak: {r['games']} games in {r['wall_s']:.0f} s ({r['tournaments']} tournament(s), "
              f"concurrency {r['concurrency']}, move time {r['move_time_s']:g} s)",
              markup=False, highlight=False)
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(r["forfeits"].items())) or "none"
    out.print(f"forfeits by kind: {kinds}", markup=False, highlight=False)
    for label in ("start", "warm", "end"):
        s = r[label]
        if s is None:
            out.print(f"{label}: no sample (run too short)", markup=False)
            continue
        out.print(f"{label} (t={s['at_s']:g} s, game {s['games']}): parent RSS "
                  f"{s['parent_rss_kib'] / 1024:.1f} MiB, {s['parent_fds']} fds; {s['workers']} "
                  f"workers RSS {s['workers_rss_kib'] / 1024:.1f} MiB, {s['workers_fds']} fds",
                  markup=False, highlight=False)

    def growths(g: dict[str, float | None]) -> str:
        return ", ".join(f"{k} {v:+.2f}%" if v is not None else f"{k} n/a" for k, v in g.items())
    if r["growth_pct"] is not None:
        worst = max((v for k, v in r["growth_pct"].items() if v is not None and k != "workers_fds"),
                    default=0.0)
        verdict = "within" if worst < r["target_growth_pct"] else "ABOVE"
        out.print(f"growth after warm-up ({r['warmup_s']:g} s): {growths(r['growth_pct'])} "
                  f"({verdict} the {r['target_growth_pct']:g}% target for RSS and the parent's fds; the "
                  f"workers' fds follow the bots alive at the sample)", markup=False, highlight=False)
    if r["growth_from_start_pct"] is not None:
        out.print(f"growth from the start (caches filling included): {growths(r['growth_from_start_pct'])}",
                  markup=False, highlight=False)
    out.print(f"leftover processes: {len(r['leftover_processes'])}"
              + ("" if r["leftover_tracking"] else " (not tracked on this system)"),
              markup=False, highlight=False)
    for p in r["leftover_processes"]:
        out.print(f"  {p['pid']} {p['state']} {p['cmdline']}", markup=False, highlight=False)
    out.print(f"internal errors: {r['internal_errors']}", markup=False, highlight=False)
    for e in r["errors"]:
        out.print(e, markup=False, highlight=False)


def _measured(command: str, as_json: bool, measure: Any, *args: Any) -> dict[str, Any] | None:
    """``measure(*args)``'s result, or None when printed already as --json; a machine that
    cannot run it (OSError, RuntimeError: a server that did not start) fails with exit 1."""
    try:
        result: dict[str, Any] = measure(*args)
    except (OSError, RuntimeError) as exc:
        fail(f"{command}: {exc}", 1)
    if as_json:
        emit_result(command, result)
        return None
    return result


def tcp(
    round_trips: Annotated[int, typer.Option(min=10, help="Request/answer round trips per transport.")] = 2000,
    idle: Annotated[int, typer.Option(min=0, help="Idle authenticated connections for the memory "
                                      "figure (0: skip it).")] = 1000,
    as_json: JsonFlag = False,
) -> None:
    """Round trip per decision over loopback TCP next to pipes, and the referee's memory
    with idle authenticated connections."""
    from ..bench.bench_tcp import bench_tcp

    result = _measured("bench tcp", as_json, bench_tcp, round_trips, idle)
    if result is None:
        return
    rt = result["round_trip_us_median"]
    out.print(f"round trip (median of {round_trips}, same bot and request): pipes {rt['pipes']:.1f} µs, "
              f"loopback TCP {rt['tcp']:.1f} µs; TCP/pipes {result['ratio_tcp_vs_pipes']:.2f} "
              f"({result['tcp_overhead_us']:+.1f} µs)", markup=False, highlight=False)
    if "idle" in result:
        mem = result["idle"]
        before, after = mem["rss_kb"]["before"], mem["rss_kb"]["after"]
        if before is None or after is None:
            out.print("memory: VmRSS is not available on this system", markup=False)
        else:
            out.print(f"memory with {mem['idle_still_connected']} idle authenticated connections "
                      f"(pinged every {mem['ping_interval_s']:g} s): RSS {before / 1024:.1f} -> "
                      f"{after / 1024:.1f} MiB, {mem['rss_kb_per_idle_connection']:.1f} kB per "
                      f"connection", markup=False, highlight=False)


def strength(
    games: Annotated[int, typer.Option(
        min=1, help="Games per table, rounded up to whole deals (one game per seat rotation).")] = 40,
    players: Annotated[int, typer.Option(
        min=MIN_SEATS, max=MAX_SEATS, help="Seats per table; every combination of that many bots plays.")] = 2,
    bot: Annotated[list[str] | None, typer.Option(
        "--bot", help="Add a bot to the scale, NAME=CMD or NAME=builtin:...; repeatable.",
        show_default=False)] = None,
    only: Annotated[str | None, typer.Option(
        help="Only these ladder bots, comma-separated (random, gentle, greedy, ismcts30, "
        "ismcts150, ismcts600, expert).", show_default=False)] = None,
    rules: RulesOption = "classic",
    seed: SeedOption = None,
    move_time: MoveTimeOption = None,
    clock: Annotated[str, typer.Option(
        "--clock", help=CLOCK_KIND_HELP + " Here cpu by default: the ratings and forfeits do "
        "not depend on the machine's load.", metavar="wall|cpu")] = "cpu",
    backstop: BackstopOption = DEFAULT_BACKSTOP,
    sandbox: Annotated[str, typer.Option(help=SANDBOX_HELP)] = "auto",
    bot_uids: BotUidsOption = None,
    as_json: JsonFlag = False,
) -> None:
    """How strong the built-in bots are: random, gentle, greedy, ismcts at 30, 150 and 600
    iterations and expert (fixed budgets, so the figures do not depend on the machine's
    speed) play every table of --players of them on the same duplicate deals; prints
    their ratings (maximum-likelihood fit, greedy = 0, 95% bars) and each bot's CPU ms per
    decision. --bot adds your bot to the scale. Progress on stderr. Long: with the whole
    ladder at two players, the expert's tables take most of the time (about 37 ms of CPU
    per expert decision)."""
    from ..bench.strength import bench_strength, ladder_specs, table_count
    from ..console.progress import progress_for
    from ..table.match import MatchConfig
    from ..table.runner import SeatOptions

    table_rules = make_rules(rules)
    specs = ladder_specs(bot or [], None if only is None else
                         [n.strip() for n in only.split(",") if n.strip()])
    table_rules.check_table(players)
    mode, binds = sandbox_options(sandbox, None)
    config = MatchConfig(rules=table_rules, games=games, seed=run_seed(seed),
                         tc=TimeControl.parse(None, move_time, clock=clock, backstop=backstop))
    per_table = -(-games // players) * players
    with progress_for(table_count(len(specs), players) * per_table, "bench strength") as advance:
        result = bench_strength(specs, config, players, SeatOptions(sandbox=mode, binds=binds),
                                on_game=advance)
    result.update(reproduce_fields(config.seed))
    if as_json:
        emit_result("bench strength", result)
        return

    def fig(value: Any, form: str) -> str:
        return "-" if value is None else format(value, form)

    out.print(f"{'bot':<14} {'rating':>8} {'±95%':>7} {'games':>6} {'durak%':>7} "
              f"{'CPU ms/dec':>10} {'wall ms/dec':>11}", markup=False, highlight=False)
    for row in result["standings"]:
        rate = None if row["durak_rate"] is None else 100 * row["durak_rate"]
        out.print(f"{row['name']:<14} {fig(row['elo'], '+.0f'):>8} {fig(row['elo_error95'], '.0f'):>7} "
                  f"{row['games']:>6} {fig(rate, '.1f'):>7} {fig(row['cpu_ms_per_decision'], '.3f'):>10} "
                  f"{fig(row['mean_decision_ms'], '.3f'):>11}", markup=False, highlight=False)
    if result["rating_error"]:
        err.print(f"durak-ref: no ratings: {result['rating_error']}", markup=False, highlight=False)
    out.print(f"ratings: maximum-likelihood fit of {result['games']} games, {result['anchor']} = 0, "
              f"± the 95% half-width of each bot's difference to it; {result['tables']} tables of "
              f"{players}, {result['deals_per_table']} duplicate deals each, rules {rules}, "
              f"{config.tc.describe()}; {result['seconds']} s", markup=False, highlight=False)
    forfeits = {row["name"]: row["forfeits"] for row in result["standings"] if row["forfeits"]}
    out.print("forfeits: " + ("; ".join(f"{name} {', '.join(f'{k} {n}' for k, n in kinds.items())}"
                                        for name, kinds in forfeits.items()) or "none"),
              markup=False, highlight=False)
    print_seed(config.seed)


def loop(
    seconds: Annotated[float, typer.Option(help="Seconds of each stretch (idle, then the lobby "
                                           "full), 2 to 30 (what serve's probe keeps).")] = 10.0,
    tables: Annotated[int, typer.Option(help="Expert tables the visitor keeps open (1 to 3, the "
                                        "lobby's tables per address).")] = 3,
    as_json: JsonFlag = False,
) -> None:
    """The serve's event-loop lateness idle and with a lobby full of expert tables.

    Starts a real `serve --http`, reads its loop probe (GET /api/loop: how late a 10 ms
    sleep wakes) over an idle stretch, then while one visitor keeps its tables of "you +
    3 x builtin:expert" in play, answering every move at once; prints p50, p99 and max of
    both side by side. Target: p99 under 10 ms with the lobby full."""
    from ..bench.bench_loop import bench_loop
    from ..web.loopprobe import KEEP_S

    check_range(seconds, "--seconds", 2, KEEP_S)
    check_range(tables, "--tables", 1, 3)
    result = _measured("bench loop", as_json, bench_loop, seconds, tables)
    if result is None:
        return
    idle, busy = result["idle"], result["lobby_full"]
    out.print(f"event-loop lateness of serve (a {idle['interval_ms']:g} ms sleep), "
              f"{seconds:g} s each:", markup=False)
    out.print(f"{'':8} {'idle':>10} {'lobby full':>12}", markup=False)
    for key in ("p50_ms", "p99_ms", "max_ms", "samples"):
        out.print(f"{key:8} {_figure(idle[key]):>10} {_figure(busy[key]):>12}", markup=False)
    out.print(f"lobby: {tables} table(s) of {' + '.join(result['table_seats'])}; the visitor made "
              f"{result['visitor_moves']} moves, finished {result['visitor_games']} games",
              markup=False, highlight=False)
    for error in result["visitor_errors"]:
        err.print(f"visitor: {error}", markup=False, highlight=False)


def _figure(value: Any) -> str:
    return "-" if value is None else f"{value:g}"
