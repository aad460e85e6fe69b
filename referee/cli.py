"""The ``durak-ref`` command line: parse, call, print, map errors to exit codes.

Exit codes: 0 success; 1 the job ran but failed its check; 2 the user's input was
unusable (bad option, bot spec, file); 3 an internal error (a bug in durak-ref); 130
interrupted (Ctrl-C, or SIGTERM for the long jobs: see referee/console/interrupt.py).
"""

from __future__ import annotations

import math
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from .console.printable import TerminalConsole

from . import __version__
from .table.clock import DEFAULT_MOVE_TIME, TimeControl, TimeControlError
from .table.match import MatchConfig, OnIllegalError, parse_on_illegal
from .seats.players import BUILTINS, BotSpecError, BotStartError, parse_bot_spec, unique_names
from .console.progress import progress_for
from .records.storedb import PgUrl, TargetError, parse_target
from .console.usererror import lifted
from .console.jsonout import emit_json
from .rules.options import OPTIONS, PRESETS, RulesError, make_rules

app = typer.Typer(
    name="durak-ref",
    help="Referee, protocol server and tournament runner for Durak bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: paragraphs reflowed to the terminal's width and one column of option
    # help as wide as it can be (rich's boxed panels leave ragged, narrow text at 80).
    rich_markup_mode=None,
)
bench_app = typer.Typer(help="Measure speed (figures to compare within one run, not verdicts).",
                        no_args_is_help=True, rich_markup_mode=None)
app.add_typer(bench_app, name="bench")
ladder_app = typer.Typer(help="A standing ladder of bots with incremental Elo, kept in the store.",
                         no_args_is_help=True, rich_markup_mode=None)
app.add_typer(ladder_app, name="ladder")


def _print_version(value: bool) -> None:
    if value:
        version(as_json=False)
        raise typer.Exit(0)


@app.callback()
def _top(version_: Annotated[bool, typer.Option(
        "--version", help="Print the durak-ref and protocol versions and exit.", is_eager=True,
        callback=_print_version)] = False) -> None:
    """Referee, protocol server and tournament runner for Durak bots."""

# Progress bars draw on ``err`` too, so that a line printed while one is live (a note,
# the Ctrl-C message) goes above the bar instead of onto the bar's line.
out = TerminalConsole(soft_wrap=True)
err = TerminalConsole(stderr=True, soft_wrap=True)

_SET_HELP = ("Override one table rule, as name=value; repeatable. Options: "
             + ", ".join(f"{o.name} ({o.allowed})" for o in OPTIONS)
             + ". See `durak-ref rules`.")
_RULES_HELP = f"Rules preset: {', '.join(PRESETS)}."
_SEED_HELP = ("The seed that keys every deal (1 to 128 visible characters): give the one "
              "printed at the end of a run to deal the same decks again. Default: a secret "
              "random seed, printed (with the command that reproduces the run) when it ends.")
_SANDBOX_HELP = ("How bot programs run. auto: in a bubblewrap sandbox when bwrap works here, else "
                 "unsandboxed with a warning; bwrap: sandboxed or exit 2; none: unsandboxed (a "
                 "warning). Sandboxed, a bot sees a read-only filesystem without the logs, store "
                 "and config, a private /tmp, no network and none of the referee's processes.")
_BIND_HELP = "A file or directory sandboxed bots may read, e.g. a bot's data (repeat)."


_RECOVER_HELP = ("Play on when a bot program fails its first start-up (missing script, exits at "
                 "once, bad hello, no hello in time): its games become forfeits. Without it the "
                 "run stops with exit 2, naming the bot, its command and its stderr.")


def _limits(max_memory: int | None, max_procs: int, cpus: float, ponder: bool) -> Any:
    """The resource walls of each bot (referee/seats/cgroups.py) from the options, made
    the run's default."""
    from .seats.cgroups import MEMORY_MB, Limits, set_default_limits

    limits = Limits(max_memory or MEMORY_MB, max_procs, cpus, ponder)
    set_default_limits(limits)  # every sandbox policy this run makes
    return limits


def _sandbox_options(mode: str, bind: list[Path] | None) -> tuple[str, tuple[str, ...]]:
    """--sandbox and --bind checked (exit 2 if unusable): (mode, absolute bind paths)."""
    from .seats.sandbox import Sandbox, SandboxError

    binds = tuple(str(p.resolve()) for p in bind or [])
    try:
        Sandbox(mode, binds).check()
    except SandboxError as exc:
        fail(str(exc))
    return mode, binds
_BOTS_HELP = ("Bots, one per seat (2 to 6): builtin:NAME (" + ", ".join(BUILTINS)
              + "; parameters after a second colon: builtin:ismcts:ms=40 or "
              "builtin:ismcts:iterations=200,c=0.7), or a command line such as \"python3 examples/python/greedy_bot.py\", "
              "optionally named: alice=\"./mybot --fast\".")
_MOVE_TIME_HELP = (f"Limit for every single decision, in seconds (> 0). Default: "
                   f"{DEFAULT_MOVE_TIME:g} s when there is no game clock (--tc), so no bot can "
                   f"hang the run.")


def _pairs(items: list[str], option: str, form: str) -> list[tuple[str, str]]:
    """``NAME=VALUE`` items of a repeated option; exits 2 naming a malformed one."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value:
            fail(f"{option} {item!r}: expected {form}")
        out.append((name.strip(), value))
    return out


#: Upper bounds of the resource limits: far above any machine, low enough for setrlimit.
MAX_MEMORY_MB = 1 << 24  # 16 TiB
MAX_CPU_S = 366 * 24 * 3600  # a year
WEEK_S = 7 * 24 * 3600


_RECONNECT_HELP = ("For TCP bots: seconds a game waits, paused and with the bot's clock stopped, for "
                   "a bot whose connection dropped while it was to decide; it reconnects with its "
                   "token and gets game_start and the open request again. 0 (default): a drop is a "
                   "disconnect forfeit at once. After the grace it is one as well.")


def _range(value: float | None, option: str, low: float, high: float, *, low_open: bool = False) -> None:
    """Exit 2 unless ``value`` (if given) is a finite number in [low, high] ((low, high]
    with ``low_open``): typer's min/max let nan and inf through."""
    import math
    if value is None:
        return
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        fail(f"{option} {value:g}: must be a number {'>' if low_open else '>='} {low:g} and "
             f"<= {high:g}")


DEFAULT_DB = "logs/durak.sqlite"
_DB_FORMS = ("A file path (SQLite), or postgresql://USER[:PASSWORD]@HOST[:PORT]/DB for a "
             "PostgreSQL server several machines share; default: $DURAK_DB if set.")


def _db_option(help: str) -> Any:
    """The --db option of every command with a store (env DURAK_DB)."""
    return typer.Option("--db", help=f"{help} {_DB_FORMS}", envvar="DURAK_DB", metavar="DB")


def _db(text: str) -> Path | PgUrl:
    """A --db value as a store location; exit 2 for a malformed URL."""
    try:
        return parse_target(text)
    except TargetError as exc:
        fail(str(exc))


