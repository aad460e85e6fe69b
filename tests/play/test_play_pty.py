"""`durak-ref play` through a real pseudo-terminal: a scripted person reads the screen,
chooses among the legal moves it shows, makes typos, and plays games to their end."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from support import DURAK_REF, cli

pytestmark = pytest.mark.process

pexpect = pytest.importorskip("pexpect", reason="pexpect (test extra) is needed to drive a terminal")

ROOT = Path(__file__).resolve().parents[2]
MENU_LINE = re.compile(r"^\s+(\d+)\) (.+?)\s*$", re.M)
LOG_LINE = re.compile(r"^log: (\S+)", re.M)


def spawn(tmp_path: Path, *args: str) -> pexpect.spawn:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return pexpect.spawn(str(DURAK_REF), ["play", *args, "--log-dir", str(tmp_path / "logs")],
                         cwd=str(tmp_path), env=env, encoding="utf-8", codec_errors="replace", timeout=30,
                         dimensions=(50, 200))


def menu(screen: str) -> list[str]:
    """The legal moves of the last menu on the screen, as shown (trumps marked *)."""
    block = screen.rsplit("your move:", 1)[1]
    return [text for _, text in MENU_LINE.findall(block)]


def answer(moves: list[str], turn: int) -> tuple[str, str]:
    """What the person types for their ``turn``-th decision and the move that means.
    The forms rotate: the number, the move's text, a bare card, a lower-case word."""
    choice = moves[turn % len(moves)]
    plain = choice.replace("*", "")
    words = plain.split()
    form = turn % 3
    if form == 0:
        return str(moves.index(choice) + 1), plain
    if len(words) == 1:
        return words[0].upper() if turn % 2 else words[0], plain
    card = words[-1]
    if form == 2 and sum(m.replace("*", "").split()[-1] == card for m in moves) == 1:
        return card.lower(), plain
    return plain.lower(), plain


def assert_hand_sorted_with_trumps_marked(screen: str) -> None:
    """The last 'your hand:' line: suit by suit (C D H S), low to high, trumps last and
    every trump (and only a trump) marked *."""
    trump = re.findall(r"trump ([2-9TJQKA])([CDHS])\*", screen)[-1][1]
    hand = screen.rsplit("your hand: ", 1)[1].splitlines()[0].split()
    assert all(c.endswith("*") == (c[1] == trump) for c in hand), (trump, hand)
    key = [(c[1] == trump, "CDHS".index(c[1]), "23456789TJQKA".index(c[0])) for c in hand]
    assert key == sorted(key), hand


def log_of(child: pexpect.spawn) -> dict:
    child.expect(LOG_LINE)
    path = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    return {"path": path, "header": lines[0], "games": [x for x in lines if x["type"] == "game"]}


def test_a_person_plays_a_whole_game_through_the_terminal_and_typos_are_asked_again(tmp_path: Path) -> None:
    child = spawn(tmp_path, "builtin:greedy", "--seed", "pty-1", "--hints", "--clock", "3600+5")
    chosen: list[str] = []
    typos = [("7Z", "'7z' is not a card"), ("99", "there is no action 99"), ("", "nothing typed"),
             ("cover 9 AS", "cover 9 AS is not a legal move now"),
             ("\xff\xfe", "is not a card")]  # bytes that are not UTF-8
    while True:
        if child.expect(["\r\n> ", r"=== game 0 over: (.*) ==="]) == 1:
            break
        screen = child.before
        moves = menu(screen)
        assert moves, screen
        assert "hint: greedy would play" in screen
        assert re.search(r"clock: \d+\.\d s left \(\+5 per move\)", screen), screen
        assert_hand_sorted_with_trumps_marked(screen)
        if typos:
            typo, expected = typos.pop(0)
            if typo == "\xff\xfe":  # a typo, not the end of input
                os.write(child.child_fd, b"\xff\xfe\n")
            else:
                child.sendline(typo)
            child.expect(r"\r\n  (.*)\r\n")
            message = child.match.group(1)
            assert expected in message, message
            child.expect("> ")
        typed, move = answer(moves, len(chosen))
        child.sendline(typed)
        chosen.append(move)
    log = log_of(child)
    assert child.exitstatus == 0
    (game,) = log["games"]
    asked = [text for seat, text, forced, _ in game["decisions"] if seat == 0 and not forced]
    assert asked == chosen  # every move reached the referee as the person chose it, typos none
    assert game["termination"] in ("normal", "draw")
    assert log["header"]["bots"][0]["kind"] == "human"
    assert cli("replay", log["path"], "--verify", cwd=tmp_path).returncode == 0
    page = cli("replay", log["path"], "--html", tmp_path / "game.html", "--seat", "0", "--game", "0",
               cwd=tmp_path)
    assert page.returncode == 0, page.stderr  # the game as the person saw it, as a page


def test_end_of_input_leaves_the_table_the_game_is_lost_and_logged(tmp_path: Path) -> None:
    program = f"{sys.executable} {ROOT / 'examples' / 'python' / 'greedy_bot.py'}"  # a bot program
    child = spawn(tmp_path, "builtin:random", program, "--seat", "1", "--games", "3",
                  "--seed", "pty-2")
    child.expect("\r\n> ")
    child.sendeof()
    child.expect("end of input: you leave the table")
    log = log_of(child)
    assert child.exitstatus == 0
    (game,) = log["games"]  # the match stopped: games 1 and 2 were not played
    assert (game["termination"], game["durak"], game["players"][1]) == ("disconnect", 1, "you")
    assert cli("replay", log["path"], "--verify", cwd=tmp_path).returncode == 0


def test_ctrl_c_stops_at_once_without_a_traceback(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--seed", "pty-3")
    child.expect("\r\n> ")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "interrupted" in child.before
    assert "Traceback" not in child.before


def test_unusable_options_are_exit_2_naming_what_is_wrong(tmp_path: Path) -> None:
    cases = [
        (("--seat", "2"), "--seat 2: a table of 2 has seats 0..1"),
        (("--seat", "-1"), "--seat -1"),
        (("--name", "a b"), "--name 'a b'"),
        (("builtin:nope",), "unknown built-in bot 'nope'"),
        (("tcp:x",), "tcp:NAME seats are for `match` and `serve`"),
        (tuple(["builtin:greedy"] * 6), "you and 1 to 5 bots, not 6 bots"),
        (("--tc", "fast"), "time control 'fast'"),
        (("--set", "deck=7"), "deck"),
    ]
    for args, message in cases:
        done = cli("play", *args, "--no-log", cwd=tmp_path)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
        assert "your move" not in done.stdout
