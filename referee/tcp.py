"""Bots over TCP: a gate that authenticates connections, and seats that play over them.

How it works. ``TcpGate`` accepts connections (``trio.serve_tcp``). For each one it
checks the connection limits (in total and per address), sends the referee's hello and
reads the bot's hello within ``handshake_s`` (a small frame limit applies until the bot
is authenticated, so nobody can make us allocate much before proving who they are),
checks the version, then the name and token (SHA-256 hashes compared in constant time).
A connection that passes is handed to a seat by ``claim``; a refusal sends an ``error``
(code version, auth, busy or limit), closes the connection and is logged with its
reason. The protocol on an accepted connection is exactly the one over pipes
(``wire.StreamPlayer``): a bot's disconnect mid-game is its ``disconnect`` forfeit, and
it may reconnect for the next game.

The gate never trusts the network: every read has a deadline, frames are checked on
their header before allocation, writes to a peer that stops reading fail it after a
bounded time, and each connection costs one task and its socket buffers.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
from protocol.errors import RemoteProtocolError, UnsupportedVersionError

from . import __version__
from .matchlog import utc_now
from .players import BotFailure, BotSpec
from .wire import StreamPlayer

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7724
LOOPBACK = ("127.0.0.1", "::1", "localhost")


class ListenError(ValueError):
    """The user's --listen address is malformed, or the port cannot be bound."""


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``HOST`` (default port). Raises ListenError."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = text, str(DEFAULT_PORT)
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ListenError(f"--listen {text!r}: expected HOST:PORT with a port 0..65535")
    return host, int(port)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(18)


@dataclass(frozen=True)
class TcpLimits:
    """The limits of a port open to strangers (all configurable, safe by default)."""

    handshake_s: float = 10.0       #: seconds to complete the hello
    max_connections: int = 256      #: open connections in total
    max_per_address: int = 8        #: open connections from one address
    handshake_frame: int = 4096     #: frame limit before authentication (bytes)
    max_frame: int = 1 << 20        #: frame limit after authentication (bytes)
    ping_interval: float = 15.0     #: seconds between pings of an idle connection
    ping_timeout: float = 5.0       #: seconds a ping may go unanswered


class TokenBook:
    """Names and their token hashes. ``check`` costs the same for a known name with a
    wrong token, an unknown name and no token, so timing tells an attacker nothing."""

    def __init__(self, hashes: dict[str, str] | None = None) -> None:
        self.hashes = dict(hashes or {})
        self._dummy = hash_token(new_token())

    def add(self, name: str, token: str) -> None:
        self.hashes[name] = hash_token(token)

    def check(self, name: str, token: str | None) -> bool:
        expected = self.hashes.get(name, self._dummy)
        given = hash_token(token or "")
        ok = hmac.compare_digest(expected, given)
        return ok and name in self.hashes and token is not None


