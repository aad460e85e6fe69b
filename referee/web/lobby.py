"""The lobby of ``serve --http``: tables of 2 to 4 that people create and join in the
browser, bots and people at one table.

A person creates a table (players, rules preset and options, time control, a hint bot
for a learning game, and for each seat: theirs, open to another person, or a bot: a
built-in or a connected TCP bot of the arena) and takes a seat with a display name;
others join its open seats from the lobby. Each person gets a seat token (kept in their
browser: a reload or a short disconnection returns them to the same seat). When every
seat is filled the game is played by the injected ``play`` (the arena's: the same match
loop, logs and ratings as every game, referee/league/tables.py).

The HTTP side (``handle``, behind ``LiveApp``'s Host check, one server with the live
page): pages ``/play`` and ``/table/N``; ``GET /lobby/events`` (Server-Sent Events:
the lobby, again at each change); ``POST /api/tables`` (create), ``POST
/api/tables/N/join``, ``GET /seat/events?token=T`` (the seat's view, again at each
change) and ``POST /api/act`` (a move). A browser holds one stream (lobby or seat) and
posts its moves. What a seat's stream carries is ``BrowserSeat.state``: that seat's
view only. What the lobby carries is public: names, bots, rules, results.

Every request is the user's input: bodies are JSON maps of at most MAX_BODY bytes,
posted as ``application/json`` from this origin; anything else is refused with a
status and a sentence saying what to do. Open tables, table creation, joins, new display
names and lobby streams are capped per address, per network (/24 IPv4, /64 IPv6, as the
arena counts them: ``seats.tcp.network_of``) and in all (``Cap``): a flood from one
address or one network fills none of the others' room, and a refusal names the cap
(429 for an address's or a network's, 503 for the lobby's). A seated person's own seat
streams count against none of these: each seat may always open STREAMS_PER_SEAT, and
their file descriptors are set aside before the lobby streams' cap is sized from the
fd limit (``stream_cap``, with the arena's ``seats.tcp.fd_room``).

Registered (``tcp:``) bots: the lobby offers only those whose owners allow lobby play,
and seats them under the arena's rules for them (``RegisteredBots``): a table with one
plays within the arena's time per decision, and a person there keeps it waiting at most
a short time on any one decision, then it is the person's timeout (the game ends, the
bot goes back to the arena).

Display names: a person is rated under their display name, so a name is theirs once
they have used it: the first browser to take a seat under a name claims it (``claim``,
kept with the ratings: the store), by a person token the lobby gives that browser and
the browser keeps (``person`` in the create and join bodies and answers). Another
browser is refused that name, with the reason. A name sits once at a table; a bot's name
(a built-in's, ``builtin:...`` or ``tcp:...``, a registered bot's) is never a person's.
Nor is a name that looks like one of these (``seats/names.py``: the same UTS #39
confusable skeleton, also without regard to case): it is refused naming the one it
looks like.
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

import trio

from ..console.jsonout import dumps
from ..human.hints import HINT_BOTS
from ..rules.options import PRESETS, RulesError, make_rules
from ..seats.names import look_alike, starts_like
from ..seats.players import BUILTINS
from ..seats.tcp import fd_room, network_of
from ..table.clock import TimeControl, TimeControlError
from ..table.match import MatchConfig
from .live import Client, pump, refuse, response_headers, sse
from .seat import STREAMS_PER_SEAT, BrowserSeat, new_seat_token, token_key


@dataclass(frozen=True)
class Cap:
    """One of the lobby's caps: at most ``total`` in all (0: sized when the lobby opens),
    ``network`` from one /24 (IPv4) or /64 (IPv6) network, ``address`` from one address.
    ``what`` names what is counted; ``then`` says what the person can do instead."""

    what: str
    total: int
    network: int
    address: int
    then: str


TABLES = Cap("tables open or in play", 32, 8, 3, "finish one, or join an open table")
CREATES = Cap("tables created an hour", 600, 60, 20, "join an open table, or try again later")
JOINS = Cap("seats taken an hour", 1800, 180, 60, "try again later")
CLAIMS = Cap("new display names an hour", 600, 60, 20, "play under a name you used before")
#: Lobby streams (``/lobby/events``); a seat's own streams are apart (STREAMS_PER_SEAT).
STREAMS = Cap("open lobby pages", 0, 32, 8, "close some and reload")
#: The lobby streams' cap sized by the fd limit is at most this: each stream costs a
#: task, a socket and hypercorn's connection state.
STREAMS_CEILING = 1024
MAX_BODY = 4096  #: bytes of a posted JSON body
OPEN_FOR_S = 900.0  #: an open table whose seats are not all taken by then is closed
KEEP_OVER = 20  #: finished tables kept (their seats' pages, their results)
NAME_MAX = 24  #: characters of a display name
DEFAULT_MOVE_TIME = 60.0  #: seconds per move at a table without a game clock
MIN_MOVE_TIME = 1.0  #: the least seconds per move a lobby table gives a person
MAX_MOVE_TIME = 3600.0
LOBBY_EVERY_S = 2.0  #: the lobby is sent again this often when it changed (bots come and go)
#: Seconds a registered bot waits on a person's one decision at most (``serve
#: --lobby-bot-wait``): then it is the person's timeout.
BOT_WAIT_S = 30.0

_ASSETS = resources.files("referee.web") / "assets"
_PAGES = {"/play": ("lobby.html", "text/html; charset=utf-8"),
          "/table": ("table.html", "text/html; charset=utf-8"),  # also every /table/N
          "/assets/play.css": ("play.css", "text/css; charset=utf-8"),
          "/assets/lobby.js": ("lobby.js", "text/javascript; charset=utf-8"),
          "/assets/table.js": ("table.js", "text/javascript; charset=utf-8")}
_TABLE_PAGE = re.compile(r"/table/(\d{1,9})")
_JOIN = re.compile(r"/api/tables/(\d{1,9})/join")


class LobbyError(Exception):
    """A request the lobby refuses: ``status`` and what the person should do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def display_name(raw: Any) -> str:
    """A person's display name from what they typed: printable, spaces collapsed, at most
    NAME_MAX characters. It is shown as text everywhere (never markup). LobbyError 400."""
    if not isinstance(raw, str):
        raise LobbyError(400, "a display name is text: type one")
    name = " ".join("".join(c if c.isprintable() else " " for c in raw).split())
    if not name:
        raise LobbyError(400, "type a display name (any text, up to 24 characters)")
    if len(name) > NAME_MAX:
        raise LobbyError(400, f"a display name has at most {NAME_MAX} characters; this one has {len(name)}")
    return name


