"""The Python bot SDK: subclass ``Bot`` (or pass a function), call ``run``.

A complete bot::

    import random
    from protocol.bot import run_function

    def choose(observation, legal):
        return random.choice(legal)

    if __name__ == "__main__":
        run_function(choose, name="my-random")

``run`` speaks the protocol of protocol/SPEC.md over stdin/stdout: it answers the
referee's hello, calls the bot's hooks for every message, sends ``choose``'s answer to
each request, answers every ``ping`` with a ``pong`` by itself, and returns when the
referee says ``bye`` or closes the stream. If the bot raises, the traceback goes to
stderr and the process exits with status 1; the referee records the crash. If the
referee refuses the connection (an ``error`` with code ``auth``, ``busy``, ``limit`` or
``version``), ``run`` says so on stderr and exits with status 1.

The loop does blocking reads and writes on a *transport*: any object with ``read(n)``
(return 1..n bytes as soon as some are available, ``b""`` at end of stream; ``read1`` is
used instead when the object has it), ``write(data)`` and ``flush()``. ``StdioTransport``
is the default. For TCP (SPEC section 13), open the socket yourself (this module never
imports ``socket``) and wrap it; ``parse_connect_args`` reads the usual command-line
options ``--connect HOST:PORT --token TOKEN [--name NAME]``::

    import socket, sys
    from protocol.bot import SocketTransport, parse_connect_args, run_function

    tcp = parse_connect_args(sys.argv[1:])    # None without --connect: stdin/stdout
    transport = None
    if tcp is not None:
        transport = SocketTransport(socket.create_connection((tcp.host, tcp.port)))
    run_function(choose, name=(tcp and tcp.name) or "my-bot",
                 token=tcp and tcp.token, transport=transport)

A socket's ``makefile("rwb")`` works as a transport too.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from protocol.codec import MAX_FRAME, FrameDecoder, encode
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.messages import (
    MAX_NAME_LENGTH,
    MAX_TEXT_LENGTH,
    PROTOCOL_VERSION,
    REFUSAL_CODES,
    action_msg,
    bot_hello_msg,
    parse_action,
    parse_referee_message,
    pong_msg,
)

READ_SIZE = 65536
"""Most bytes asked of the transport per read."""

DEFAULT_PORT = 7724
"""The referee's default TCP port (SPEC section 13)."""


class RefusedError(Exception):
    """The referee refused this bot's connection: it sent an ``error`` with one of
    ``REFUSAL_CODES`` (bad token, seat taken, too many connections, unsupported version),
    or an ``error`` instead of its hello, and closes the connection."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# -- command line: --connect HOST:PORT --token TOKEN [--name NAME] -------------------------


class ConnectArgs(NamedTuple):
    """Where and as whom a TCP bot connects. ``name`` is None when ``--name`` was not
    given (the bot then uses its own name)."""

    host: str
    port: int
    token: str
    name: str | None = None


CONNECT_USAGE = "--connect HOST[:PORT] --token TOKEN [--name NAME]"
#: The environment variable a bot may take its token from instead of ``--token``.
TOKEN_ENV = "DURAK_TOKEN"
"""The TCP options, for usage messages."""

_CONNECT_FLAGS = ("--connect", "--token", "--name")


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST`` (port 7724), ``[IPV6]:PORT`` or ``[IPV6]`` as (host, port).
    Raises ``ValueError`` saying what is wrong."""
    port_text: str | None = None
    if text.startswith("["):
        host, bracket, after = text[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise ValueError(f"--connect: expected [IPV6]:PORT, got {text!r}")
        if after:
            port_text = after[1:]
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    elif ":" in text:
        raise ValueError(f"--connect: write an IPv6 address in brackets, like [::1]:{DEFAULT_PORT}; "
                         f"got {text!r}")
    else:
        host = text
    if not host or any(c.isspace() for c in host):
        raise ValueError(f"--connect: expected HOST:PORT, got {text!r}")
    if port_text is None:
        return host, DEFAULT_PORT
    if not (port_text.isascii() and port_text.isdigit()) or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"--connect: the port must be a number from 1 to 65535, got {port_text!r}")
    return host, int(port_text)


