"""Long stored runs: `tournament`, `sprt`, and `worker` (which plays distributed runs' games)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from ..console.progress import progress_for, status_line
from ..console.usererror import lifted
from ..league.runs import hold_run, run_target, stopping
from ..printing.jsonresult import emit_result, sprt_body, standings_body
from ..records.storedb import PgUrl
from ..rules.options import SEATS_TEXT, make_rules
from ..seats.players import BotSpecError, parse_bot_spec, unique_names
from ..table.adjudicator import parse_budget
from ..table.clock import DEFAULT_BACKSTOP, TimeControl
from ..table.match import MatchConfig
from .common import (
    bot_limits,
    check_range,
    err,
    fail,
    http_address,
    note,
    out,
    print_seed,
    reproduce_fields,
    run_seed,
    sandbox_options,
    store_target,
)
from .options import (
    BACKSTOP_HELP,
    CLOCK_KIND_HELP,
    DEFAULT_DB,
    RULES_HELP,
    SANDBOX_HELP,
    SEED_HELP,
    WEEK_S,
    AdjudicateOption,
    BackstopOption,
    BindOption,
    BotUidsOption,
    ClockKindOption,
    ClockOption,
    CpusOption,
    HttpOption,
    KeepTwinsFlag,
    MaxMemoryOption,
    MaxProcsOption,
    MoveTimeOption,
    PonderFlag,
    RecoverFlag,
    RulesOption,
    RunLogDirOption,
    SandboxOption,
    SeedOption,
    SetOption,
    db_option,
)

TournamentBotOption = Annotated[list[str] | None, typer.Option(
    "--bot", help="A bot as NAME=CMD (CMD may be builtin:NAME); repeat for each bot.",
    show_default=False)]
ConfigOption = Annotated[Path | None, typer.Option(
    "--config", help="A TOML file with bots (name, command, cwd, env), rules, time_control, format, "
    "games...: every key in docs/CONFIG.md. Command-line options override it.")]
TournamentFreshFlag = Annotated[bool, typer.Option(
    "--fresh-bots", help="Restart program bots before every game, so no bot carries anything "
    "from one game to the next (slower: one start-up per game). Without it a process still "
    "never plays two seat rotations of one deal.")]
TournamentDistributedFlag = Annotated[bool, typer.Option(
    "--distributed", help="Do not play here: queue the games in the --db PostgreSQL store "
    "for `durak-ref worker` processes on any machines, and show progress until every game "
    "is stored (see README, Several machines).")]

TournamentClockOption = Annotated[str | None, typer.Option(
    "--clock", help=CLOCK_KIND_HELP + " Default: the config's, else wall.", metavar="wall|cpu",
    show_default=False)]
TournamentBackstopOption = Annotated[float | None, typer.Option(
    help=BACKSTOP_HELP + f" Default: the config's, else {DEFAULT_BACKSTOP:g}.", show_default=False)]


def tournament(
    bot: TournamentBotOption = None,
    config: ConfigOption = None,
    format_: Annotated[str | None, typer.Option("--format", help="round-robin or gauntlet (the first bot "
                                                "against each of the others).")] = None,
    players: Annotated[int | None, typer.Option(help=f"Players per table ({SEATS_TEXT}): every combination "
                                                "of that many bots plays.")] = None,
    games: Annotated[int | None, typer.Option(help="Games per table (rounded up to whole duplicate deals).")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Games played at once.")] = None,
    no_duplicate: Annotated[bool, typer.Option(
        "--no-duplicate", help="Deal every game afresh instead of once per seat rotation.")] = False,
    fresh_bots: TournamentFreshFlag = False,
    keep_bots_across_twins: KeepTwinsFlag = False,
    seed: Annotated[str | None, typer.Option(help=SEED_HELP + " A config file's seed counts as given; "
                                             "--resume keeps the stored seed.", show_default=False)] = None,
    rules: Annotated[str | None, typer.Option("--rules", help=RULES_HELP)] = None,
    set_: SetOption = None,
    tc: Annotated[str | None, typer.Option("--tc", help="Game clock BASE+INC in seconds.")] = None,
    move_time: MoveTimeOption = None,
    clock: TournamentClockOption = None,
    backstop: TournamentBackstopOption = None,
    on_illegal: Annotated[str | None, typer.Option(help="forfeit or retry:N.")] = None,
    adjudicate: AdjudicateOption = None,
    db: Annotated[str, db_option("The result store: every game as it finishes.")] = DEFAULT_DB,
    log_dir: RunLogDirOption = None,
    resume: Annotated[str | None, typer.Option(
        help="Finish tournament ID from the store: only the games not yet stored are played.")] = None,
    sandbox: Annotated[str | None, typer.Option(
        help=SANDBOX_HELP + " Default: the config's, else auto.", show_default=False)] = None,
    bind: BindOption = None,
    recover: RecoverFlag = False,
    http: HttpOption = None,
    distributed: TournamentDistributedFlag = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the final table as JSON.")] = False,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    bot_uids: BotUidsOption = None,
    cpus: CpusOption = 1.0,
    ponder: PonderFlag = False,
) -> None:
    """Play a round robin or gauntlet with duplicate deals; rate the bots with error bars.

    Every game goes to the store (--db) as it finishes; an interrupted tournament is
    finished with --resume ID (the command is printed at the start). No bot process
    plays two seat rotations of a deal, which leaves duplicates only the host's shared
    page cache (README, Threat model); unsandboxed bots or --keep-bots-across-twins get
    a warning. With --http, a live page shows the games in play (public information
    only), the standings and the recent games.
    """
    bot_limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from ..league.tournament import register_tournament
    from ..records.store import open_store

    web, target = http_address(http), run_target(db, distributed)
    with open_store(target, check=resume is not None) as store:
        if resume is not None:
            refuse_changes("--concurrency, --db, --log-dir", [
                ("--bot", bot), ("--config", config), ("--format", format_), ("--players", players),
                ("--games", games), ("--seed", seed), ("--rules", rules), ("--set", set_), ("--tc", tc),
                ("--move-time", move_time), ("--clock", clock), ("--backstop", backstop),
                ("--on-illegal", on_illegal), ("--adjudicate", adjudicate),
                ("--no-duplicate", no_duplicate), ("--fresh-bots", fresh_bots),
                ("--keep-bots-across-twins", keep_bots_across_twins)])
            settings, tid = resumed_tournament(store, resume, concurrency, sandbox, bind), resume
        else:
            settings = tournament_settings(config, bot, set_, format_, players, games, concurrency, seed,
                                           rules, tc, move_time, on_illegal, no_duplicate, fresh_bots,
                                           sandbox, bind, adjudicate, clock, backstop, keep_bots_across_twins)
            tid = register_tournament(store, settings)
        settings.validate()
        with hold_run("tournament", store, target, tid, resumed=resume is not None, log_dir=log_dir,
                      distributed=distributed) as run:
            progress = _play_tournament(run, store, settings, fresh=resume is None, as_json=as_json,
                                        hide=[config] if config else [], recover=recover, web=web)
        data = _standings_with(store, tid, progress)
    if as_json:
        emit_result("tournament", dict(standings_body(data), **reproduce_fields(settings.seed, resume)))
        return
    _print_tournament(data)
    print_seed(settings.seed, resume)


def _standings_with(store: Any, tid: str, progress: Any) -> dict[str, Any]:
    """Tournament ``tid``'s standings, with what this run's ``progress`` saw: how bots
    ran, their stderr logs, the decisions asked and the referee's cost."""
    from ..league.standings import standings
    data = standings(store, tid)
    data.update(sandbox=progress.sandbox, duplicates=progress.duplicates,
                stderr_logs=progress.stderr_logs, decisions_this_run=progress.decisions,
                **progress.referee_cost())
    return data