def bot_like(name: str) -> str | None:
    """Why ``name`` is a bot's and not a person's display name, or None: a bot spec
    (``builtin:...``, ``tcp:...``) or a built-in bot's name, or one that looks like
    either (``seats/names.py``: in any case, ``grееdy`` with Cyrillic е too)."""
    if starts_like(name, ("builtin:", "tcp:")) is not None:
        return f"{name!r} is how a bot is named (builtin:NAME, tcp:NAME): choose a person's name"
    builtin = look_alike(name, BUILTINS)
    if builtin == name:
        return f"{name!r} is a built-in bot's name: choose another display name"
    if builtin is not None:
        return f"{name!r} looks like {builtin!r}, a built-in bot's name: choose another display name"
    return None


def seat_streams_reserved() -> int:
    """The most streams the seats of the lobby's tables may hold (set aside: never refused
    for others' load): every seat of every table open, in play or kept over."""
    return (TABLES.total + KEEP_OVER) * 4 * STREAMS_PER_SEAT


def stream_cap(held: int = 0) -> int:
    """The lobby streams' cap the fd limit leaves room for, beside ``held`` descriptors
    of the process's other pools (the arena's connections) and the seats' own streams."""
    return fd_room(held + seat_streams_reserved(), STREAMS_CEILING)


@dataclass(frozen=True)
class RegisteredBots:
    """How the lobby seats the arena's registered (``tcp:NAME``) bots. ``why_not(spec)``:
    why a registered bot the lobby does not offer now cannot be seated, as (HTTP status,
    what to do); a table seating one plays within ``move_s`` seconds per decision (the
    arena's; None: no limit), and a person at it keeps it waiting at most ``wait_s`` on
    any one decision (the time their page is away included): then it is their timeout."""

    why_not: Callable[[str], tuple[int, str]]
    move_s: float | None
    wait_s: float = BOT_WAIT_S


def no_claim(name: str, person_key: str) -> str | None:
    """A lobby without a store: every name is free (see ``Lobby``'s ``claim``)."""
    return None


