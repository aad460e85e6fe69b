"""Bots over TCP: a gate that authenticates connections, and seats that play over them.

How it works. ``TcpGate`` accepts connections (``trio.serve_tcp``). A new connection is
*pending* until it authenticates: pending connections are capped on their own
(``max_pending`` in total, by default sized by the file descriptor limit:
``fd_sized_pending``; ``max_per_address`` per address, ``max_per_network`` per /24 IPv4
or /64 IPv6 network), apart from the authenticated ones (``max_connections``), so a
flood of strangers never takes a registered bot's room: when the pending pool is full,
a newcomer evicts the oldest *silent* pending connection (one that has sent no byte
yet; the oldest of all when none is silent). A bot that sends its hello at once is
therefore never evicted by a flood of silent connections. The gate sends the referee's
hello and reads the bot's hello within ``handshake_s`` (one deadline for the whole
handshake, however slowly the bytes trickle in; a small frame limit applies until the
bot is authenticated, so nobody can make us allocate much before proving who they are),
checks the version, then the name and token (SHA-256 hashes compared in constant time;
the book is re-read when its source changes). A correct token is admitted whatever the
token-guessing penalty (``AuthThrottle``) of its address or network: tokens are long
random secrets, so the penalty is no wall, only a brake on log noise and on a bot
retrying a wrong token; a wrong token during a penalty is refused as ``throttled``. A
connection that passes is handed to a seat by ``claim``; a refusal sends an ``error``
(code version, auth, busy or limit), closes the connection and is recorded with its
reason. Failed tokens are logged in aggregate (one line per ``log_interval_s``), not one
line each; other refusals one line each up to ``log_burst`` per interval, then as a
count. The protocol on an accepted connection is exactly
the one over pipes (``wire.StreamPlayer``): a bot's disconnect mid-game is its
``disconnect`` forfeit, and it may reconnect for the next game. With a reconnect grace
(``TcpSeat.reconnect_grace``, ``--reconnect-grace``) a connection lost while the bot is to
decide pauses the game instead: the bot's clock is stopped, and a new authenticated
connection within the grace gets the game's ``game_start`` and the open request again.

The gate never trusts the network: every read has a deadline, frames are checked on
their header before allocation, writes to a peer that stops reading fail it after a
bounded time, and each connection costs one task and its socket buffers.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import itertools
import os
import resource
import secrets
import socket
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import trio

from protocol import messages as msg
from protocol.codec import FrameDecoder, decode, encode
from protocol.errors import RemoteProtocolError, UnsupportedVersionError

from .. import __version__
from ..errors import UserError
from ..records.matchlog import utc_now
from .names import NameIndex
from .players import BUILTINS, Ask, BotFailure, BotSpec
from .wire import TOLD_FAILURES, StreamPlayer

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7724
LOOPBACK = ("127.0.0.1", "::1", "localhost")


class ListenError(UserError, ValueError):
    """The user's --listen address is malformed, or the port cannot be bound."""

    hint = "give HOST:PORT with a port that is free on this machine"


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
    """The limits of a port open to strangers (all configurable, safe by default).

    "Pending" connections are those that have not authenticated yet; their limits are
    apart from ``max_connections`` (authenticated bots), so strangers cannot fill it."""

    handshake_s: float = 5.0        #: seconds to complete the hello (the whole handshake)
    max_connections: int = 256      #: authenticated connections in total
    #: pending connections in total (the oldest silent ones give way); 0: sized by the
    #: file descriptor limit when the gate starts (``fd_sized_pending``)
    max_pending: int = 0
    max_per_address: int = 8        #: pending connections from one address
    max_per_network: int = 16       #: pending connections from one /24 (IPv4) or /64 (IPv6)
    handshake_frame: int = 4096     #: frame limit before authentication (bytes)
    max_frame: int = 1 << 20        #: frame limit after authentication (bytes)
    ping_interval: float = 15.0     #: seconds between pings of an idle connection
    ping_timeout: float = 5.0       #: seconds a ping may go unanswered
    auth_free_failures: int = 3     #: failed tokens from one address before a penalty
    auth_network_free_failures: int = 32  #: the same for one /24 (IPv4) or /64 (IPv6)
    auth_delay_s: float = 1.0       #: the first penalty; each further failure doubles it
    auth_max_delay_s: float = 300.0  #: the longest penalty
    auth_forget_s: float = 900.0    #: a quiet address (no failure this long) starts afresh
    auth_table_size: int = 4096     #: addresses and networks remembered (least recent go)
    log_interval_s: float = 60.0    #: aggregate log lines (failed tokens, the rest) this often
    log_burst: int = 20             #: other refusals logged one by one per interval

    def pending_cap(self) -> int:
        """The pending cap in force: ``max_pending``, or sized by the fd limit now."""
        return self.max_pending or fd_sized_pending(self.max_connections)