def _print_tournament(data: dict[str, Any]) -> None:
    """A tournament's standings as text: warnings, the table, forfeits, the referee's cost."""
    from ..printing.report import print_warnings, referee_cost_text, standings_table, tournament_forfeits
    print_warnings(data["warnings"], out)
    out.print(standings_table(data))
    tournament_forfeits(data, out)
    if data["decisions_this_run"]:
        out.print(f"decisions asked in this run: {data['decisions_this_run']}"
                  + referee_cost_text(data), markup=False, highlight=False)
    if data["rating_error"]:
        err.print(f"durak-ref: ratings not computed: {data['rating_error']}", markup=False)


def resumed_tournament(store: Any, tid: str, concurrency: int | None, sandbox: str | None,
                       bind: list[Path] | None) -> Any:
    """Stored tournament ``tid``'s settings, with what a resume may change: how many games
    at once and how bots are confined (not what is played)."""
    from ..league.tournament import load_tournament
    settings = load_tournament(store, tid)
    if concurrency:
        settings.concurrency = concurrency
    if sandbox is not None:
        settings.sandbox = sandbox
    if bind:
        settings.bind = [*settings.bind, *sandbox_options("auto", bind)[1]]
    return settings


def refuse_changes(allowed: str, given: list[tuple[str, object]]) -> None:
    """A UserError naming each option of ``given`` (name, value) that was set, for a
    ``--resume``, which plays the stored settings (only ``allowed`` may change)."""
    named = [name for name, value in given if value]
    if named:
        fail(f"--resume plays the stored settings; {', '.join(named)} cannot change them "
             f"(only {allowed})")


