"""Every example bot over a real TCP connection (SPEC section 13), against a tiny
synchronous fake referee: a listening socket on 127.0.0.1 (port chosen by the OS) that
accepts one connection and scripts the conversation frame by frame.

Every accept, read and exit has a deadline, so a bot that hangs fails its test.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from protocol import messages as m
from protocol.codec import FrameDecoder, encode
from support import ATTACK_OBSERVATION, HAND

ROOT = Path(__file__).resolve().parents[2]
PYTHON_EXAMPLES = ROOT / "examples" / "python"
TIMEOUT = 10.0
TOKEN = "s3cret-token"
SEAT = "seat-a"

OBSERVATION = ATTACK_OBSERVATION
LEGAL = [{"type": "attack", "card": c} for c in HAND]
GAME_START = m.game_start_msg(game=0, seat=0, players=2, names=[SEAT, "other"], rules={"deck": 36},
                              dealer=1, trump="TH", hand=HAND, attacker=0)

BOTS = ["minimal", "random", "greedy", "c", "javascript"]


@pytest.fixture(params=BOTS)
def bot_argv(request: pytest.FixtureRequest) -> list[str]:
    """The command line of one example bot (without the TCP options)."""
    if request.param == "c":
        return request.getfixturevalue("c_bot_cmd")
    if request.param == "javascript":
        return request.getfixturevalue("js_bot_cmd")
    return [sys.executable, str(PYTHON_EXAMPLES / f"{request.param}_bot.py")]


class Bot:
    """A bot process that talks TCP: stdin is /dev/null, stdout and stderr are captured."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def finish(self) -> tuple[int, str, str]:
        """Wait for the bot to exit on its own: (status, stdout, stderr)."""
        try:
            out, err = self.proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            pytest.fail(f"the bot did not exit within {TIMEOUT} s; stderr: {err.decode(errors='replace')}")
        return self.proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


class Connection:
    """The referee's end of one accepted connection, frame by frame."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.decoder = FrameDecoder()

    def send(self, *messages: dict[str, Any]) -> None:
        self.sock.sendall(b"".join(encode(x) for x in messages))

    def _fill(self, deadline: float) -> bytes:
        self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            return self.sock.recv(65536)
        except ConnectionResetError:
            return b""
        except TimeoutError:
            pytest.fail("the bot sent nothing before the timeout")

    def recv(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while (message := self.decoder.next_message()) is None:
            data = self._fill(deadline)
            if not data:
                pytest.fail("the bot closed the connection")
            self.decoder.feed(data)
        return message

    def expect_eof(self) -> None:
        """The bot closed its end (after bye), sending nothing more."""
        deadline = time.monotonic() + TIMEOUT
        while data := self._fill(deadline):
            self.decoder.feed(data)
        assert self.decoder.next_message() is None and self.decoder.buffered == 0

    def close(self) -> None:
        self.sock.close()


class FakeReferee:
    """Listens on 127.0.0.1 (or ::1), port 0: the OS picks a free port."""

    def __init__(self, family: socket.AddressFamily = socket.AF_INET) -> None:
        host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
        self.listener = socket.create_server((host, 0), family=family)
        self.port = self.listener.getsockname()[1]
        self.address = f"[{host}]:{self.port}" if family == socket.AF_INET6 else f"{host}:{self.port}"
        self.connections: list[Connection] = []
        self.bots: list[Bot] = []

    def start(self, argv: list[str], *, name: str | None = SEAT) -> Bot:
        options = ["--connect", self.address, "--token", TOKEN] + (["--name", name] if name else [])
        bot = Bot(argv + options)
        self.bots.append(bot)
        return bot

    def accept(self, bot: Bot) -> Connection:
        """The bot's connection; fails with its stderr if it exits or never connects."""
        deadline = time.monotonic() + TIMEOUT
        self.listener.settimeout(0.05)
        while True:
            try:
                sock, _ = self.listener.accept()
                break
            except TimeoutError:
                if bot.proc.poll() is not None or time.monotonic() > deadline:
                    status, _, err = bot.finish() if bot.proc.poll() is not None else (None, "", "")
                    pytest.fail(f"the bot did not connect (exit status {status}); stderr: {err}")
        connection = Connection(sock)
        self.connections.append(connection)
        return connection

    def close(self) -> None:
        for bot in self.bots:
            bot.kill()
        for connection in self.connections:
            connection.close()
        self.listener.close()


@pytest.fixture
def referee():
    server = FakeReferee()
    yield server
    server.close()