def split_connect_args(argv: Sequence[str]) -> tuple[ConnectArgs | None, list[str]]:
    """The TCP options in ``argv`` (None if there is no ``--connect``) and every other
    argument, in order. Each option is ``--flag VALUE`` or ``--flag=VALUE``; arguments
    after ``--`` are never options. Pure string parsing: nothing is opened here.

    Raises ``ValueError`` with a message for the user: a flag without a value or given
    twice, a bad address, ``--connect`` without ``--token``, ``--token`` or ``--name``
    without ``--connect``, a token or name the referee would refuse.
    """
    values: dict[str, str] = {}
    rest: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if arg == "--":
            rest.extend(argv[index - 1:])
            break
        flag, equals, value = arg.partition("=")
        if flag not in _CONNECT_FLAGS:
            rest.append(arg)
            continue
        if not equals:
            if index >= len(argv):
                raise ValueError(f"{flag} needs a value ({CONNECT_USAGE})")
            value = argv[index]
            index += 1
        if flag in values:
            raise ValueError(f"{flag} is given twice")
        values[flag] = value
    if "--connect" not in values:
        if values:
            given = " and ".join(flag for flag in _CONNECT_FLAGS if flag in values)
            raise ValueError(f"{given} only make{'s' if len(values) == 1 else ''} sense with "
                             f"--connect HOST:PORT")
        return None, rest
    host, port = parse_address(values["--connect"])
    # The environment keeps the secret out of the process list (``ps`` shows argv).
    token = values["--token"] if "--token" in values else os.environ.get(TOKEN_ENV)
    if token is None:
        raise ValueError(f"--connect needs --token TOKEN (or ${TOKEN_ENV}), the secret of the "
                         f"seat to play")
    if not 1 <= len(token) <= MAX_TEXT_LENGTH:
        raise ValueError(f"--token: expected 1 to {MAX_TEXT_LENGTH} characters, got {len(token)}")
    name = values.get("--name")
    if name is not None and not (1 <= len(name) <= MAX_NAME_LENGTH and name.isprintable()):
        raise ValueError(f"--name: expected 1 to {MAX_NAME_LENGTH} printable characters, got {name!r}")
    return ConnectArgs(host, port, token, name), rest


def parse_connect_args(argv: Sequence[str]) -> ConnectArgs | None:
    """The TCP options in ``argv``, or None to play over stdin/stdout. Other arguments are
    ignored (see ``split_connect_args`` to keep them). Raises ``ValueError``."""
    return split_connect_args(argv)[0]


class Transport(Protocol):
    """What ``run`` needs to talk to the referee. See the module docstring."""

    def read(self, n: int) -> bytes: ...

    def write(self, data: bytes) -> object: ...

    def flush(self) -> object: ...


class StdioTransport:
    """This process's stdin and stdout, as raw file descriptors.

    Reads with ``os.read`` so a read returns as soon as any bytes arrive (a buffered
    ``read(n)`` would wait for all ``n``). With ``protect_stdout`` (the default) the real
    stdout is moved to a private descriptor and fd 1 (and so ``print``) is pointed at
    stderr: a stray ``print`` in a bot then shows up in the referee's stderr capture
    instead of corrupting the frame stream.
    """

    def __init__(self, *, protect_stdout: bool = True) -> None:
        self._in = sys.stdin.fileno()
        if protect_stdout:
            sys.stdout.flush()
            self._out = os.dup(1)
            os.dup2(2, 1)
            # Also swap the Python object: sys.stdout is block-buffered on a pipe, so
            # debug prints would otherwise show up only at exit.
            sys.stdout = sys.stderr
        else:
            self._out = sys.stdout.fileno()
        if sys.platform == "win32":  # pragma: no cover - no CRLF translation on frames
            import msvcrt

            msvcrt.setmode(self._in, os.O_BINARY)
            msvcrt.setmode(self._out, os.O_BINARY)

    def read(self, n: int) -> bytes:
        return os.read(self._in, n)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:  # a pipe may take only part of a large write
            written = os.write(self._out, view)
            view = view[written:]

    def flush(self) -> None:
        """Nothing to do: ``write`` goes straight to the descriptor."""