def tournament_settings(config: Path | None, bot: list[str] | None, set_: list[str] | None,
                        format_: str | None, players: int | None, games: int | None,
                        concurrency: int | None, seed: str | None, rules: str | None, tc: str | None,
                        move_time: float | None, on_illegal: str | None, no_duplicate: bool,
                        fresh_bots: bool, sandbox: str | None, bind: list[Path] | None,
                        adjudicate: str | None = None, clock: str | None = None,
                        backstop: float | None = None, keep_bots_across_twins: bool = False) -> Any:
    """A new tournament's settings: the config file's, overridden by the options given."""
    from ..league.tournament import settings_from_options
    return settings_from_options(
        config, bot or [], set_ or [],
        {"format": format_, "players": players, "games": games,
         "concurrency": concurrency, "seed": None if seed is None else run_seed(seed),
         "preset": rules, "tc": tc, "move_time": move_time, "clock": clock, "backstop": backstop,
         "on_illegal": on_illegal,
         "adjudicate": adjudicate, "duplicate": False if no_duplicate else None,
         "fresh_bots": True if fresh_bots else None, "sandbox": sandbox,
         "keep_bots_across_twins": True if keep_bots_across_twins else None,
         "bind_extra": list(sandbox_options("auto", bind)[1])})


def _play_tournament(run: Any, store: Any, settings: Any, *, fresh: bool, as_json: bool,
                     hide: list[Path], recover: bool, web: tuple[str, int] | None) -> Any:
    """Play held tournament ``run`` here or by workers, with its progress bar; its Progress."""
    from ..league.tournament import play_tournament, schedule_size

    err.print(run.banner(), markup=False, highlight=False)
    with progress_for(schedule_size(settings), f"tournament {run.tid}", enabled=not as_json,
                      console=err) as advance, stopping("finished games are stored", run.resume_command):
        if run.distributed:
            from ..league.distributed import coordinate_tournament
            err.print(run.workers_line(), markup=False, highlight=False)
            return coordinate_tournament(
                settings, store, run.tid, log_dir=run.log_dir, fresh=fresh,
                on_game=lambda record, prog: advance(prog.progress_text()), on_note=note)
        return play_tournament(settings, store, run.tid, log_dir=run.log_dir, fresh=fresh, hide=hide,
                               recover=recover, on_game=lambda record, prog: advance(prog.progress_text()),
                               http=web, on_url=lambda url: err.print(f"live page: {url}", markup=False,
                                                                      highlight=False))


