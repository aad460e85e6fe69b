"""The options several commands share, one definition each: name, help text, bounds.

A command declares ``seed: SeedOption = None``; the checks of the values typer cannot
make (ranges of floats, seeds, store addresses) are in ``common``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..rules.options import OPTIONS, PRESETS, SEATS_TEXT
from ..seats import uids
from ..seats.players import BUILTINS
from ..table.clock import DEFAULT_MOVE_TIME, MAX_BACKSTOP

#: Upper bounds of the resource limits: far above any machine, low enough for setrlimit.
MAX_MEMORY_MB = 1 << 24  # 16 TiB
MAX_CPU_S = 366 * 24 * 3600  # a year
WEEK_S = 7 * 24 * 3600
DEFAULT_DB = "logs/durak.sqlite"

SET_HELP = ("Override one table rule, as name=value; repeatable. Options: "
            + ", ".join(f"{o.name} ({o.allowed})" for o in OPTIONS)
            + ". See `durak-ref rules`.")
RULES_HELP = f"Rules preset: {', '.join(PRESETS)}."
SEED_HELP = ("The seed that keys every deal (1 to 128 visible characters): give the one "
             "printed at the end of a run to deal the same decks again. Default: a secret "
             "random seed, printed (with the command that reproduces the run) when it ends.")
SANDBOX_HELP = ("How bot programs run. auto: in a bubblewrap sandbox when bwrap works here, else "
                "unsandboxed with a warning; bwrap: sandboxed or exit 2; none: unsandboxed (a "
                "warning). Sandboxed, a bot sees a read-only filesystem without the logs, store "
                "and config, a private /tmp, no network and none of the referee's processes.")
BIND_HELP = "A file or directory sandboxed bots may read, e.g. a bot's data (repeat)."
RECOVER_HELP = ("Play on when a bot program fails its first start-up (missing script, exits at "
                "once, bad hello, no hello in time): its games become forfeits. Without it the "
                "run stops with exit 2, naming the bot, its command and its stderr.")
BOTS_HELP = (f"Bots, one per seat ({SEATS_TEXT}): builtin:NAME (" + ", ".join(BUILTINS)
             + "; parameters after a second colon: builtin:ismcts:ms=40 or "
             "builtin:ismcts:iterations=200,c=0.7), or a command line such as \"python3 examples/python/greedy_bot.py\", "
             "optionally named: alice=\"./mybot --fast\".")
MOVE_TIME_HELP = (f"Limit for every single decision, in seconds (> 0). Default: "
                  f"{DEFAULT_MOVE_TIME:g} s when there is no game clock (--tc), so no bot can "
                  f"hang the run.")
RECONNECT_HELP = ("For TCP bots: seconds a game waits, paused and with the bot's clock stopped, for "
                  "a bot whose connection dropped while it was to decide; it reconnects with its "
                  "token and gets game_start and the open request again. 0 (default): a drop is a "
                  "disconnect forfeit at once. After the grace it is one as well.")
DB_FORMS = ("A file path (SQLite), or postgresql://USER[:PASSWORD]@HOST[:PORT]/DB for a "
            "PostgreSQL server several machines share; default: $DURAK_DB if set.")
HTTP_HELP = ("Also serve a live page at HOST:PORT (e.g. 127.0.0.1:8080; :PORT alone means "
             "loopback): the tables in play "
             "with public information only, standings, recent games with their replays. Use a "
             "loopback address unless other machines should watch (a warning says so).")
DB_HELP = "The result store."
ADJUDICATE_HELP = ("End a 2-seat endgame (talon empty, two seats holding cards) as soon as the "
                   "endgame solver proves its outcome, scored as perfect play ends it; the log "
                   "holds the solver's line and `replay --verify` re-proves it. The value is the "
                   "solver's budget per game: on (100ms), a time such as 100ms or 0.5s, or a "
                   "number of positions such as 20000nodes (the same games on any machine). The "
                   "solver runs between decisions, never on a bot's clock. Default: off.")


def db_option(help: str) -> Any:
    """The --db option of every command with a store (env DURAK_DB)."""
    return typer.Option("--db", help=f"{help} {DB_FORMS}", envvar="DURAK_DB", metavar="DB")


AdjudicateOption = Annotated[str | None, typer.Option(help=ADJUDICATE_HELP, metavar="BUDGET",
                                                      show_default=False)]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
ReportJsonFlag = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
DbOption = Annotated[str, db_option(DB_HELP)]
RulesOption = Annotated[str, typer.Option("--rules", help=RULES_HELP)]
SetOption = Annotated[list[str] | None, typer.Option("--set", help=SET_HELP, show_default=False)]
BindOption = Annotated[list[Path] | None, typer.Option(help=BIND_HELP, show_default=False)]
SandboxOption = Annotated[str, typer.Option(help=SANDBOX_HELP)]
MoveTimeOption = Annotated[float | None, typer.Option(help=MOVE_TIME_HELP)]
RecoverFlag = Annotated[bool, typer.Option("--recover", help=RECOVER_HELP)]
SeedOption = Annotated[str | None, typer.Option(help=SEED_HELP, show_default=False)]
LogDirOption = Annotated[Path, typer.Option(help="Where game logs and bots' stderr go.")]
RunLogDirOption = Annotated[Path | None, typer.Option(
    "--log-dir", help="Where game logs and bots' stderr go. Default: logs; with --resume, "
    "the directory the run's stored games were logged to.", show_default=False)]
GamesOption = Annotated[int, typer.Option("--games", "-n", min=1, help="Games to play.")]
ClockOption = Annotated[str | None, typer.Option(
    "--tc", help="Game clock per seat, BASE+INCREMENT in seconds (Fischer), e.g. 60+0.5. "
    "Default: no game clock.")]
CLOCK_KIND_HELP = ("Which time a decision is charged. wall: the time on the clock, from the "
                   "request written to the answer read. cpu: the CPU time the seat itself "
                   "spent (a bot program's control group, a built-in's thread), so a host "
                   "loaded by other work does not change the results; the time limits and "
                   "what bots are told are then CPU seconds, with a wall-clock backstop "
                   "(--backstop). cpu needs every seat measurable: a TCP bot is refused, and so "
                   "is a bot program where no cgroup with CPU accounting can be had.")
BACKSTOP_HELP = (f"Under --clock cpu: the wall time the referee waits for a decision, as a "
                 f"multiple of its CPU budget (1 to {MAX_BACKSTOP:g}), so a bot that sleeps or "
                 f"blocks still forfeits on time.")
ReconnectGraceOption = Annotated[float, typer.Option(help=RECONNECT_HELP)]
ClockKindOption = Annotated[str, typer.Option("--clock", help=CLOCK_KIND_HELP, metavar="wall|cpu")]
BackstopOption = Annotated[float, typer.Option(help=BACKSTOP_HELP)]
CpuOption = Annotated[int, typer.Option(help="Pin the referee and the bots to this CPU (-1: do not pin).")]
HttpOption = Annotated[str | None, typer.Option(help=HTTP_HELP, show_default=False)]
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
DuplicateFlag = Annotated[bool, typer.Option(
    "--duplicate", help="Play each deal once per seat rotation (2 players: the same deck "
    "with seats swapped), so the luck of the deal cancels out.")]
KeepTwinsFlag = Annotated[bool, typer.Option(
    "--keep-bots-across-twins", help="Keep a program bot's process running into another seat "
    "rotation of a duplicate deal it has played (saves one start-up per bot and deal). It gives "
    "up sound duplicates: the bot has seen the deal and can know its opponents' hands (a warning "
    "says so; the log header's duplicates is \"memory\"). Default: that rotation gets a fresh "
    "process.")]
PonderFlag = Annotated[bool, typer.Option(
    "--ponder", help="Let bots run while another bot decides (default: a bot not asked to "
    "decide is frozen, so it cannot think on, or steal, its opponent's time).")]

TRUST_HELP = ("The referee key the logs must be signed with: ed25519:HEX (64 hex digits, as a "
              "log header's signing_key shows it) or a key file. Default: this machine's referee "
              "key file ($DURAK_REF_KEY, else ~/.local/share/durak-ref/referee-ed25519.key) if it "
              "exists. A log signed by any other key fails: a forger re-signs with a key of their "
              "own and writes it into the header.")
REQUIRE_SIGNATURE_HELP = ("Fail a log that carries no signature, or whose signatures cannot be "
                          "checked against a trusted key (default: such a log is reported, and "
                          "its games are still replayed and checked).")
TrustOption = Annotated[str | None, typer.Option("--trust", help=TRUST_HELP, metavar="KEY",
                                                 show_default=False)]
RequireSignatureFlag = Annotated[bool, typer.Option("--require-signature", help=REQUIRE_SIGNATURE_HELP)]

def _choose_bot_uids(value: str | None) -> str | None:
    uids.choose(value)  # UidRangeError (exit 2) naming the option for a bad range
    return value


BotUidsOption = Annotated[str | None, typer.Option(
    uids.OPTION, envvar=uids.ENV, metavar="FIRST-LAST", show_default=False,
    callback=_choose_bot_uids,
    help="Uids sandboxed bots run as when the referee is root: each running bot process "
    "gets one of its own, so no bot can take another's per-user kernel pools (inotify "
    f"instances, pending signals, message queues, processes). FIRST and LAST inclusive, "
    f"from {uids.LOWEST} to {uids.HIGHEST}, holding no account's uid nor 65534. Default: "
    f"{uids.DEFAULT_UIDS[0]}-{uids.DEFAULT_UIDS[1]}.")]
