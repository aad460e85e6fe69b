"""The Python bot SDK against a scripted referee, over in-memory transports."""

from __future__ import annotations

import io
from typing import Any

import pytest

from protocol import messages as m
from protocol.bot import (
    DEFAULT_PORT,
    Bot,
    ConnectArgs,
    RefusedError,
    SocketTransport,
    parse_address,
    parse_connect_args,
    play,
    run,
    run_function,
    split_connect_args,
)
from protocol.codec import FrameDecoder, encode
from protocol.errors import LocalProtocolError, RemoteProtocolError

OBS = {"seat": 0, "players": 2, "hand": ["6S", "7H"], "trump_suit": "H"}
LEGAL = [{"type": "attack", "card": "6S"}, {"type": "attack", "card": "7H"}]
GAME_START = m.game_start_msg(game=0, seat=0, players=2, names=["me", "them"], rules={"deck": 36},
                              dealer=1, trump="TH", hand=["6S", "7H"], attacker=0)


def script(*messages: dict[str, Any]) -> bytes:
    return b"".join(encode(x) for x in messages)


class MemoryTransport:
    """The referee's side, pre-recorded: hands out its bytes ``chunk`` at a time (no read1,
    so the SDK must cope with short reads) and records what the bot writes."""

    def __init__(self, data: bytes, chunk: int = 5) -> None:
        self._data = io.BytesIO(data)
        self._chunk = chunk
        self.written = bytearray()
        self.flushes = 0

    def read(self, n: int) -> bytes:
        return self._data.read(min(n, self._chunk))

    def write(self, data: bytes) -> None:
        self.written += data

    def flush(self) -> None:
        self.flushes += 1

    def sent(self) -> list[dict[str, Any]]:
        decoder = FrameDecoder()
        decoder.feed(bytes(self.written))
        decoder.close()
        return list(decoder.messages())


class Recorder(Bot):
    name = "recorder"
    version = "2.0"
    author = "tests"

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def choose(self, observation: dict, legal: list[dict]) -> dict:
        assert self.request is not None
        self.seen.append(("choose", (self.request["id"], self.game, observation, self.request["clock"])))
        return legal[-1]

    def on_hello(self, message: dict) -> None:
        self.seen.append(("hello", message["referee"]))

    def on_game_start(self, message: dict) -> None:
        self.seen.append(("game_start", message["seat"]))

    def on_event(self, event: dict) -> None:
        self.seen.append(("event", event["type"]))

    def on_game_end(self, message: dict) -> None:
        self.seen.append(("game_end", message["durak"]))

    def on_error(self, message: dict) -> None:
        self.seen.append(("error", message["code"]))

    def on_bye(self, message: dict) -> None:
        self.seen.append(("bye", message["reason"]))


CONVERSATION = script(
    m.hello_msg("test-referee"),
    GAME_START,
    m.event_msg(0, {"type": "draw", "seat": 1, "count": 6}),
    m.request_msg(1, 0, OBS, LEGAL, m.clock_map(60000, 500, None)),
    m.error_msg("illegal", "try again", fatal=False),
    m.request_msg(2, 0, OBS, LEGAL[:1], m.clock_map(59000, 500, None)),
    m.event_msg(0, {"type": "attack", "seat": 0, "card": "6S"}),
    m.game_end_msg(0, 1, "normal", "done"),
    m.bye_msg(),
    m.request_msg(3, 1, OBS, LEGAL),  # after bye: must never be answered
)


@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 16])
def test_scripted_conversation(chunk: int) -> None:
    transport = MemoryTransport(CONVERSATION, chunk)
    bot = Recorder()
    play(bot, transport)
    assert transport.sent() == [
        {"type": "hello", "protocol": 1, "name": "recorder", "version": "2.0", "author": "tests"},
        {"type": "action", "id": 1, "action": {"type": "attack", "card": "7H"}},
        {"type": "action", "id": 2, "action": {"type": "attack", "card": "6S"}},
    ]
    assert transport.flushes == 3  # one flush per frame
    clock = {"remaining_ms": 60000, "increment_ms": 500, "move_ms": None}
    assert bot.seen == [
        ("hello", "test-referee"),
        ("game_start", 0),
        ("event", "draw"),
        ("choose", (1, 0, OBS, clock)),
        ("error", "illegal"),
        ("choose", (2, 0, OBS, {**clock, "remaining_ms": 59000})),
        ("event", "attack"),
        ("game_end", 1),
        ("bye", "match_end"),
    ]
    assert bot.request is None


