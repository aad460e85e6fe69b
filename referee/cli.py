"""The ``durak-ref`` command line: the commands of referee/commands, put under one name.

Exit codes: 0 success; 1 the job ran but failed its check; 2 the user's input was
unusable (bad option, bot spec, file: a ``UserError``, referee/errors); 3 an internal error
(a bug in durak-ref); 130 interrupted (Ctrl-C, or SIGTERM for the long jobs: see
referee/console/interrupt.py). docs/CLI.md tells the user the same.

The user's errors are caught in one place, ``Commands.invoke``, so a test that runs a
command in-process (typer's CliRunner) sees what a user sees; a bug escapes it and is
caught by ``main``, which prints the traceback (what a bug report needs) and exits 3.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from .commands import arena, bench, checkbot, info, ladder, play, results, runs
from .commands.common import err, print_error
from .console.usererror import first_of
from .errors import Interrupted, UserError


class Commands(TyperGroup):
    """The command group that reports the user's errors: a UserError raised by any
    command (or the first one in a group of errors a run's tasks raised together: the
    others follow from it) becomes one ``durak-ref: error:`` line on stderr and the
    exit code of its class; Ctrl-C that reaches it (Interrupted, or a plain
    KeyboardInterrupt) one ``durak-ref: interrupted`` line and exit 130. Anything else
    propagates."""

    def invoke(self, ctx: Any) -> Any:  # click's Context (typer vendors click privately)
        try:
            return super().invoke(ctx)
        except UserError as exc:
            reported: UserError = exc
        except BaseExceptionGroup as group:
            leaf = first_of(group, (UserError,))
            if not isinstance(leaf, UserError):
                raise
            reported = leaf
        except KeyboardInterrupt as stop:
            # A job that ended cleanly on Ctrl-C or SIGTERM; what it kept, if it says.
            err.print("durak-ref: interrupted" + (f"; {stop}" if str(stop) else ""),
                      markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(Interrupted.exit_code) from None
        print_error(reported.line())
        raise typer.Exit(reported.exit_code)


def _group(help: str) -> typer.Typer:
    # Plain help: paragraphs reflowed to the terminal's width and one column of option
    # help as wide as it can be (rich's boxed panels leave ragged, narrow text at 80).
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=None)


app = typer.Typer(name="durak-ref", help="Referee, protocol server and tournament runner for Durak bots.",
                  cls=Commands, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  rich_markup_mode=None)
bench_app = _group("Measure speed (figures to compare within one run, not verdicts).")
app.add_typer(bench_app, name="bench")
ladder_app = _group("A standing ladder of bots with incremental Elo, kept in the store.")
app.add_typer(ladder_app, name="ladder")


def _print_version(value: bool) -> None:
    if value:
        info.version(as_json=False)
        raise typer.Exit(0)


@app.callback()
def _top(version_: Annotated[bool, typer.Option(
        "--version", help="Print the durak-ref and protocol versions and exit.", is_eager=True,
        callback=_print_version)] = False) -> None:
    """Referee, protocol server and tournament runner for Durak bots."""


# The commands, in the order `durak-ref --help` lists them.
app.command()(play.match)
app.command()(play.play)
app.command()(play.bot)
app.command()(results.replay)
app.command()(results.verify)
app.command()(info.rules)
app.command()(runs.tournament)
app.command()(runs.sprt)
app.command()(runs.worker)
app.command()(results.ratings)
app.command()(results.report)
app.command()(results.stats)
app.command("check-bot")(checkbot.check_bot)
app.command()(arena.register)
app.command()(arena.unregister)
app.command()(arena.serve)
app.command()(info.version)
ladder_app.command("add")(ladder.add)
ladder_app.command("run")(ladder.run)
ladder_app.command("show")(ladder.show)
ladder_app.command("history")(ladder.history)
bench_app.command("engine")(bench.engine)
bench_app.command("solver")(bench.solver)
bench_app.command("protocol")(bench.protocol)
bench_app.command("match")(bench.match)
bench_app.command("tournament")(bench.tournament)
bench_app.command("distributed")(bench.distributed)
bench_app.command("soak")(bench.soak)
bench_app.command("tcp")(bench.tcp)
bench_app.command("env")(bench.env)
bench_app.command("strength")(bench.strength)
bench_app.command("loop")(bench.loop)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("durak-ref: interrupted")
        sys.exit(130)
    except Exception:  # noqa: BLE001 - the last line of defence: say whose fault it is
        import traceback
        traceback.print_exc()
        err.print("durak-ref: internal error: this is a bug in durak-ref, not in your bots or "
                  "input; please report it with the traceback above", markup=False)
        sys.exit(3)