class TcpSeat(StreamPlayer):
    """One bot's seat over TCP. It plays over whichever authenticated connection the gate
    hands it; without one it waits (up to ``wait_s``) or fails as a disconnect."""

    def __init__(self, name: str, spec: BotSpec | None = None, *, wait_s: float = 60.0,
                 max_frame: int = 1 << 20) -> None:
        super().__init__(name, spec or BotSpec("tcp", name, (), f"tcp:{name}"), wants_events=True)
        self.wait_s = wait_s
        self.max_frame = max_frame
        self.peer: str | None = None
        self.busy = False
        self._connected = trio.Event()
        self._released = trio.Event()
        self._ping_id = 0
        self.failure = BotFailure("disconnect", f"no client has connected as {name}", {})

    @property
    def connected(self) -> bool:
        return self._connected.is_set() and not self._released.is_set()

    def attach_connection(self, stream: trio.SocketStream, decoder: FrameDecoder,
                          hello: msg.BotHello, peer: str) -> trio.Event:
        """Take over an authenticated connection. Returns the event the gate waits on
        before it closes the socket (set when this seat lets the connection go)."""
        self._attach(stream, stream, self.max_frame)
        decoder.max_frame = self.max_frame
        self._decoder = decoder  # keeps any bytes the bot sent after its hello
        self.info = {"name": hello.name, "version": hello.version, "author": hello.author}
        self.peer = peer
        self._released = trio.Event()
        self._connected.set()
        return self._released

    def alive(self) -> bool:
        """Is the current connection still open? Checked at once, without reading anything
        (a peek on a duplicate of the socket): False when the bot has closed or reset it,
        which the referee otherwise learns only at its next read from an idle bot."""
        if not self.connected:
            return False
        try:
            stream = self._receive_stream
            assert isinstance(stream, trio.SocketStream)
            fd = os.dup(stream.socket.fileno())
        except OSError:
            return False  # already closed
        try:
            probe = socket.socket(fileno=fd)
        except OSError:
            os.close(fd)
            return False
        with probe:
            try:
                return probe.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
            except BlockingIOError:
                return True  # open, nothing to read
            except OSError:
                return False  # reset

    def release(self) -> None:
        """Let the current connection go (the gate then closes it)."""
        self._released.set()
        self._connected = trio.Event()
        if self.failure is None:
            self.failure = BotFailure("disconnect", "the connection was closed", {})

    async def start(self, nursery: Any) -> None:
        await self._await_connection()

    async def _await_connection(self) -> None:
        with trio.move_on_after(self.wait_s):
            await self._connected.wait()
        if not self.connected:
            self.failure = BotFailure("disconnect", f"no client connected as {self.name} "
                                      f"within {self.wait_s:g} s", {"waited_s": self.wait_s})
            raise self.failure

    async def prepare_game(self, max_restarts: int, fresh: bool = False) -> None:
        """A bot that disconnected may reconnect before its next game."""
        if self.failure is None:
            return
        self.release()
        try:
            await self._await_connection()
        except BotFailure:
            pass  # still gone: the game records the forfeit

    async def ping(self, timeout: float) -> bool:
        """Ping an idle connection; False (and the connection released) if it does not
        answer with the matching pong in time or sends anything else."""
        self._ping_id += 1
        try:
            await self._try_send(msg.ping_msg(self._ping_id), timeout)
            if self.failure is not None:
                raise self.failure
            answer = await self._receive(trio.current_time() + timeout, "a ping", timeout)
            parsed = msg.parse_bot_message(answer)
            if isinstance(parsed, msg.Pong) and parsed.id == self._ping_id:
                return True
        except (BotFailure, RemoteProtocolError):
            pass
        self.release()
        return False

    async def close(self) -> None:
        with trio.CancelScope(shield=True):
            if self.connected and self.failure is None:
                await self._try_send(msg.bye_msg())
            self.release()

    async def _stream_failure(self) -> BotFailure:
        return BotFailure("disconnect", "the bot closed the connection", {"peer": self.peer})

    def _write_failure(self) -> BotFailure:
        return BotFailure("disconnect", "the connection broke (the referee could not write)",
                          {"peer": self.peer})


@dataclass
class Refusal:
    """One connection the gate closed without seating it. ``code`` is the error code
    sent to the peer (auth, busy, limit, protocol, version), or None when the peer went
    away on its own before its hello (nothing was sent)."""

    at: str
    peer: str
    reason: str
    name: str | None = None
    code: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"at": self.at, "peer": self.peer, "reason": self.reason, "name": self.name,
                "code": self.code}