BotAArgument = Annotated[str | None, typer.Argument(help="The baseline bot (a spec, as for match).",
                                                   show_default=False)]
BotBArgument = Annotated[str | None, typer.Argument(help="The candidate bot: is it stronger than A?",
                                                   show_default=False)]
OpponentOption = Annotated[list[str] | None, typer.Option(
    help="Play A and B each against these opponents (repeat; the table is A or B plus "
    "them) instead of head to head.", show_default=False)]
SprtFreshFlag = Annotated[bool, typer.Option(
    "--fresh-bots", help="Restart program bots before every game, so no bot carries anything "
    "from one game to the next (slower: one start-up per game). Without it a pair's second "
    "game still gets fresh processes.")]
SprtResumeOption = Annotated[str | None, typer.Option(
    "--resume", help="Finish SPRT run ID from the store: its stored pairs count, the others are played.",
    show_default=False)]
SprtDistributedFlag = Annotated[bool, typer.Option(
    "--distributed", help="Do not play here: queue the pairs in the --db PostgreSQL store for "
    "`durak-ref worker` processes on any machines, decide from the pairs as they are stored, "
    "and tell the workers to stop once decided (see README, Several machines).")]


def sprt(
    bot_a: BotAArgument = None,
    bot_b: BotBArgument = None,
    elo0: Annotated[float, typer.Option(help="H0: B is stronger by this many Elo (logistic).")] = 0.0,
    elo1: Annotated[float, typer.Option(help="H1: B is stronger by this many Elo (logistic).")] = 10.0,
    alpha: Annotated[float, typer.Option(min=0.0001, max=0.5, help="False positive rate.")] = 0.05,
    beta: Annotated[float, typer.Option(min=0.0001, max=0.5, help="False negative rate.")] = 0.05,
    max_pairs: Annotated[int, typer.Option(min=1, help="Stop undecided after this many deal pairs.")] = 20000,
    opponent: OpponentOption = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Pairs played at once.")] = 1,
    seed: SeedOption = None,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    tc: ClockOption = None,
    move_time: MoveTimeOption = None,
    clock: ClockKindOption = "wall",
    backstop: BackstopOption = DEFAULT_BACKSTOP,
    fresh_bots: SprtFreshFlag = False,
    keep_bots_across_twins: KeepTwinsFlag = False,
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    recover: RecoverFlag = False,
    adjudicate: AdjudicateOption = None,
    db: Annotated[str, db_option("The result store: the run and every game.")] = DEFAULT_DB,
    log_dir: RunLogDirOption = None,
    resume: SprtResumeOption = None,
    distributed: SprtDistributedFlag = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the final status as JSON.")] = False,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    bot_uids: BotUidsOption = None,
    cpus: CpusOption = 1.0,
    ponder: PonderFlag = False,
) -> None:
    """A/B test: is B stronger than A? Duplicate deal pairs, pentanomial GSPRT.

    Stops as soon as the log-likelihood ratio crosses a bound. Every game goes to a log
    (--log-dir; `durak-ref replay LOG --game N` shows it) and, pair by pair, to the store
    (--db; `durak-ref verify` checks it); an interrupted run is finished with --resume ID
    (the command is printed at the start). Exit 0 when H1 is accepted (B is stronger),
    1 when H0 is accepted or the test ends undecided, 2 for unusable input (a bot that
    fails its first start-up, unless --recover).
    """
    bot_limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from ..league.abtest import load_sprt, register_sprt
    from ..records.store import open_store

    test, (mode, binds) = sprt_test(elo0, elo1, alpha, beta), sandbox_options(sandbox, bind)
    if resume is not None:
        refuse_changes("--concurrency, --sandbox, --bind, --db, --log-dir", [
            ("BOT_A", bot_a), ("BOT_B", bot_b), ("--opponent", opponent), ("--seed", seed), ("--set", set_),
            ("--tc", tc), ("--move-time", move_time), ("--elo0", elo0 != 0.0), ("--elo1", elo1 != 10.0),
            ("--alpha", alpha != 0.05), ("--beta", beta != 0.05), ("--max-pairs", max_pairs != 20000),
            ("--rules", rules != "classic"), ("--fresh-bots", fresh_bots), ("--adjudicate", adjudicate),
            ("--clock", clock != "wall"), ("--backstop", backstop != DEFAULT_BACKSTOP),
            ("--keep-bots-across-twins", keep_bots_across_twins)])
    elif bot_a is None or bot_b is None:
        fail("give the two bots, BOT_A and BOT_B (or --resume ID)")
    else:
        settings = new_sprt(bot_a, bot_b, opponent or [], rules, set_, tc, move_time, seed, test,
                            max_pairs, mode, binds, fresh_bots, adjudicate, clock, backstop,
                            keep_bots_across_twins)
    target = run_target(db, distributed)
    with open_store(target) as store:
        tid = register_sprt(store, settings) if resume is None else resume
        extra_binds: tuple[str, ...] = () if resume is None else binds
        job = load_sprt(store, tid)  # a new run as it will be resumed, one form for both
        with hold_run("sprt", store, target, tid, resumed=resume is not None, log_dir=log_dir,
                      distributed=distributed) as held:
            # How bots are confined is not what is played: a resume may change it.
            run = _play_sprt(held, store, job, concurrency=concurrency, recover=recover, as_json=as_json,
                             sandbox=job.settings.sandbox if sandbox == "auto" else mode,
                             binds=(*job.settings.bind, *extra_binds))
    status = sprt_status(run, job)
    if as_json:
        emit_result("sprt", dict(sprt_body(status), **reproduce_fields(job.config.seed, resume)))
    else:
        _print_sprt(run, status, job, f"run {tid} in {target}", resume)
    raise typer.Exit(0 if status["state"] == "accept_h1" else 1)