@dataclass
class TableSeat:
    """One seat of a lobby table: a bot (``bot``: its spec, ``builtin:NAME`` or
    ``tcp:NAME``) or a person's (``person``: None while it is open)."""

    bot: str | None = None
    person: BrowserSeat | None = None
    key: str | None = None  #: the person's token hash

    def public(self) -> dict[str, Any]:
        if self.bot is not None:
            return {"kind": "bot", "name": self.bot}
        if self.person is None:
            return {"kind": "open", "name": None}
        return {"kind": "person", "name": self.person.name}


@dataclass
class LobbyTable:
    """A table: how it plays and who sits where. ``state``: open (seats to fill),
    playing, over (``result``: durak, termination, replay; or ``error``)."""

    number: int
    config: MatchConfig
    preset: str
    options: list[str]
    clock: str
    hints: str | None
    seats: list[TableSeat]
    creator: str
    created: float
    #: Seconds a bot of the arena at this table waits on a person's decision at most
    #: (None: no registered bot sits here)
    wait_s: float | None = None
    state: str = "open"
    game: int | None = None  #: the game's number in the run once it has started
    result: dict[str, Any] | None = None

    @property
    def people(self) -> list[BrowserSeat]:
        return [s.person for s in self.seats if s.person is not None]

    def public(self) -> dict[str, Any]:
        """What the lobby shows of it: no token, no card."""
        return {"table": self.number, "state": self.state, "players": len(self.seats),
                "preset": self.preset, "options": self.options, "clock": self.clock,
                "hints": self.hints, "seats": [s.public() for s in self.seats],
                "game": self.game, "result": self.result}


@dataclass
class _Use:
    """What one address, one network or everyone has done lately (for the caps): the
    times of the last hour's creates, joins and new names, and the lobby streams open."""

    creates: deque[float] = field(default_factory=deque)
    joins: deque[float] = field(default_factory=deque)
    claims: deque[float] = field(default_factory=deque)
    streams: int = 0

    def quiet(self, now: float) -> bool:
        """No stream open and nothing done within the hour: nothing to remember."""
        return not self.streams and all(not times or times[-1] < now - 3600.0
                                        for times in (self.creates, self.joins, self.claims))


def _recent(times: deque[float], now: float, window: float = 3600.0) -> int:
    while times and times[0] < now - window:
        times.popleft()
    return len(times)


