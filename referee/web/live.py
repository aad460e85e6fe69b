"""The live page of a running arena or tournament (``serve --http``, ``tournament --http``).

Three parts:

- ``LiveHub`` holds what the page shows: the tables in play (each a ``PublicTable``
  rebuilt from the spectator stream of ``referee/table/spectator.py``, so it holds public
  facts only), the recent finished games and the standings. The referee feeds it
  (``watch`` is ``play_game``'s spectator hook; ``finished`` takes a game's log record
  once that game is over); feeding never blocks and never fails the referee. Each web
  client has a bounded queue (``Client``) in which a table's newer view replaces its
  waiting older one, so a client reading slower than games are played sees fewer,
  always current views; a client that stops reading is dropped at the bound (its browser
  reconnects and starts again from a fresh snapshot).
- ``LiveApp``, a small ASGI app: the page and its assets, ``/api/state`` (the snapshot
  as JSON), ``/events`` (Server-Sent Events: the snapshot, then every change) and
  ``/game/N`` (the omniscient replay of finished game N; 404 while it or a duplicate
  twin of it runs). Unknown
  paths get 404, malformed ids and foreign Host headers 400, other methods 405, clients
  beyond the cap 503. Every response forbids framing, sniffing and caching, and the
  page's Content-Security-Policy allows only its own script and the event stream.
- ``serve_live`` runs the app with hypercorn's trio worker until the hub is closed.

What a client may learn: while a game runs, only what a spectator at the table sees;
a game's log record (every hand, the deck order) only after the game has ended, and
with duplicate deals only after every game of its deal has ended: the twins of a deal
deal the same cards, so the replay of the first would show the cards hidden in the
others while they are played. Until then a finished game is held back whole (its
replay, its line in the list and the ``finished`` event), as if it were still playing.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from importlib import resources
from typing import Any, TypeVar
from urllib.parse import parse_qs

import trio

from ..console.jsonout import dumps
from ..console.usererror import first_of, leaves
from ..errors import UserError
from ..seats.tcp import ListenError, is_loopback, parse_listen
from ..table.spectator import PublicTable
from .loopprobe import LoopProbe
from .replay_html import ReplayHtmlError

T = TypeVar("T")

MAX_CLIENTS = 32  #: event streams open at once; more get 503
CLIENT_QUEUE = 256  #: updates waiting for one client; a client this far behind is dropped
RECENT_GAMES = 100  #: finished games listed, and replayable, at once
SEND_TIMEOUT_S = 10.0  #: a client that takes longer to accept one message is dropped
STANDINGS_EVERY_S = 2.0  #: standings are recomputed at most this often (a fit can be slow)
HEARTBEAT_S = 15.0  #: an SSE comment this often keeps proxies from closing an idle stream


class LiveError(UserError, ValueError):
    """Unusable --http input (a bad HOST:PORT, a port that cannot be bound): the user's."""

    hint = "give --http HOST:PORT with a port that is free on this machine"


def parse_http(text: str) -> tuple[str, int]:
    """``--http HOST:PORT`` (or ``:PORT`` for loopback) -> (host, port). Raises LiveError."""
    if ":" not in text:
        raise LiveError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    try:
        return parse_listen(text)
    except ListenError:
        raise LiveError(f"--http {text!r}: expected HOST:PORT with a port 0..65535") from None


def bind_warning(host: str) -> str | None:
    """The warning line for a non-loopback bind, or None for loopback."""
    if is_loopback(host):
        return None
    return (f"durak-ref: warning: the live page listens on {host}, not loopback: other "
            f"machines can watch it (public information only while games run)")


@dataclass
class Finished:
    """A finished game: its log header and record (the omniscient view) and a summary."""

    number: int
    header: dict[str, Any]
    record: dict[str, Any]

    def summary(self) -> dict[str, Any]:
        r = self.record
        durak = r.get("durak")
        return {"game": self.number, "names": r["players"], "termination": r["termination"],
                "durak": None if durak is None else r["players"][durak], "bouts": r.get("bouts"),
                "replay": f"/game/{self.number}"}