def sprt_status(run: Any, job: Any) -> dict[str, Any]:
    """An SPRT run's status (``SprtRun.status``) with its bots' names and commands."""
    return dict(run.status(), a={"name": job.a.name, "command": job.a.command},
                b={"name": job.b.name, "command": job.b.command},
                opponents=[{"name": e.name, "command": e.command} for e in job.opponents])


def _play_sprt(held: Any, store: Any, job: Any, *, concurrency: int, recover: bool, as_json: bool,
               sandbox: str, binds: tuple[str, ...]) -> Any:
    """Play held SPRT run ``held`` (``job``: its stored settings) here or by workers, with
    its status line; the SprtRun."""
    from ..league.abtest import run_sprt_sync

    err.print(held.banner(), markup=False, highlight=False)
    with status_line(f"sprt {held.tid}", enabled=not as_json, console=err) as update, \
            stopping("finished pairs are stored", held.resume_command):
        if held.distributed:
            from ..league.distributed import coordinate_sprt
            err.print(held.workers_line(), markup=False, highlight=False)
            return coordinate_sprt(job, store, held.tid, log_dir=held.log_dir, fresh=not held.resumed,
                                   on_pair=lambda r: update(sprt_line(r)), on_note=note)
        target = held.target
        return run_sprt_sync(job.a, job.b, job.opponents, job.config, sprt=job.sprt,
                             max_pairs=job.max_pairs, concurrency=concurrency,
                             on_pair=lambda r: update(sprt_line(r)), seed=job.config.seed,
                             sandbox=sandbox, bind=binds, fresh_bots=job.settings.fresh_bots,
                             recover=recover, hide=[target] if isinstance(target, Path) else [],
                             store=store, tid=held.tid, log_dir=held.log_dir)