def handshake(connection: Connection, name: str = SEAT) -> m.BotHello:
    connection.send(m.hello_msg("fake-referee"))
    hello = m.parse_bot_message(connection.recv())
    assert isinstance(hello, m.BotHello)
    assert (hello.protocol, hello.name, hello.token) == (1, name, TOKEN)
    return hello


@pytest.mark.process
def test_plays_over_tcp_and_exits_0_after_bye(referee: FakeReferee, bot_argv: list[str]) -> None:
    bot = referee.start(bot_argv)
    connection = referee.accept(bot)
    handshake(connection)
    connection.send(m.ping_msg(1))  # idle, waiting for its first game
    assert connection.recv() == m.pong_msg(1)
    connection.send(GAME_START, m.request_msg(1, 0, OBSERVATION, LEGAL, m.clock_map(60000, 500, 2000)))
    action = m.parse_bot_message(connection.recv())
    assert isinstance(action, m.ActionMessage) and action.id == 1 and action.action in LEGAL
    connection.send(m.event_msg(0, {"type": "attack", "seat": 0, "card": action.action["card"]}),
                    m.game_end_msg(0, 1, "normal", "test over"), m.ping_msg(2**33))
    assert connection.recv() == m.pong_msg(2**33)
    connection.send(m.bye_msg())
    status, out, err = bot.finish()
    assert (status, out) == (0, ""), err
    connection.expect_eof()


@pytest.mark.process
def test_exits_0_when_the_referee_closes_the_connection(referee: FakeReferee, bot_argv: list[str]) -> None:
    bot = referee.start(bot_argv, name=None)
    connection = referee.accept(bot)
    connection.send(m.hello_msg("fake-referee"))
    hello = m.parse_bot_message(connection.recv())
    assert isinstance(hello, m.BotHello) and hello.token == TOKEN and hello.name  # its own name
    connection.send(GAME_START)
    connection.close()
    status, out, err = bot.finish()
    assert (status, out) == (0, ""), err


@pytest.mark.process
@pytest.mark.parametrize(("code", "before_hello"), [("auth", False), ("busy", False), ("limit", True)])
def test_refused_connection_exits_1(referee: FakeReferee, bot_argv: list[str], code: str,
                                    before_hello: bool) -> None:
    bot = referee.start(bot_argv)
    connection = referee.accept(bot)
    if not before_hello:
        handshake(connection)
    connection.send(m.error_msg(code, f"refused ({code}) for a test", True))
    connection.close()
    status, out, err = bot.finish()
    assert status == 1 and out == ""
    assert f"refused ({code}) for a test" in err


@pytest.mark.process
def test_ipv6_loopback(bot_argv: list[str]) -> None:
    try:
        server = FakeReferee(socket.AF_INET6)
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    try:
        bot = server.start(bot_argv)
        connection = server.accept(bot)
        handshake(connection)
        connection.send(m.bye_msg())
        status, _, err = bot.finish()
        assert status == 0, err
    finally:
        server.close()


@pytest.mark.process
def test_no_referee_listening_exits_1(bot_argv: list[str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:  # a port that was free a moment ago
        port = probe.getsockname()[1]
    bot = Bot(bot_argv + ["--connect", f"127.0.0.1:{port}", "--token", TOKEN])
    status, out, err = bot.finish()
    assert status == 1 and out == ""
    assert "refused" in err.lower()


@pytest.mark.process
@pytest.mark.parametrize(
    "options",
    [["--connect", "127.0.0.1:7724"], ["--token", TOKEN], ["--connect", "127.0.0.1:99999", "--token", TOKEN]],
    ids=["no-token", "no-connect", "bad-port"],
)
def test_bad_options_exit_2(bot_argv: list[str], options: list[str]) -> None:
    status, out, err = Bot(bot_argv + options).finish()
    assert status == 2 and out == ""
    assert err.strip()


def test_the_sdk_takes_the_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from protocol.bot import TOKEN_ENV, split_connect_args

    monkeypatch.setenv(TOKEN_ENV, "from-env")
    tcp, rest = split_connect_args(["--connect", "127.0.0.1:7724", "7"])
    assert tcp is not None and tcp.token == "from-env" and rest == ["7"]
    tcp, _ = split_connect_args(["--connect", "127.0.0.1:7724", "--token", "flag"])
    assert tcp is not None and tcp.token == "flag"  # the option wins
    monkeypatch.delenv(TOKEN_ENV)
    with pytest.raises(ValueError, match="DURAK_TOKEN"):
        split_connect_args(["--connect", "127.0.0.1:7724"])
