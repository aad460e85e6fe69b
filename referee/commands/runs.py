"""Long stored runs: `tournament`, `sprt`, and `worker` (which plays distributed runs' games)."""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from ..console.jsonout import emit_json
from ..console.progress import progress_for
from ..console.usererror import lifted
from ..records.storedb import PgUrl
from ..rules.options import RulesError, make_rules
from ..seats.players import BotSpecError, BotStartError, parse_bot_spec, unique_names
from ..table.clock import TimeControl, TimeControlError
from ..table.adjudicator import parse_budget
from ..table.match import MatchConfig
from .common import (
    bot_limits, check_range, err, fail, http_address, note, out, print_seed, reproduce_fields,
    run_seed, sandbox_options, store_target,
)
from .options import (
    AdjudicateOption, BindOption, ClockOption, CpusOption, DEFAULT_DB, HttpOption, MaxMemoryOption, MaxProcsOption,
    MoveTimeOption, PonderFlag, RULES_HELP, RecoverFlag, RulesOption, RunLogDirOption, SANDBOX_HELP,
    SEED_HELP, SandboxOption, SeedOption, SetOption, WEEK_S, db_option,
)


def tournament(
    bot: Annotated[list[str] | None, typer.Option(
        "--bot", help="A bot as NAME=CMD (CMD may be builtin:NAME); repeat for each bot.",
        show_default=False)] = None,
    config: Annotated[Path | None, typer.Option(
        help="A TOML file with bots (name, command, cwd, env), rules, time_control, format, "
        "games...: every key in docs/CONFIG.md. Command-line options override it.")] = None,
    format_: Annotated[str | None, typer.Option("--format", help="round-robin or gauntlet (the first bot "
                                                "against each of the others).")] = None,
    players: Annotated[int | None, typer.Option(help="Players per table (2..6): every combination "
                                                "of that many bots plays.")] = None,
    games: Annotated[int | None, typer.Option(help="Games per table (rounded up to whole duplicate deals).")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Games played at once.")] = None,
    no_duplicate: Annotated[bool, typer.Option(
        "--no-duplicate", help="Deal every game afresh instead of once per seat rotation.")] = False,
    fresh_bots: Annotated[bool, typer.Option(
        "--fresh-bots", help="Restart program bots before every game, so no bot can remember "
        "a deal it saw in another seat rotation (slower: one start-up per game).")] = False,
    seed: Annotated[str | None, typer.Option(help=SEED_HELP + " A config file's seed counts as given; "
                                             "--resume keeps the stored seed.", show_default=False)] = None,
    rules: Annotated[str | None, typer.Option("--rules", help=RULES_HELP)] = None,
    set_: SetOption = None,
    tc: Annotated[str | None, typer.Option("--tc", help="Game clock BASE+INC in seconds.")] = None,
    move_time: MoveTimeOption = None,
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
    distributed: Annotated[bool, typer.Option(
        "--distributed", help="Do not play here: queue the games in the --db PostgreSQL store "
        "for `durak-ref worker` processes on any machines, and show progress until every game "
        "is stored (see README, Several machines).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the final table as JSON.")] = False,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    cpus: CpusOption = 1.0,
    ponder: PonderFlag = False,
) -> None:
    """Play a round robin or gauntlet with duplicate deals; rate the bots with error bars.

    Every game goes to the store (--db) as it finishes; an interrupted tournament is
    finished with --resume ID (the command is printed at the start). Duplicate deals
    are sound only if no bot can carry the first rotation to the second: bots kept
    running (the default) or unsandboxed get a warning; sandboxed --fresh-bots leave
    only the host's shared page cache (README, Threat model). With --http, a live page shows the
    games in play (public information only), the standings and the recent games.
    """
    bot_limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from ..seats.sandbox import SandboxError
    from ..records.matchlog import LogError
    from ..records.store import StoreError, open_store
    from ..league.tournament import (
        TournamentError, TournamentSettings, play_tournament, register_tournament, run_log_dir,
        schedule_size, settings_from_options,
    )
    from ..league.standings import standings
    from ..web.live import LiveError

    web = http_address(http)

    target = store_target(db)
    if distributed and not isinstance(target, PgUrl):
        fail(f"--distributed needs a PostgreSQL store every worker can reach (--db "
             f"postgresql://USER@HOST:PORT/DB), not the file {target}")
    try:
        store = open_store(target, check=resume is not None)
    except StoreError as exc:
        fail(str(exc))
    with store:
        try:
            if resume is not None:
                given = [name for name, value in (
                    ("--bot", bot), ("--config", config), ("--format", format_), ("--players", players),
                    ("--games", games), ("--seed", seed), ("--rules", rules), ("--set", set_),
                    ("--tc", tc), ("--move-time", move_time), ("--on-illegal", on_illegal),
                    ("--adjudicate", adjudicate))
                    if value] + (["--no-duplicate"] if no_duplicate else []) + (
                    ["--fresh-bots"] if fresh_bots else [])
                if given:
                    raise TournamentError(f"--resume plays the stored settings; {', '.join(given)} "
                                          f"cannot change them (only --concurrency, --db, --log-dir)")
                _, saved, status = store.tournament(resume)
                try:
                    settings = TournamentSettings.from_dict(saved)
                    settings.validate()
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    raise StoreError(f"{target}: damaged store: table tournaments, row ({resume!r}): "
                                     f"the settings cannot be used ({type(exc).__name__}: {exc}); "
                                     f"restore it from a backup") from None
                if concurrency:
                    settings.concurrency = concurrency
                if sandbox is not None:  # how bots are confined, not what is played
                    settings.sandbox = sandbox
                if bind:
                    settings.bind = [*settings.bind, *sandbox_options("auto", bind)[1]]
                tid, fresh = resume, False
            else:
                settings = settings_from_options(
                    config, bot or [], set_ or [],
                    {"format": format_, "players": players, "games": games,
                     "concurrency": concurrency, "seed": None if seed is None else run_seed(seed),
                     "preset": rules, "tc": tc,
                     "move_time": move_time, "on_illegal": on_illegal, "adjudicate": adjudicate,
                     "duplicate": False if no_duplicate else None,
                     "fresh_bots": True if fresh_bots else None, "sandbox": sandbox,
                     "bind_extra": list(sandbox_options("auto", bind)[1])})
                tid, fresh = register_tournament(store, settings), True
            settings.validate()
        except (TournamentError, StoreError) as exc:
            fail(str(exc))
        refuse_if_queued(store, tid, distributed, "tournament")
        log_dir = run_log_dir(log_dir, store, resume)
        resume_cmd = resume_command("tournament", tid, target, log_dir, distributed)
        lock = lock_run(target, store, tid)
        err.print(f"tournament {tid}; if interrupted, resume with: {resume_cmd}", markup=False,
                  highlight=False)
        with lock, progress_for(schedule_size(settings), f"tournament {tid}", enabled=not as_json,
                                 console=err) as advance:
            try:
                if distributed:
                    from ..league.distributed import coordinate_tournament
                    err.print(f"queued for workers; start one per machine with: durak-ref worker "
                              f"--db {target} --tournament {tid}", markup=False, highlight=False)
                    progress = coordinate_tournament(
                        settings, store, tid, log_dir=log_dir, fresh=fresh,
                        on_game=lambda record, prog: advance(prog.progress_text()), on_note=note)
                else:
                    with lifted(LogError, StoreError, SandboxError, BotStartError):
                        progress = play_tournament(settings, store, tid, log_dir=log_dir, fresh=fresh,
                                                   hide=[config] if config else [], recover=recover,
                                                   on_game=lambda record, prog: advance(prog.progress_text()),
                                                   http=web, on_url=lambda url: err.print(
                                                       f"live page: {url}", markup=False, highlight=False))
            except KeyboardInterrupt:
                err.print(f"durak-ref: interrupted; finished games are stored. Resume with: {resume_cmd}",
                          markup=False, highlight=False)
                raise typer.Exit(130) from None
            except BotStartError as exc:
                fail(f"{exc}. Finished games are stored; resume with {resume_cmd} once it is fixed "
                     f"(add --recover to play on regardless)")
            except (LogError, SandboxError, StoreError) as exc:
                fail(f"{exc}. Finished games are stored; resume with {resume_cmd}")
            except LiveError as exc:
                fail(f"{exc}. No game was played; play it with: {resume_cmd} --http HOST:PORT")
        data = standings(store, tid)
        data.update(sandbox=progress.sandbox, duplicates=progress.duplicates,
                    stderr_logs=progress.stderr_logs, decisions_this_run=progress.decisions,
                    **progress.referee_cost())
    if as_json:
        emit_json(dict(data, **reproduce_fields(settings.seed, resume)))
        return
    from ..printing.report import print_warnings, referee_cost_text, standings_table, tournament_forfeits
    print_warnings(data["warnings"], out)
    out.print(standings_table(data))
    tournament_forfeits(data, out)
    if data["decisions_this_run"]:
        out.print(f"decisions asked in this run: {data['decisions_this_run']}"
                  + referee_cost_text(data), markup=False, highlight=False)
    if data["rating_error"]:
        err.print(f"durak-ref: ratings not computed: {data['rating_error']}", markup=False)
    print_seed(settings.seed, resume)


def refuse_if_queued(store: Any, tid: str, distributed: bool, command: str) -> None:
    """Exit 2 if run ``tid`` is queued for workers but this run would play it here."""
    if not distributed and store.path is None:
        from ..league.distributed import is_queued
        if is_queued(store, tid):
            fail(f"{command} {tid} was queued for workers: resume it with --resume {tid} "
                 f"--distributed (played here, its games would race theirs)")


def lock_run(db: Path | PgUrl, store: Any, tid: str, **wording: str) -> Any:
    """Hold tournament ``tid`` (an sprt run, the ladder) for this run (see
    referee/records/storelock.py; a PostgreSQL store's lock is on the server; ``wording``: its
    message's ``what`` and ``then``); exit 2 if another run is playing it."""
    from ..records.storelock import LockedError, hold_tournament
    try:
        if isinstance(db, PgUrl):
            from ..league.distributed import hold_tournament_on_server
            return hold_tournament_on_server(store, tid)
        return hold_tournament(db, tid, **wording)
    except LockedError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot lock {wording.get('what', f'tournament {tid}')} beside {db}: {exc.strerror or exc}")


def resume_command(command: str, tid: str, target: object, log_dir: Path, distributed: bool) -> str:
    """The command that finishes an interrupted run: its store, and its log dir unless
    that is the default (a resume finds it in the store anyway, but the printed command
    should not depend on that)."""
    from ..league.tournament import DEFAULT_LOG_DIR
    words = ["durak-ref", command, "--resume", tid, "--db", str(target)]
    if log_dir != DEFAULT_LOG_DIR:
        words += ["--log-dir", str(log_dir)]
    return shlex.join(words) + (" --distributed" if distributed else "")


def sprt(
    bot_a: Annotated[str | None, typer.Argument(help="The baseline bot (a spec, as for match).",
                                                show_default=False)] = None,
    bot_b: Annotated[str | None, typer.Argument(help="The candidate bot: is it stronger than A?",
                                                show_default=False)] = None,
    elo0: Annotated[float, typer.Option(help="H0: B is stronger by this many Elo (logistic).")] = 0.0,
    elo1: Annotated[float, typer.Option(help="H1: B is stronger by this many Elo (logistic).")] = 10.0,
    alpha: Annotated[float, typer.Option(min=0.0001, max=0.5, help="False positive rate.")] = 0.05,
    beta: Annotated[float, typer.Option(min=0.0001, max=0.5, help="False negative rate.")] = 0.05,
    max_pairs: Annotated[int, typer.Option(min=1, help="Stop undecided after this many deal pairs.")] = 20000,
    opponent: Annotated[list[str] | None, typer.Option(
        help="Play A and B each against these opponents (repeat; the table is A or B plus "
        "them) instead of head to head.",
        show_default=False)] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Pairs played at once.")] = 1,
    seed: SeedOption = None,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    tc: ClockOption = None,
    move_time: MoveTimeOption = None,
    fresh_bots: Annotated[bool, typer.Option(
        "--fresh-bots", help="Restart program bots before every game, so no bot can remember "
        "the first game of a deal pair (slower: one start-up per game).")] = False,
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    recover: RecoverFlag = False,
    adjudicate: AdjudicateOption = None,
    db: Annotated[str, db_option("The result store: the run and every game.")] = DEFAULT_DB,
    log_dir: RunLogDirOption = None,
    resume: Annotated[str | None, typer.Option(
        help="Finish SPRT run ID from the store: its stored pairs count, the others are played.",
        show_default=False)] = None,
    distributed: Annotated[bool, typer.Option(
        "--distributed", help="Do not play here: queue the pairs in the --db PostgreSQL store for "
        "`durak-ref worker` processes on any machines, decide from the pairs as they are stored, "
        "and tell the workers to stop once decided (see README, Several machines).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the final status as JSON.")] = False,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
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
    from ..league.abtest import load_sprt, register_sprt, run_sprt_sync, stored_settings
    from ..records.matchlog import LogError
    from ..console.progress import status_line
    from ..seats.sandbox import SandboxError
    from ..scoring.sprt import Sprt
    from ..records.store import StoreError, open_store
    from ..league.tournament import BotEntry, TournamentError, run_log_dir

    for value, option in ((elo0, "--elo0"), (elo1, "--elo1")):
        check_range(value, option, -2000, 2000)
    for value, option in ((alpha, "--alpha"), (beta, "--beta")):
        check_range(value, option, 0.0001, 0.5)
    mode, binds = sandbox_options(sandbox, bind)
    if resume is not None:
        given = [name for name, value in (
            ("BOT_A", bot_a), ("BOT_B", bot_b), ("--opponent", opponent), ("--seed", seed),
            ("--set", set_), ("--tc", tc), ("--move-time", move_time),
            ("--adjudicate", adjudicate)) if value] + [
            name for name, value, default in (
                ("--elo0", elo0, 0.0), ("--elo1", elo1, 10.0), ("--alpha", alpha, 0.05),
                ("--beta", beta, 0.05), ("--max-pairs", max_pairs, 20000), ("--rules", rules, "classic"),
                ("--fresh-bots", fresh_bots, False)) if value != default]
        if given:
            fail(f"--resume plays the stored settings; {', '.join(given)} cannot change them "
                 f"(only --concurrency, --sandbox, --bind, --db, --log-dir)")
    elif bot_a is None or bot_b is None:
        fail("give the two bots, BOT_A and BOT_B (or --resume ID)")
    else:
        try:
            table_rules = make_rules(rules, set_ or [])
            specs = [parse_bot_spec(x) for x in (bot_a, bot_b, *(opponent or []))]
            table_rules.check_table(len(specs) - 1 if opponent else 2)
            if any(x.kind == "tcp" for x in specs):
                raise BotSpecError("sprt starts its bots itself: give command lines or builtin:NAME, "
                                   "not tcp:NAME")
            config = MatchConfig(rules=table_rules, tc=TimeControl.parse(tc, move_time), seed=run_seed(seed),
                                 adjudicate=parse_budget(adjudicate))
            test = Sprt(elo0, elo1, alpha, beta)
        except (RulesError, BotSpecError, TimeControlError, ValueError) as exc:
            fail(str(exc))
        names = unique_names([f"A-{specs[0].name}", f"B-{specs[1].name}"] + [x.name for x in specs[2:]])
        entries = [BotEntry(name, spec.text) for name, spec in zip(names, specs)]
    target = store_target(db)
    if distributed and not isinstance(target, PgUrl):
        fail(f"--distributed needs a PostgreSQL store every worker can reach (--db "
             f"postgresql://USER@HOST:PORT/DB), not the file {target}")
    try:
        store = open_store(target)
    except StoreError as exc:
        fail(str(exc))
    with store:
        if resume is not None:
            try:
                job = load_sprt(store, resume)
            except (StoreError, TournamentError) as exc:
                fail(str(exc))
            entries = [job.a, job.b, *job.opponents]
            config, test, max_pairs = job.config, job.sprt, job.max_pairs
            elo1 = test.elo1
            fresh_bots = job.settings.fresh_bots
            if sandbox == "auto":  # how bots are confined, not what is played
                mode = job.settings.sandbox
            binds = (*job.settings.bind, *binds)
            tid = resume
        else:
            try:
                tid = register_sprt(store, stored_settings(
                    entries[0], entries[1], entries[2:], config, test, max_pairs, config.seed, mode,
                    binds, fresh_bots))
            except StoreError as exc:
                fail(str(exc))
        names = [e.name for e in entries]
        refuse_if_queued(store, tid, distributed, "sprt")
        log_dir = run_log_dir(log_dir, store, resume)
        resume_cmd = resume_command("sprt", tid, target, log_dir, distributed)
        lock = lock_run(target, store, tid, what=f"sprt run {tid}")  # two --resume ID at once
        err.print(f"sprt {tid}; if interrupted, resume with: {resume_cmd}", markup=False,
                  highlight=False)

        def line(run: Any) -> str:
            st = run.status()
            elo = "" if st["elo"] is None else f"  Elo {st['elo']:+.1f} ± {st['elo_error95']:.1f}"
            return (f"pairs {run.pairs}  games {run.games}  LLR {st['llr']:+.2f} "
                    f"[{st['lower']:.2f}, {st['upper']:.2f}]{elo}")

        with lock, status_line(f"sprt {tid}", enabled=not as_json, console=err) as update:
            try:
                if distributed:
                    from ..league.distributed import coordinate_sprt
                    err.print(f"queued for workers; start one per machine with: durak-ref worker "
                              f"--db {target} --tournament {tid}", markup=False, highlight=False)
                    run = coordinate_sprt(load_sprt(store, tid), store, tid, log_dir=log_dir,
                                          fresh=resume is None, on_pair=lambda r: update(line(r)),
                                          on_note=note)
                else:
                    with lifted(LogError, StoreError, SandboxError, BotStartError):
                        run = run_sprt_sync(entries[0], entries[1], entries[2:], config, sprt=test,
                                            max_pairs=max_pairs, concurrency=concurrency,
                                            on_pair=lambda r: update(line(r)), seed=config.seed,
                                            sandbox=mode, bind=binds, fresh_bots=fresh_bots,
                                            recover=recover,
                                            hide=[target] if isinstance(target, Path) else [],
                                            store=store, tid=tid, log_dir=log_dir)
            except (BotStartError, SandboxError, LogError, TournamentError) as exc:
                fail(f"{exc}; resume with {resume_cmd} once it is fixed")
            except StoreError as exc:
                fail(str(exc))
            except KeyboardInterrupt:
                err.print(f"durak-ref: interrupted; finished pairs are stored. Resume with: {resume_cmd}",
                          markup=False, highlight=False)
                raise typer.Exit(130) from None
    status = run.status()
    status.update(a={"name": entries[0].name, "command": entries[0].command},
                  b={"name": entries[1].name, "command": entries[1].command},
                  opponents=[{"name": e.name, "command": e.command} for e in entries[2:]])
    if as_json:
        emit_json(dict(status, **reproduce_fields(config.seed, resume)))
    else:
        from ..printing.report import print_warnings
        print_warnings(status["warnings"], out)
        verdict = {"accept_h1": f"H1 accepted: {names[1]} is stronger than {names[0]}",
                   "accept_h0": f"H0 accepted: {names[1]} is not {elo1:g} Elo stronger than {names[0]}",
                   "continue": "undecided: the pair budget ran out"}[status["state"]]
        elo = ("" if status["elo"] is None else
               f"; Elo {status['elo']:+.1f} ± {status['elo_error95']:.1f} (95%), LOS {100 * status['los']:.1f}%"
               if math.isfinite(status["elo"]) and math.isfinite(status["elo_error95"] or 0.0) else
               "; Elo not finite (one bot scored every pair: no estimate)")
        out.print(f"{verdict} after {run.pairs} pairs ({run.games} games); LLR {status['llr']:.2f} "
                  f"in [{status['lower']:.2f}, {status['upper']:.2f}]{elo}", markup=False, highlight=False)
        out.print(f"pentanomial counts (B's pair score 0, 0.5, 1, 1.5, 2): {status['counts']}",
                  markup=False, highlight=False)
        from ..table.failfast import forfeit_line
        from ..printing.report import stderr_where
        for name, row in status["bots"].items():
            out.print(forfeit_line(name, row["games"], row["forfeits"], stderr_where(run.stderr_logs.get(name))),
                      markup=False, highlight=False)
        where = f"run {tid} in {target}" + (f", log {run.log_path}" if run.log_path else "")
        out.print(where, markup=False, highlight=False)
        print_seed(config.seed, tid if resume else None)
    raise typer.Exit(0 if status["state"] == "accept_h1" else 1)


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
    from ..league.distributed import WorkerOptions, run_worker
    from ..console.interrupt import run_interruptible
    from ..records.store import StoreError, open_store

    check_range(lease, "--lease", 0.1, WEEK_S)
    check_range(poll, "--poll", 0.01, 3600)
    target = store_target(db)
    if not isinstance(target, PgUrl):
        fail(f"a worker needs the PostgreSQL store its coordinator uses (--db "
             f"postgresql://USER@HOST:PORT/DB), not the file {target}")
    options = WorkerOptions(concurrency=concurrency, tournament=tournament_id,
                            exit_when_idle=exit_when_idle, lease_s=lease, poll_s=poll, log_dir=log_dir)
    try:
        store = open_store(target)
    except StoreError as exc:
        fail(str(exc))
    with store:
        if tournament_id is not None:
            try:
                store.tournament(tournament_id)
            except StoreError as exc:
                fail(str(exc))
        err.print(f"worker {options.name} on {target}", markup=False, highlight=False)
        report = lambda text: err.print(f"durak-ref: {text}", markup=False, highlight=False)  # noqa: E731
        try:
            with lifted(KeyboardInterrupt, StoreError):
                summary = run_interruptible(lambda: run_worker(store, options, report))
        except StoreError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            err.print("durak-ref: worker interrupted; its unfinished games return to the queue when "
                      "their leases run out", markup=False, highlight=False)
            raise typer.Exit(130) from None
    if as_json:
        emit_json(summary.as_dict())
        return
    out.print(f"worker {summary.worker}: {summary.stored} games stored, {summary.dropped} dropped "
              f"(stored by another worker first, or their run ended)", markup=False, highlight=False)
    for tid, why in summary.refused.items():
        out.print(f"  not played: run {tid}: {why}", markup=False, highlight=False)
