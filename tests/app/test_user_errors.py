"""The user's errors: one base, UserError, caught in one place.

Every error that is the user's fault subclasses ``referee.errors.UserError`` and says
what to do about it (its ``hint``, listed in docs/CLI.md); the command group reports any
of them as one ``durak-ref: error:`` line and the class's exit code, in-process (typer's
CliRunner) as in a real process; a bug is not dressed up as a user error: it escapes
the group, and ``main`` prints its traceback and exits 3.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import referee
from referee.cli import Commands, app
from referee.errors import Interrupted, UserError, user_errors
from referee.rules.options import RulesError

ROOT = Path(__file__).resolve().parents[2]
CLI_DOC = ROOT / "docs" / "CLI.md"


def every_user_error() -> list[type[UserError]]:
    """Every UserError subclass of referee, every module imported first (the env extra's
    modules too: they are installed for the tests)."""
    for module in pkgutil.walk_packages(referee.__path__, "referee."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    return user_errors()


def test_every_user_error_says_what_to_do_and_its_exit_code() -> None:
    classes = every_user_error()
    assert len(classes) >= 25, [c.__name__ for c in classes]
    for cls in classes:
        assert "hint" in vars(cls), f"{cls.__qualname__} must say what the user can do (its own hint)"
        assert cls.hint and not cls.hint.endswith("."), cls.hint  # a phrase: the line goes on
        assert cls.exit_code == 2, cls.__qualname__


def error_table() -> str:
    """docs/CLI.md's table of the user's errors, from the classes."""
    rows = [f"| `{c.__name__}` | `{c.__module__}` | {c.exit_code} | {c.hint} |"
            for c in sorted(every_user_error(), key=lambda c: c.__name__)]
    return "\n".join(["| error | where | exit | what to do |", "|---|---|---|---|", *rows])


def test_docs_list_every_user_error_with_its_hint() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    assert error_table() in text, ("docs/CLI.md's table of errors is out of date; it should read:\n"
                                   + error_table())


def test_a_user_error_is_one_line_with_what_to_do_then_and_its_code() -> None:
    probe = typer.Typer(cls=Commands)

    @probe.command()
    def go(kind: str) -> None:
        if kind == "then":
            raise RulesError("unknown option 'x'", then="run durak-ref rules")
        if kind == "group":  # a run's tasks failed together: the user's error is the cause
            raise ExceptionGroup("tasks", [RuntimeError("follow-on"), RulesError("unknown preset 'y'")])
        if kind == "bug-group":
            raise ExceptionGroup("tasks", [RuntimeError("a bug")])
        if kind == "interrupted":
            raise Interrupted("finished games are stored")
        raise KeyboardInterrupt

    @probe.command()
    def other() -> None:  # two commands: a group, not a lone command
        """Nothing."""

    runner = CliRunner()
    then = runner.invoke(probe, ["go", "then"])
    assert (then.exit_code, then.stderr) == (2, "durak-ref: error: unknown option 'x'; run durak-ref rules\n")
    group = runner.invoke(probe, ["go", "group"])
    assert (group.exit_code, group.stderr) == (2, "durak-ref: error: unknown preset 'y'\n")
    bug = runner.invoke(probe, ["go", "bug-group"])
    assert isinstance(bug.exception, ExceptionGroup) and "error" not in bug.stderr
    stopped = runner.invoke(probe, ["go", "interrupted"])
    assert (stopped.exit_code, stopped.stderr) == (130, "durak-ref: interrupted; finished games are stored\n")
    plain = runner.invoke(probe, ["go", "plain"])
    assert (plain.exit_code, plain.stderr) == (130, "durak-ref: interrupted\n")


def bad_inputs(tmp: Path) -> list[tuple[list[str], str]]:
    """A bad input to a command of each group, and the words its error line must hold."""
    db = str(tmp / "store.sqlite")
    missing = str(tmp / "missing.jsonl")
    return [
        (["match", "builtin:random", "builtin:greedy", "--rules", "nope", "--no-log"], "'nope'"),
        (["play", "builtin:random", "--seat", "7", "--no-log"], "--seat 7"),
        (["replay", missing], missing),
        (["verify", "--db", str(tmp / "none.sqlite")], "none.sqlite"),
        (["ratings", "--db", str(tmp / "none.sqlite")], "none.sqlite"),
        (["stats", missing], missing),
        (["tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy", "--seed", "a b",
          "--db", db], "--seed"),
        (["sprt", "builtin:random", "builtin:greedy", "--elo0", "20", "--elo1", "10", "--db", db], "elo0 < elo1"),
        (["worker", "--db", db], "PostgreSQL"),
        (["ladder", "run", "--rules", "nope", "--db", db], "'nope'"),
        (["register", "bad name!", "--db", db], "bot name 'bad name!'"),
        (["serve", "--listen", "127.0.0.1:99999", "--db", db], "99999"),
        (["check-bot", "builtin:nope"], "'nope'"),
        (["bench", "engine", "--rules", "nope"], "'nope'"),
    ]


def test_a_bad_input_to_each_command_group_is_one_error_line_naming_it(tmp_path: Path) -> None:
    runner = CliRunner()
    for words, named in bad_inputs(tmp_path):
        result = runner.invoke(app, words)
        assert result.exit_code == 2, (words, result.exit_code, result.output, result.exception)
        assert isinstance(result.exception, SystemExit), (words, result.exception)
        errors = [line for line in result.stderr.splitlines() if line.startswith("durak-ref: error: ")]
        assert len(errors) == 1 and named in errors[0], (words, result.stderr)
        assert "Traceback" not in result.output, words


@pytest.mark.process
def test_a_bug_prints_its_traceback_and_exits_3(tmp_path: Path) -> None:
    """Our bug, not the user's: the traceback a report needs, and a line saying whose fault."""
    child = ("import sys, referee.cli as cli\n"
             "@cli.app.command('boom')\n"
             "def boom() -> None:\n"
             "    raise RuntimeError('a bug in a command')\n"
             "sys.argv = ['durak-ref', 'boom']\n"
             "cli.main()\n")
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" in proc.stderr and "RuntimeError: a bug in a command" in proc.stderr
    assert re.search(r"durak-ref: internal error: this is a bug in durak-ref, not in your bots or "
                     r"input; please report it", proc.stderr), proc.stderr


@pytest.mark.parametrize("path", sorted((ROOT / "referee" / "commands").glob("*.py")), ids=lambda p: p.name)
def test_commands_catch_no_user_error_themselves(path: Path) -> None:
    """The group reports every UserError: a command that catches one to print it, or keeps
    a list of the ones it expects, is a second copy of that (one that drops the class's
    exit code and misses the next new class). Catching one to add what the command knows
    and raising it on is fine."""
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"fail\((str\(exc\)|f\"\{exc\})", text)
    tuples = re.findall(r"except \(([A-Za-z, ]+)\)", text)
    mine = {cls.__name__ for cls in every_user_error()} | {"UserError"}
    assert [names for names in tuples if set(re.split(r",\s*", names)) & mine] == [], tuples