class Connection(Protocol):
    """What ``SocketTransport`` needs of a connected socket (a ``socket.socket`` has it)."""

    def recv(self, n: int, /) -> bytes: ...

    def sendall(self, data: bytes, /) -> object: ...


class SocketTransport:
    """A connected socket-like object (``recv``, ``sendall``) supplied by the caller."""

    def __init__(self, sock: Connection) -> None:
        self._sock = sock

    def read(self, n: int) -> bytes:
        return self._sock.recv(n)

    def write(self, data: bytes) -> None:
        self._sock.sendall(data)

    def flush(self) -> None:
        """Nothing to do: ``sendall`` does not buffer."""


class Bot:
    """Base class for bots. Override ``choose``; the hooks are optional.

    Class attributes ``name`` (required by the protocol), ``version``, ``author`` and
    ``token`` (TCP seats) go into the hello. While ``choose`` runs, ``self.request`` is
    the whole request message (``request["clock"]`` has the time left, in ms) and
    ``self.game`` the current game index.
    """

    name: str = "python-bot"
    version: str | None = None
    author: str | None = None
    token: str | None = None

    request: dict[str, Any] | None = None
    game: int | None = None

    def choose(self, observation: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        """Return the action to play: any element of ``legal`` (copied or as is) is valid.
        ``observation`` is this seat's view (see protocol/SPEC.md)."""
        raise NotImplementedError("a Bot must implement choose(observation, legal)")

    def on_hello(self, message: dict[str, Any]) -> None:
        """The referee's hello arrived (before the bot's own hello is sent)."""

    def on_game_start(self, message: dict[str, Any]) -> None:
        """A game begins: ``message`` has seat, players, names, rules, trump and hand."""

    def on_event(self, event: dict[str, Any]) -> None:
        """A public event of the current game (the inner ``event`` map)."""

    def on_game_end(self, message: dict[str, Any]) -> None:
        """The game is over: ``message`` has durak (seat or None) and termination."""

    def on_error(self, message: dict[str, Any]) -> None:
        """The referee rejected the last message. If ``message["fatal"]`` is false a new
        request follows; if true the game is lost. Default: log it to stderr."""
        self.log(f"referee error ({message['code']}, fatal={message['fatal']}): {message['message']}")

    def on_bye(self, message: dict[str, Any]) -> None:
        """The match is over; ``run`` returns after this hook."""

    def log(self, *parts: object) -> None:
        """Print to stderr, which the referee captures (stdout carries frames only)."""
        print(*parts, file=sys.stderr, flush=True)


class _FunctionBot(Bot):
    def __init__(self, choose: Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]) -> None:
        self._choose = choose

    def choose(self, observation: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        return self._choose(observation, legal)


class _Link:
    """Frames over a blocking transport: the only place the SDK touches bytes."""

    def __init__(self, transport: Transport, max_frame: int) -> None:
        self._transport = transport
        self._read = getattr(transport, "read1", None) or transport.read
        # The referee's frames are trusted for shape (the bot connected to it); the
        # framing, size and msgpack checks still apply.
        self._decoder = FrameDecoder(max_frame, strict=False)

    def receive(self) -> dict[str, Any] | None:
        """The next validated referee message, or None at a clean end of stream."""
        while True:
            message = self._decoder.next_message()
            if message is not None:
                return parse_referee_message(message)
            if self._decoder.eof:
                return None
            self._decoder.feed(self._read(READ_SIZE))

    def send(self, message: dict[str, Any]) -> None:
        self._transport.write(encode(message))
        self._transport.flush()


def play(bot: Bot, transport: Transport, *, max_frame: int = MAX_FRAME) -> None:
    """Run the protocol loop until ``bye`` or end of stream; exceptions propagate.

    ``run`` is this plus process-level error handling; call ``play`` directly to embed a
    bot or to test it. Raises ``RemoteProtocolError`` if the referee breaks the protocol,
    ``RefusedError`` if it refuses the connection, ``LocalProtocolError`` if ``choose``
    returns something that is not an action map, and whatever the bot's own code raises.
    """
    link = _Link(transport, max_frame)
    hello = link.receive()
    if hello is None:
        return  # the referee went away before saying anything: nothing to do
    if hello["type"] == "error":  # refused before the handshake (e.g. too many connections)
        raise RefusedError(hello["code"], hello["message"])
    if hello["type"] != "hello":
        raise RemoteProtocolError(
            f"type: expected the referee's hello first, got {hello['type']!r}", field="type"
        )
    bot.on_hello(hello)
    # The referee decides on the version; an unsupported one gets error + bye back.
    link.send(bot_hello_msg(
        bot.name, version=bot.version, author=bot.author, token=bot.token,
        protocol=PROTOCOL_VERSION,
    ))
    while (message := link.receive()) is not None:
        kind = message["type"]
        if kind == "request":
            bot.request = message
            bot.game = message["game"]
            choice = bot.choose(message["observation"], message["legal"])
            try:
                action = parse_action(choice, "action")
            except RemoteProtocolError as exc:
                raise LocalProtocolError(
                    f"{type(bot).__name__}.choose() returned a bad action: {exc}"
                ) from None
            link.send(action_msg(message["id"], action))
            bot.request = None
        elif kind == "event":
            bot.on_event(message["event"])
        elif kind == "game_start":
            bot.game = message["game"]
            bot.on_game_start(message)
        elif kind == "game_end":
            bot.on_game_end(message)
        elif kind == "ping":
            link.send(pong_msg(message["id"]))
        elif kind == "error":
            if message["fatal"] and message["code"] in REFUSAL_CODES:
                raise RefusedError(message["code"], message["message"])
            bot.on_error(message)
        elif kind == "bye":
            bot.on_bye(message)
            return
        else:  # a second hello
            raise RemoteProtocolError("type: the referee sent hello twice", field="type")


def run(bot: Bot, transport: Transport | None = None, *, max_frame: int = MAX_FRAME) -> None:
    """Play as ``bot`` over ``transport`` (default: stdin/stdout) until the match ends.

    Returns normally after ``bye`` or end of stream. On any exception, writes the
    traceback (or, if the referee broke the protocol, refused the connection or dropped
    it, a one-line explanation) to stderr and exits the process with status 1, which the
    referee reports as a crash.
    """
    try:
        play(bot, transport if transport is not None else StdioTransport(), max_frame=max_frame)
    except RefusedError as exc:
        print(f"{bot.name}: the referee refused the connection ({exc.code}): {exc.message}",
              file=sys.stderr, flush=True)
        sys.exit(1)
    except ConnectionError as exc:  # a broken pipe, a reset TCP connection
        detail = f" ({exc.strerror})" if exc.strerror else ""
        print(f"{bot.name}: the referee closed the connection{detail}", file=sys.stderr, flush=True)
        sys.exit(1)
    except RemoteProtocolError as exc:
        evidence = f" [bytes: {exc.evidence}]" if exc.evidence else ""
        print(f"{bot.name}: the referee broke the protocol: {exc}{evidence}",
              file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception:  # the bot's own bug (LocalProtocolError included): show where
        traceback.print_exc()
        sys.stderr.flush()
        sys.exit(1)


def run_function(
    choose: Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]],
    name: str = "python-bot",
    *,
    version: str | None = None,
    author: str | None = None,
    token: str | None = None,
    transport: Transport | None = None,
) -> None:
    """``run`` a bot made of one function ``choose(observation, legal) -> action``."""
    bot = _FunctionBot(choose)
    bot.name, bot.version, bot.author, bot.token = name, version, author, token
    run(bot, transport)