class Lobby:
    """The lobby's tables and seats. ``play(table)`` plays a full table's game (and
    records it); ``bots()`` lists the bot specs a seat may take now (built-ins and
    connected TCP bots); ``claim(name, person_key)``: take display name ``name`` for the
    person whose token hashes to ``person_key`` (``token_key``), or say why not (None:
    it is theirs now; a registered bot's name or another person's is refused).
    ``grace``: the reconnect grace of every person's seat, in seconds; ``registered``:
    how the arena's bots may be seated (None: the lobby offers none); ``max_streams``:
    the lobby streams' cap (None: ``stream_cap()``)."""

    def __init__(self, play: Callable[[LobbyTable], Awaitable[None]], bots: Callable[[], list[str]],
                 *, grace: float = 60.0, claim: Callable[[str, str], str | None] = no_claim,
                 on_event: Callable[[str], None] | None = None,
                 registered: RegisteredBots | None = None, max_streams: int | None = None) -> None:
        self._play, self._bots, self._claim = play, bots, claim
        self.grace = grace
        self.on_event = on_event
        self.registered = registered
        self.max_streams = stream_cap() if max_streams is None else max_streams
        self.tables: dict[int, LobbyTable] = {}
        self.seats: dict[str, tuple[LobbyTable, BrowserSeat]] = {}  #: token hash -> seat
        self.addresses: dict[str, _Use] = {}
        self.networks: dict[str, _Use] = {}
        self.everyone = _Use()
        #: (person token hash, name as typed) -> when it was last claimed: a name used
        #: again by the same browser within the hour is no new claim
        self._claimed: dict[tuple[str, str], float] = {}
        self.watchers: set[Client] = set()
        self._numbers = iter(range(1, 1 << 62))
        self._nursery: trio.Nursery | None = None
        self._changed = trio.Event()
        self._stopping = False
        self.pages = {path: ((_ASSETS / name).read_bytes(), kind) for path, (name, kind) in _PAGES.items()}

    # ------------------------------------------------------------ tables and seats

    def snapshot(self) -> dict[str, Any]:
        """The lobby now, JSON-ready: the tables, and what a new table may use."""
        return {"tables": [t.public() for t in sorted(self.tables.values(), key=lambda t: -t.number)],
                "bots": self._bots(), "presets": list(PRESETS), "hint_bots": list(HINT_BOTS),
                "open": not self._stopping}

    def create(self, body: Any, address: str) -> tuple[LobbyTable, int, str, str]:
        """A new table from the create form's JSON, with its creator in their seat.
        Returns (table, the creator's seat, their seat token, their person token).
        LobbyError for what cannot be."""
        if self._stopping:
            raise LobbyError(503, "the server is stopping: no new tables")
        form = _form(body)
        now = trio.current_time()
        network = network_of(address)
        live = [t for t in self.tables.values() if t.state in ("open", "playing")]
        self._within(TABLES, TABLES.total, (len(live), sum(network_of(t.creator) == network for t in live),
                                            sum(t.creator == address for t in live)), network)
        self._within_rate(CREATES, "creates", address, now)
        seats_in = form.get("seats")
        if not isinstance(seats_in, list) or not 2 <= len(seats_in) <= 4:
            raise LobbyError(400, "a table has 2 to 4 seats: give each one (you, open, or a bot)")
        if sum(s == "you" for s in seats_in) != 1:
            raise LobbyError(400, "take exactly one seat yourself (\"you\")")
        seats = self._seats(seats_in)
        preset = form.get("preset", "classic")
        options = form.get("options", [])
        if not isinstance(preset, str) or not isinstance(options, list) or \
                not all(isinstance(o, str) for o in options) or len(options) > 20:
            raise LobbyError(400, "rules: a preset name and a list of NAME=VALUE options")
        hints = form.get("hints")
        if hints is not None and hints not in HINT_BOTS:
            raise LobbyError(400, f"hints come from {', '.join(HINT_BOTS)} (or none)")
        try:
            rules = make_rules(preset, options)
            rules.check_table(len(seats))
        except RulesError as exc:
            raise LobbyError(400, str(exc)) from None
        tc, wait_s = self._time(form, seats)
        claim = self._new_claim(form, address, now)
        name, person = self._person_name(form, [])
        table = LobbyTable(next(self._numbers), MatchConfig(rules=rules, games=1, tc=tc),
                           preset, list(options), tc.describe(), hints, seats, address, now, wait_s)
        self.tables[table.number] = table
        self._note("creates", address, now)
        self._claimed_now(claim, person, address, now)
        seat = seats_in.index("you")
        token = self._seat(table, seat, name)
        self._say(f"lobby: table {table.number} created from {address} ({len(seats)} seats)")
        self._filled(table)
        return table, seat, token, person

    def _seats(self, seats_in: list[Any]) -> list[TableSeat]:
        """The seats a create form asks for: LobbyError 400 for a bot not here now, or the
        ``registered.why_not`` of a registered bot the lobby does not offer."""
        bots = set(self._bots())
        seats = []
        for s in seats_in:
            if s in ("you", "open"):
                seats.append(TableSeat())
            elif isinstance(s, str) and s in bots:
                seats.append(TableSeat(bot=s))
            elif isinstance(s, str) and s.startswith("tcp:") and self.registered is not None:
                raise LobbyError(*self.registered.why_not(s))
            else:
                raise LobbyError(400, f"seat {str(s)[:40]!r}: not a bot here now; bots: "
                                 f"{', '.join(sorted(bots))}")
        return seats

    def _time(self, form: dict[str, Any], seats: list[TableSeat]) -> tuple[TimeControl, float | None]:
        """The table's time control from the form, and how long a registered bot at it
        waits on a person's decision at most (None: none sits there). A table seating a
        registered bot plays within the arena's time per decision. LobbyError 400."""
        clock = form.get("clock", "")
        move = form.get("move_time", DEFAULT_MOVE_TIME)
        if not isinstance(clock, str) or type(move) not in (int, float) or \
                not MIN_MOVE_TIME <= move <= MAX_MOVE_TIME:
            raise LobbyError(400, f"time: a clock like 300+5 (or none) and seconds per move, "
                             f"{MIN_MOVE_TIME:g} to {MAX_MOVE_TIME:g}")
        try:
            tc = TimeControl.parse(clock.strip() or None, float(move))
        except TimeControlError as exc:
            raise LobbyError(400, str(exc)) from None
        arena = [s.bot for s in seats if s.bot is not None and s.bot.startswith("tcp:")]
        if not arena or self.registered is None:
            return tc, None
        limit = self.registered.move_s
        if limit is not None and limit < MIN_MOVE_TIME:
            raise LobbyError(400, f"{arena[0]} plays under the arena's time limit of {limit:g} s "
                             f"per move, less than a person gets here ({MIN_MOVE_TIME:g} s): "
                             f"pick a built-in bot")
        if limit is not None and (tc.move is None or tc.move > limit):
            raise LobbyError(400, f"{arena[0]} plays under the arena's time limit of {limit:g} s "
                             f"per move: set seconds per move to at most {limit:g}")
        return tc, self.registered.wait_s

    def join(self, number: int, body: Any, address: str) -> tuple[int, str, str]:
        """Take an open seat of table ``number`` (the first, or ``seat`` of the body).
        Returns (seat, seat token, person token). LobbyError for what cannot be."""
        form = _form(body)
        table = self.tables.get(number)
        if table is None or table.state != "open":
            raise LobbyError(404, f"table {number} is not open now: pick another in the lobby")
        now = trio.current_time()
        self._within_rate(JOINS, "joins", address, now)
        free = [i for i, s in enumerate(table.seats) if s.bot is None and s.person is None]
        if not free:
            raise LobbyError(404, f"table {number} has no open seat now: pick another in the lobby")
        wanted = form.get("seat", free[0] if free else None)
        if type(wanted) is not int or wanted not in free:
            raise LobbyError(409, f"seat {str(wanted)[:12]} of table {number} is not open; "
                             f"open: {free}")
        claim = self._new_claim(form, address, now)
        name, person = self._person_name(form, table.people)
        token = self._seat(table, wanted, name)
        self._note("joins", address, now)
        self._claimed_now(claim, person, address, now)
        self._filled(table)
        return wanted, token, person

    # ------------------------------------------------------------ the caps

    def _uses(self, address: str) -> tuple[_Use, _Use, _Use]:
        """(everyone, the address's network, the address): what each did lately."""
        network = network_of(address)
        now = trio.current_time()
        for book in (self.addresses, self.networks):
            if len(book) > 4096:  # forget the quiet ones (the caps in all bound the busy)
                for key in [k for k, use in book.items() if use.quiet(now)]:
                    del book[key]
        return (self.everyone, self.networks.setdefault(network, _Use()),
                self.addresses.setdefault(address, _Use()))

    @staticmethod
    def _within(cap: Cap, total: int, counts: tuple[int, int, int], network: str) -> None:
        """LobbyError when one more would pass ``cap``: ``counts`` are (in all, from the
        network, from the address); ``total`` the cap in all in force."""
        everyone, net, mine = counts
        if mine >= cap.address:
            raise LobbyError(429, f"at most {cap.address} {cap.what} from one address: {cap.then}")
        if net >= cap.network:
            raise LobbyError(429, f"at most {cap.network} {cap.what} from one network "
                             f"({network}): {cap.then}")
        if everyone >= total:
            raise LobbyError(503, f"the lobby is full: at most {total} {cap.what} in all: "
                             f"{cap.then}")

    def _within_rate(self, cap: Cap, kind: str, address: str, now: float) -> None:
        everyone, network, mine = self._uses(address)
        self._within(cap, cap.total, (_recent(getattr(everyone, kind), now),
                                      _recent(getattr(network, kind), now),
                                      _recent(getattr(mine, kind), now)), network_of(address))

    def _note(self, kind: str, address: str, now: float) -> None:
        for use in self._uses(address):
            getattr(use, kind).append(now)

    def _new_claim(self, form: dict[str, Any], address: str, now: float) -> tuple[str, str] | None:
        """The (person, name) a form would claim when it is a new claim, checked against
        the CLAIMS caps first (LobbyError); None when this browser used this name lately."""
        person, name = form.get("person"), form.get("name")
        key = (token_key(person) if isinstance(person, str) else "", str(name)[:NAME_MAX * 4])
        if now - self._claimed.get(key, -math.inf) < 3600.0:
            return None
        self._within_rate(CLAIMS, "claims", address, now)
        return key

    def _claimed_now(self, claim: tuple[str, str] | None, person: str, address: str,
                     now: float) -> None:
        """A new name was taken (``_new_claim``): counted, and remembered for the hour."""
        if claim is None:
            return
        if len(self._claimed) > 4 * CLAIMS.total:
            self._claimed = {k: t for k, t in self._claimed.items() if now - t < 3600.0}
        self._claimed[(token_key(person), claim[1])] = now
        self._note("claims", address, now)

    @property
    def streams(self) -> int:
        """Lobby streams open in all (a seat's own streams are not counted)."""
        return self.everyone.streams

    def _person_name(self, form: dict[str, Any], seated: list[BrowserSeat]) -> tuple[str, str]:
        """The form's display name, claimed for its person (``person``: their token, or a
        new one for a browser that has none yet) -> (name, person token). LobbyError 409
        for a bot's name, a name at this table already, another person's name, or one that
        looks like any of them."""
        name = display_name(form.get("name"))
        why = bot_like(name)
        if why is None and (there := look_alike(name, [p.name for p in seated])) is not None:
            who = "" if there == name else f" looks like {there!r}, who"
            why = f"{name!r}{who} already sits at this table: choose another display name"
        if why is not None:
            raise LobbyError(409, why)
        person = form.get("person")
        if not isinstance(person, str) or not 32 <= len(person) <= 64:
            person = new_seat_token()
        why = self._claim(name, token_key(person))
        if why is not None:
            raise LobbyError(409, why)
        return name, person

    def _seat(self, table: LobbyTable, seat: int, name: str) -> str:
        token = new_seat_token()
        person = BrowserSeat(name, grace=self.grace, hint_bot=table.hints, wait_s=table.wait_s)
        person.on_event = self.on_event
        table.seats[seat].person, table.seats[seat].key = person, token_key(token)
        self.seats[token_key(token)] = (table, person)
        self._touch()
        return token

    def _filled(self, table: LobbyTable) -> None:
        if all(s.bot is not None or s.person is not None for s in table.seats) and self._nursery:
            table.state = "playing"
            self._nursery.start_soon(self._run_table, table)
            self._touch()

    async def _run_table(self, table: LobbyTable) -> None:
        try:
            await self._play(table)
        except Exception as exc:  # our bug: the table says so, the server goes on
            table.result = {"error": f"the game could not be played (a bug in durak-ref): "
                                     f"{type(exc).__name__}: {exc}"}
            self._say(f"lobby: table {table.number}: {table.result['error']}")
        table.state = "over"
        for person in table.people:
            if table.result is not None and "error" in table.result:
                person.table_ended(table.result["error"])
            else:
                person.publish()
        self._touch()
        self._forget_over()

    def _forget_over(self) -> None:
        over = sorted((t for t in self.tables.values() if t.state in ("over", "closed")),
                      key=lambda t: t.number)
        for table in over[:max(0, len(over) - KEEP_OVER)]:
            self._drop(table)

    def _drop(self, table: LobbyTable) -> None:
        self.tables.pop(table.number, None)
        for s in table.seats:
            if s.key is not None:
                self.seats.pop(s.key, None)
            if s.person is not None:
                for client in list(s.person.streams):
                    s.person.detach(client)

    def _expire(self, now: float) -> None:
        for table in list(self.tables.values()):
            if table.state == "open" and now - table.created > OPEN_FOR_S:
                table.state = "closed"
                table.result = {"error": f"not every seat was taken within {OPEN_FOR_S / 60:g} "
                                         f"minutes: the table was closed"}
                for person in table.people:
                    person.table_ended(table.result["error"])
                self._touch()
        self._forget_over()

    def _touch(self) -> None:
        self._changed.set()

    def _say(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    async def run(self) -> None:
        """Play the tables as they fill, send the lobby to its watchers when it changes,
        close tables left open too long. Runs until cancelled; ``stop`` first to let
        the games in play finish (``finish`` waits for them)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            sent = ""
            while True:
                with trio.move_on_after(LOBBY_EVERY_S):
                    await self._changed.wait()
                self._changed = trio.Event()
                self._expire(trio.current_time())
                snapshot = self.snapshot()
                frame = dumps(snapshot)
                if frame != sent:
                    sent = frame
                    data = sse("lobby", snapshot)
                    for client in list(self.watchers):
                        if not client.put(data, key="lobby"):
                            client.close()

    def stop(self) -> None:
        """No new tables or seats; the games in play go on."""
        self._stopping = True
        self._touch()

    async def finish(self) -> None:
        """Wait until no table is in play."""
        while any(t.state == "playing" for t in self.tables.values()):
            await trio.sleep(0.1)

    # ------------------------------------------------------------ HTTP

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> bool:
        """Answer a request of the lobby's; False for a path that is not the lobby's."""
        path, method = scope["path"], scope["method"]
        address = (scope.get("client") or ("?", 0))[0]
        if path in self.pages or _TABLE_PAGE.fullmatch(path):
            if method != "GET":
                await refuse(send, 405, "only GET is served here", allow="GET")
                return True
            body, kind = self.pages[path if path in self.pages else "/table"]
            await send({"type": "http.response.start", "status": 200, "headers": response_headers(kind)})
            await send({"type": "http.response.body", "body": body})
            return True
        if path == "/lobby/events" or path == "/seat/events":
            if method != "GET":
                await refuse(send, 405, "only GET is served here", allow="GET")
                return True
            await self._stream(path, scope, receive, send, address)
            return True
        if path in ("/api/tables", "/api/act") or _JOIN.fullmatch(path):
            if method != "POST":
                await refuse(send, 405, "post a JSON body here", allow="POST")
                return True
            try:
                status, answer = 200, self._post(path, await _json_body(scope, receive), address)
            except LobbyError as exc:
                status, answer = exc.status, {"error": exc.message}
            await send({"type": "http.response.start", "status": status,
                        "headers": response_headers("application/json")})
            await send({"type": "http.response.body", "body": dumps(answer).encode()})
            return True
        return False

    def _post(self, path: str, body: Any, address: str) -> dict[str, Any]:
        if path == "/api/tables":
            table, seat, token, person = self.create(body, address)
            return {"table": table.number, "seat": seat, "token": token, "person": person}
        join = _JOIN.fullmatch(path)
        if join:
            seat, token, person = self.join(int(join.group(1)), body, address)
            return {"table": int(join.group(1)), "seat": seat, "token": token, "person": person}
        form = _form(body)
        found = self.seats.get(token_key(str(form.get("token", ""))))
        if found is None:
            raise LobbyError(403, "no seat has this token (its table may be gone): join a table "
                             "in the lobby")
        why = found[1].submit(form.get("request"), form.get("choice"))
        if why is not None:
            raise LobbyError(409, why)
        return {"ok": True}

    async def _stream(self, path: str, scope: dict[str, Any], receive: Any, send: Any,
                      address: str) -> None:
        uses: tuple[_Use, ...] = ()
        if path == "/lobby/events":
            uses = self._uses(address)
            try:
                self._within(STREAMS, self.max_streams, (uses[0].streams, uses[1].streams,
                                                         uses[2].streams), network_of(address))
            except LobbyError as exc:
                await refuse(send, exc.status, exc.message, retry_after="10")
                return
            client: Client | None = Client(8)
            assert client is not None
            client.put(sse("lobby", self.snapshot()), key="lobby")
            self.watchers.add(client)
            watcher = client

            def leave() -> None:
                self.watchers.discard(watcher)
                watcher.close()
        else:
            token = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
            found = self.seats.get(token_key(token))
            if found is None:
                await refuse(send, 403, "no seat has this token (its table may be gone): join a "
                             "table in the lobby")
                return
            person = found[1]
            client = person.attach()
            if client is None:
                await refuse(send, 503, "this seat is open in too many pages: close some")
                return
            seat_client = client

            def leave() -> None:
                person.detach(seat_client)
        for use in uses:  # a lobby stream counts; a seat's own is the seat's alone
            use.streams += 1
        try:
            await pump(client, receive, send, leave)
        finally:
            for use in uses:
                use.streams -= 1


def _form(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise LobbyError(400, "the body is a JSON map")
    return body


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    values = [v for k, v in scope.get("headers", []) if k == name]
    return values[0].decode("latin-1") if len(values) == 1 else None


async def _json_body(scope: dict[str, Any], receive: Any) -> Any:
    """The posted JSON, checked: posted as application/json from this page's origin (a
    page elsewhere cannot post here: that type needs a CORS preflight, never granted),
    at most MAX_BODY bytes. LobbyError otherwise."""
    kind = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise LobbyError(415, "post the body as application/json")
    origin, host = _header(scope, b"origin"), _header(scope, b"host")
    if origin is not None and origin.split("://", 1)[-1] != host:
        raise LobbyError(403, "posts come from this site's own pages only")
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise LobbyError(400, "the request ended before its body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise LobbyError(413, f"a body has at most {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError):
        raise LobbyError(400, "the body is not JSON") from None
