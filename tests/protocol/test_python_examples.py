"""The Python example bots as real processes over real pipes, with a scripted referee.

Kept small: one conversation per bot, tiny children, a watchdog so a hung child fails the
test instead of hanging it.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from protocol import messages as m
from protocol.codec import decode, encode
from support import ATTACK_OBSERVATION, HAND

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"
TIMEOUT = 30.0

OBSERVATION = ATTACK_OBSERVATION
DEFEND = {**OBSERVATION, "attacker": 1, "defender": 0, "phase": "defend", "bout": 2,
          "table": [["8S", None]], "hand": ["7H", "9C", "JD", "QS", "AS"], "hand_sizes": [5, 5]}
LEGAL_ATTACK = [{"type": "attack", "card": c} for c in HAND]
LEGAL_DEFEND = [{"type": "cover", "slot": 0, "card": "QS"}, {"type": "cover", "slot": 0, "card": "AS"},
                {"type": "cover", "slot": 0, "card": "7H"}, {"type": "take"}]
CLOCK = m.clock_map(60000, 500, 2000)
GAME_START = m.game_start_msg(game=0, seat=0, players=2, names=["bot", "other"], rules={"deck": 36},
                              dealer=1, trump="TH", hand=HAND, attacker=0)


class Child:
    """A bot process with frame-level helpers and a watchdog."""

    def __init__(self, *argv: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, **(env or {})},
        )
        self._watchdog = threading.Timer(TIMEOUT, self.proc.kill)
        self._watchdog.daemon = True
        self._watchdog.start()

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(encode(x) for x in messages))
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        header = self.proc.stdout.read(4)
        assert len(header) == 4, f"bot closed stdout; stderr: {self.stderr()}"
        (size,) = struct.unpack(">I", header)
        return decode(header + self.proc.stdout.read(size))

    def finish(self, *, close_stdin: bool = True) -> tuple[int, bytes, str]:
        """Wait for exit: (status, rest of stdout, stderr). With ``close_stdin`` False the
        child must exit on its own (after bye), before its stdin is closed."""
        if not close_stdin:
            self.proc.wait(timeout=TIMEOUT)
        out, err = self.proc.communicate(timeout=TIMEOUT)  # closes stdin
        self._watchdog.cancel()
        return self.proc.returncode, out, err.decode(errors="replace")

    def stderr(self) -> str:
        self.proc.kill()
        return self.proc.communicate()[1].decode(errors="replace")


def play_conversation(child: Child) -> list[dict[str, Any]]:
    """Handshake, a ping, one game with two requests, bye. Returns the two actions sent."""
    child.send(m.hello_msg("test-referee"))
    hello = m.parse_bot_message(child.receive())
    assert isinstance(hello, m.BotHello) and hello.protocol == 1 and hello.name
    assert hello.token is None  # over pipes: no token
    child.send(m.ping_msg(5))  # also valid over pipes
    assert child.receive() == m.pong_msg(5)
    child.send(GAME_START, m.request_msg(1, 0, OBSERVATION, LEGAL_ATTACK, CLOCK))
    first = m.parse_bot_message(child.receive())
    assert isinstance(first, m.ActionMessage) and first.id == 1 and first.action in LEGAL_ATTACK
    child.send(m.event_msg(0, {"type": "attack", "seat": 0, "card": first.action["card"]}),
               m.request_msg(2, 0, DEFEND, LEGAL_DEFEND, CLOCK))
    second = m.parse_bot_message(child.receive())
    assert isinstance(second, m.ActionMessage) and second.id == 2 and second.action in LEGAL_DEFEND
    child.send(m.game_end_msg(0, 1, "normal", "test over"), m.bye_msg())
    return [first.action, second.action]


@pytest.mark.process
def test_minimal_bot_plays_the_cheapest_card() -> None:
    child = Child(str(EXAMPLES / "minimal_bot.py"))
    assert play_conversation(child) == [{"type": "attack", "card": "6S"},
                                        {"type": "cover", "slot": 0, "card": "QS"}]
    status, out, err = child.finish(close_stdin=False)
    assert (status, out, err) == (0, b"", "")


@pytest.mark.process
def test_random_bot_is_reproducible_with_a_seed() -> None:
    runs = []
    for _ in range(2):
        child = Child(str(EXAMPLES / "random_bot.py"), "1234")
        runs.append(play_conversation(child))
        status, out, err = child.finish(close_stdin=False)
        assert (status, out) == (0, b""), err
    assert runs[0] == runs[1]


@pytest.mark.process
def test_random_bot_seed_from_environment_and_exit_at_end_of_stdin() -> None:
    child = Child(str(EXAMPLES / "random_bot.py"), env={"DURAK_SEED": "7"})
    child.send(m.hello_msg("test-referee"))
    child.receive()
    status, out, err = child.finish()  # no bye: end of stdin
    assert (status, out) == (0, b""), err


@pytest.mark.process
def test_greedy_bot_answers_from_legal() -> None:
    pytest.importorskip("protocol.strategies")
    child = Child(str(EXAMPLES / "greedy_bot.py"))
    play_conversation(child)
    status, out, err = child.finish(close_stdin=False)
    assert (status, out) == (0, b""), err


SDK_BOT = """
import sys
from protocol.bot import run_function
def choose(observation, legal):
    print("thinking out loud")           # must not corrupt stdout
    if observation["phase"] == "defend":
        raise RuntimeError("cannot defend")
    return legal[0]
run_function(choose, name="chatty")
"""


@pytest.mark.process
def test_sdk_keeps_stray_prints_off_stdout_and_crashes_loudly() -> None:
    child = Child("-c", SDK_BOT)
    child.send(m.hello_msg("test-referee"))
    assert child.receive()["name"] == "chatty"
    child.send(GAME_START, m.request_msg(1, 0, OBSERVATION, LEGAL_ATTACK, CLOCK))
    assert child.receive() == m.action_msg(1, LEGAL_ATTACK[0])
    child.send(m.request_msg(2, 0, DEFEND, LEGAL_DEFEND, CLOCK))
    status, out, err = child.finish()
    assert status == 1
    assert out == b""  # no frame, no stray text
    assert "thinking out loud" in err
    assert "RuntimeError: cannot defend" in err


@pytest.mark.parametrize("name", ["minimal_bot.py", "random_bot.py", "greedy_bot.py"])
def test_examples_are_executable_scripts(name: str) -> None:
    path = EXAMPLES / name
    assert path.read_text().startswith("#!/usr/bin/env python3\n")
    assert os.access(path, os.X_OK)


def test_minimal_bot_uses_only_stdlib_and_msgpack() -> None:
    import ast

    tree = ast.parse((EXAMPLES / "minimal_bot.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported - sys.stdlib_module_names == {"msgpack"}