def _print_sprt(run: Any, status: dict[str, Any], job: Any, where: str, resumed: str | None) -> None:
    """The SPRT's verdict as text: the decision, the Elo, the counts, each bot's
    forfeits, where the run is stored, its seed."""
    from ..printing.report import print_warnings, stderr_where
    from ..table.failfast import forfeit_line

    a, b = job.a.name, job.b.name
    print_warnings(status["warnings"], out)
    verdict = {"accept_h1": f"H1 accepted: {b} is stronger than {a}",
               "accept_h0": f"H0 accepted: {b} is not {job.sprt.elo1:g} Elo stronger than {a}",
               "continue": "undecided: the pair budget ran out"}[status["state"]]
    elo = ("" if status["elo"] is None else
           f"; Elo {status['elo']:+.1f} ± {status['elo_error95']:.1f} (95%), LOS {100 * status['los']:.1f}%"
           if math.isfinite(status["elo"]) and math.isfinite(status["elo_error95"] or 0.0) else
           "; Elo not finite (one bot scored every pair: no estimate)")
    out.print(f"{verdict} after {run.pairs} pairs ({run.games} games); LLR {status['llr']:.2f} "
              f"in [{status['lower']:.2f}, {status['upper']:.2f}]{elo}", markup=False, highlight=False)
    out.print(f"pentanomial counts (B's pair score 0, 0.5, 1, 1.5, 2): {status['counts']}",
              markup=False, highlight=False)
    for name, row in status["bots"].items():
        out.print(forfeit_line(name, row["games"], row["forfeits"], stderr_where(run.stderr_logs.get(name))),
                  markup=False, highlight=False)
    out.print(where + (f", log {run.log_path}" if run.log_path else ""), markup=False, highlight=False)
    print_seed(job.config.seed, resumed)


def sprt_test(elo0: float, elo1: float, alpha: float, beta: float) -> Any:
    """The test the options ask for, checked (a UserError naming a bad one)."""
    from ..scoring.sprt import Sprt

    for value, option in ((elo0, "--elo0"), (elo1, "--elo1")):
        check_range(value, option, -2000, 2000)
    for value, option in ((alpha, "--alpha"), (beta, "--beta")):
        check_range(value, option, 0.0001, 0.5)
    return Sprt(elo0, elo1, alpha, beta)


def new_sprt(bot_a: str, bot_b: str, opponent: list[str], rules: str, set_: list[str] | None,
             tc: str | None, move_time: float | None, seed: str | None, test: Any, max_pairs: int,
             sandbox: str, binds: tuple[str, ...], fresh_bots: bool,
             adjudicate: str | None = None, clock: str = "wall",
             backstop: float = DEFAULT_BACKSTOP, keep_bots_across_twins: bool = False) -> dict[str, Any]:
    """A new SPRT run's settings as stored: its bots (A, B, the opponents; named A-...,
    B-...), the match config, the test and how the bots run."""
    from ..league.abtest import stored_settings
    from ..league.tournament import BotEntry, check_bot_reuse

    table_rules = make_rules(rules, set_ or [])
    specs = [parse_bot_spec(x) for x in (bot_a, bot_b, *opponent)]
    table_rules.check_table(len(specs) - 1 if opponent else 2)
    if any(x.kind == "tcp" for x in specs):
        raise BotSpecError("sprt starts its bots itself: give command lines or builtin:NAME, not tcp:NAME")
    check_bot_reuse(fresh_bots, keep_bots_across_twins)
    config = MatchConfig(rules=table_rules, seed=run_seed(seed),
                         tc=TimeControl.parse(tc, move_time, clock=clock, backstop=backstop),
                         adjudicate=parse_budget(adjudicate), keep_bots_across_twins=keep_bots_across_twins)
    names = unique_names([f"A-{specs[0].name}", f"B-{specs[1].name}"] + [x.name for x in specs[2:]])
    entries = [BotEntry(name, spec.text) for name, spec in zip(names, specs, strict=True)]
    return stored_settings(entries[0], entries[1], entries[2:], config, test, max_pairs, config.seed,
                           sandbox, binds, fresh_bots)


