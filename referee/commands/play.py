"""Playing one match: `match` (bots against bots) and `play` (a person against bots)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..console.progress import progress_for
from ..rules.options import MAX_SEATS, make_rules
from ..seats.players import TCP_NO_CPU_TIME, BotSpec, parse_bot_spec
from ..table.adjudicator import parse_budget
from ..table.clock import DEFAULT_BACKSTOP, TimeControl
from ..table.match import MatchConfig, parse_on_illegal
from ..table.runner import CONNECT_WAIT_S
from .common import (
    bot_limits,
    check_range,
    err,
    fail,
    name_value_pairs,
    out,
    run_seed,
    sandbox_options,
)
from .options import (
    BOTS_HELP,
    MAX_CPU_S,
    WEEK_S,
    AdjudicateOption,
    BackstopOption,
    BindOption,
    BotUidsOption,
    ClockKindOption,
    ClockOption,
    CpusOption,
    DuplicateFlag,
    GamesOption,
    KeepTwinsFlag,
    MaxMemoryOption,
    MaxProcsOption,
    MoveTimeOption,
    PonderFlag,
    ReconnectGraceOption,
    RecoverFlag,
    RulesOption,
    SandboxOption,
    SeedOption,
    SetOption,
)

OnIllegalOption = Annotated[str, typer.Option(
    "--on-illegal", help="forfeit: an illegal action loses the game; retry:N: the bot is told why "
    "and asked again, up to N times.")]
ListenOption = Annotated[str, typer.Option(
    "--listen", help="For tcp:NAME seats: where to listen, HOST:PORT. Loopback unless you say otherwise.")]
TokenOption = Annotated[list[str] | None, typer.Option(
    "--token", help="For tcp:NAME seats: NAME=SECRET, the token that bot must send (repeat). A seat "
    "without one gets a generated token, printed at the start.", show_default=False)]
ConnectWaitOption = Annotated[float, typer.Option(
    "--connect-wait", help="Seconds to wait for each TCP bot to connect (and to reconnect between games).")]


def match(
    bots: Annotated[list[str], typer.Argument(help=BOTS_HELP, show_default=False)],
    games: GamesOption = 10,
    seed: SeedOption = None,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    tc: ClockOption = None,
    move_time: MoveTimeOption = None,
    clock: ClockKindOption = "wall",
    backstop: BackstopOption = DEFAULT_BACKSTOP,
    startup_time: Annotated[float, typer.Option(
        help="Seconds a bot may take to start and answer the handshake.")] = 10.0,
    on_illegal: OnIllegalOption = "forfeit",
    max_restarts: Annotated[int, typer.Option(
        min=0, help="Restarts per bot per match after a crash, timeout or protocol error.")] = 3,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    bot_uids: BotUidsOption = None,
    cpus: CpusOption = 1.0,
    ponder: PonderFlag = False,
    max_cpu: Annotated[int | None, typer.Option(
        min=1, max=MAX_CPU_S, help="CPU-time limit per bot process, in seconds.")] = None,
    until_durak: Annotated[int | None, typer.Option(
        min=1, help="Stop early once some bot has been the durak this many times.")] = None,
    duplicate: DuplicateFlag = False,
    keep_bots_across_twins: KeepTwinsFlag = False,
    log_dir: Annotated[Path, typer.Option(help="Where the match log and bots' stderr go.")] = Path("logs"),
    no_log: Annotated[bool, typer.Option("--no-log", help="Write no match log.")] = False,
    listen: ListenOption = "127.0.0.1:7724",
    token: TokenOption = None,
    connect_wait: ConnectWaitOption = CONNECT_WAIT_S,
    reconnect_grace: ReconnectGraceOption = 0.0,
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    recover: RecoverFlag = False,
    adjudicate: AdjudicateOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")] = False,
) -> None:
    """Play a match between bots and print how often each was the durak.

    Every game is written to a match log (JSON Lines, under --log-dir) that
    `durak-ref replay LOG --verify` checks. Exit code 0 when the match ran (bot
    forfeits are results, not errors), 2 for unusable input (a bot that fails its first
    start-up, unless --recover), 130 when interrupted.
    """
    from ..table.runner import SeatOptions, run_match

    table_rules = make_rules(rules, set_ or [])
    specs = [parse_bot_spec(b) for b in bots]
    table_rules.check_table(len(specs))
    config = MatchConfig(
        rules=table_rules, games=games, seed=run_seed(seed),
        tc=TimeControl.parse(tc, move_time, startup_time, clock, backstop),
        illegal_retries=parse_on_illegal(on_illegal), max_restarts=max_restarts,
        until_durak=until_durak, duplicate=duplicate, adjudicate=parse_budget(adjudicate),
        keep_bots_across_twins=keep_bots_across_twins)
    check_range(connect_wait, "--connect-wait", 0, WEEK_S, low_open=True)
    check_range(reconnect_grace, "--reconnect-grace", 0, WEEK_S)
    listen_at, tokens = _tcp_seats(specs, config, listen, token)
    mode, binds = sandbox_options(sandbox, bind)
    options = SeatOptions(max_memory_mb=max_memory, max_cpu_s=max_cpu, listen=listen_at,
                             limits=bot_limits(max_memory, max_procs, cpus, ponder),
                             tokens=tuple(tokens.items()), connect_wait=connect_wait,
                             reconnect_grace=reconnect_grace, sandbox=mode, binds=binds)
    with progress_for(games, "match", enabled=not as_json, console=err) as advance:
        result = run_match(specs, config, log_dir=None if no_log else log_dir,
                           options=options, recover=recover,
                           on_game=lambda record, res: advance(res.progress_text()),
                           on_tcp=lambda text: err.print(f"tcp: {text}", markup=False, highlight=False))
    from ..printing.report import show_match_result
    show_match_result(result.summary(), config.seed, sys.argv[1:], out, as_json=as_json)
    if result.interrupted:
        err.print("durak-ref: interrupted; the log holds every finished game")
        raise typer.Exit(130)


def _tcp_seats(specs: list[BotSpec], config: MatchConfig, listen: str,
               token: list[str] | None) -> tuple[tuple[str, int], dict[str, str]]:
    """Where ``match`` listens for its tcp:NAME seats and each one's token (a generated one
    printed); a note when other machines can connect. A TCP seat has no CPU clock: under
    ``--clock cpu`` the match is refused before it listens."""
    from ..seats.tcp import is_loopback, new_token, parse_listen
    tcp = [spec for spec in specs if spec.kind == "tcp"]
    if config.tc.cpu and tcp:
        fail(f"--clock cpu: {', '.join(spec.text for spec in tcp)}: {TCP_NO_CPU_TIME}")
    listen_at = parse_listen(listen)
    tokens = dict(name_value_pairs(token or [], "--token", "NAME=SECRET"))
    for spec in tcp:
        if spec.name not in tokens:
            tokens[spec.name] = new_token()
            err.print(f"token for tcp:{spec.name}: {tokens[spec.name]}", markup=False, highlight=False)
    if tcp and not is_loopback(listen_at[0]):
        err.print(f"durak-ref: note: listening on {listen_at[0]}, not loopback: other machines can "
                  f"connect (tokens are checked)", markup=False, highlight=False)
    return listen_at, tokens


PersonClockOption = Annotated[str | None, typer.Option(
    "--tc", "--clock", help="Game clock per seat (yours too), BASE+INCREMENT in seconds, e.g. "
    "300+5; the time left is shown with every move. Out of time is a lost game. Default: no "
    "game clock.")]
PersonMoveTimeOption = Annotated[float | None, typer.Option(
    "--move-time", help="Limit for every single decision (yours too), in seconds. Default: none "
    "worth the name (a week), so a program bot that hangs is stopped with Ctrl-C.")]


def play(
    bots: Annotated[list[str] | None, typer.Argument(
        help=f"The bots you play against, one per other seat (1 to {MAX_SEATS - 1}; default: "
        "builtin:greedy): "
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
    tc: PersonClockOption = None,
    move_time: PersonMoveTimeOption = None,
    log_dir: Annotated[Path, typer.Option(help="Where the game log and bots' stderr go.")] = Path("logs"),
    no_log: Annotated[bool, typer.Option("--no-log", help="Write no game log.")] = False,
    sandbox: SandboxOption = "auto",
    bot_uids: BotUidsOption = None,
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
    from ..human.terminal import run_play, stdout_writer
    from ..seats.players import is_seat_name
    from ..table.clock import MAX_SECONDS

    if not is_seat_name(name):
        fail(f"--name {name!r}: use letters, digits, '_', '-', '.'")
    table_rules = make_rules(rules, set_ or [])
    specs = [parse_bot_spec(b) for b in (bots or ["builtin:greedy"])]
    if any(s.kind == "tcp" for s in specs):
        fail("play seats built-in bots and bot programs; tcp:NAME seats are for `match` and `serve`")
    if len(specs) > MAX_SEATS - 1:
        fail(f"a table has at most {MAX_SEATS} seats: you and 1 to {MAX_SEATS - 1} bots, "
             f"not {len(specs)} bots")
    table_rules.check_table(len(specs) + 1)
    if not 0 <= seat <= len(specs):
        fail(f"--seat {seat}: a table of {len(specs) + 1} has seats 0..{len(specs)}")
    time_control = TimeControl.parse(tc, move_time if move_time is not None or tc else MAX_SECONDS)
    config = MatchConfig(rules=table_rules, games=games, seed=run_seed(seed), tc=time_control)
    from ..table.runner import SeatOptions
    mode, binds = sandbox_options(sandbox, bind)
    screen = stdout_writer(sys.stderr if as_json else sys.stdout)
    result = run_play(specs, seat, name, config, hints=hints, write=screen,
                      log_dir=None if no_log else log_dir,
                      options=SeatOptions(sandbox=mode, binds=binds))
    from ..human.view import person_result_lines
    from ..printing.report import show_match_result
    from ..table.seeds import seed_lines
    summary = result.summary()
    if as_json:
        show_match_result(summary, config.seed, sys.argv[1:], out, as_json=True, command="play")
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


def bot(
    spec: Annotated[str, typer.Argument(help="The built-in to play: builtin:NAME or "
                                        "builtin:NAME:KEY=VALUE,... (as in any bot spec).",
                                        show_default=False)],
) -> None:
    """Play a built-in bot as a program: the bot protocol over stdin/stdout (protocol/SPEC.md).

    What the referee runs for a searching built-in (ismcts, expert, solver) wherever it must
    not decide in the referee's process: under `serve`, and opposite a program bot, where it
    is a sandboxed, frozen-off-move seat like any program. Any referee can seat it:
    `durak-ref match "durak-ref bot builtin:expert" ./mybot`. Its search is seeded from
    $DURAK_BOT_KEY (default: durak-ref:NAME). Prints no result: its output is the protocol.
    """
    from ..seats.builtinbot import run_builtin

    run_builtin(spec)