def test_end_of_stream_without_bye_ends_cleanly() -> None:
    transport = MemoryTransport(script(m.hello_msg("r"), m.request_msg(1, 0, OBS, LEGAL)))
    play(Recorder(), transport)
    assert [x["type"] for x in transport.sent()] == ["hello", "action"]


def test_end_of_stream_before_hello_sends_nothing() -> None:
    transport = MemoryTransport(b"")
    play(Recorder(), transport)
    assert transport.written == b""


def test_choose_may_return_loose_card_text() -> None:
    transport = MemoryTransport(script(m.hello_msg("r"), m.request_msg(1, 0, OBS, LEGAL), m.bye_msg()))
    run_function(lambda obs, legal: {"type": "attack", "card": "10h"}, name="loose", transport=transport)
    assert transport.sent()[1]["action"] == {"type": "attack", "card": "TH"}


def test_run_function_builds_a_bot_with_hello_fields() -> None:
    transport = MemoryTransport(script(m.hello_msg("r"), m.bye_msg()))
    run_function(lambda obs, legal: legal[0], name="fn", version="0.1", token="secret", transport=transport)
    assert transport.sent() == [{"type": "hello", "protocol": 1, "name": "fn", "version": "0.1", "token": "secret"}]


def test_read1_is_preferred_when_available() -> None:
    class Buffered(MemoryTransport):
        def read(self, n: int) -> bytes:  # a buffered read(n) would block for n bytes
            raise AssertionError("read() used although read1() exists")

        def read1(self, n: int) -> bytes:
            return super().read(n)

    transport = Buffered(script(m.hello_msg("r"), m.bye_msg()))
    play(Recorder(), transport)
    assert transport.sent()[0]["type"] == "hello"


def test_socket_transport_uses_recv_and_sendall() -> None:
    class FakeSocket:
        def __init__(self, data: bytes) -> None:
            self.incoming = io.BytesIO(data)
            self.outgoing = bytearray()

        def recv(self, n: int) -> bytes:
            return self.incoming.read(min(n, 7))

        def sendall(self, data: bytes) -> None:
            self.outgoing += data

    sock = FakeSocket(script(m.hello_msg("r"), m.request_msg(1, 0, OBS, LEGAL), m.bye_msg()))
    play(Recorder(), SocketTransport(sock))
    decoder = FrameDecoder()
    decoder.feed(bytes(sock.outgoing))
    assert [x["type"] for x in decoder.messages()] == ["hello", "action"]


def test_fatal_error_then_next_game() -> None:
    transport = MemoryTransport(script(
        m.hello_msg("r"), GAME_START, m.request_msg(1, 0, OBS, LEGAL),
        m.error_msg("timeout", "too slow", fatal=True), m.game_end_msg(0, 0, "timeout", "slow"),
        {**GAME_START, "game": 1}, m.request_msg(2, 1, OBS, LEGAL), m.bye_msg(),
    ))
    bot = Recorder()
    play(bot, transport)
    assert [x.get("id") for x in transport.sent()] == [None, 1, 2]
    assert bot.game == 1


def test_default_on_error_logs_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    class Plain(Bot):
        def choose(self, observation: dict, legal: list[dict]) -> dict:
            return legal[0]

    play(Plain(), MemoryTransport(script(m.hello_msg("r"), m.error_msg("stale", "late answer", False), m.bye_msg())))
    assert "referee error (stale, fatal=False): late answer" in capsys.readouterr().err


# -- failures ----------------------------------------------------------------------------------


def test_bad_action_from_choose_is_a_local_error() -> None:
    class Typo(Bot):
        def choose(self, observation: dict, legal: list[dict]) -> dict:
            return {"type": "atack", "card": "6S"}

    transport = MemoryTransport(script(m.hello_msg("r"), m.request_msg(1, 0, OBS, LEGAL)))
    with pytest.raises(LocalProtocolError) as info:
        play(Typo(), transport)
    assert str(info.value).startswith(
        "Typo.choose() returned a bad action: action.type: unknown action type 'atack'")
    assert len(transport.sent()) == 1  # only the hello went out


def test_crash_in_choose_exits_1_with_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    def choose(obs: dict, legal: list[dict]) -> dict:
        raise ZeroDivisionError("my bug")

    transport = MemoryTransport(script(m.hello_msg("r"), m.request_msg(1, 0, OBS, LEGAL)))
    with pytest.raises(SystemExit) as info:
        run_function(choose, transport=transport)
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError: my bug" in err


