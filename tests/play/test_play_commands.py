"""`durak-ref play` for a person, through a real pseudo-terminal: the prompt names the
commands, help / discard / quit do what they say, the discard pile is shown card by card,
the end screen is for the person, and no command is suggested that would not work."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from support import DURAK_REF, cli

pytestmark = pytest.mark.process

pexpect = pytest.importorskip("pexpect", reason="pexpect (test extra) is needed to drive a terminal")

PROMPT = "\r\n> "
DISCARD = re.compile(r"discard pile \((\d+)\): ([^\r\n]*)")


def spawn(tmp_path: Path, *args: str) -> pexpect.spawn:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return pexpect.spawn(str(DURAK_REF), ["play", *args, "--log-dir", str(tmp_path / "logs")],
                         cwd=str(tmp_path), env=env, encoding="utf-8", codec_errors="replace", timeout=30,
                         dimensions=(50, 200))


def finish(child: pexpect.spawn) -> str:
    child.expect(pexpect.EOF)
    child.close()
    return child.before


def test_the_prompt_names_the_commands_and_help_lists_them_without_spending_the_move(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--seed", "cmd-1")
    child.expect(PROMPT)
    assert re.search(r"your move: .*help.*discard.*quit", child.before), child.before
    child.sendline("help")
    child.expect(PROMPT)
    shown = child.before
    for command in ("help", "discard", "quit"):
        assert re.search(rf"^\s+{command}\s+\S", shown, re.M), shown
    assert "Ctrl-D" in shown and "type a number from the list" in shown
    assert "is not a card" not in shown  # a command, not a typo
    child.sendline("1")  # the move is still asked for, and taken
    child.expect(r"  you: ")
    child.sendintr()
    finish(child)


def test_quit_leaves_the_table_the_game_is_lost_and_logged(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--seed", "cmd-2", "--games", "3")
    child.expect(PROMPT)
    child.sendline("quit")
    child.expect("quit: you leave the table; this game is lost")
    text = finish(child)
    assert child.exitstatus == 0, text
    log = re.search(r"^log: (\S+)", text, re.M).group(1)
    games = [line for line in Path(log).read_text().splitlines() if '"type": "game"' in line
             or '"type":"game"' in line]
    assert len(games) == 1 and '"disconnect"' in games[0]  # the match stopped after that game
    assert cli("replay", log, "--verify", cwd=tmp_path).returncode == 0


def test_the_discard_pile_is_shown_card_by_card_on_the_table_and_by_the_discard_command(
        tmp_path: Path) -> None:
    child = spawn(tmp_path, "--seed", "cmd-3")
    hand: list[str] = []
    while True:  # play the first listed move until a bout has been beaten off
        child.expect(PROMPT)
        screen = child.before
        pile = DISCARD.findall(screen)
        assert pile, screen  # the table always shows the pile, empty or not
        count, cards = pile[-1]
        if int(count):
            hand = screen.rsplit("your hand: ", 1)[1].splitlines()[0].split()
            break
        child.sendline("1")
    listed = cards.split()
    assert len(listed) == int(count) and len(set(listed)) == len(listed), cards
    assert all(re.fullmatch(r"[2-9TJQKA][CDHS]\*?", c) for c in listed), cards
    assert not set(listed) & set(hand)
    child.sendline("discard")
    child.expect(PROMPT)
    assert DISCARD.findall(child.before) == [(count, cards)]
    child.sendintr()
    finish(child)


def test_the_end_screen_says_who_lost_the_score_and_the_games_played_not_the_operators_table(
        tmp_path: Path) -> None:
    child = spawn(tmp_path, "--seed", "cmd-4", "--games", "2")
    child.expect(PROMPT)
    child.sendline("quit")  # game 0 is lost by quitting: the end screen follows
    text = finish(child)
    end = text.split("this game is lost", 1)[1]
    assert "=== 1 game played ===" in end, end
    assert re.search(r"you were the durak 1 time\b", end), end
    assert re.search(r"greedy was the durak 0 times", end), end
    assert "your score: 0 of 1" in end
    for operator_only in ("mean ms", "decisions", "+/-", "Elo", "inf", "┃"):
        assert operator_only not in end, (operator_only, end)


def test_ctrl_c_before_any_game_ended_suggests_no_replay_of_a_log_without_games(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--seed", "cmd-5")
    child.expect(PROMPT)
    child.sendintr()
    text = finish(child)
    assert child.exitstatus == 130
    assert "durak-ref replay" not in text, text
    assert "no game was finished" in text
    suggested = re.search(r"same deals again: durak-ref (.*)", text).group(1).split()
    assert suggested[0] == "play" and "--seed" in suggested  # what it does suggest is a real command
