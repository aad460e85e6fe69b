"""The ``durak-ref`` command line: parse, call, print, map errors to exit codes.

Exit codes: 0 success; 1 the job ran but failed its check; 2 the user's input was
unusable (bad option, bot spec, file); 3 an internal error (a bug in durak-ref).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from . import __version__
from .players import BUILTINS, BotSpecError, BotStartError, parse_bot_spec
from .rules.options import OPTIONS, PRESETS, RulesError, make_rules

app = typer.Typer(
    name="durak-ref",
    help="Referee, protocol server and tournament runner for Durak bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(help="Measure speed (figures to compare within one run, not verdicts).",
                        no_args_is_help=True)
app.add_typer(bench_app, name="bench")

out = Console()
err = Console(stderr=True)

_SET_HELP = ("Override one table rule, as name=value; repeatable. Options: "
             + ", ".join(f"{o.name} ({o.allowed})" for o in OPTIONS)
             + ". See `durak-ref rules`.")
_RULES_HELP = f"Rules preset: {', '.join(PRESETS)}."
_BOTS_HELP = ("Bots, one per seat (2 to 6): builtin:NAME (" + ", ".join(BUILTINS)
              + "), or a command line such as \"python3 examples/python/greedy_bot.py\", "
              "optionally named: alice=\"./mybot --fast\".")


def fail(message: str, code: int = 2) -> NoReturn:
    """One clear line on stderr, then exit (2: the user's input was unusable)."""
    err.print(f"durak-ref: error: {message}", highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(code)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


@app.command()
def match(
    bots: Annotated[list[str], typer.Argument(help=_BOTS_HELP, show_default=False)],
    games: Annotated[int, typer.Option("--games", "-n", min=1, help="Games to play.")] = 10,
    seed: Annotated[int, typer.Option(help="Match seed; game i is dealt from seed 'SEED:i'.")] = 1,
    rules: Annotated[str, typer.Option("--rules", help=_RULES_HELP)] = "classic",
    set_: Annotated[list[str] | None, typer.Option("--set", help=_SET_HELP, show_default=False)] = None,
    until_durak: Annotated[int | None, typer.Option(
        min=1, help="Stop early once some bot has been the durak this many times.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object.")] = False,
) -> None:
    """Play a match between bots and print how often each was the durak."""
    from .runner import run_match

    try:
        table_rules = make_rules(rules, set_ or [])
        specs = [parse_bot_spec(b) for b in bots]
        table_rules.check_table(len(specs))
    except (RulesError, BotSpecError) as exc:
        fail(str(exc))
    try:
        result = run_match(specs, table_rules, games=games, seed=seed, until_durak=until_durak)
    except BotStartError as exc:
        fail(str(exc))
    summary = result.summary()
    summary["rules_text"] = table_rules.describe()
    summary["forfeit_details"] = [dict(g.forfeit, game=g.index) for g in result.games if g.forfeit]
    if as_json:
        emit_json(summary)
    else:
        from .report import print_match
        print_match(summary, out)


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
    from .report import presets_table, rules_table
    out.print(rules_table())
    out.print(presets_table())


@bench_app.command("engine")
def bench_engine_cmd(
    games: Annotated[int, typer.Option(min=1, help="Games per round.")] = 2000,
    rounds: Annotated[int, typer.Option(min=1, help="Rounds; the median is reported.")] = 5,
    players: Annotated[int, typer.Option(min=2, max=6)] = 2,
    rules: Annotated[str, typer.Option("--rules", help=_RULES_HELP)] = "classic",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Random games in-process: games and actions per second (median of rounds)."""
    from .bench import bench_engine

    try:
        make_rules(rules).check_table(players)
    except RulesError as exc:
        fail(str(exc))
    result = bench_engine(games=games, repeats=rounds, players=players, preset=rules)
    if as_json:
        emit_json(result)
        return
    out.print(f"engine: {result['games_per_s']:.0f} games/s, {result['actions_per_s']:.0f} actions/s "
              f"({result['us_per_action']:.2f} µs/action, {result['actions_per_game']:.1f} actions/game; "
              f"median of {rounds} rounds of {games} random {players}-player games, "
              f"rules {rules}, deck {result['deck']}; one core)")


@app.command()
def version() -> None:
    """Print the durak-ref and protocol versions."""
    from protocol.messages import PROTOCOL_VERSION
    out.print(f"durak-ref {__version__}, protocol {PROTOCOL_VERSION}")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("durak-ref: interrupted")
        sys.exit(130)