#: File descriptors left for everything but connections (the listening sockets, the
#: store, logs, the live page, a match's bot processes) when the pending cap is sized.
FD_RESERVE = 128
#: The pending cap sized by the fd limit is at most this: each pending connection costs
#: a task, a socket and its decoder (measured: 6.9 KiB of RSS each, so about 110 MiB at
#: the ceiling, plus the kernel's socket buffers),
#: and a flood of 1,000 connections a second fills only ``handshake_s`` (5) seconds'
#: worth, 5,000, before the handshake deadline closes the oldest.
PENDING_CEILING = 16384
#: The fd limit the gate raises its soft limit to, within the hard limit.
FD_TARGET = 65536


def raise_fd_limit(target: int = FD_TARGET) -> int:
    """Raise this process's soft RLIMIT_NOFILE towards ``target`` (never above the hard
    limit, never lower than it is); the soft limit now. A listening referee holds one fd
    per connection: the usual soft limit of 1,024 would cap a flood's room, not memory."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = target if hard == resource.RLIM_INFINITY else min(target, hard)
    if want > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return soft


def fd_room(held: int, ceiling: int, floor: int = 16) -> int:
    """A cap of one pool of connections sized by the file descriptor limit: the soft
    RLIMIT_NOFILE less ``held`` (what the process's other pools may hold at most) and
    FD_RESERVE, within ``floor``..``ceiling``. The arena's pending connections
    (``fd_sized_pending``) and the lobby's streams (referee/web/lobby.py) are sized so."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return ceiling
    return max(floor, min(ceiling, soft - held - FD_RESERVE))


def fd_sized_pending(max_connections: int) -> int:
    """The pending cap the fd limit leaves room for: the soft RLIMIT_NOFILE less the
    authenticated connections and FD_RESERVE, within 16..PENDING_CEILING."""
    return fd_room(max_connections, PENDING_CEILING)


def network_of(address: str) -> str:
    """The network an address is counted in: its /24 (IPv4) or /64 (IPv6), as text.
    An unparsable address is its own network."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


@dataclass
class _Strikes:
    failures: int = 0
    until: float = 0.0   #: refused before this time
    last: float = 0.0    #: the latest failure


class AuthThrottle:
    """Failed tokens per address and per network, with penalties that double (the gate
    refuses a wrong token during a penalty as ``throttled``; a right one is admitted).

    Pure bookkeeping: every method takes ``now`` (seconds on any monotonic clock; the gate
    passes trio's, so tests can use the virtual clock). After ``free`` failures from a
    key, each further failure bars the key for ``delay_s * 2**(n-1)`` seconds (n: the
    failures beyond the free ones), at most ``max_delay_s``. A success from an address
    clears that address (not its network); a key with no failure for ``forget_s``
    starts afresh. At most ``size`` keys are remembered, least recently failed dropped
    first, so a flood of addresses cannot grow the table without bound."""

    def __init__(self, limits: TcpLimits) -> None:
        self.limits = limits
        self._keys: OrderedDict[str, _Strikes] = OrderedDict()

    def _get(self, key: str, now: float) -> _Strikes | None:
        strikes = self._keys.get(key)
        if strikes is not None and now - strikes.last > self.limits.auth_forget_s:
            del self._keys[key]
            return None
        return strikes

    def penalty(self, address: str, now: float) -> float:
        """Seconds the address must still wait (0: it may try a token now)."""
        wait = 0.0
        for key in (address, "net " + network_of(address)):
            strikes = self._get(key, now)
            if strikes is not None:
                wait = max(wait, strikes.until - now)
        return wait

    def failed(self, address: str, now: float) -> float:
        """Record a failed token from ``address``; the penalty it now has (seconds)."""
        lim = self.limits
        for key, free in ((address, lim.auth_free_failures),
                          ("net " + network_of(address), lim.auth_network_free_failures)):
            strikes = self._get(key, now) or _Strikes()
            strikes.failures += 1
            strikes.last = now
            beyond = strikes.failures - free
            if beyond > 0:
                delay = min(lim.auth_max_delay_s, lim.auth_delay_s * 2.0 ** min(beyond - 1, 64))
                strikes.until = max(strikes.until, now + delay)
            self._keys[key] = strikes
            self._keys.move_to_end(key)
        while len(self._keys) > lim.auth_table_size:
            self._keys.popitem(last=False)
        return self.penalty(address, now)

    def succeeded(self, address: str) -> None:
        self._keys.pop(address, None)

    def __len__(self) -> int:
        return len(self._keys)


class AuthReport:
    """Failed and throttled authentications since the last ``flush``, for one aggregate
    log line. Counts at most ``top_n * 64`` distinct addresses (the rest as "others")."""

    def __init__(self, top_n: int = 5) -> None:
        self.top_n = top_n
        self.failed: Counter[str] = Counter()
        self.throttled = 0
        self.others = 0

    def add_failure(self, address: str) -> None:
        if address in self.failed or len(self.failed) < self.top_n * 64:
            self.failed[address] += 1
        else:
            self.others += 1

    def flush(self, seconds: float) -> str | None:
        """The line for the interval just ended (None if nothing happened); resets."""
        total = sum(self.failed.values()) + self.others
        if not total and not self.throttled:
            return None
        addresses = len(self.failed) + (1 if self.others else 0)
        top = ", ".join(f"{a} ({n})" for a, n in self.failed.most_common(self.top_n))
        line = (f"auth: {total} failed token{'s' if total != 1 else ''} from {addresses} "
                f"address{'es' if addresses != 1 else ''} in the last {seconds:g} s, "
                f"{self.throttled} connection{'s' if self.throttled != 1 else ''} refused "
                f"while throttled" + (f"; top: {top}" if top else ""))
        self.failed.clear()
        self.throttled = self.others = 0
        return line


class TokenBook:
    """Names and their token hashes. ``check`` costs the same for a known name with a
    wrong token, an unknown name and no token, so timing tells an attacker nothing.

    ``reload`` (optional) returns the book's current hashes when its source has changed
    since the last call, else None; ``refresh`` applies it, so a token rotated or revoked
    in the store takes effect at the next authentication."""

    def __init__(self, hashes: dict[str, str] | None = None,
                 reload: Callable[[], dict[str, str] | None] | None = None) -> None:
        self.hashes = dict(hashes or {})
        self.reload = reload
        self.generation = 0  #: counts the refreshes that changed a hash
        self._dummy = hash_token(new_token())
        #: built-ins' and registered names by look-alike key (made when first asked; a name
        #: joins it once and stays, so each one's keys are computed once)
        self._names: NameIndex | None = None

    def add(self, name: str, token: str) -> None:
        self.hashes[name] = hash_token(token)

    def refresh(self) -> set[str]:
        """Re-read the book if its source changed; the names whose hash changed or went."""
        fresh = self.reload() if self.reload is not None else None
        if fresh is None:
            return set()
        changed = {n for n, h in self.hashes.items() if fresh.get(n) != h}
        self.hashes = dict(fresh)
        self.generation += bool(changed)
        return changed

    def current(self, name: str) -> str | None:
        """The name's token hash now (None: not registered)."""
        return self.hashes.get(name)

    def look_alike(self, name: str) -> str | None:
        """The registered name or built-in's name that ``name``, not itself registered,
        looks like (``names.py``: ``аlice`` with a Cyrillic а for ``alice``), or None. A
        bot says hello under its registered name exactly, so a refusal can say which."""
        if name in self.hashes:
            return None
        if self._names is None:
            self._names = NameIndex(BUILTINS)
        for known in self.hashes:
            self._names.add(known)
        return self._names.find(name, other_than=name)

    def check(self, name: str, token: str | None) -> bool:
        expected = self.hashes.get(name, self._dummy)
        given = hash_token(token or "")
        ok = hmac.compare_digest(expected, given)
        return ok and name in self.hashes and token is not None


class TcpSeat(StreamPlayer):
    """One bot's seat over TCP. It plays over whichever authenticated connection the gate
    hands it; without one it waits (up to ``wait_s``) or fails as a disconnect."""

    def __init__(self, name: str, spec: BotSpec | None = None, *, wait_s: float = 60.0,
                 max_frame: int = 1 << 20, reconnect_grace: float = 0.0) -> None:
        super().__init__(name, spec or BotSpec("tcp", name, (), f"tcp:{name}"), wants_events=True)
        self.wait_s = wait_s
        #: Seconds a game waits, paused, for a bot whose connection dropped while it was to
        #: decide (0: the drop is a ``disconnect`` forfeit at once).
        self.reconnect_grace = reconnect_grace
        self.paused = False  #: waiting for a reconnection in the middle of a game
        self.reconnects = 0  #: reconnections within the grace, over the seat's life
        self.on_event: Any = None  #: callable(str) for operator lines (set by the runner)
        self._game_start: bytes | None = None  #: the game_start frame of the game in play
        #: What is left of the grace in the game in play: a bot's pauses in one game add up
        #: to at most ``reconnect_grace``, so dropping again and again cannot stall a table.
        self._grace_left = reconnect_grace
        self.max_frame = max_frame
        self.peer: str | None = None
        self.token_hash: str | None = None  #: the hash of the token this connection used
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
        self._lane.decoder = decoder  # keeps any bytes the bot sent after its hello
        self.info = {"name": hello.name, "version": hello.version, "author": hello.author}
        self.peer = peer
        self.token_hash = hash_token(hello.token or "")
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

    async def prepare_game(self, max_restarts: int, fresh: bool = False,
                           deal: str | None = None) -> None:
        """A bot that disconnected may reconnect before its next game. A remote bot is
        not ours to restart: ``fresh`` and ``deal`` change nothing (a remote bot can
        remember a deal; see league/arena.py)."""
        if self.failure is None:
            return
        self.release()
        try:
            await self._await_connection()
        except BotFailure:
            pass  # still gone: the game records the forfeit

    def hear(self, frame: bytes) -> None:
        kind = decode(frame).get("type") if self.reconnect_grace > 0 else None
        if kind == "game_start":
            self._game_start = frame  # sent again to a bot that reconnects mid-game
            self._grace_left = self.reconnect_grace
        elif kind == "game_end":
            self._game_start = None
        super().hear(frame)

    async def finish(self, ask: Ask) -> Any:
        """As ``StreamPlayer.finish``; but with a reconnect grace, a connection lost
        before the answer pauses the decision: the bot's clock stops (the time it used
        before the drop still counts), and a new connection within the grace gets the
        game's ``game_start`` and this request again (same id). No reconnection within
        the grace: the ``disconnect`` failure, with the grace in its evidence."""
        used = 0.0  # the bot's time on this request before connections dropped
        budget = ask.budget
        while True:
            began = trio.current_time()
            try:
                if not used:
                    return await super().finish(ask)
                answer = await self._decide_told(ask.frame(), ask.id, None if budget is None
                                                 else max(budget - used, 0.0), ask.answers)
            except BotFailure as exc:
                if exc.kind != "disconnect" or self._grace_left <= 0:
                    raise
                used += trio.current_time() - began
                await self._await_reconnect(exc, ask.id)
                continue
            timing = self._lane.timing
            if timing is not None:
                written, answered = timing
                ask.timing = (written - used, answered)
            return answer

    async def _await_reconnect(self, lost: BotFailure, request_id: int) -> None:
        """Wait up to ``reconnect_grace`` seconds for the bot to connect again; then queue
        the game's ``game_start`` for it. Raises the disconnect failure if it does not."""
        grace = self.reconnect_grace
        self.release()  # the gate closes the dead socket; a new connection may claim the seat
        self._say(f"{self.name}: connection lost at request {request_id}; game paused for up "
                  f"to {self._grace_left:.3g} s")
        paused_at = trio.current_time()
        self.paused = True
        try:
            with trio.move_on_after(self._grace_left):
                await self._connected.wait()
        finally:
            self.paused = False
            self._grace_left = max(0.0, self._grace_left - (trio.current_time() - paused_at))
        if not self.connected:
            self.failure = BotFailure(
                "disconnect", f"{lost.reason}; no reconnection within the grace of {grace:g} s "
                "(all pauses of a game together)", {**lost.evidence, "reconnect_grace_s": grace})
            raise self.failure
        self.reconnects += 1
        self._say(f"{self.name} reconnected from {self.peer} after "
                  f"{trio.current_time() - paused_at:.2f} s; the game goes on")
        if self._game_start is not None:
            self._queue(self._game_start)

    def _say(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    async def ping(self, timeout: float) -> bool:
        """Ping an idle connection: True when its first frame is the pong of this ping
        (its id) within ``timeout``. Otherwise False, with the bot's failure recorded
        (``failure``: a timeout, or a protocol error saying what came instead: another
        id, an action, ...), the bot told why (a fatal ``error``) and the connection
        released. The ping stays open until its pong is read, so a pong whose wait was
        cut short is still taken once, wherever it is found (StreamPlayer._answer_pong)."""
        self._ping_id += 1
        ping_id = self._ping_open = self._ping_id
        try:
            await self._try_send(msg.ping_msg(ping_id), timeout)
            if self.failure is not None:
                raise self.failure
            answer = await self._receive(trio.current_time() + timeout, f"ping {ping_id}", timeout)
            self._unasked(answer, f"while ping {ping_id} was open")  # raises but for its pong
            return True
        except BotFailure as exc:
            if exc.kind in TOLD_FAILURES:
                await self.tell(msg.error_msg(exc.kind, exc.reason, True))
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
class _Pending:
    """A connection that has not authenticated yet."""

    peer: str
    network: str
    since: float
    scope: trio.CancelScope | None = None
    evicted: bool = False
    heard: bool = False  #: it has sent a byte (no longer silent)


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
    open_connections: int = 0   #: pending and authenticated
    authenticated: int = 0
    per_address: dict[str, int] = field(default_factory=dict)  #: pending, per address
    per_network: dict[str, int] = field(default_factory=dict)  #: pending, per network
    token_checks: int = 0       #: tokens compared with the book (throttled ones are not)
    port: int | None = None
    throttle: AuthThrottle | None = None
    auth_report: AuthReport = field(default_factory=AuthReport)
    #: Pending connections, oldest first (keys count up); ``_silent``: those of them
    #: that have sent nothing yet and are not evicted, oldest first. Eviction takes the
    #: first of ``_silent`` in constant time, however large the pool.
    _pending: dict[int, _Pending] = field(default_factory=dict)
    _silent: OrderedDict[int, None] = field(default_factory=OrderedDict)
    #: The pending cap in force: ``limits.max_pending``, or sized by the fd limit.
    max_pending: int = 0
    #: ``serve`` raises the soft fd limit first (the arena). A match leaves it as it is:
    #: its bots are child processes and would inherit it.
    raise_fds: bool = True
    _ids: Iterator[int] = field(default_factory=itertools.count)
    _reported_at: float | None = None
    _logged: int = 0                #: refusals logged one by one this interval
    _unlogged: Counter[str] = field(default_factory=Counter)  #: the rest, by error code
    _evicted: int = 0               #: pending connections told to give way, still closing

    def __post_init__(self) -> None:
        if self.throttle is None:
            self.throttle = AuthThrottle(self.limits)
        self.max_pending = self.limits.pending_cap()

    @property
    def pending(self) -> int:
        """Unauthenticated connections (not counting evicted ones still closing)."""
        return len(self._pending) - self._evicted

    def _say(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    async def serve(self, host: str, port: int, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Listen until cancelled. Reports the bound port through ``task_status``. Raises
        the soft fd limit first (``raise_fd_limit``, if ``raise_fds``) and, unless
        ``limits.max_pending`` says otherwise, sizes the pending cap by it."""
        if self.raise_fds:
            raise_fd_limit()
        self.max_pending = self.limits.pending_cap()
        try:
            listeners = await trio.open_tcp_listeners(port, host=host, backlog=1024)
        except OSError as exc:
            raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started(self.port)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._report_loop)
                await trio.serve_listeners(self.handle, listeners)
        finally:
            self.flush_log()

    def flush_log(self) -> None:
        """End a log interval: one line for the failed tokens, one for the refusals past
        the burst (each only if there were any)."""
        now = trio.current_time()
        since, self._reported_at = self._reported_at, now
        seconds = round(now - since, 1) if since is not None else self.limits.log_interval_s
        line = self.auth_report.flush(seconds)
        if line is not None:
            self._say(line)
        if self._unlogged:
            total = sum(self._unlogged.values())
            codes = ", ".join(f"{code} {n}" for code, n in self._unlogged.most_common())
            self._say(f"refused {total} more connection{'s' if total != 1 else ''} in the last "
                      f"{seconds:g} s, not logged one by one ({codes})")
        self._logged = 0
        self._unlogged.clear()

    async def _report_loop(self) -> None:
        self._reported_at = trio.current_time()
        while True:
            await trio.sleep(self.limits.log_interval_s)
            self.flush_log()

    async def handle(self, stream: trio.SocketStream) -> None:
        try:
            peer = stream.socket.getpeername()[0]
        except OSError:
            await stream.aclose()
            return
        lim = self.limits
        network = network_of(peer)
        if self.per_address.get(peer, 0) >= lim.max_per_address:
            await self._refuse(stream, peer, "limit", f"too many unauthenticated connections "
                               f"from {peer} ({lim.max_per_address} open)")
            return
        if self.per_network.get(network, 0) >= lim.max_per_network:
            await self._refuse(stream, peer, "limit", f"too many unauthenticated connections "
                               f"from {network} ({lim.max_per_network} open)")
            return
        if self.pending >= self.max_pending:
            self._evict()
        key = next(self._ids)
        pending = self._pending[key] = _Pending(peer, network, trio.current_time())
        self._silent[key] = None
        self.open_connections += 1
        self.per_address[peer] = self.per_address.get(peer, 0) + 1
        self.per_network[network] = self.per_network.get(network, 0) + 1
        try:
            await self._welcome(stream, peer, key, pending)
        finally:
            self._unpend(key)
            self.open_connections -= 1
            with trio.CancelScope(shield=True):
                await stream.aclose()

    def _unpend(self, key: int) -> None:
        pending = self._pending.pop(key, None)
        if pending is None:
            return
        self._silent.pop(key, None)
        self._evicted -= pending.evicted
        for counts, k in ((self.per_address, pending.peer), (self.per_network, pending.network)):
            counts[k] -= 1
            if not counts[k]:
                del counts[k]

    def _evict(self) -> None:
        """Make room in a full pending pool: the oldest silent pending connection (it has
        sent nothing yet) gives way, or the oldest of all when none is silent; it is
        refused with ``limit``. A connection that is sending its hello is not cut off
        for a silent one, whatever the order they came in."""
        victim: _Pending | None
        if self._silent:
            key, _ = self._silent.popitem(last=False)
            victim = self._pending[key]
        else:
            victim = next((p for p in self._pending.values() if not p.evicted), None)
            if victim is None:
                return
        victim.evicted = True
        self._evicted += 1
        if victim.scope is not None:
            victim.scope.cancel()

    async def _welcome(self, stream: trio.SocketStream, peer: str, key: int,
                       pending: _Pending) -> None:
        decoder = FrameDecoder(self.limits.handshake_frame)
        hello: msg.BotHello | None = None
        with trio.move_on_after(self.limits.handshake_s) as scope:
            pending.scope = scope
            if pending.evicted:
                scope.cancel()
            try:
                await stream.send_all(encode(msg.hello_msg(f"durak-ref {__version__}")))
                answer = None
                while answer is None:
                    answer = decoder.next_message()
                    if answer is None:
                        chunk = await stream.receive_some(4096)
                        if not pending.heard:
                            pending.heard = True
                            self._silent.pop(key, None)
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
            if pending.evicted:
                await self._refuse(stream, peer, "limit", "too many unauthenticated connections; "
                                   "this one gave way to a newer one")
            else:
                await self._refuse(stream, peer, "protocol",
                                   f"no hello within {self.limits.handshake_s:g} s")
            return
        if not await self._authenticated(stream, peer, hello):
            return
        self._unpend(key)
        if self.authenticated >= self.limits.max_connections:
            await self._refuse(stream, peer, "limit", f"too many connections "
                               f"({self.limits.max_connections} bots connected); try again later",
                               hello.name)
            return
        seat = self.claim(hello.name)
        if seat is None:
            await self._refuse(stream, peer, "busy", f"{hello.name} is already connected and "
                               f"seated; this connection is refused", hello.name)
            return
        self.authenticated += 1
        try:
            released = seat.attach_connection(stream, decoder, hello, peer)
            self._say(f"{hello.name} connected from {peer}")
            await released.wait()
            self._say(f"{hello.name} ({peer}) disconnected")
        finally:
            self.authenticated -= 1

    async def _authenticated(self, stream: trio.SocketStream, peer: str, hello: msg.BotHello) -> bool:
        """Whether ``hello`` holds the right token for its name; if not, the connection is
        refused (throttled during a penalty) and the failure counted."""
        assert self.throttle is not None
        self.tokens.refresh()
        self.token_checks += 1
        if self.tokens.check(hello.name, hello.token):
            self.throttle.succeeded(peer)
            return True
        # The right token is admitted whatever the penalty (below); a wrong one made
        # during a penalty is refused as throttled, and counts like any failure.
        now = trio.current_time()
        wait = self.throttle.penalty(peer, now)
        self.throttle.failed(peer, now)
        if wait > 0:
            await self._throttled(stream, peer, self.throttle.penalty(peer, now), hello.name)
            return False
        why = "no token" if hello.token is None else "wrong token or unknown name"
        if hello.token is not None and (other := self.tokens.look_alike(hello.name)) is not None:
            why = (f"no bot is registered as {hello.name!r}; it looks like {other!r}: a bot "
                   f"says hello under its registered name, letter for letter")
        self.auth_report.add_failure(peer)
        await self._refuse(stream, peer, "auth", f"authentication failed for {hello.name!r} "
                           f"({why})", hello.name, quiet=True)
        return False

    async def _throttled(self, stream: trio.SocketStream, peer: str, wait: float,
                         name: str | None = None) -> None:
        """Refuse a wrong token made from an address or network in its penalty."""
        self.auth_report.throttled += 1
        await self._refuse(stream, peer, "auth", f"throttled: too many failed tokens from {peer} "
                           f"or its network; try again in {wait:.1f} s", name, quiet=True)

    def _log(self, peer: str, reason: str, name: str | None = None,
             code: str | None = None, quiet: bool = False) -> None:
        """Record a refusal (a bounded record, newest last) and log it: ``quiet`` ones
        (failed and throttled tokens) only in aggregate, the others one by one up to
        ``log_burst`` per interval, then counted (``flush_log``), so no flood floods the log."""
        self.refusals.append(Refusal(utc_now(), peer, reason, name, code))
        del self.refusals[:-1000]
        if quiet:
            return
        if self._logged >= self.limits.log_burst:
            self._unlogged[code or "closed"] += 1
            return
        self._logged += 1
        self._say(f"refused {peer}{' (' + name + ')' if name else ''}: {reason}")

    async def _refuse(self, stream: trio.SocketStream, peer: str, code: str, reason: str,
                      name: str | None = None, quiet: bool = False) -> None:
        wire_code = code if code in msg.ERROR_CODES else "protocol"
        self._log(peer, reason, name, wire_code, quiet)
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