class Client:
    """One web client's waiting updates, bounded, never blocking the one who adds.

    Updates with a key (a table's view: ``("table", N)``) replace the waiting one of the
    same key in its place: a client that reads slower than games are played skips
    intermediate views but never sees them out of order or a finished game's table after
    its ``finished`` event. Keyless updates wait in order. More than ``cap`` waiting
    updates: the client is too far behind (or not reading) and ``put`` refuses."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.pending: dict[Any, bytes] = {}
        self.closed = False
        self._wake = trio.Event()
        self._seq = 0

    def put(self, frame: bytes, key: Any = None) -> bool:
        """Queue ``frame``; False (nothing queued) when the client is ``cap`` behind."""
        if key is None:
            self._seq += 1
            key = ("seq", self._seq)
        if key not in self.pending and len(self.pending) >= self.cap:
            return False
        self.pending[key] = frame
        self._wake.set()
        return True

    async def take(self) -> bytes | None:
        """Every waiting update, in order, as one chunk; waits for one. None once closed
        and nothing is left (what waited when it closed still goes out, at most ``cap``)."""
        while not self.pending and not self.closed:
            await self._wake.wait()
            self._wake = trio.Event()
        if not self.pending:
            return None
        chunk = b"".join(self.pending.values())
        self.pending.clear()
        return chunk

    def close(self) -> None:
        self.closed = True
        self._wake.set()


class LiveHub:
    """The live state of one run, fed by the referee and read by web clients."""

    def __init__(self, title: str, *, standings: Callable[[], dict[str, Any]] | None = None,
                 max_clients: int = MAX_CLIENTS, client_queue: int = CLIENT_QUEUE,
                 recent: int = RECENT_GAMES, deal_games: int = 1) -> None:
        """``deal_games``: how many games share one deal (its duplicate twins, with their
        record's ``seed``, the deal id, in common; 1 without duplicates). A finished
        game is shown once that many games of its deal have finished (or ``deal_over``)."""
        self.title = title
        self.deal_games = deal_games
        self._held: dict[str, list[Finished]] = {}  #: deal id -> its finished games not yet shown
        self._standings_source = standings
        self.max_clients = max_clients
        self.client_queue = client_queue
        self.tables: dict[int, PublicTable] = {}
        self.recent: deque[Finished] = deque(maxlen=recent)
        self.standings: list[dict[str, Any]] = []
        self.standings_error: str | None = None
        self.clients: set[Client] = set()
        self.dropped = 0  #: clients dropped for not keeping up
        self.closed = trio.Event()
        self._standings_due = trio.Event()
        self._standings_due.set()
        #: The server's event-loop probe (referee/web/loopprobe.py), served at /api/loop.
        self.loop_probe: LoopProbe | None = None

    # ---------------------------------------------------------------- fed by the referee

    async def watch(self, message: dict[str, Any]) -> None:
        """``play_game``'s spectator hook (``referee.table.match.Watch``): never blocks."""
        self.follow(message)

    def follow(self, message: dict[str, Any]) -> None:
        """Take one spectator message of a game in play and tell the clients."""
        number = message["game"]
        if message["type"] == "start":
            self.tables[number] = PublicTable(message)
        elif number in self.tables:
            self.tables[number].apply(message)
        else:
            return  # a game that started before we watched: nothing to draw it on
        self._publish("table", self.tables[number].view(), key=("table", number))

    def finished(self, header: dict[str, Any], record: dict[str, Any]) -> None:
        """Game ``record["game"]`` is over and in its log: list it, with its replay, once
        every game of its deal (``deal_games``) is over too; until then it is held."""
        self.tables.pop(record["game"], None)
        done = Finished(record["game"], header, record)
        deal = record.get("seed")
        if self.deal_games <= 1 or deal is None:
            self._show(done)
            return
        held = self._held.setdefault(deal, [])
        held.append(done)
        if len(held) >= self.deal_games:
            self.deal_over(deal)

    def deal_over(self, deal: str) -> None:
        """No game of deal ``deal`` (a record's ``seed``) is playing or will be played:
        show its finished games (the twins a run stopped before are never played)."""
        for done in self._held.pop(deal, []):
            self._show(done)

    def end_run(self) -> None:
        """The run is over (finished, interrupted or failed): show the games still held
        (their twins will not be played now), recompute the standings from the whole run,
        and tell every page, which then shows the final standings and stops reconnecting
        (the server goes when the run does). Safe to call more than once."""
        for deal in list(self._held):
            self.deal_over(deal)
        if self._standings_source is not None:
            while self._recompute_standings():  # read to the last stored game
                pass
        self._publish("over", {"standings": self.standings, "error": self.standings_error})

    def _show(self, done: Finished) -> None:
        self.recent.append(done)
        self._publish("finished", done.summary())
        self._standings_due.set()

    def close(self) -> None:
        """End every client's stream and stop the server (``serve_live`` returns)."""
        self.closed.set()
        for client in list(self.clients):
            client.close()
        self.clients.clear()

    # ---------------------------------------------------------------- read by clients

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows now, JSON-ready."""
        return {"title": self.title, "tables": [t.view() for t in self.tables.values()],
                "recent": [g.summary() for g in reversed(self.recent)],
                "standings": self.standings, "standings_error": self.standings_error}

    def replay(self, number: int) -> Finished | None:
        """Finished game ``number`` if it is still listed; None while it or a twin of it
        runs (held), or unknown."""
        for done in self.recent:
            if done.number == number:
                return done
        return None

    def subscribe(self) -> Client | None:
        """A new client, starting with the snapshot; None when clients are at their cap."""
        if len(self.clients) >= self.max_clients or self.closed.is_set():
            return None
        client = Client(self.client_queue)
        client.put(sse("snapshot", self.snapshot()))
        self.clients.add(client)
        return client

    def unsubscribe(self, client: Client) -> None:
        client.close()
        self.clients.discard(client)

    def _publish(self, name: str, data: Any, key: Any = None) -> None:
        frame = sse(name, data)
        for client in list(self.clients):
            if not client.put(frame, key):
                # Too far behind: drop it rather than hold the referee or grow without bound.
                self.unsubscribe(client)
                self.dropped += 1

    async def run_standings(self) -> None:
        """Recompute the standings after games finish: at most every STANDINGS_EVERY_S,
        and never more than a tenth of the time (the fit runs in the referee's thread,
        the store's connection being bound to it, so a long run's fit is spaced out)."""
        if self._standings_source is None:
            return
        while not self.closed.is_set():
            await self._standings_due.wait()
            self._standings_due = trio.Event()
            began = time.perf_counter()
            if self._recompute_standings():  # stored games left unread: go on after the pause
                self._standings_due.set()
            self._publish("standings", {"standings": self.standings, "error": self.standings_error})
            await trio.sleep(max(STANDINGS_EVERY_S, 9 * (time.perf_counter() - began)))

    def _recompute_standings(self) -> bool:
        """Read the standings from their source now; whether it left stored games unread."""
        assert self._standings_source is not None
        try:
            data = self._standings_source()
        except Exception as exc:  # the page must not take the run down: show why instead
            self.standings_error = f"standings unavailable: {type(exc).__name__}: {exc}"
            return False
        self.standings = standings_rows(data)
        self.standings_error = data.get("rating_error")
        return bool(data.get("partial"))


def standings_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The columns the page shows from ``league.standings``' table."""
    return [{k: b.get(k) for k in ("rank", "bot", "games", "durak", "draws", "durak_rate",
                                    "rating", "error95")} for b in data.get("table", [])]


def sse(name: str, data: Any) -> bytes:
    """One Server-Sent Event: strict JSON on one ``data`` line (JSON escapes newlines)."""
    return f"event: {name}\ndata: {dumps(data)}\n\n".encode()


# -------------------------------------------------------------------- the ASGI app

_ASSETS = resources.files("referee.web") / "assets"
_STATIC = {"/": ("live.html", "text/html; charset=utf-8"),
           "/assets/live.js": ("live.js", "text/javascript; charset=utf-8"),
           "/assets/live.css": ("live.css", "text/css; charset=utf-8"),
           # The card kit shared with the replay viewer (which inlines it).
           "/assets/cards.js": ("cards.js", "text/javascript; charset=utf-8"),
           "/assets/cards.css": ("cards.css", "text/css; charset=utf-8")}
_PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
             "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
#: A replay page is one self-contained file (inline script and style) that needs nothing else.
_REPLAY_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
               "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_GAME_PATH = re.compile(r"/game/([^/]*)")
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def response_headers(content_type: str, csp: str = _PAGE_CSP, **extra: str) -> list[tuple[bytes, bytes]]:
    """The headers of every response: no framing, sniffing, caching or referrer; ``csp``."""
    base = {"content-type": content_type, "cache-control": "no-store",
            "x-content-type-options": "nosniff", "x-frame-options": "DENY",
            "referrer-policy": "no-referrer", "content-security-policy": csp, **extra}
    return [(k.replace("_", "-").encode(), v.encode()) for k, v in base.items()]


class LiveApp:
    """The ASGI app of the live page over one ``LiveHub``.

    ``host``: the address the server is bound to; when it is loopback, requests must
    name a loopback host (``Host: localhost:PORT``, ``127.0.0.1``, ``[::1]``), so a web
    page elsewhere cannot reach the server through a DNS name rebound to 127.0.0.1."""

    def __init__(self, hub: LiveHub, host: str = "127.0.0.1", site: Any = None) -> None:
        """``site``: more of the site behind the same checks (the lobby of
        ``referee/web/lobby.py``): an object whose ``async handle(scope, receive, send)``
        answers the requests it serves and returns False for those it does not."""
        self.hub = hub
        self.site = site
        self.loopback_only = is_loopback(host)
        self.pages = {path: ((_ASSETS / name).read_bytes(), kind)
                      for path, (name, kind) in _STATIC.items()}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":  # a websocket: this server speaks SSE only
            await send({"type": "websocket.close", "code": 1003})
            return
        if self.site is not None and self._host_ok(scope) \
                and await self.site.handle(scope, receive, send):
            return
        status, body, headers = self.route(scope)
        if status == 0:
            await self.stream(receive, send)
            return
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def route(self, scope: dict[str, Any]) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """(status, body, headers) for a plain request; status 0: the event stream."""
        text = "text/plain; charset=utf-8"
        if not self._host_ok(scope):
            return 400, b"bad Host header: this server answers to its loopback address only\n", \
                response_headers(text)
        path = scope["path"]
        if scope["method"] != "GET":
            return 405, b"only GET is served here\n", response_headers(text, allow="GET")
        if path in self.pages:
            body, kind = self.pages[path]
            return 200, body, response_headers(kind)
        if path == "/api/state":
            return 200, dumps(self.hub.snapshot()).encode(), response_headers("application/json")
        if path == "/api/loop" and self.hub.loop_probe is not None:
            return self._loop_figures(self.hub.loop_probe, scope)
        if path == "/events":
            return 0, b"", []
        match = _GAME_PATH.fullmatch(path)
        if match:
            number = match.group(1)
            if not (number.isascii() and number.isdigit() and len(number) <= 12):
                return 400, b"a game is named by its number: /game/N\n", response_headers(text)
            done = self.hub.replay(int(number))
            if done is None:
                return 404, (f"game {int(number)} is not a finished game listed here (a game in "
                             f"play has no replay until it ends, and until every duplicate "
                             f"game of its deal has ended)\n").encode(), response_headers(text)
            try:
                page = replay_page(done)
            except ReplayHtmlError as exc:  # our record, our bug: say so, do not crash
                return 500, f"cannot draw game {done.number}: {exc}\n".encode(), response_headers(text)
            return 200, page.encode(), response_headers("text/html; charset=utf-8", _REPLAY_CSP)
        return 404, b"not found\n", response_headers(text)

    def _loop_figures(self, probe: LoopProbe, scope: dict[str, Any]) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        """``/api/loop?window=S``: the event loop's lateness over the last S seconds."""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        text = query.get("window", [""])[0]
        try:
            window = float(text) if text else None
        except ValueError:
            window = -1.0
        if window is not None and not 0 < window <= probe.keep:
            return 400, f"window: seconds, more than 0 and at most {probe.keep:g}\n".encode(), \
                response_headers("text/plain; charset=utf-8")
        return 200, dumps(probe.stats(window)).encode(), response_headers("application/json")

    def _host_ok(self, scope: dict[str, Any]) -> bool:
        if not self.loopback_only:
            return True
        hosts = [v for k, v in scope.get("headers", []) if k == b"host"]
        if len(hosts) != 1:
            return False
        host = hosts[0].decode("latin-1").strip().lower()
        name = host[1:host.index("]")] if host.startswith("[") and "]" in host \
            else host.rpartition(":")[0] if ":" in host else host
        return name in _LOOPBACK_NAMES or is_loopback(name)

    async def stream(self, receive: Any, send: Any) -> None:
        """The event stream: the snapshot, then every change, until the client leaves,
        falls too far behind, takes too long to accept a message, or the hub closes."""
        client = self.hub.subscribe()
        if client is None:
            await refuse(send, 503, "too many live viewers; try again later", retry_after="30")
            return
        await pump(client, receive, send, lambda: self.hub.unsubscribe(client))


async def refuse(send: Any, status: int, text: str, **headers: str) -> None:
    """A plain-text answer ``text`` with ``status`` (an error: whose fault, what to do)."""
    await send({"type": "http.response.start", "status": status,
                "headers": response_headers("text/plain; charset=utf-8", **headers)})
    await send({"type": "http.response.body", "body": f"{text}\n".encode()})


async def pump(client: Client, receive: Any, send: Any, leave: Callable[[], None],
               heartbeat_s: float | None = None) -> None:
    """Serve one Server-Sent Events response from ``client``'s queue until the browser
    leaves, the client is closed or dropped, or the browser takes longer than
    SEND_TIMEOUT_S to accept a message; then ``leave()`` (always). A comment every
    ``heartbeat_s`` (default HEARTBEAT_S) keeps an idle stream open through proxies."""
    beat = HEARTBEAT_S if heartbeat_s is None else heartbeat_s
    await send({"type": "http.response.start", "status": 200,
                "headers": response_headers("text/event-stream; charset=utf-8")})
    async with trio.open_nursery() as nursery:
        async def until_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            nursery.cancel_scope.cancel()

        nursery.start_soon(until_disconnect)
        try:
            while True:
                chunk: bytes | None = b": still here\n\n"
                with trio.move_on_after(beat):
                    chunk = await client.take()
                if chunk is None:  # dropped, or closed
                    break
                with trio.move_on_after(SEND_TIMEOUT_S) as slow:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                if slow.cancelled_caught:
                    break
        finally:
            leave()
        nursery.cancel_scope.cancel()
    with trio.move_on_after(SEND_TIMEOUT_S):
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def replay_page(done: Finished) -> str:
    """The omniscient replay viewer (``replay_html``) of a finished game, one
    self-contained page. Raises ReplayHtmlError if the record cannot be drawn (a bug)."""
    from .replay_html import render_replay_records

    # A footer of its own: the game is over (the run's log has no footer yet, and its
    # summary is this one game's, counted from its record).
    return render_replay_records(done.header, [done.record], footer={"interrupted": False},
                                 game=done.number, source=f"live game {done.number}")


#: A connection that has not sent a whole request within this many seconds is closed.
IDLE_TIMEOUT_S = 5.0


async def serve_live(hub: LiveHub, host: str, port: int, *, site: Any = None,
                     task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Serve ``hub``'s page (and ``site``'s: see LiveApp) on host:port with hypercorn's
    trio worker until ``hub.close()``.
    ``task_status.started`` gets the port bound (useful with port 0). Raises LiveError
    when the address cannot be bound."""
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.loglevel = "WARNING"  # its "Running on" line is ours to print
    config.graceful_timeout = 1.0
    # No read timeout: a viewer's event stream is one long response during which the
    # browser sends nothing, and hypercorn's read timeout would cut it (every viewer
    # dropped and reconnecting every few seconds). A client that sends its request head
    # slowly is cut by the idle timer instead, which runs until a whole request is in.
    config.read_timeout = None
    config.keep_alive_timeout = IDLE_TIMEOUT_S
    config.h11_max_incomplete_size = 8 * 1024  # request line and headers: small
    # Plain ASGI with dict messages; hypercorn's own annotations name each message type.
    app: Any = LiveApp(hub, host, site)
    try:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(partial(serve, app, config, shutdown_trigger=hub.closed.wait,
                                                mode="asgi"))
            task_status.started(int(binds[0].rpartition(":")[2]))
            async with trio.open_nursery() as side:
                side.start_soon(hub.run_standings)
                await hub.closed.wait()
                side.cancel_scope.cancel()
            # serve returns once its connections are closed (within graceful_timeout)
    except BaseExceptionGroup as group:
        # The bind fails as the server starts, before anything else runs: nothing is lost.
        leaf = first_of(group, (OSError,))
        if leaf is None:
            raise
        raise LiveError(f"--http {host}:{port}: cannot listen there: "
                        f"{getattr(leaf, 'strerror', None) or leaf}") from None


def replay_header(config: Any) -> dict[str, Any]:
    """The log header fields a replay of a live game needs (``config``: its MatchConfig).
    Never the run's seed: it keys every deal of the run, those still to come too."""
    return {"type": "header", "preset": config.rules.preset, "rules": config.rules.as_dict(),
            "time_control": config.tc.as_dict()}


async def with_live(hub: LiveHub, host: str, port: int, job: Callable[[], Awaitable[T]], *,
                    on_url: Callable[[str], None] | None = None) -> T:
    """Serve ``hub`` on host:port while ``await job()`` runs; close it when the job ends
    (however it ends). The job's own exception leaves as itself, not inside an
    exception group, so callers' ``except`` clauses keep working. Raises LiveError when
    the address cannot be bound (before the job starts)."""
    result: list[T] = []
    try:
        async with trio.open_nursery() as nursery:
            bound = await nursery.start(serve_live, hub, host, port)
            if on_url is not None:
                on_url(live_url(host, bound))
            try:
                result.append(await job())
            finally:
                # The final standings and the end reach the pages before the server goes
                # (what a client has queued when the hub closes is still sent).
                hub.end_run()
                hub.close()
    except BaseExceptionGroup as group:
        found = leaves(group)
        if len(found) == 1:
            raise found[0] from None
        raise
    return result[0]


def live_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"
