"""Bot names as the user types them and as they are shown: a name the grammar refuses is
an error naming it, a mistyped built-in gets a suggestion, and a name is shown as typed
(no emoji codes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee.seats.players import BotSpecError, parse_bot_spec
from support import cli

NAMED_BOT = Path(__file__).resolve().parents[1] / "referee" / "bots" / "named_bot.py"


@pytest.mark.parametrize("spec, name", [(":x:=builtin:random", ":x:"), ("a/b=builtin:greedy", "a/b"),
                                        ("my bot!=builtin:random", "my bot!"), ("é=./bot", "é"),
                                        ("x:y=python3 bot.py", "x:y")])
def test_a_name_the_grammar_refuses_is_an_error_naming_it(spec: str, name: str) -> None:
    with pytest.raises(BotSpecError, match="bot name " + repr(name).replace("\\", "\\\\")):
        parse_bot_spec(spec)


@pytest.mark.parametrize("spec, argv", [("python3 bot.py --depth=3", ("python3", "bot.py", "--depth=3")),
                                        ("./bots/x=1", ("./bots/x=1",))])
def test_an_equals_sign_inside_a_command_is_part_of_the_command(spec: str, argv: tuple[str, ...]) -> None:
    parsed = parse_bot_spec(spec)
    assert parsed.kind == "command" and parsed.argv == argv and not parsed.named


@pytest.mark.process
def test_a_mistyped_builtin_gets_a_suggestion(tmp_path: Path) -> None:
    proc = cli("match", "builtin:randmo", "builtin:greedy", "--no-log", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == ("durak-ref: error: unknown built-in bot 'randmo'; did you mean builtin:random? "
                           "built-ins: random, greedy, gentle, ismcts, expert, solver\n")


@pytest.mark.process
def test_a_bad_name_on_the_command_line_is_refused_before_anything_starts(tmp_path: Path) -> None:
    proc = cli("match", ":x:=builtin:random", "builtin:greedy", "--no-log", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "bot name ':x:'" in proc.stderr and "No such file" not in proc.stderr


@pytest.mark.process
def test_a_hello_name_with_emoji_codes_is_shown_as_typed(tmp_path: Path) -> None:
    proc = cli("match", f"{sys.executable} {NAMED_BOT} :x:", "builtin:greedy", "--games", "2", "--no-log",
               "--sandbox", "none", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ":x:" in proc.stdout and "\u274c" not in proc.stdout