@dataclass
class TcpGate:
    """Accepts, authenticates and hands connections to seats.

    ``claim(name)`` returns the seat for an authenticated bot or None when it is busy
    (a match: the seat already has a live connection; an arena: the bot is at its
    connection limit)."""

    tokens: TokenBook
    claim: Callable[[str], TcpSeat | None]
    limits: TcpLimits = field(default_factory=TcpLimits)
    on_event: Callable[[str], None] | None = None
    refusals: list[Refusal] = field(default_factory=list)
    open_connections: int = 0
    per_address: dict[str, int] = field(default_factory=dict)
    port: int | None = None

    def _say(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    async def serve(self, host: str, port: int, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Listen until cancelled. Reports the bound port through ``task_status``."""
        try:
            listeners = await trio.open_tcp_listeners(port, host=host, backlog=1024)
        except OSError as exc:
            raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started(self.port)
        await trio.serve_listeners(self.handle, listeners)

    async def handle(self, stream: trio.SocketStream) -> None:
        try:
            peer = stream.socket.getpeername()[0]
        except OSError:
            await stream.aclose()
            return
        if self.open_connections >= self.limits.max_connections:
            await self._refuse(stream, peer, "limit", f"too many connections "
                               f"({self.limits.max_connections} open); try again later")
            return
        if self.per_address.get(peer, 0) >= self.limits.max_per_address:
            await self._refuse(stream, peer, "limit", f"too many connections from {peer} "
                               f"({self.limits.max_per_address} open)")
            return
        self.open_connections += 1
        self.per_address[peer] = self.per_address.get(peer, 0) + 1
        try:
            await self._welcome(stream, peer)
        finally:
            self.open_connections -= 1
            self.per_address[peer] -= 1
            if not self.per_address[peer]:
                del self.per_address[peer]
            with trio.CancelScope(shield=True):
                await stream.aclose()

    async def _welcome(self, stream: trio.SocketStream, peer: str) -> None:
        decoder = FrameDecoder(self.limits.handshake_frame)
        hello: msg.BotHello | None = None
        with trio.move_on_after(self.limits.handshake_s):
            try:
                await stream.send_all(encode(msg.hello_msg(f"durak-ref {__version__}")))
                answer = None
                while answer is None:
                    answer = decoder.next_message()
                    if answer is None:
                        chunk = await stream.receive_some(4096)
                        decoder.feed(chunk)
                        if not chunk:
                            decoder.at_eof()
                            self._log(peer, "closed the connection before its hello")
                            return
                parsed = msg.parse_bot_message(answer)
                if not isinstance(parsed, msg.BotHello):
                    raise RemoteProtocolError("expected the bot's hello first", field="type")
                msg.check_version(parsed)
                hello = parsed
            except UnsupportedVersionError as exc:
                await self._refuse(stream, peer, "version", str(exc))
                return
            except RemoteProtocolError as exc:
                await self._refuse(stream, peer, "protocol", f"bad hello: {exc}")
                return
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                self._log(peer, "connection broke during the handshake")
                return
        if hello is None:
            await self._refuse(stream, peer, "protocol",
                               f"no hello within {self.limits.handshake_s:g} s")
            return
        if not self.tokens.check(hello.name, hello.token):
            why = "no token" if hello.token is None else "wrong token or unknown name"
            await self._refuse(stream, peer, "auth", f"authentication failed for {hello.name!r} "
                               f"({why})", hello.name)
            return
        seat = self.claim(hello.name)
        if seat is None:
            await self._refuse(stream, peer, "busy", f"{hello.name} is already connected and "
                               f"seated; this connection is refused", hello.name)
            return
        released = seat.attach_connection(stream, decoder, hello, peer)
        self._say(f"{hello.name} connected from {peer}")
        await released.wait()
        self._say(f"{hello.name} ({peer}) disconnected")

    def _log(self, peer: str, reason: str, name: str | None = None,
             code: str | None = None) -> None:
        self.refusals.append(Refusal(utc_now(), peer, reason, name, code))
        del self.refusals[:-1000]  # a bounded record, newest last
        self._say(f"refused {peer}{' (' + name + ')' if name else ''}: {reason}")

    async def _refuse(self, stream: trio.SocketStream, peer: str, code: str, reason: str,
                      name: str | None = None) -> None:
        wire_code = code if code in msg.ERROR_CODES else "protocol"
        self._log(peer, reason, name, wire_code)
        with trio.move_on_after(1.0):
            try:
                await stream.send_all(encode(msg.error_msg(wire_code, reason, True)))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        with trio.CancelScope(shield=True):
            await stream.aclose()


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return socket.inet_aton(host)[0] == 127
    except OSError:
        return False