def sprt_line(run: Any) -> str:
    """An SPRT run's status line: pairs, games, LLR in its bounds, the Elo so far."""
    st = run.status()
    elo = "" if st["elo"] is None else f"  Elo {st['elo']:+.1f} ± {st['elo_error95']:.1f}"
    return (f"pairs {run.pairs}  games {run.games}  LLR {st['llr']:+.2f} "
            f"[{st['lower']:.2f}, {st['upper']:.2f}]{elo}")


def worker(
    db: Annotated[str, db_option("The PostgreSQL store the coordinator queued the games in.")] = DEFAULT_DB,
    concurrency: Annotated[int, typer.Option(min=1, help="Games played at once on this machine "
                                             "(one referee process each).")] = 1,
    tournament_id: Annotated[str | None, typer.Option(
        "--tournament", help="Claim only this run's games (default: any running run's).",
        show_default=False)] = None,
    exit_when_idle: Annotated[bool, typer.Option(
        "--exit-when-idle", help="Exit once no running run has a game left to store (default: "
        "wait for new runs until Ctrl-C).")] = False,
    lease: Annotated[float, typer.Option(
        min=0.1, help="Seconds a claimed game stays this worker's without a heartbeat (renewed "
        "every third of it); a dead worker's games are claimed again after it.")] = 60.0,
    poll: Annotated[float, typer.Option(min=0.01, help="Seconds between looks at an empty queue.")] = 1.0,
    log_dir: Annotated[Path, typer.Option(help="Where the bots' stderr logs go.")] = Path("logs"),
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    bot_uids: BotUidsOption = None,
    cpus: CpusOption = 1.0,
    ponder: PonderFlag = False,
) -> None:
    """Play queued games of distributed runs (`tournament ... --distributed`) on this machine.

    Claims one game per slot from the shared PostgreSQL store, plays it with the bots the
    run names (resolved and sandboxed here, as a local tournament would), and stores it
    with its log record in one transaction. A bot that cannot start here is reported once
    and that run's games are left to other workers. Exit 0 after --exit-when-idle (or 130
    on Ctrl-C: games in flight are claimed again by others after their lease).
    """
    bot_limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from ..console.interrupt import run_interruptible
    from ..league.distributed import WorkerOptions, run_worker
    from ..records.store import open_store

    check_range(lease, "--lease", 0.1, WEEK_S)
    check_range(poll, "--poll", 0.01, 3600)
    target = store_target(db)
    if not isinstance(target, PgUrl):
        fail(f"a worker needs the PostgreSQL store its coordinator uses (--db "
             f"postgresql://USER@HOST:PORT/DB), not the file {target}")
    options = WorkerOptions(concurrency=concurrency, tournament=tournament_id,
                            exit_when_idle=exit_when_idle, lease_s=lease, poll_s=poll, log_dir=log_dir)
    with open_store(target) as store:
        if tournament_id is not None:
            store.tournament(tournament_id)
        err.print(f"worker {options.name} on {target}", markup=False, highlight=False)
        report = lambda text: err.print(f"durak-ref: {text}", markup=False, highlight=False)  # noqa: E731
        with stopping("its unfinished games return to the queue when their leases run out"):
            with lifted(KeyboardInterrupt):
                summary = run_interruptible(lambda: run_worker(store, options, report))
    if as_json:
        emit_result("worker", summary.as_dict())
        return
    out.print(f"worker {summary.worker}: {summary.stored} games stored, {summary.dropped} dropped "
              f"(stored by another worker first, or their run ended)", markup=False, highlight=False)
    for tid, why in summary.refused.items():
        out.print(f"  not played: run {tid}: {why}", markup=False, highlight=False)