def test_bad_return_value_exits_1_with_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    transport = MemoryTransport(script(m.hello_msg("r"), m.request_msg(1, 0, OBS, LEGAL)))
    with pytest.raises(SystemExit) as info:
        run_function(lambda obs, legal: None, transport=transport)  # type: ignore[arg-type,return-value]
    assert info.value.code == 1
    assert "choose() returned a bad action: action: expected an action map" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"\xff\xff\xff\xff", "frame header says 4294967295 bytes; the limit is 1048576 [bytes: ff ff ff ff]"),
        (script(m.request_msg(1, 0, OBS, LEGAL)), "type: expected the referee's hello first, got 'request'"),
        (script(m.hello_msg("r"), m.hello_msg("r")), "type: the referee sent hello twice"),
        (script(m.hello_msg("r"), {"type": "nonsense"}), "type: unknown message type 'nonsense'"),
        (script(m.hello_msg("r"))[:-1], "stream ended"),
    ],
)
def test_referee_protocol_errors_exit_1_with_one_line(
    data: bytes, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        run(Recorder(), MemoryTransport(data))
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("recorder: the referee broke the protocol: ")
    assert text in err
    assert "Traceback" not in err


def test_play_raises_remote_errors() -> None:
    with pytest.raises(RemoteProtocolError, match="hello twice"):
        play(Recorder(), MemoryTransport(script(m.hello_msg("r"), m.hello_msg("r"))))


def test_broken_pipe_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    class Closed(MemoryTransport):
        def write(self, data: bytes) -> None:
            raise BrokenPipeError

    with pytest.raises(SystemExit) as info:
        run(Recorder(), Closed(script(m.hello_msg("r"))))
    assert info.value.code == 1
    assert "the referee closed the connection" in capsys.readouterr().err


# -- ping / pong -------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 64])
def test_ping_is_answered_with_pong_without_the_bot_seeing_it(chunk: int) -> None:
    transport = MemoryTransport(script(
        m.hello_msg("r"), m.ping_msg(0),                       # waiting for the first game
        GAME_START, m.request_msg(1, 0, OBS, LEGAL), m.game_end_msg(0, 1, "normal", "done"),
        m.ping_msg(2**40), m.ping_msg(9),                       # between games, back to back
        m.bye_msg(), m.ping_msg(10),                            # after bye: never answered
    ), chunk)
    bot = Recorder()
    play(bot, transport)
    assert transport.sent() == [
        {"type": "hello", "protocol": 1, "name": "recorder", "version": "2.0", "author": "tests"},
        {"type": "pong", "id": 0},
        {"type": "action", "id": 1, "action": {"type": "attack", "card": "7H"}},
        {"type": "pong", "id": 2**40},
        {"type": "pong", "id": 9},
    ]
    assert transport.flushes == 5
    assert [kind for kind, _ in bot.seen] == ["hello", "game_start", "choose", "game_end", "bye"]


def test_a_bad_ping_is_the_referees_protocol_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run(Recorder(), MemoryTransport(script(m.hello_msg("r"), {"type": "ping", "id": "x"})))
    assert info.value.code == 1
    assert "the referee broke the protocol: id: expected a non-negative integer, got 'x'" in capsys.readouterr().err


# -- refusals and dropped connections --------------------------------------------------------------


@pytest.mark.parametrize("code", ["auth", "busy", "limit", "version"])
def test_refusal_after_the_hello_raises(code: str) -> None:
    transport = MemoryTransport(script(m.hello_msg("r"), m.error_msg(code, "no seat for you", True)))
    bot = Recorder()
    with pytest.raises(RefusedError) as info:
        play(bot, transport)
    assert (info.value.code, info.value.message) == (code, "no seat for you")
    assert [x["type"] for x in transport.sent()] == ["hello"]
    assert ("error", code) not in bot.seen  # a refusal is raised, not handed to on_error


def test_refusal_instead_of_the_hello_raises_before_saying_anything() -> None:
    transport = MemoryTransport(script(m.error_msg("limit", "too many connections", True)))
    with pytest.raises(RefusedError, match="^limit: too many connections$"):
        play(Recorder(), transport)
    assert transport.written == b""


def test_run_reports_a_refusal_in_one_line_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    transport = MemoryTransport(script(m.hello_msg("r"), m.error_msg("auth", "wrong token", True)))
    with pytest.raises(SystemExit) as info:
        run_function(lambda obs, legal: legal[0], name="tcp-bot", token="bad", transport=transport)
    assert info.value.code == 1
    assert capsys.readouterr().err == "tcp-bot: the referee refused the connection (auth): wrong token\n"


def test_other_fatal_errors_are_not_refusals() -> None:
    transport = MemoryTransport(script(
        m.hello_msg("r"), m.error_msg("protocol", "bad pong", True), m.error_msg("auth", "odd", False),
        m.bye_msg()))
    bot = Recorder()
    play(bot, transport)
    assert bot.seen[1:] == [("error", "protocol"), ("error", "auth"), ("bye", "match_end")]


def test_a_reset_connection_exits_1_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    class Reset(MemoryTransport):
        def read(self, n: int) -> bytes:
            raise ConnectionResetError(104, "Connection reset by peer")

    with pytest.raises(SystemExit) as info:
        run(Recorder(), Reset(b""))
    assert info.value.code == 1
    assert capsys.readouterr().err == "recorder: the referee closed the connection (Connection reset by peer)\n"


# -- command line: --connect HOST:PORT --token TOKEN [--name NAME] --------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], None),
        (["42", "-v"], None),
        (["--connect", "127.0.0.1:7000", "--token", "s3cret"], ConnectArgs("127.0.0.1", 7000, "s3cret")),
        (["--token=s3cret", "--connect=example.org:1", "--name=seat a"],
         ConnectArgs("example.org", 1, "s3cret", "seat a")),
        (["--connect", "localhost", "--token", "t"], ConnectArgs("localhost", DEFAULT_PORT, "t")),
        (["--connect", "[::1]:65535", "--token", "t=u"], ConnectArgs("::1", 65535, "t=u")),
        (["--connect", "[fe80::1%eth0]", "--token", "--name"], ConnectArgs("fe80::1%eth0", 7724, "--name")),
    ],
)
def test_parse_connect_args(argv: list[str], expected: ConnectArgs | None) -> None:
    assert parse_connect_args(argv) == expected