def fail(message: str, code: int = 2) -> NoReturn:
    """One clear line on stderr, then exit (2: the user's input was unusable)."""
    err.print(f"durak-ref: error: {message}", highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(code)


def _seed(value: str | None) -> str:
    """The run's seed: the user's --seed, checked (exit 2 if unusable), or a secret one."""
    from .table.seeds import SeedError, seed_or_new
    try:
        return seed_or_new(value)
    except SeedError as exc:
        fail(f"--seed: {exc}")


def _reproduce(seed: str, resumed: str | None = None) -> dict[str, str | None]:
    """This command's ``seed`` and ``reproduce`` --json entries (table.seeds.seed_fields)."""
    from .table.seeds import seed_fields
    return seed_fields(seed, sys.argv[1:], resumed)


def _resume_command(command: str, tid: str, target: object, log_dir: Path, distributed: bool) -> str:
    """The command that finishes an interrupted run: its store, and its log dir unless
    that is the default (a resume finds it in the store anyway, but the printed command
    should not depend on that)."""
    import shlex
    from .league.tournament import DEFAULT_LOG_DIR
    words = ["durak-ref", command, "--resume", tid, "--db", str(target)]
    if log_dir != DEFAULT_LOG_DIR:
        words += ["--log-dir", str(log_dir)]
    return shlex.join(words) + (" --distributed" if distributed else "")


def _print_seed(seed: str, resumed: str | None = None) -> None:
    """This command's last text lines: the seed and how to play the same deals again."""
    from .table.seeds import seed_lines
    out.print(seed_lines(seed, sys.argv[1:], resumed), markup=False, highlight=False)


_HTTP_HELP = ("Also serve a live page at HOST:PORT (e.g. 127.0.0.1:8080; :PORT alone means "
              "loopback): the tables in play "
              "with public information only, standings, recent games with their replays. Use a "
              "loopback address unless other machines should watch (a warning says so).")


def _http_option(text: str | None) -> tuple[str, int] | None:
    """The --http address, checked (exit 2 if unusable), with the non-loopback warning."""
    from .web.live import LiveError, bind_warning, parse_http

    if text is None:
        return None
    try:
        host, port = parse_http(text)
    except LiveError as exc:
        fail(str(exc))
    warning = bind_warning(host)
    if warning is not None:
        err.print(warning, markup=False, highlight=False)
    return host, port



# The options several commands share: one definition each (name, help, checks).
_DB_HELP = "The result store."
JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
ReportJsonFlag = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
DbOption = Annotated[str, _db_option(_DB_HELP)]
RulesOption = Annotated[str, typer.Option("--rules", help=_RULES_HELP)]
SetOption = Annotated[list[str] | None, typer.Option("--set", help=_SET_HELP, show_default=False)]
BindOption = Annotated[list[Path] | None, typer.Option(help=_BIND_HELP, show_default=False)]
SandboxOption = Annotated[str, typer.Option(help=_SANDBOX_HELP)]
MoveTimeOption = Annotated[float | None, typer.Option(help=_MOVE_TIME_HELP)]
RecoverFlag = Annotated[bool, typer.Option("--recover", help=_RECOVER_HELP)]
SeedOption = Annotated[str | None, typer.Option(help=_SEED_HELP, show_default=False)]
LogDirOption = Annotated[Path, typer.Option(help="Where game logs and bots' stderr go.")]
RunLogDirOption = Annotated[Path | None, typer.Option(
    "--log-dir", help="Where game logs and bots' stderr go. Default: logs; with --resume, "
    "the directory the run's stored games were logged to.", show_default=False)]
GamesOption = Annotated[int, typer.Option("--games", "-n", min=1, help="Games to play.")]
ClockOption = Annotated[str | None, typer.Option(
    "--tc", help="Game clock per seat, BASE+INCREMENT in seconds (Fischer), e.g. 60+0.5. "
    "Default: no game clock.")]
ReconnectGraceOption = Annotated[float, typer.Option(help=_RECONNECT_HELP)]
CpuOption = Annotated[int, typer.Option(help="Pin the referee and the bots to this CPU (-1: do not pin).")]
HttpOption = Annotated[str | None, typer.Option(help=_HTTP_HELP, show_default=False)]
BuiltinGamesOption = Annotated[int, typer.Option(min=2, help="Games per pairing with the built-in bots.")]
RoundsOption = Annotated[int, typer.Option(min=1, help="Rounds; the medians are reported.")]
MaxMemoryOption = Annotated[int | None, typer.Option(
    min=1, max=MAX_MEMORY_MB, show_default="1024",
    help="Memory per bot process tree, in MB, its /tmp and /dev/shm included, no swap (a "
    "cgroup). Where no memory cgroup can be had, a value given here becomes an "
    "address-space rlimit per process.")]
MaxProcsOption = Annotated[int, typer.Option(
    min=1, max=1 << 22, help="Processes per bot process tree (cgroup pids.max): a fork past "
    "it fails inside the bot.")]
CpusOption = Annotated[float, typer.Option(
    min=0.01, max=4096, help="CPUs each bot process tree may use at most (a cgroup quota); "
    "every bot has the same CPU weight.")]
PonderFlag = Annotated[bool, typer.Option(
    "--ponder", help="Let bots run while another bot decides (default: a bot not asked to "
    "decide is frozen, so it cannot think on, or steal, its opponent's time).")]


@app.command()
def match(
    bots: Annotated[list[str], typer.Argument(help=_BOTS_HELP, show_default=False)],
    games: GamesOption = 10,
    seed: SeedOption = None,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    tc: ClockOption = None,
    move_time: MoveTimeOption = None,
    startup_time: Annotated[float, typer.Option(
        help="Seconds a bot may take to start and answer the handshake.")] = 10.0,
    on_illegal: Annotated[str, typer.Option(
        help="forfeit: an illegal action loses the game; retry:N: the bot is told why and "
        "asked again, up to N times.")] = "forfeit",
    max_restarts: Annotated[int, typer.Option(
        min=0, help="Restarts per bot per match after a crash, timeout or protocol error.")] = 3,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    cpus: CpusOption = 1.0,
    ponder: PonderFlag = False,
    max_cpu: Annotated[int | None, typer.Option(
        min=1, max=MAX_CPU_S, help="CPU-time limit per bot process, in seconds.")] = None,
    until_durak: Annotated[int | None, typer.Option(
        min=1, help="Stop early once some bot has been the durak this many times.")] = None,
    duplicate: Annotated[bool, typer.Option(
        "--duplicate", help="Play each deal once per seat rotation (2 players: the same deck "
        "with seats swapped), so the luck of the deal cancels out.")] = False,
    log_dir: Annotated[Path, typer.Option(help="Where the match log and bots' stderr go.")] = Path("logs"),
    no_log: Annotated[bool, typer.Option("--no-log", help="Write no match log.")] = False,
    listen: Annotated[str, typer.Option(
        help="For tcp:NAME seats: where to listen, HOST:PORT. Loopback unless you say otherwise.")
    ] = "127.0.0.1:7724",
    token: Annotated[list[str] | None, typer.Option(
        help="For tcp:NAME seats: NAME=SECRET, the token that bot must send (repeat). A seat "
        "without one gets a generated token, printed at the start.", show_default=False)] = None,
    connect_wait: Annotated[float, typer.Option(
        help="Seconds to wait for each TCP bot to connect (and to reconnect between games).")] = 120.0,
    reconnect_grace: ReconnectGraceOption = 0.0,
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    recover: RecoverFlag = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")] = False,
) -> None:
    """Play a match between bots and print how often each was the durak.

    Every game is written to a match log (JSON Lines, under --log-dir) that
    `durak-ref replay LOG --verify` checks. Exit code 0 when the match ran (bot
    forfeits are results, not errors), 2 for unusable input (a bot that fails its first
    start-up, unless --recover), 130 when interrupted.
    """
    from .table.runner import SeatOptions, run_match

    try:
        table_rules = make_rules(rules, set_ or [])
        specs = [parse_bot_spec(b) for b in bots]
        table_rules.check_table(len(specs))
        config = MatchConfig(
            rules=table_rules, games=games, seed=_seed(seed),
            tc=TimeControl.parse(tc, move_time, startup_time),
            illegal_retries=parse_on_illegal(on_illegal), max_restarts=max_restarts,
            until_durak=until_durak, duplicate=duplicate)
    except (RulesError, BotSpecError, TimeControlError, OnIllegalError) as exc:
        fail(str(exc))
    _range(connect_wait, "--connect-wait", 0, WEEK_S, low_open=True)
    _range(reconnect_grace, "--reconnect-grace", 0, WEEK_S)
    from .records.matchlog import LogError
    from .seats.sandbox import SandboxError
    from .seats.tcp import ListenError, is_loopback, new_token, parse_listen
    try:
        listen_at = parse_listen(listen)
    except ListenError as exc:
        fail(str(exc))
    tokens = dict(_pairs(token or [], "--token", "NAME=SECRET"))
    for spec in specs:
        if spec.kind == "tcp" and spec.name not in tokens:
            tokens[spec.name] = new_token()
            err.print(f"token for tcp:{spec.name}: {tokens[spec.name]}", markup=False, highlight=False)
    if any(s.kind == "tcp" for s in specs) and not is_loopback(listen_at[0]):
        err.print(f"durak-ref: note: listening on {listen_at[0]}, not loopback: other machines can "
                  f"connect (tokens are checked)", markup=False, highlight=False)
    mode, binds = _sandbox_options(sandbox, bind)
    options = SeatOptions(max_memory_mb=max_memory, max_cpu_s=max_cpu, listen=listen_at,
                             limits=_limits(max_memory, max_procs, cpus, ponder),
                             tokens=tuple(tokens.items()), connect_wait=connect_wait,
                             reconnect_grace=reconnect_grace, sandbox=mode, binds=binds)
    with progress_for(games, "match", enabled=not as_json, console=err) as advance:
        try:
            with lifted(BotStartError, ListenError, LogError, SandboxError):
                result = run_match(specs, config, log_dir=None if no_log else log_dir,
                                   options=options, recover=recover,
                                   on_game=lambda record, res: advance(res.progress_text()),
                                   on_tcp=lambda text: err.print(f"tcp: {text}", markup=False,
                                                                 highlight=False))
        except (BotStartError, ListenError, LogError, SandboxError) as exc:
            fail(str(exc))
    from .table.report import show_match_result
    show_match_result(result.summary(), config.seed, sys.argv[1:], out, as_json=as_json)
    if result.interrupted:
        err.print("durak-ref: interrupted; the log holds every finished game")
        raise typer.Exit(130)


def _replay_html(log: Path, html_out: Path, game: int | None, seat: int | None, as_json: bool) -> None:
    from .records.matchlog import private_open
    from .web.replay_html import ReplayHtmlError, render_replay_html

    if html_out.exists() and log.exists() and html_out.resolve() == log.resolve():
        fail(f"--html {html_out} is the log itself: give another file to write the page to")
    try:
        text = render_replay_html(log, game=game, seat=seat)
    except ReplayHtmlError as exc:
        fail(str(exc))
    try:
        # 0600 like the log it comes from: the omniscient view holds every hidden card.
        with private_open(html_out) as f:
            f.write(text)
    except OSError as exc:
        fail(f"--html {html_out}: cannot write: {exc.strerror or exc}")
    if as_json:
        emit_json({"log": str(log), "html": str(html_out), "game": game, "seat": seat,
                   "bytes": len(text.encode("utf-8"))})
    else:
        view = "omniscient view" if seat is None else f"seat {seat}'s view"
        out.print(f"{html_out}: replay viewer of {log} ({'game ' + str(game) if game is not None else 'all games'}, "
                  f"{view}); open it in a browser", markup=False, highlight=False)


@app.command()
def play(
    bots: Annotated[list[str] | None, typer.Argument(
        help="The bots you play against, one per other seat (1 to 5; default: builtin:greedy): "
        "builtin:NAME or a command line, as in `match`.", show_default=False)] = None,
    seat: Annotated[int, typer.Option(
        help="Your seat, 0-based (seat order is play order); the bots fill the others in the "
        "order given.")] = 0,
    name: Annotated[str, typer.Option(help="Your name at the table and in the log.")] = "you",
    games: GamesOption = 1,
    hints: Annotated[bool, typer.Option(
        "--hints", help="Show with every decision what the built-in greedy bot would play.")] = False,
    seed: SeedOption = None,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    tc: Annotated[str | None, typer.Option(
        "--tc", "--clock", help="Game clock per seat (yours too), BASE+INCREMENT in seconds, e.g. "
        "300+5; the time left is shown with every move. Out of time is a lost game. Default: no "
        "game clock.")] = None,
    move_time: Annotated[float | None, typer.Option(
        help="Limit for every single decision (yours too), in seconds. Default: none worth "
        "the name (a week), so a program bot that hangs is stopped with Ctrl-C.")] = None,
    log_dir: Annotated[Path, typer.Option(help="Where the game log and bots' stderr go.")] = Path("logs"),
    no_log: Annotated[bool, typer.Option("--no-log", help="Write no game log.")] = False,
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Show the table on stderr and print the result as one JSON object on "
        "stdout.")] = False,
) -> None:
    """Take a seat yourself and play against bots in the terminal.

    You see what a bot in your seat would see: the table, every seat's card count and
    publicly known cards, your hand sorted (trumps last, marked *), and your legal moves,
    numbered. Answer with a number, a card (6S, 10h) or a word (take, pass, exchange); a
    typo is explained and asked again. The referee, rules, clocks and the game log are
    those of `match`; the log path is printed at the end (`durak-ref replay LOG --game 0
    --seat S`, or with `--html OUT` as a page, shows the game again). Type help for the
    commands, discard to see the discard pile; quit or Ctrl-D leaves the table (the game
    in progress is lost, the log keeps it); Ctrl-C stops at once (exit 130; finished games
    stay logged). The end shows who was the durak how often and your score; --json gives
    the full match summary (decision times, forfeits) instead.
    """
    from .table.clock import MAX_SECONDS
    from .table.human import run_play, stdout_writer
    from .seats.players import is_seat_name

    if not is_seat_name(name):
        fail(f"--name {name!r}: use letters, digits, '_', '-', '.'")
    try:
        table_rules = make_rules(rules, set_ or [])
        specs = [parse_bot_spec(b) for b in (bots or ["builtin:greedy"])]
        if any(s.kind == "tcp" for s in specs):
            fail("play seats built-in bots and bot programs; tcp:NAME seats are for `match` and `serve`")
        if len(specs) > 5:
            fail(f"a table has at most 6 seats: you and 1 to 5 bots, not {len(specs)} bots")
        table_rules.check_table(len(specs) + 1)
        if not 0 <= seat <= len(specs):
            fail(f"--seat {seat}: a table of {len(specs) + 1} has seats 0..{len(specs)}")
        time_control = TimeControl.parse(tc, move_time if move_time is not None or tc else MAX_SECONDS)
        config = MatchConfig(rules=table_rules, games=games, seed=_seed(seed), tc=time_control)
    except (RulesError, BotSpecError, TimeControlError) as exc:
        fail(str(exc))
    from .records.matchlog import LogError
    from .table.runner import SeatOptions
    from .seats.sandbox import SandboxError
    mode, binds = _sandbox_options(sandbox, bind)
    screen = stdout_writer(sys.stderr if as_json else sys.stdout)
    try:
        with lifted(BotStartError, LogError, SandboxError):
            result = run_play(specs, seat, name, config, hints=hints, write=screen,
                              log_dir=None if no_log else log_dir,
                              options=SeatOptions(sandbox=mode, binds=binds))
    except (BotStartError, LogError, SandboxError) as exc:
        fail(str(exc))
    from .table.humanview import person_result_lines
    from .table.report import show_match_result
    from .table.seeds import seed_lines
    summary = result.summary()
    if as_json:
        show_match_result(summary, config.seed, sys.argv[1:], out, as_json=True)
    else:
        for line in person_result_lines(summary, name):
            out.print(line, markup=False, highlight=False)
        if result.log_path and result.played:  # a log without a finished game has nothing to replay
            out.print(f"log: {result.log_path}\nsee the game again: durak-ref replay {result.log_path} "
                      f"--game 0 --seat {seat}   (a page: durak-ref replay {result.log_path} "
                      f"--html game.html)", markup=False, highlight=False)
        out.print(seed_lines(config.seed, sys.argv[1:]), markup=False, highlight=False)
    if result.interrupted:
        err.print("durak-ref: interrupted; the log holds every finished game (not the one in progress)")
        raise typer.Exit(130)


