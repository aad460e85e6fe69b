"""The standing ladder: `ladder add`, `ladder run`, `ladder show`, `ladder history`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..console.progress import progress_for
from ..league.runs import lock_run, stopping
from ..printing.jsonresult import emit_result, ladder_rows, rows_of_tally
from ..rules.options import make_rules
from ..table.adjudicator import parse_budget
from ..table.clock import DEFAULT_BACKSTOP, TimeControl
from ..table.match import MatchConfig
from .common import (
    bot_limits,
    err,
    fail,
    open_store_at,
    out,
    print_seed,
    reproduce_fields,
    run_seed,
    sandbox_options,
    store_target,
)
from .options import (
    DEFAULT_DB,
    SEED_HELP,
    AdjudicateOption,
    BackstopOption,
    BindOption,
    BotUidsOption,
    ClockKindOption,
    CpusOption,
    DbOption,
    JsonFlag,
    KeepTwinsFlag,
    LogDirOption,
    MaxMemoryOption,
    MaxProcsOption,
    MoveTimeOption,
    PonderFlag,
    RecoverFlag,
    RulesOption,
    SandboxOption,
    SetOption,
)


def add(
    name: Annotated[str, typer.Argument(help="The bot's ladder name.", show_default=False)],
    command: Annotated[str, typer.Argument(help="Its command line, or builtin:NAME.", show_default=False)],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Register a bot on the ladder at the start rating."""
    from ..league.ladder import add_bot

    with open_store_at(db) as store:
        add_bot(store, name, command)
        rating = store.ladder_rating(name)
    out.print(f"{name} is on the ladder (rating {rating[0]:.0f}, {rating[1]} games)", markup=False)


def run(
    games: Annotated[int, typer.Option(min=1, help="Games to play (in deal pairs).")] = 20,
    concurrency: Annotated[int, typer.Option(min=1, help="Games at once.")] = 1,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    move_time: MoveTimeOption = None,
    clock: ClockKindOption = "wall",
    backstop: BackstopOption = DEFAULT_BACKSTOP,
    seed: Annotated[str | None, typer.Option(help=SEED_HELP + " It also breaks pairing ties.",
                                             show_default=False)] = None,
    db: DbOption = DEFAULT_DB,
    log_dir: LogDirOption = Path("logs"),
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    recover: RecoverFlag = False,
    adjudicate: AdjudicateOption = None,
    keep_bots_across_twins: KeepTwinsFlag = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print games played and the ladder as JSON.")] = False,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    bot_uids: BotUidsOption = None,
    cpus: CpusOption = 1.0,
    ponder: PonderFlag = False,
) -> None:
    """Play ladder games: the bot with the fewest games meets the closest rating.

    Every game and rating update is stored as it finishes; one ladder run per store at a
    time (a second is refused, naming the running one). Program bots' stderr goes to a
    log beside the game log in --log-dir; the summary says where."""
    bot_limits(max_memory, max_procs, cpus, ponder)  # the run's default (every route)
    from ..league.ladder import play_ladder

    mode, binds = sandbox_options(sandbox, bind)
    config = MatchConfig(rules=make_rules(rules, set_ or []), seed=run_seed(seed),
                         tc=TimeControl.parse(None, move_time, clock=clock, backstop=backstop),
                         adjudicate=parse_budget(adjudicate), keep_bots_across_twins=keep_bots_across_twins)
    from ..table.failfast import ForfeitTally, forfeit_line
    tally = ForfeitTally()  # this run's games and forfeits per bot, for the summary

    def on_game(record: Any) -> None:
        tally.add(record)
        advance("")

    from ..league.ladder import LADDER_ID

    with open_store_at(db) as store:
        # One ladder run per store at a time: two would number their games alike and
        # overwrite each other's rating updates.
        lock = lock_run(store_target(db), store, LADDER_ID, what=f"the ladder of {store.name}",
                        then="then run it again")
        with lock, progress_for(games, "ladder", console=err) as advance, \
                stopping("every finished game and rating is stored"):
            run = play_ladder(store, config, games=games, concurrency=concurrency,
                              log_dir=log_dir, on_game=on_game,
                              sandbox=mode, bind=binds, recover=recover)
        if as_json:
            from ..seats.sandbox import Sandbox  # resolved as the run resolved it (cached, no warning)
            emit_result("ladder run", {
                "played": run.played, "standings": ladder_rows(store.ladder()),
                "sandbox": Sandbox(mode, warn=False).resolve().mode,
                "this_run": rows_of_tally(tally.as_dict(), run.stderr_logs),
                "warnings": tally.warnings(), "log": run.log_path, **reproduce_fields(config.seed)})
            return
        from ..printing.report import print_warnings, stderr_where
        print_warnings(tally.warnings(), out)
        out.print(f"{run.played} ladder games played"
                  + (f"; log {run.log_path}" if run.log_path else ""), markup=False, highlight=False)
        print_ladder(store)
        for name, row in tally.as_dict().items():
            out.print(forfeit_line(name, row["games"], row["forfeits"], stderr_where(run.stderr_logs.get(name))),
                      markup=False, highlight=False)
        print_seed(config.seed)


def print_ladder(store: Any) -> None:
    from rich.markup import escape
    from rich.table import Table
    t = Table(title="ladder (incremental Elo)", title_justify="left")
    for col in ("rank", "bot", "rating", "games"):
        t.add_column(col, justify="left" if col == "bot" else "right")
    for i, (bot, rating, games) in enumerate(store.ladder()):
        t.add_row(str(i + 1), escape(bot), f"{rating:.1f}", str(games))
    out.print(t)


def show(
    db: DbOption = DEFAULT_DB,
    as_json: JsonFlag = False,
) -> None:
    """The ladder table: rating and games per bot, and the registered bots people may
    seat in the lobby of `serve --http` (`register NAME --lobby on`)."""
    with open_store_at(db) as store:
        lobby = sorted(store.lobby_bots())
        if as_json:
            emit_result("ladder show", {"standings": ladder_rows(store.ladder()), "lobby_bots": lobby})
        else:
            print_ladder(store)
            out.print(f"lobby play allowed: {', '.join(lobby) or 'none'} (durak-ref register NAME "
                      f"--lobby on|off)", markup=False, highlight=False)


def history(
    name: Annotated[str, typer.Argument(help="A ladder bot.", show_default=False)],
    db: DbOption = DEFAULT_DB,
    as_json: JsonFlag = False,
) -> None:
    """A bot's rating after each of its ladder games."""
    with open_store_at(db) as store:
        if store.ladder_rating(name) is None:
            fail(f"{name!r} is not on the ladder; bots: "
                 f"{', '.join(b for b, _, _ in store.ladder()) or 'none'}")
        rows = store.history(name)
    if as_json:
        emit_result("ladder history", {"name": name, "history": [
            {"game": g, "before": round(b, 2), "after": round(a, 2), "at": at} for _, g, b, a, at in rows]})
        return
    for _, g, b, a, at in rows:
        out.print(f"{at}  game {g}: {b:.1f} -> {a:.1f} ({a - b:+.1f})", markup=False, highlight=False)