def test_split_connect_args_keeps_the_other_arguments_in_order() -> None:
    assert split_connect_args(["7", "--connect", "h:9", "-x", "--token", "t", "--", "--name", "n"]) == (
        ConnectArgs("h", 9, "t"), ["7", "-x", "--", "--name", "n"])
    assert split_connect_args(["7", "--verbose"]) == (None, ["7", "--verbose"])
    host, port, token, name = parse_connect_args(["--connect", "h:9", "--token", "t"])  # a plain tuple too
    assert (host, port, token, name) == ("h", 9, "t", None)


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["--connect"], "--connect needs a value"),
        (["--connect", "h:1", "--token"], "--token needs a value"),
        (["--connect", "h:1"], "--connect needs --token TOKEN"),
        (["--connect", "h:1", "--token", ""], "--token: expected 1 to 256 characters, got 0"),
        (["--connect", "h:1", "--token", "t" * 257], "--token: expected 1 to 256 characters, got 257"),
        (["--connect", "h:1", "--token", "t", "--name", ""], "--name: expected 1 to 64 printable characters"),
        (["--connect", "h:1", "--token", "t", "--name", "a\nb"], "--name: expected 1 to 64 printable"),
        (["--connect", "h:1", "--connect", "h:2", "--token", "t"], "--connect is given twice"),
        (["--token", "t"], "--token only makes sense with --connect HOST:PORT"),
        (["--token", "t", "--name", "n"], "--token and --name only make sense with --connect"),
        (["--connect", "h:0", "--token", "t"], "the port must be a number from 1 to 65535, got '0'"),
        (["--connect", "h:65536", "--token", "t"], "got '65536'"),
        (["--connect", "h:", "--token", "t"], "got ''"),
        (["--connect", "h:x", "--token", "t"], "got 'x'"),
        (["--connect", "h:\uff11", "--token", "t"], "the port must be a number"),
        (["--connect", ":80", "--token", "t"], "expected HOST:PORT, got ':80'"),
        (["--connect", "::1", "--token", "t"], "write an IPv6 address in brackets, like [::1]:7724"),
        (["--connect", "[::1", "--token", "t"], "expected [IPV6]:PORT, got '[::1'"),
        (["--connect", "[::1]80", "--token", "t"], "expected [IPV6]:PORT"),
        (["--connect", "[]:80", "--token", "t"], "expected HOST:PORT"),
    ],
)
def test_parse_connect_args_errors(argv: list[str], text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_connect_args(argv)
    assert text in str(info.value)


def test_parse_address() -> None:
    assert parse_address("a.b:80") == ("a.b", 80)
    assert parse_address("a.b") == ("a.b", 7724) and DEFAULT_PORT == 7724


def test_base_bot_choose_is_abstract() -> None:
    with pytest.raises(NotImplementedError):
        Bot().choose({}, [])