@app.command()
def replay(
    log: Annotated[Path | None, typer.Argument(
        metavar="LOG", help="A match log (.jsonl or .jsonl.gz); with --verify --db it may be left out.",
        show_default=False)] = None,
    verify: Annotated[bool, typer.Option(
        "--verify", help="Re-simulate every game with the rules engine and check every result.")] = False,
    db: Annotated[str | None, typer.Option(
        help="With --verify: also cross-check the result store against its logs, as "
        "`durak-ref verify` does (LOG, if given, is checked against the store). " + _DB_FORMS,
        show_default=False, metavar="DB")] = None,
    game: Annotated[int | None, typer.Option(help="Show game N step by step.")] = None,
    seat: Annotated[int | None, typer.Option(
        help="With --game or --html: show only what this seat saw (default: everything).")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the verification (with --html: what was written) as JSON.")] = False,
    html_out: Annotated[Path | None, typer.Option(
        "--html", metavar="OUT.html",
        help="Write a self-contained HTML viewer of the log (every game, or --game N; "
        "--seat S: only what that seat saw) to OUT.html: a table you step through with "
        "buttons, a scrub bar or the keyboard. Opens from the file, offline.",
        show_default=False)] = None,
) -> None:
    """Verify a match log, show one of its games step by step, or write an HTML viewer.

    Without options: list the games. Exit 1 if --verify finds a divergence or the log
    is damaged (every complete game before the damage is still checked and shown).
    --html OUT.html: exit 2 if the log is damaged or a game diverges (no page is written).
    """
    from .records.matchlog import LogError, read_log
    from .table.replay import Divergence, game_steps, verify_log

    if db is not None:
        if not verify or game is not None:
            fail("--db cross-checks a store: use it with --verify (and without --game)")
        _verify_store(_db(db), [log] if log else [], None, as_json)
    if log is None:
        fail("give a LOG to replay, or --verify --db STORE to check a store against its logs")
    if html_out is not None:
        if verify:
            fail("--html writes a viewer and --verify checks the log: give one of them")
        _replay_html(log, html_out, game, seat, as_json)
        return
    if seat is not None and game is None:
        fail("--seat S shows a game as seat S saw it: give --game N too (or --html)")
    try:
        contents = read_log(log)
    except LogError as exc:
        fail(str(exc))
    games = contents.games
    damaged = contents.error
    if game is not None:
        record = next((g for g in games if g["game"] == game), None)
        if record is None:
            fail(f"{log}: no complete game {game} (games: {', '.join(str(g['game']) for g in games) or 'none'})")
        if seat is not None and not 0 <= seat < len(record["players"]):
            fail(f"--seat {seat}: game {game} has seats 0..{len(record['players']) - 1}")
        try:
            for line in game_steps(contents.header, record, seat):
                out.print(line, highlight=False, markup=False)
        except Divergence as exc:
            err.print(f"durak-ref: divergence: {exc}", markup=False)
            raise typer.Exit(1) from None
        return
    if verify:
        try:
            results = verify_log(contents.header, games)
        except Divergence as exc:
            fail(f"{log}: {exc}")
        bad = [r for r in results if not r.ok]
        if as_json:
            emit_json({"log": str(log), "games": len(results), "ok": len(results) - len(bad),
                       "divergences": [{"game": r.game, "message": r.message} for r in bad],
                       "damaged": str(damaged) if damaged else None,
                       "complete": contents.footer is not None})
        else:
            for r in bad:
                err.print(f"game {r.game}: DIVERGES: {r.message}", markup=False)
            out.print(f"{log}: {len(results) - len(bad)} of {len(results)} games verified"
                      + ("" if contents.footer else " (no footer: the match did not finish)"),
                      markup=False, highlight=False)
        if damaged:
            err.print(f"durak-ref: damaged log: {damaged}", markup=False)
        raise typer.Exit(1 if bad or damaged else 0)
    if as_json:
        emit_json({"log": str(log), "header": contents.header,
                   "games": [{k: g[k] for k in ("game", "players", "termination", "durak")} for g in games],
                   "damaged": str(damaged) if damaged else None})
    else:
        h = contents.header
        out.print(f"{log}: {len(games)} games, rules {h.get('preset')}, seed {h.get('seed')}",
                  markup=False, highlight=False)
        for g in games:
            d = g["durak"]
            who = "draw" if d is None else f"durak {d} ({g['players'][d]})"
            out.print(f"  game {g['game']}: {g['termination']}, {who}, {len(g['decisions'])} decisions",
                      markup=False, highlight=False)
    if damaged:
        err.print(f"durak-ref: damaged log: {damaged}", markup=False)
        raise typer.Exit(1)


@app.command("verify")
def verify_cmd(
    logs: Annotated[list[Path] | None, typer.Argument(
        metavar="LOG", help="Tournament, ladder or arena logs whose games must all be in the store (default: "
        "every log the store names, and the other logs of its tournaments beside them).",
        show_default=False)] = None,
    db: Annotated[str, _db_option("The result store to check.")] = DEFAULT_DB,
    tournament_id: Annotated[str | None, typer.Option(
        "--tournament", help="Check only this tournament (ladder: the ladder and arena games).",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
) -> None:
    """Cross-check every stored game against its log record: results, durak, forfeits,
    seats, seeds, rules, times; every logged game must replay and be stored.

    Each difference names the tournament, the game, the field, the store's and the
    log's value and the log's file:line. Exit 0 when store and logs agree, 1 when
    anything differs or is missing, 2 for unusable input (no store, an unreadable LOG).
    """
    target = _db(db)
    if logs and isinstance(target, Path) and not target.exists():
        # A log checked on its own is replay's job: verify compares a store with its logs.
        fail(f"{target}: no such store; give the --db a tournament or ladder wrote, or check "
             f"the log on its own with: durak-ref replay {shlex.join(map(str, logs[:1]))} --verify")
    _verify_store(target, logs or [], tournament_id, as_json)


def _verify_store(db: Path | PgUrl, logs: list[Path], tournament_id: str | None, as_json: bool) -> NoReturn:
    from .league.verify import Verification, VerifyInputError

    try:
        check = Verification(db, logs, tournament_id)
    except VerifyInputError as exc:
        fail(str(exc))
    with progress_for(check.total, "verify", enabled=not as_json, console=err) as advance:
        report = check.run(lambda: advance(""))
    if as_json:
        emit_json(report.as_dict())
    else:
        for d in report.differences:
            out.print(d.message(), markup=False, highlight=False)
        verdict = "store and logs agree" if report.ok else f"{len(report.differences)} differences"
        out.print(f"{db}: {report.games} stored games of {len(report.tournaments)} tournament(s) "
                  f"checked against {len(report.logs)} log(s): {verdict}", markup=False,
                  highlight=False)
    raise typer.Exit(0 if report.ok else 1)


@app.command("rules")
def rules_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print the options and presets as JSON.")] = False,
) -> None:
    """List every table rule: name, default, allowed values, meaning; and the presets."""
    if as_json:
        emit_json({
            "options": [{"name": o.name, "default": o.default, "allowed": o.allowed, "help": o.help}
                        for o in OPTIONS],
            "presets": PRESETS,
        })
        return
    from .table.report import presets_table, rules_table
    out.print(rules_table())
    out.print(presets_table())


@bench_app.command("engine")
def bench_engine_cmd(
    games: Annotated[int, typer.Option(min=1, help="Games per round.")] = 2000,
    rounds: Annotated[int, typer.Option(min=1, help="Rounds; the median is reported.")] = 5,
    players: Annotated[int, typer.Option(min=2, max=6)] = 2,
    rules: RulesOption = "classic",
    as_json: JsonFlag = False,
) -> None:
    """Random games in-process: games and actions per second (median of rounds), with
    the checked apply (as for a bot's answer) and the unchecked one side by side."""
    from .bench.bench import bench_engine

    try:
        make_rules(rules).check_table(players)
    except RulesError as exc:
        fail(str(exc))
    result = bench_engine(games=games, repeats=rounds, players=players, preset=rules)
    if as_json:
        emit_json(result)
        return
    for label in ("unchecked", "checked"):
        r = result[label]
        out.print(f"engine, {label} apply: {r['games_per_s']:.0f} games/s, {r['actions_per_s']:.0f} "
                  f"actions/s ({r['us_per_action']:.2f} µs/action)")
    out.print(f"checked/unchecked: {result['ratio_checked_vs_unchecked']:.3f}x; "
              f"{result['actions_per_game']:.1f} actions/game; median of {rounds} rounds of {games} "
              f"random {players}-player games each, rules {rules}, deck {result['deck']}; one core")
    _print_native()


def _print_native() -> None:
    """Which hot modules ran compiled: a benchmark's figures depend on it."""
    from .native.loader import describe, status
    out.print(describe(status()), markup=False, highlight=False)


@bench_app.command("protocol")
def bench_protocol_cmd(
    codec_n: Annotated[int, typer.Option(min=100, help="Encode+decode repetitions per round.")] = 20000,
    round_trips: Annotated[int, typer.Option(min=10, help="Request/answer round trips per setup.")] = 2000,
    cpu: CpuOption = 0,
    bot: Annotated[str | None, typer.Option(
        "--bot", help="The bot command line for the round trips (default: the Python example "
        "random bot), e.g. --bot examples/c/bot.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Codec speed on a typical request, and round trips over pipes: referee vs floor."""
    import shlex
    import shutil

    from .bench.bench import bench_protocol

    argv = None
    if bot is not None:
        try:
            argv = shlex.split(bot)
        except ValueError as exc:
            fail(f"--bot: cannot split the command line: {exc}")
        if not argv:
            fail("--bot: the command line is empty")
        if shutil.which(argv[0]) is None:
            fail(f"--bot: cannot find the program {argv[0]!r} (not on PATH, or not executable)")
    result = bench_protocol(codec_n, round_trips, None if cpu < 0 else cpu, bot=argv)
    if as_json:
        emit_json(result)
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


@app.command()
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
    seed: Annotated[str | None, typer.Option(help=_SEED_HELP + " A config file's seed counts as given; "
                                             "--resume keeps the stored seed.", show_default=False)] = None,
    rules: Annotated[str | None, typer.Option("--rules", help=_RULES_HELP)] = None,
    set_: SetOption = None,
    tc: Annotated[str | None, typer.Option("--tc", help="Game clock BASE+INC in seconds.")] = None,
    move_time: MoveTimeOption = None,
    on_illegal: Annotated[str | None, typer.Option(help="forfeit or retry:N.")] = None,
    db: Annotated[str, _db_option("The result store: every game as it finishes.")] = DEFAULT_DB,
    log_dir: RunLogDirOption = None,
    resume: Annotated[str | None, typer.Option(
        help="Finish tournament ID from the store: only the games not yet stored are played.")] = None,
    sandbox: Annotated[str | None, typer.Option(
        help=_SANDBOX_HELP + " Default: the config's, else auto.", show_default=False)] = None,
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
    _limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from .seats.sandbox import SandboxError
    from .records.matchlog import LogError
    from .records.store import StoreError, open_store
    from .league.tournament import (
        TournamentError, TournamentSettings, play_tournament, register_tournament, run_log_dir,
        schedule_size, settings_from_options,
    )
    from .league.standings import standings
    from .web.live import LiveError

    web = _http_option(http)

    target = _db(db)
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
                    ("--tc", tc), ("--move-time", move_time), ("--on-illegal", on_illegal))
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
                    settings.bind = [*settings.bind, *_sandbox_options("auto", bind)[1]]
                tid, fresh = resume, False
            else:
                settings = settings_from_options(
                    config, bot or [], set_ or [],
                    {"format": format_, "players": players, "games": games,
                     "concurrency": concurrency, "seed": None if seed is None else _seed(seed),
                     "preset": rules, "tc": tc,
                     "move_time": move_time, "on_illegal": on_illegal,
                     "duplicate": False if no_duplicate else None,
                     "fresh_bots": True if fresh_bots else None, "sandbox": sandbox,
                     "bind_extra": list(_sandbox_options("auto", bind)[1])})
                tid, fresh = register_tournament(store, settings), True
            settings.validate()
        except (TournamentError, StoreError) as exc:
            fail(str(exc))
        _not_queued(store, tid, distributed, "tournament")
        log_dir = run_log_dir(log_dir, store, resume)
        resume_cmd = _resume_command("tournament", tid, target, log_dir, distributed)
        lock = _lock_tournament(target, store, tid)
        err.print(f"tournament {tid}; if interrupted, resume with: {resume_cmd}", markup=False,
                  highlight=False)
        with lock, progress_for(schedule_size(settings), f"tournament {tid}", enabled=not as_json,
                                 console=err) as advance:
            try:
                if distributed:
                    from .league.distributed import coordinate_tournament
                    err.print(f"queued for workers; start one per machine with: durak-ref worker "
                              f"--db {target} --tournament {tid}", markup=False, highlight=False)
                    progress = coordinate_tournament(
                        settings, store, tid, log_dir=log_dir, fresh=fresh,
                        on_game=lambda record, prog: advance(prog.progress_text()), on_note=_note)
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
        emit_json(dict(data, **_reproduce(settings.seed, resume)))
        return
    from .table.report import print_warnings, referee_cost_text, standings_table, tournament_forfeits
    print_warnings(data["warnings"], out)
    out.print(standings_table(data))
    tournament_forfeits(data, out)
    if data["decisions_this_run"]:
        out.print(f"decisions asked in this run: {data['decisions_this_run']}"
                  + referee_cost_text(data), markup=False, highlight=False)
    if data["rating_error"]:
        err.print(f"durak-ref: ratings not computed: {data['rating_error']}", markup=False)
    _print_seed(settings.seed, resume)


def _note(text: str) -> None:
    """A worker's note on a distributed run, on stderr (names and errors printed literally)."""
    err.print(f"durak-ref: {text}", markup=False, highlight=False)


def _not_queued(store: Any, tid: str, distributed: bool, command: str) -> None:
    """Exit 2 if run ``tid`` is queued for workers but this run would play it here."""
    if not distributed and store.path is None:
        from .league.distributed import is_queued
        if is_queued(store, tid):
            fail(f"{command} {tid} was queued for workers: resume it with --resume {tid} "
                 f"--distributed (played here, its games would race theirs)")


def _lock_tournament(db: Path | PgUrl, store: Any, tid: str, **wording: str) -> Any:
    """Hold tournament ``tid`` (an sprt run, the ladder) for this run (see
    referee/records/storelock.py; a PostgreSQL store's lock is on the server; ``wording``: its
    message's ``what`` and ``then``); exit 2 if another run is playing it."""
    from .records.storelock import LockedError, hold_tournament
    try:
        if isinstance(db, PgUrl):
            from .league.distributed import hold_tournament_on_server
            return hold_tournament_on_server(store, tid)
        return hold_tournament(db, tid, **wording)
    except LockedError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot lock {wording.get('what', f'tournament {tid}')} beside {db}: {exc.strerror or exc}")


@app.command()
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
    db: Annotated[str, _db_option("The result store: the run and every game.")] = DEFAULT_DB,
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
    _limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from .league.abtest import load_sprt, register_sprt, run_sprt_sync, stored_settings
    from .records.matchlog import LogError
    from .console.progress import status_line
    from .seats.sandbox import SandboxError
    from .scoring.sprt import Sprt
    from .records.store import StoreError, open_store
    from .league.tournament import BotEntry, TournamentError, run_log_dir

    for value, option in ((elo0, "--elo0"), (elo1, "--elo1")):
        _range(value, option, -2000, 2000)
    for value, option in ((alpha, "--alpha"), (beta, "--beta")):
        _range(value, option, 0.0001, 0.5)
    mode, binds = _sandbox_options(sandbox, bind)
    if resume is not None:
        given = [name for name, value in (
            ("BOT_A", bot_a), ("BOT_B", bot_b), ("--opponent", opponent), ("--seed", seed),
            ("--set", set_), ("--tc", tc), ("--move-time", move_time)) if value] + [
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
            config = MatchConfig(rules=table_rules, tc=TimeControl.parse(tc, move_time), seed=_seed(seed))
            test = Sprt(elo0, elo1, alpha, beta)
        except (RulesError, BotSpecError, TimeControlError, ValueError) as exc:
            fail(str(exc))
        names = unique_names([f"A-{specs[0].name}", f"B-{specs[1].name}"] + [x.name for x in specs[2:]])
        entries = [BotEntry(name, spec.text) for name, spec in zip(names, specs)]
    target = _db(db)
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
        _not_queued(store, tid, distributed, "sprt")
        log_dir = run_log_dir(log_dir, store, resume)
        resume_cmd = _resume_command("sprt", tid, target, log_dir, distributed)
        lock = _lock_tournament(target, store, tid, what=f"sprt run {tid}")  # two --resume ID at once
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
                    from .league.distributed import coordinate_sprt
                    err.print(f"queued for workers; start one per machine with: durak-ref worker "
                              f"--db {target} --tournament {tid}", markup=False, highlight=False)
                    run = coordinate_sprt(load_sprt(store, tid), store, tid, log_dir=log_dir,
                                          fresh=resume is None, on_pair=lambda r: update(line(r)),
                                          on_note=_note)
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
        emit_json(dict(status, **_reproduce(config.seed, resume)))
    else:
        from .table.report import print_warnings
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
        from .table.failfast import forfeit_line
        from .table.report import stderr_where
        for name, row in status["bots"].items():
            out.print(forfeit_line(name, row["games"], row["forfeits"], stderr_where(run.stderr_logs.get(name))),
                      markup=False, highlight=False)
        where = f"run {tid} in {target}" + (f", log {run.log_path}" if run.log_path else "")
        out.print(where, markup=False, highlight=False)
        _print_seed(config.seed, tid if resume else None)
    raise typer.Exit(0 if status["state"] == "accept_h1" else 1)


@app.command()
def worker(
    db: Annotated[str, _db_option("The PostgreSQL store the coordinator queued the games in.")] = DEFAULT_DB,
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
    _limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from .league.distributed import WorkerOptions, run_worker
    from .console.interrupt import run_interruptible
    from .records.store import StoreError, open_store

    _range(lease, "--lease", 0.1, WEEK_S)
    _range(poll, "--poll", 0.01, 3600)
    target = _db(db)
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


@app.command()
def ratings(
    tournament_id: Annotated[str | None, typer.Option("--tournament", help="Rate one tournament of the store.")] = None,
    from_: Annotated[Path | None, typer.Option(
        "--from", help="Rate the games of a file instead: a durak-ref log (match, tournament, "
        'sprt, ladder), or JSON Lines of one {"players": [...], "durak": NAME or null, '
        '"last_two": [A, B]} per line.')] = None,
    db: Annotated[str, _db_option("The result store.")] = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Ratings, errors and the LOS matrix as JSON.")] = False,
) -> None:
    """Maximum-likelihood ratings (Elo scale, sum zero) with 95% errors and LOS."""
    from .scoring.ratings import RatingError, fit_ratings
    from .scoring.ratingsio import RatingsInputError, rating_report

    try:
        if from_ is not None:
            from .records.matchlog import rated_games
            games, warning = rated_games(from_)
            if warning:
                err.print(f"durak-ref: warning: {warning}", markup=False, highlight=False)
        else:
            from .records.store import StoreError, iter_rated, open_store
            target = _db(db)
            if isinstance(target, Path) and not target.exists():
                fail(f"no store at {target}; give --db PATH, or --from FILE to rate a JSON Lines file")
            try:
                with open_store(target, check=True) as store:
                    if tournament_id:
                        store.tournament(tournament_id)
                    games = list(iter_rated(store.games(tournament_id)))
            except StoreError as exc:
                fail(str(exc))
        if not games:
            fail("no games to rate")
        report = rating_report(games, fit_ratings(games))
    except (RatingsInputError, RatingError) as exc:
        fail(str(exc))
    if as_json:
        emit_json(report)
        return
    from .table.report import ratings_table
    out.print(ratings_table(report))


@app.command()
def report(
    tournament_id: Annotated[str, typer.Option(
        "--tournament", help="The run to report: a tournament id, an sprt id, or 'ladder'.",
        show_default=False)],
    db: Annotated[str, _db_option("The result store.")] = DEFAULT_DB,
    html: Annotated[Path | None, typer.Option(
        "--html", help="Also write the report as one self-contained HTML page (plots as inline "
        "SVG, no JavaScript, nothing fetched).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole report as one JSON object.")] = False,
) -> None:
    """A stored run's report: standings, ratings with 95% intervals, the crosstable (W-L-D
    at two-player tables, else each pair's games and durak shares), each bot's rating
    history over the games, and forfeits by bot and kind."""
    from .records.store import StoreError, open_store
    from .league.tourreport import report_data

    target = _db(db)
    if isinstance(target, Path) and not target.exists():
        fail(f"no store at {target}; give --db PATH")
    try:
        with open_store(target, check=True) as store:
            data = report_data(store, tournament_id)
    except StoreError as exc:
        fail(str(exc))
    if html is not None:
        from .web.report_html import render_report_html
        try:
            html.write_text(render_report_html(data), encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write the page {html}: {exc.strerror or exc}")
    if as_json:
        emit_json(dict(data, html=str(html) if html else None))
        return
    from .table.report import print_report
    print_report(data, out)
    if html is not None:
        out.print(f"page: {html}", markup=False, highlight=False)


@app.command()
def stats(
    logs: Annotated[list[Path] | None, typer.Argument(
        metavar="LOG", help="Match, tournament or SPRT logs (.jsonl or .jsonl.gz).",
        show_default=False)] = None,
    tournament_id: Annotated[str | None, typer.Option(
        "--tournament", help="Instead of LOGs: the games of this tournament or SPRT run of the "
        "store (read from the log records it names).", show_default=False)] = None,
    db: Annotated[str, _db_option("The result store, with --tournament.")] = DEFAULT_DB,
    export: Annotated[Path | None, typer.Option(
        help="Also write the per-game facts, one row per seat of each game (opening trumps, "
        "opener, position after the dealer, bouts, result), to this file: CSV or JSON Lines "
        "by its extension (.csv, .jsonl) or --format; '-' writes them to stdout instead of "
        "the table.", show_default=False)] = None,
    form: Annotated[str | None, typer.Option(
        "--format", help="csv or jsonl for --export (default: from its extension).",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
) -> None:
    """The statistics Durak sites quote, from logged games, with 95% intervals.

    Per player count: the durak rate by the number of trumps in the opening hand (0-6),
    for every seat and for the opener alone; the durak rate by position after the
    dealer; the draw rate; the mean bouts per game. Forfeited games are counted apart
    and left out. Then the published reference figures (about 6,900 games of gentle bots,
    rules classic with first_bout_limit=on) beside ours: each figure, the difference,
    whether it is within 30% (draws: within 1 point), and whether each effect the
    reference shows goes the same way here. docs/STATS.md discusses them.
    """
    from .league.stats import (
        StatsInputError, collect_logs, collect_tournament, compare_reference, export_form,
        export_text, summarize, write_export,
    )

    if bool(logs) == (tournament_id is not None):
        fail("give LOG files or --tournament ID (not both)")
    try:
        collected = (collect_tournament(_db(db), tournament_id) if tournament_id is not None
                     else collect_logs(logs or []))
        form_ = export_form(export, form) if export is not None else None
    except StatsInputError as exc:
        fail(str(exc))
    if export is not None and form_ is not None:
        if str(export) == "-":
            sys.stdout.write(export_text(collected.facts, form_))
            return
        try:
            write_export(export, collected.facts, form_)
        except StatsInputError as exc:
            fail(str(exc))
    table = summarize(collected.facts)
    comparison = compare_reference(table)
    if as_json:
        emit_json({"sources": collected.sources, "games": collected.games,
                   "forfeited": collected.forfeited, "export": str(export) if export else None,
                   "rules": collected.rules, "by_players": table, "reference": comparison})
        return
    from .table.report import reference_tables, stats_tables
    out.print(f"{collected.games} games from {len(collected.sources)} log(s)"
              + (f"; {collected.forfeited} forfeited games left out" if collected.forfeited else ""),
              markup=False, highlight=False)
    for item in [*stats_tables(table), *reference_tables(comparison, collected.rules)]:
        if isinstance(item, str):
            out.print(item, markup=False, highlight=False)
        else:
            out.print(item)
    if export is not None:
        out.print(f"facts written to {export}", markup=False, highlight=False)



def _open_store(db: str) -> Any:
    from .records.store import StoreError, open_store
    try:
        return open_store(_db(db))
    except StoreError as exc:
        fail(str(exc))


@ladder_app.command("add")
def ladder_add(
    name: Annotated[str, typer.Argument(help="The bot's ladder name.", show_default=False)],
    command: Annotated[str, typer.Argument(help="Its command line, or builtin:NAME.", show_default=False)],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Register a bot on the ladder at the start rating."""
    from .league.ladder import add_bot
    from .records.store import StoreError
    from .league.tournament import TournamentError

    with _open_store(db) as store:
        try:
            add_bot(store, name, command)
        except (TournamentError, StoreError) as exc:
            fail(str(exc))
        rating = store.ladder_rating(name)
    out.print(f"{name} is on the ladder (rating {rating[0]:.0f}, {rating[1]} games)", markup=False)


@ladder_app.command("run")
def ladder_run(
    games: Annotated[int, typer.Option(min=1, help="Games to play (in deal pairs).")] = 20,
    concurrency: Annotated[int, typer.Option(min=1, help="Games at once.")] = 1,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    move_time: MoveTimeOption = None,
    seed: Annotated[str | None, typer.Option(help=_SEED_HELP + " It also breaks pairing ties.",
                                             show_default=False)] = None,
    db: DbOption = DEFAULT_DB,
    log_dir: LogDirOption = Path("logs"),
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    recover: RecoverFlag = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print games played and the ladder as JSON.")] = False,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    cpus: CpusOption = 1.0,
    ponder: PonderFlag = False,
) -> None:
    """Play ladder games: the bot with the fewest games meets the closest rating.

    Every game and rating update is stored as it finishes; one ladder run per store at a
    time (a second is refused, naming the running one). Program bots' stderr goes to a
    log beside the game log in --log-dir; the summary says where."""
    _limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from .league.ladder import play_ladder
    from .records.matchlog import LogError
    from .seats.sandbox import SandboxError
    from .league.tournament import TournamentError

    mode, binds = _sandbox_options(sandbox, bind)

    try:
        config = MatchConfig(rules=make_rules(rules, set_ or []), seed=_seed(seed),
                             tc=TimeControl.parse(None, move_time))
    except (RulesError, TimeControlError) as exc:
        fail(str(exc))
    from .table.failfast import ForfeitTally, forfeit_line
    tally = ForfeitTally()  # this run's games and forfeits per bot, for the summary

    def on_game(record: Any) -> None:
        tally.add(record)
        advance("")

    from .league.ladder import LADDER_ID
    from .records.store import StoreError
    from .console.usererror import lifted

    with _open_store(db) as store:
        # One ladder run per store at a time: two would number their games alike and
        # overwrite each other's rating updates.
        lock = _lock_tournament(_db(db), store, LADDER_ID, what=f"the ladder of {store.name}",
                                then="then run it again")
        with lock, progress_for(games, "ladder", console=err) as advance:
            try:
                with lifted(LogError, StoreError, SandboxError, BotStartError):
                    run = play_ladder(store, config, games=games, concurrency=concurrency,
                                      log_dir=log_dir, on_game=on_game,
                                      sandbox=mode, bind=binds, recover=recover)
            except (TournamentError, BotStartError, LogError, SandboxError) as exc:
                fail(f"{exc}; every finished game and rating is stored")
            except StoreError as exc:
                fail(f"{exc}; every game and rating committed before is stored")
            except KeyboardInterrupt:
                err.print("durak-ref: interrupted; every finished game and rating is stored")
                raise typer.Exit(130) from None
        if as_json:
            from .seats.sandbox import Sandbox  # resolved as the run resolved it (cached, no warning)
            emit_json({"played": run.played, "ladder": _ladder_rows(store),
                       "sandbox": Sandbox(mode, warn=False).resolve().mode,
                       "bots": tally.as_dict(), "warnings": tally.warnings(),
                       "log": run.log_path, "stderr_logs": run.stderr_logs,
                       **_reproduce(config.seed)})
            return
        from .table.report import print_warnings, stderr_where
        print_warnings(tally.warnings(), out)
        out.print(f"{run.played} ladder games played"
                  + (f"; log {run.log_path}" if run.log_path else ""), markup=False, highlight=False)
        _print_ladder(store)
        for name, row in tally.as_dict().items():
            out.print(forfeit_line(name, row["games"], row["forfeits"], stderr_where(run.stderr_logs.get(name))),
                      markup=False, highlight=False)
        _print_seed(config.seed)


def _ladder_rows(store: Any) -> list[dict[str, Any]]:
    return [{"rank": i + 1, "bot": b, "rating": round(r, 2), "games": g}
            for i, (b, r, g) in enumerate(store.ladder())]


def _print_ladder(store: Any) -> None:
    from rich.markup import escape
    from rich.table import Table
    t = Table(title="ladder (incremental Elo)", title_justify="left")
    for col in ("rank", "bot", "rating", "games"):
        t.add_column(col, justify="left" if col == "bot" else "right")
    for i, (bot, rating, games) in enumerate(store.ladder()):
        t.add_row(str(i + 1), escape(bot), f"{rating:.1f}", str(games))
    out.print(t)


@ladder_app.command("show")
def ladder_show(
    db: DbOption = DEFAULT_DB,
    as_json: JsonFlag = False,
) -> None:
    """The ladder table: rating and games per bot."""
    from .records.store import StoreError
    with _open_store(db) as store:
        try:
            if as_json:
                emit_json(_ladder_rows(store))
            else:
                _print_ladder(store)
        except StoreError as exc:
            fail(str(exc))


@ladder_app.command("history")
def ladder_history(
    name: Annotated[str, typer.Argument(help="A ladder bot.", show_default=False)],
    db: DbOption = DEFAULT_DB,
    as_json: JsonFlag = False,
) -> None:
    """A bot's rating after each of its ladder games."""
    from .records.store import StoreError
    with _open_store(db) as store:
        try:
            if store.ladder_rating(name) is None:
                fail(f"{name!r} is not on the ladder; bots: "
                     f"{', '.join(b for b, _, _ in store.ladder()) or 'none'}")
            rows = store.history(name)
        except StoreError as exc:
            fail(str(exc))
    if as_json:
        emit_json([{"game": g, "before": round(b, 2), "after": round(a, 2), "at": at}
                   for _, g, b, a, at in rows])
        return
    for _, g, b, a, at in rows:
        out.print(f"{at}  game {g}: {b:.1f} -> {a:.1f} ({a - b:+.1f})", markup=False, highlight=False)


@app.command("check-bot")
def check_bot_cmd(
    command: Annotated[str, typer.Argument(
        help="The bot's command line, quoted: \"python3 mybot.py --fast\".", show_default=False)],
    games: Annotated[int, typer.Option(
        "--games", "-n", min=1, help="Most games per rule set; each stops as soon as the "
        "decision types it is there for have been reached.")] = 40,
    move_time: Annotated[float, typer.Option(help="Limit for every single decision, in seconds.")] = 5.0,
    startup_time: Annotated[float, typer.Option(
        help="Seconds the bot may take to start and answer the handshake.")] = 10.0,
    seed: Annotated[int, typer.Option(help="Seed of the deals.")] = 1,
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    cpus: CpusOption = 1.0,
    listen: Annotated[str, typer.Option(
        help="For a tcp:NAME bot: where to listen, HOST:PORT (the bot connects, as in "
        "`match --listen`). Loopback unless you say otherwise.")] = "127.0.0.1:7724",
    token: Annotated[str | None, typer.Option(
        help="For a tcp:NAME bot: the token it must send (default: a new one, printed).",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
) -> None:
    """Check a bot before a tournament: handshake, every decision type under every rule
    variant (transfer, reflection, show-trump, same-rank leads, throw-in any time, the
    24-, 36- and 52-card decks, 2 to 6 players) against the built-in bots, decision
    latency, clean exit after bye; and that it
    never answers a request twice or before it is asked, and leaves no process behind
    (a forked child or a setsid daemon still running after it exited is named, then
    killed).

    Every failure is shown with what was sent, what came back and what the protocol
    requires. Exit code 0 when every check passes (warnings allowed), 1 when a check
    fails, 2 for unusable input (e.g. a command that cannot be started).
    """
    from contextlib import nullcontext

    from rich.text import Text

    from .table.checkbot import check_bot_sync, render
    from .seats.sandbox import Sandbox, SandboxError

    mode, binds = _sandbox_options(sandbox, bind)

    try:
        spec = parse_bot_spec(command)
    except BotSpecError as exc:
        fail(str(exc))
    tcp = None
    if spec.kind == "tcp":
        from .seats.tcp import ListenError, new_token, parse_listen
        from .table.checkbot import TcpCheck
        try:
            listen_at = parse_listen(listen)
        except ListenError as exc:
            fail(str(exc))
        if token is None:
            token = new_token()
            err.print(f"token for tcp:{spec.name}: {token}", markup=False, highlight=False)
        tcp = TcpCheck(spec.name, token, listen_at, on_tcp=lambda text: err.print(
            f"tcp: {text}", markup=False, highlight=False, soft_wrap=True))
    elif spec.kind != "command":
        fail(f"{command}: check-bot checks a bot program (its command line) or a bot over TCP "
             "(tcp:NAME)")
    spinning = err.is_terminal and not as_json
    live = err.status("check-bot: starting the bot") if spinning else nullcontext()
    with live as status:
        try:
            report = check_bot_sync(
                list(spec.argv) or [command], games_per_config=games, move_time=move_time,
                startup_time=startup_time, seed=seed, sandbox=Sandbox(mode, binds, limits=_limits(max_memory, max_procs, cpus, False)),
                tcp=tcp,
                on_progress=None if status is None else lambda text: status.update(Text(f"check-bot: {text}")),
                # Not on a terminal (a CI log, a pipe): a line per phase instead of a spinner.
                on_phase=None if spinning else lambda text: err.print(
                    f"check-bot: {text}", markup=False, highlight=False, soft_wrap=True))
        except (BotStartError, TimeControlError, SandboxError) as exc:
            fail(str(exc))
    if as_json:
        emit_json(report.as_dict())
    else:
        render(report, out)
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def register(
    name: Annotated[str, typer.Argument(help="The bot's name on the arena.", show_default=False)],
    rotate: Annotated[bool, typer.Option("--rotate", help="Give an already registered bot a new "
                                         "token; the old one stops working at once, also for a "
                                         "running serve (a game in progress finishes).")] = False,
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help='Print {"name", "token"}.')] = False,
) -> None:
    """Register a bot for `durak-ref serve` and print its token (with --rotate: a new one).

    Only the token's hash is stored; the store is made readable by its owner only (0600).
    """
    from .league.arena import register as register_bot
    from .records.store import StoreError

    with _open_store(db) as store:
        try:
            token = register_bot(store, name, rotate=rotate)
        except (ValueError, StoreError) as exc:
            fail(str(exc))
    if as_json:
        emit_json({"name": name, "token": token})
        return
    out.print(f"{name}: token {token}", markup=False, highlight=False)
    err.print("Keep the token: only its hash is stored. Connect with e.g. "
              f"examples/python/random_bot.py --connect HOST:PORT --name {name} --token TOKEN",
              markup=False, highlight=False)


@app.command()
def unregister(
    name: Annotated[str, typer.Argument(help="The registered bot's name.", show_default=False)],
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help='Print {"name", "unregistered": true}.')] = False,
) -> None:
    """Revoke an arena bot's token: it can no longer connect, also to a running serve
    (a game in progress finishes; the connection is then closed). Its games and rating
    stay in the store; `register NAME` admits it again with a new token."""
    from .league.arena import unregister as unregister_bot

    target = _db(db)
    if isinstance(target, Path) and not target.exists():
        fail(f"{target}: no such store; give the --db where the bot was registered")
    with _open_store(db) as store:
        try:
            unregister_bot(store, name)
        except ValueError as exc:
            fail(str(exc))
    if as_json:
        emit_json({"name": name, "unregistered": True})
        return
    out.print(f"{name}: unregistered (its token no longer works)", markup=False, highlight=False)


@app.command()
def serve(
    listen: Annotated[str, typer.Option(help="HOST:PORT to listen on (loopback unless you say otherwise).")]
    = "127.0.0.1:7724",
    db: DbOption = DEFAULT_DB,
    games: Annotated[int | None, typer.Option(min=1, help="Stop after this many games (default: run until Ctrl-C).")] = None,
    max_games_per_bot: Annotated[int, typer.Option(min=1, help="Games one bot may play at once "
                                                   "(one connection each).")] = 1,
    max_connections: Annotated[int, typer.Option(min=1, help="Authenticated connections (bots) "
                                                 "in total.")] = 256,
    max_pending: Annotated[int, typer.Option(min=0, help="Unauthenticated connections in total, "
                                             "apart from the bots' room; when full, the oldest "
                                             "silent one gives way. 0: sized by the file "
                                             "descriptor limit (raised to its hard limit, at "
                                             "most 65536), less --max-connections and 128, "
                                             "within 16..16384.")] = 0,
    max_per_address: Annotated[int, typer.Option(min=1, help="Unauthenticated connections from "
                                                 "one address.")] = 8,
    max_per_network: Annotated[int, typer.Option(min=1, help="Unauthenticated connections from "
                                                 "one /24 (IPv4) or /64 (IPv6) network.")] = 16,
    handshake_time: Annotated[float, typer.Option(min=0.1, help="Seconds a new connection has "
                                                  "for the whole handshake (however slowly its "
                                                  "bytes come).")] = 5.0,
    duplicate: Annotated[bool, typer.Option("--duplicate", help="Both games of a pairing share "
                                            "one deal (seats swapped) instead of two secret "
                                            "deals. Unsound against untrusted bots: a remote bot "
                                            "that remembers the first game knows its opponent's "
                                            "hand in the second.")] = False,
    ping_interval: Annotated[float, typer.Option(help="Seconds between pings of idle bots.")] = 15.0,
    reconnect_grace: ReconnectGraceOption = 0.0,
    move_time: Annotated[float, typer.Option(help="Seconds per decision.")] = 10.0,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    log_dir: Annotated[Path, typer.Option(help="Where game logs go.")] = Path("logs"),
    http: HttpOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="At the end, print games played and the ladder as JSON.")] = False,
) -> None:
    """Run the arena: registered bots connect over TCP and play rated games continuously.

    Register bots first with `durak-ref register NAME`; `register --rotate NAME` and
    `unregister NAME` take effect while this runs. Every game is dealt from a fresh
    secret seed (recorded in the log and store) unless --duplicate. Failed tokens are
    throttled per address and network (growing penalties) and logged in aggregate.
    Ratings go to the ladder in the store (`durak-ref ladder show`). Ctrl-C stops
    pairing and lets games in flight finish; a second Ctrl-C aborts them. With --http,
    a live page shows the games in play (public information only), the standings and
    the recent games, each with its replay.
    """
    from .league.arena import Arena, serve as serve_arena
    from .records.matchlog import LogError
    from .seats.tcp import ListenError, TcpLimits, is_loopback, parse_listen
    from .web.live import LiveError

    web = _http_option(http)
    try:
        host, port = parse_listen(listen)
        config = MatchConfig(rules=make_rules(rules, set_ or []), tc=TimeControl.parse(None, move_time))
    except (ListenError, RulesError, TimeControlError) as exc:
        fail(str(exc))
    _range(ping_interval, "--ping-interval", 0, WEEK_S, low_open=True)
    _range(handshake_time, "--handshake-time", 0.1, WEEK_S)
    _range(reconnect_grace, "--reconnect-grace", 0, WEEK_S)
    if not is_loopback(host):
        err.print(f"durak-ref: note: listening on {host}, not loopback: other machines can connect "
                  "(tokens are checked)", markup=False)
    limits = TcpLimits(handshake_s=handshake_time, max_connections=max_connections,
                       max_pending=max_pending, max_per_address=max_per_address,
                       max_per_network=max_per_network, ping_interval=ping_interval)
    with _open_store(db) as store:
        if not store.token_hashes():
            fail(f"no bots are registered in {_db(db)}; register one with: durak-ref register NAME")
        arena = Arena(store, config, limits, max_games_per_bot=max_games_per_bot, games=games,
                      log_dir=log_dir, duplicate=duplicate, reconnect_grace=reconnect_grace,
                      on_event=lambda text: err.print(text, markup=False, highlight=False))
        err.print(f"arena on {host}:{port}; bots: {', '.join(sorted(store.token_hashes()))}",
                  markup=False, highlight=False)
        try:
            played = serve_arena(arena, host, port, http=web)
        except (ListenError, LogError, LiveError) as exc:
            fail(str(exc))
        if as_json:
            emit_json({"played": played, "refusals": len(arena.gate.refusals) if arena.gate else 0,
                       "ladder": _ladder_rows(store)})
            return
        out.print(f"{played} games played", markup=False)
        _print_ladder(store)


@bench_app.command("match")
def bench_match_cmd(
    games: Annotated[int, typer.Option(min=1, help="Games in the match.")] = 200,
    cpu: CpuOption = 0,
    sandbox: Annotated[str, typer.Option(
        help="How the bots run: auto, bwrap, none, or both (none, then bwrap, and the ratio "
        "of start-up and per-decision times).")] = "auto",
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
    from .bench.bench import BenchBotsError, bench_freezing, bench_match, bench_match_sandbox, bot_pair
    from .seats.sandbox import SandboxError

    pin = None if cpu < 0 else cpu
    try:
        argvs = bot_pair(bots)
    except BenchBotsError as exc:
        fail(str(exc))
    if bot and bots != "python":
        fail("give either --bot (twice) or --bots, not both")
    if bots == "builtin" and sandbox == "both":
        fail("--bots builtin: built-in bots run in-process; --sandbox both does not apply")
    if bot:
        if len(bot) != 2:
            fail(f"--bot: give exactly two bot command lines (got {len(bot)})")
        try:
            import shlex
            argvs = [shlex.split(b) for b in bot]
        except ValueError as exc:
            fail(f"--bot: cannot split the command line: {exc}")
        if not all(argvs):
            fail("--bot: a command line is empty")
    try:
        if sandbox == "both":
            both = bench_match_sandbox(games, pin, starts)
            if as_json:
                emit_json(both)
                return
            for mode, run in both["runs"].items():
                out.print(f"{mode}: start-up {run['startup_ms_median']} ms (median of {starts}), "
                          f"{run['decision_us_mean']} µs per decision, "
                          f"{run['games_per_s']:.1f} games/s", markup=False, highlight=False)
            ratio = both["ratio_bwrap_vs_none"]
            out.print(f"bwrap/none: start-up x{ratio['startup_ms_median']}, per decision "
                      f"x{ratio['decision_us_mean']}", markup=False, highlight=False)
            return
        r = bench_match(games, pin, bots=argvs, sandbox=sandbox, cold_starts=starts,
                        builtin=bots == "builtin" and not bot)
        compared = (bench_freezing(games, pin, bots=argvs, sandbox=sandbox, rounds=freezing)
                    if freezing and bots != "builtin" else None)
    except SandboxError as exc:
        fail(str(exc))
    if as_json:
        emit_json(r if compared is None else dict(r, freezing=compared))
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
        for name, text in (("frozen", "off-move frozen"), ("ponder", "--ponder")):
            c = compared[name]
            out.print(f"{text:>16}: {c['wall_us_per_decision']} µs per decision (wall, median of "
                      f"{freezing}), referee CPU {c['referee_cpu_us_per_decision']} µs, "
                      f"{c['decisions_per_s']:.0f} decisions/s, "
                      f"{c['freezer_writes_per_decision']} freezer writes per decision",
                      markup=False, highlight=False)
        out.print(f"freezing costs {compared['freezing_cost_pct']}% of a decision",
                  markup=False, highlight=False)
    _print_native()


@bench_app.command("tournament")
def bench_tournament_cmd(
    games: Annotated[int, typer.Option(min=2, help="Games per pairing with the Python example bots (programs).")] = 60,
    builtin_games: BuiltinGamesOption = 2000,
    rounds: RoundsOption = 3,
    as_json: ReportJsonFlag = False,
) -> None:
    """Round robins of three built-in bots and of three Python example bots at concurrency
    1 and 2, logged and stored: games/s per round, medians, and the speed-up of 2 over 1
    (builtin_speedup, program_speedup)."""
    from .bench.bench import bench_tournament

    r = bench_tournament(games, builtin_games, rounds)
    if as_json:
        emit_json(r)
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


@bench_app.command("distributed")
def bench_distributed_cmd(
    db: Annotated[str | None, typer.Option(
        "--db", help="The PostgreSQL server to measure: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB "
        "(the benchmark's runs stay in it, finished). Default: a private server made for the "
        "benchmark with the machine's initdb/pg_ctl and removed afterwards. $DURAK_DB is not read: "
        "a benchmark never writes to a store by accident.", metavar="DB", show_default=False)] = None,
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
    from .bench.bench_distributed import BenchDistributedError, bench_distributed
    from .records.pgserver import PgServerError
    from .records.store import StoreError

    target = None if db is None else _db(db)
    if target is not None and not isinstance(target, PgUrl):
        fail(f"bench distributed measures a PostgreSQL server (--db postgresql://USER@HOST:PORT/DB), "
             f"not the file {target}")

    def heard(kind: str, workers: int, round_: int, run: dict[str, Any]) -> None:
        err.print(f"round {round_ + 1}, {kind}, {workers} worker(s): {run['games']} games in "
                  f"{run['wall_s']:.2f} s, {run['games_per_s']:.1f} games/s", markup=False, highlight=False)

    try:
        r = bench_distributed(target, builtin_games, games, rounds, max_workers,
                              ("builtin", "program") if programs else ("builtin",), on_run=heard)
    except StoreError as exc:
        fail(f"bench distributed: {exc}")
    except PgServerError as exc:
        fail(f"bench distributed: no --db given, and no private server could be made: {exc}",
             2 if exc.unavailable else 1)
    except BenchDistributedError as exc:
        fail(f"bench distributed: {exc}", 1)
    if as_json:
        emit_json(r)
        return
    out.print(f"server: {r['server']}; workers play one game at a time each", markup=False, highlight=False)
    for kind in ("builtin", "program"):
        for n, run in r.get(kind, {}).get("runs", {}).items():
            out.print(f"{kind}, {n} worker(s): {_rates_text(run, r[kind]['speedup'][n])}; "
                      f"steady median {_maybe(run['steady_games_per_s_median'])} "
                      f"games/s (x{_maybe(r[kind]['steady_speedup'][n])}); workers' CPU per game "
                      f"{run['workers_cpu_ms_per_game']} ms", markup=False, highlight=False)
    out.print(f"{_load_text(r)}; {r['machine']['cpus']} CPUs, not pinned", markup=False, highlight=False)


@bench_app.command("soak")
def bench_soak_cmd(
    minutes: Annotated[float, typer.Option(min=0.01, help="How long to play, in minutes.")] = 5.0,
    move_time: Annotated[float, typer.Option("--move-time", min=0.01, max=60.0,
                                             help="Seconds per decision (short: the hanging bot "
                                                  "costs one each time).")] = 0.25,
    sandbox: Annotated[str, typer.Option(help="auto | bwrap | none, for the program bots.")] = "auto",
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
    from .bench.soak import memory_figure, run_soak

    if games_memory:
        try:
            mem = memory_figure()
        except RuntimeError as exc:
            fail(f"bench soak --games-memory: {exc}", 3)
        if as_json:
            emit_json(mem)
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
            from .console.jsonout import dumps
            json_file.write_text(dumps(r, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            fail(f"--json-file {json_file}: cannot write: {exc.strerror or exc}")
    if as_json:
        emit_json(r)
    else:
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
    if r["internal_errors"] or r["leftover_processes"]:
        raise typer.Exit(1)
    if r["interrupted"]:
        err.print("durak-ref: soak interrupted; the figures above cover the games played")
        raise typer.Exit(130)


@bench_app.command("tcp")
def bench_tcp_cmd(
    round_trips: Annotated[int, typer.Option(min=10, help="Request/answer round trips per transport.")] = 2000,
    idle: Annotated[int, typer.Option(min=0, help="Idle authenticated connections for the memory "
                                      "figure (0: skip it).")] = 1000,
    as_json: JsonFlag = False,
) -> None:
    """Round trip per decision over loopback TCP next to pipes, and the referee's memory
    with idle authenticated connections."""
    from .bench.bench_tcp import bench_tcp

    try:
        result = bench_tcp(round_trips, idle)
    except (OSError, RuntimeError) as exc:
        fail(f"bench tcp: {exc}", 1)
    if as_json:
        emit_json(result)
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


@app.command()
def version(as_json: JsonFlag = False) -> None:
    """Print the durak-ref and protocol versions, and which hot modules run compiled
    (mypyc, built at install) or as Python (and why)."""
    from protocol.messages import PROTOCOL_VERSION, SUPPORTED_VERSIONS
    from .native.loader import describe, status
    native = status()
    if as_json:
        emit_json({"durak_ref": __version__, "protocol": PROTOCOL_VERSION,
                   "protocols_supported": list(SUPPORTED_VERSIONS), "native": native})
        return
    out.print(f"durak-ref {__version__}, protocol {PROTOCOL_VERSION}")
    out.print(describe(native), markup=False, highlight=False)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("durak-ref: interrupted")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: say whose fault it is
        from .records.store import StoreError
        if isinstance(exc, StoreError):  # a damaged or unusable store, met wherever it was read
            err.print(f"durak-ref: error: {exc}", highlight=False, markup=False, soft_wrap=True)
            sys.exit(2)
        import traceback
        traceback.print_exc()
        err.print("durak-ref: internal error: this is a bug in durak-ref, not in your bots or "
                  "input; please report it with the traceback above", markup=False)
        sys.exit(3)
