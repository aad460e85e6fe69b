"""The arena (``durak-ref serve``): registered bots connect over TCP whenever they like,
and the server keeps pairing them for rated ladder games.

How it works. Bots are registered in the store (``durak-ref register NAME`` prints a
token once; only its SHA-256 hash is stored). The ``TcpGate`` authenticates each
connection and turns it into a ``TcpSeat``; a bot may hold up to
``max_games_per_bot`` connections, each serving one game at a time. A scheduler
pairs idle connections of different bots as the ladder does (fewest games first,
then the closest rating) and plays two games, one per seat order; each game and its
rating updates are written to the store in one transaction. Every game is dealt from
a fresh seed drawn from ``secrets`` (recorded with the game in the log and the store),
so no earlier deal tells anything about the next. With ``duplicate`` the two games share
one deal instead; that is unsound against remote bots, which can remember the first
game and so know the other's hand in the second, and is only for bots you trust.
The token book is the store: it is re-read when another process commits to it
(``register --rotate``, ``unregister``), so a new token works and a revoked one is
refused at the next connection; an idle connection made with a revoked token is
closed, and one in a game finishes that game first. Idle connections are
pinged and dropped when they do not answer; one the bot has closed is dropped when it
is found (before pairing, or when the bot reconnects), so a drop between games costs
no game and the reconnect is not refused as busy. Shutdown (``stop``) lets the games in
flight finish and records them; nothing finished is lost.
"""

from __future__ import annotations

import random
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from ..errors import UserError
from ..records.matchlog import FORMAT, MatchLogWriter, fresh_log_path, timestamp, utc_now
from ..records.store import Store
from ..rules.deal import DEAL_TEXT
from ..seats.tcp import TcpGate, TcpLimits, TcpSeat, TokenBook, hash_token, new_token
from ..table.match import GameRecord, MatchConfig, play_game
from ..web.live import LiveHub, replay_header
from ..web.loopprobe import LoopProbe
from .ladder import LOBBY_ID, ensure_ladder, next_ladder_index, pairing, store_ladder_game


class ArenaError(UserError, ValueError):
    """The user's register or unregister cannot be done: a bad bot name, a local bot of
    that name, a name already registered or not registered, a name that is a built-in's
    or looks like one or like another name in the store. The message says which."""

    hint = ("`durak-ref ladder show` lists the bots; an arena name is 1-64 letters, digits, '_', '-' "
            "or '.', not like a built-in's or a stored name")


def _arena_bot(store: Store, name: str) -> str | None:
    """The name's command if it is a TCP bot; ArenaError for a local bot."""
    command = store.bot_command(name)
    if command is not None and command != f"tcp:{name}":
        raise ArenaError(f"{name!r} is registered as a local bot ({command}), not an arena bot")
    return command


def registered(store: Store, name: str) -> bool:
    """Whether ``name`` is an arena bot with a token (ArenaError for a local bot)."""
    return _arena_bot(store, name) is not None and name in store.token_hashes()


def register(store: Store, name: str, rotate: bool = False, lobby: bool | None = None) -> str:
    """Register a TCP bot, or with ``rotate`` give a registered one a new token (the old
    one stops working at once, also for a running ``serve``). ``lobby``: whether people
    may seat it in the lobby of ``serve --http`` (None: off for a new bot, unchanged on
    ``rotate``; ``allow_lobby`` changes only that). Returns the new token (shown once,
    stored hashed). ArenaError: a bad name (named as a look-alike first when it is one),
    a built-in's name or a look-alike of one or of a name in the store
    (``_refuse_look_alike``), a local bot of that name, a name already registered
    (without ``rotate``) or not registered (with it)."""
    if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", name):
        _refuse_look_alike(store, name)  # the likelier reason first: аlpha (Cyrillic а) for alpha
        raise ArenaError(f"bot name {name!r}: use 1-64 letters, digits, '_', '-', '.'")
    settings = ensure_ladder(store)
    known = registered(store, name)
    if rotate and not known:
        raise ArenaError(f"{name!r} is not registered for the arena; register it first "
                         f"(durak-ref register {name})")
    if known and not rotate:
        raise ArenaError(f"{name!r} is already registered; for a new token (the old one then "
                         f"stops working) use: durak-ref register --rotate {name}; to allow or "
                         f"stop lobby play: durak-ref register {name} --lobby on|off")
    if not known:
        _refuse_look_alike(store, name)
    token = new_token()
    with store.transaction():
        store.ensure_bot(name, f"tcp:{name}")
        store.set_token_hash(name, hash_token(token))
        if lobby is not None or not known:
            store.set_lobby(name, bool(lobby))
        if store.ladder_rating(name) is None:
            store.set_ladder(name, float(settings["start"]), 0)
    return token


def _refuse_look_alike(store: Store, name: str) -> None:
    """ArenaError when new arena name ``name`` is a built-in's or looks like one, or
    looks like a name in the store (a bot's or a person's: ``seats/names.py``). The name
    itself may be in the store: an arena bot registered again after ``unregister``."""
    from ..seats.names import look_alike
    from ..seats.players import BUILTINS

    builtin = look_alike(name, BUILTINS)
    if builtin is not None:
        looks = "is" if builtin == name else f"looks like {builtin!r},"
        raise ArenaError(f"{name!r} {looks} a built-in bot's name: choose another name")
    stored = StoredNames(store).look_alike(name)
    if stored is not None:
        raise ArenaError(f"{name!r} looks like {stored[0]!r}, {_whose(stored[1])} name in this "
                         f"store: choose another name")


class StoredNames:
    """The store's names (bots' and people's) by look-alike key (``seats/names.py``):
    read when made, read again when another process has committed to the store
    (``register``: ``Store.data_version``; a name is never removed from the store, so
    only new ones are indexed), and told of the names added here."""

    def __init__(self, store: Store) -> None:
        from ..seats.names import NameIndex

        self.store, self._version, self._index = store, -1, NameIndex()
        self._read()

    def _read(self) -> None:
        version = self.store.data_version()
        if version != self._version:
            self._version = version
            for name, _, _ in self.store.bots():
                self._index.add(name)

    def look_alike(self, name: str) -> tuple[str, str] | None:
        """The stored name that ``name`` looks like (``name`` itself not counted) and what
        it is recorded as (its command), or None."""
        self._read()
        other = self._index.find(name, other_than=name)
        return None if other is None else (other, self.store.bot_command(other) or "")

    def add(self, name: str) -> None:
        self._index.add(name)


def _whose(command: str) -> str:
    """Whose name the store's ``command`` says a name is: a person's or a bot's."""
    return "a person's" if command.startswith(PERSON) else "a bot's"


def allow_lobby(store: Store, name: str, allowed: bool) -> None:
    """Allow (or stop) people seating registered bot ``name`` in the lobby; a running
    ``serve`` follows at once (a lobby game it is in finishes). ArenaError when no arena
    bot of that name is registered."""
    _must_be_registered(store, name)
    with store.transaction():
        store.set_lobby(name, allowed)


def unregister(store: Store, name: str) -> None:
    """Revoke a TCP bot's token: it can no longer connect (a running ``serve`` refuses it
    at once; a game it is playing finishes). Its games and rating stay in the store.
    ArenaError when no arena bot of that name is registered."""
    _must_be_registered(store, name)
    with store.transaction():
        store.set_token_hash(name, None)


def _must_be_registered(store: Store, name: str) -> None:
    if not registered(store, name):
        known = ", ".join(sorted(store.token_hashes())) or "none"
        raise ArenaError(f"{name!r} is not registered for the arena (registered: {known})")


def store_book(store: Store) -> TokenBook:
    """The store's token book, re-read whenever another process has committed to it."""
    seen = [store.data_version()]

    def reload() -> dict[str, str] | None:
        version = store.data_version()
        if version == seen[0]:
            return None
        seen[0] = version
        return store.token_hashes()

    return TokenBook(store.token_hashes(), reload=reload)


@dataclass
class Arena:
    store: Store
    config: MatchConfig
    limits: TcpLimits = field(default_factory=TcpLimits)
    max_games_per_bot: int = 1
    games: int | None = None  #: stop after this many games (None: until stopped)
    duplicate: bool = False  #: both games of a pairing share one deal (only for trusted bots)
    log_dir: Path | None = None
    on_event: Callable[[str], None] | None = None
    reconnect_grace: float = 0.0  #: seconds a game waits, paused, for a bot that dropped
    seats: dict[str, list[TcpSeat]] = field(default_factory=dict)
    played: int = 0
    in_flight: int = 0
    #: Games the pairings in flight may still play: ``games`` counts them with ``played``,
    #: so the last pairing under the limit plays only the games left (one, seats as drawn).
    promised: int = 0
    port: int | None = None
    gate: TcpGate | None = None  #: the gate of the current run (its refusals, open connections)
    #: The live page's hub (``serve --http``): it watches every game and lists finished ones.
    live: LiveHub | None = None
    _stopping: trio.Event = field(default_factory=trio.Event)
    _book_seen: int = 0  #: the token book generation whose revocations were applied
    _index: Any = None  #: the run's game numbers (arena pairs and lobby tables share them)
    _lobby: frozenset[str] | None = None  #: the bots allowed in the lobby, as last read
    _lobby_seen: int = 0  #: the store's data version when they were read

    def next_index(self) -> int:
        """The next game number of the ladder and the lobby in the store (shared by every
        table)."""
        if self._index is None:
            self._index = next_ladder_index(self.store, (LOBBY_ID,))
        return int(next(self._index))

    def lobby_bots(self) -> frozenset[str]:
        """The registered bots whose owners allow lobby play (``register --lobby on``),
        read again whenever another process has committed to the store."""
        version = self.store.data_version()
        if self._lobby is None or version != self._lobby_seen:
            self._lobby, self._lobby_seen = frozenset(self.store.lobby_bots()), version
        return self._lobby

    def take_idle(self, name: str) -> TcpSeat | None:
        """A connected, idle seat of TCP bot ``name``, marked busy (the caller frees it)."""
        for s in self.seats.get(name, []):
            if s.connected and not s.busy and s.failure is None:
                s.busy = True
                return s
        return None

    def idle_bots(self) -> list[str]:
        """The TCP bots with a connected idle seat, as ``tcp:NAME`` specs."""
        return sorted(f"tcp:{n}" for n, ss in self.seats.items()
                      if any(s.connected and not s.busy and s.failure is None for s in ss))

    def games_left(self) -> int | None:
        """Games a new pairing may still play under ``games`` (None: no limit): the limit
        less the games played (lobby tables' too) and those promised to pairings in flight.
        A pairing promises two games and gives back those it does not play."""
        return None if self.games is None else self.games - self.played - self.promised

    def say(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    def stop(self) -> None:
        """Stop pairing; games in flight finish and are recorded."""
        self._stopping.set()

    def claim(self, name: str) -> TcpSeat | None:
        for s in self.seats.get(name, []):
            if s.paused:  # its game waits for this bot to come back (--reconnect-grace)
                return s
        live = [s for s in self.seats.get(name, []) if s.connected]
        if len(live) >= self.max_games_per_bot:
            # A bot reconnecting after its connection dropped between games: let its dead
            # idle connections go first (a seat in a game finds out by itself).
            self._drop_dead(s for s in live if not s.busy)
            live = [s for s in live if s.connected]
        if len(live) >= self.max_games_per_bot:
            return None
        seat = TcpSeat(name, wait_s=0.0, max_frame=self.limits.max_frame,
                       reconnect_grace=self.reconnect_grace)
        seat.on_event = self.on_event
        self.seats[name] = live + [seat]
        return seat

    def _drop_dead(self, seats: Any) -> bool:
        """Release the idle seats whose connection the bot has closed; True if any was."""
        dropped = False
        for s in list(seats):
            if not s.alive():
                s.release()
                self.say(f"{s.name} ({s.peer}) closed its connection while idle; dropped")
                dropped = True
        return dropped

    def _revoked(self, seat: TcpSeat) -> bool:
        """Was the token this seat's connection used rotated or revoked since?"""
        return (self.gate is not None and seat.token_hash is not None
                and self.gate.tokens.current(seat.name) != seat.token_hash)

    def _drop_revoked(self) -> None:
        """Re-read the token book; close the idle connections made with a token that no
        longer holds (one in a game is closed when its game ends)."""
        if self.gate is None:
            return
        self.gate.tokens.refresh()  # (the gate may have refreshed first: compare generations)
        if self.gate.tokens.generation == self._book_seen:
            return
        self._book_seen = self.gate.tokens.generation
        for seats in self.seats.values():
            for s in seats:
                if s.connected and not s.busy and self._revoked(s):
                    s.release()
                    self.say(f"{s.name} ({s.peer}): its token was revoked; connection closed")

    def status(self) -> dict[str, Any]:
        return {"port": self.port, "played": self.played, "in_flight": self.in_flight,
                "connected": {n: sum(s.connected for s in ss) for n, ss in self.seats.items()
                              if any(s.connected for s in ss)}}

    async def run(self, host: str, port: int, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> int:
        """Serve until stopped (or ``games`` are played). Returns the games played."""
        settings = ensure_ladder(self.store)
        k, start = float(settings["k"]), float(settings["start"])
        tokens = store_book(self.store)
        gate = self.gate = TcpGate(tokens, self.claim, self.limits, on_event=self.say)
        writer = self._open_log()
        rng = random.SystemRandom()  # pairing ties only; deals come from secrets (_play_pair)

        async def scheduler(games_nursery: trio.Nursery) -> None:
            while not self._stopping.is_set():
                left = self.games_left()
                if left is not None and left <= 0:
                    if self.in_flight == 0:
                        self.stop()
                    await trio.sleep(0.05)
                    continue
                self._drop_revoked()
                idle = {}
                for name, seats in self.seats.items():
                    free = [s for s in seats if s.connected and not s.busy and s.failure is None]
                    if free:
                        idle[name] = free[0]
                ratings = {n: self.store.ladder_rating(n) or (start, 0) for n in idle}
                pair = pairing(ratings, rng)
                if pair is None:
                    await trio.sleep(0.05)
                    continue
                a, b = idle[pair[0]], idle[pair[1]]
                if self._drop_dead((a, b)):
                    continue  # a drop between games costs no game: pair again without it
                a.busy = b.busy = True
                self.in_flight += 1
                games = 2 if left is None else min(2, left)
                self.promised += games
                games_nursery.start_soon(self._play_pair, a, b, writer, k, start, games)

        pinger_done = trio.Event()
        try:
            async with trio.open_nursery() as nursery:
                self.port = await nursery.start(gate.serve, host, port)
                self.say(f"arena listening on {host}:{self.port} (room for {gate.max_pending} "
                         f"unauthenticated connections, {self.limits.max_connections} bots)")
                task_status.started(self.port)
                nursery.start_soon(self._pinger, pinger_done)
                async with trio.open_nursery() as games_nursery:
                    await scheduler(games_nursery)
                    # Stopping: the games in flight finish (this nursery waits for them).
                # A ping round in flight ends first (within ping_timeout): a bye written
                # while a ping is on the same socket failed the arena with BusyResourceError.
                await pinger_done.wait()
                with trio.CancelScope(shield=True):
                    # A snapshot: bots connecting meanwhile must not change what we iterate.
                    for s in [s for seats in list(self.seats.values()) for s in seats]:
                        await s.close()
                nursery.cancel_scope.cancel()
        finally:
            if writer is not None:
                writer.write({"type": "footer", "ended": utc_now(), "interrupted": False,
                              "summary": {"games": self.played}})
                writer.close()
        return self.played

    def _open_log(self) -> MatchLogWriter | None:
        """The arena's new game log in ``log_dir``, its header written (None: no log dir)."""
        if self.log_dir is None:
            return None
        writer = MatchLogWriter(fresh_log_path(self.log_dir, f"arena-{timestamp()}"))
        writer.write({"type": "header", "format": FORMAT, "arena": True, "started": utc_now(),
                      "preset": self.config.rules.preset, "rules": self.config.rules.as_dict(),
                      "time_control": self.config.tc.as_dict(), "bots": [],
                      "seed": self.config.seed, "deal": DEAL_TEXT,
                      "deals": "duplicate" if self.duplicate else "independent"})
        return writer

    async def _play_pair(self, a: TcpSeat, b: TcpSeat, writer: MatchLogWriter | None, k: float,
                         start: float, games: int = 2) -> None:
        """Play a pairing of ``a`` and ``b`` (``games`` of the two games, seats swapped:
        the ``promised`` games), each game logged and rated on the ladder (``k``,
        ``start``) as it ends; free the seats and give back the games not played after."""
        deal_seed = f"A{secrets.token_hex(16)}"
        try:
            for rotation, table in enumerate(((a, b), (b, a))[:games]):
                if any(s.failure is not None or self._revoked(s) for s in table):
                    break
                if rotation and not self.duplicate:
                    deal_seed = f"A{secrets.token_hex(16)}"  # independent: a fresh deal
                started = utc_now()
                record: GameRecord = await play_game(
                    list(table), self.config, index=self.next_index(), seed=deal_seed,
                    dealer=1, watch=None if self.live is None else self.live.watch)
                if writer is not None:
                    writer.write(record.as_dict())
                if self.live is not None:
                    self.live.finished(replay_header(self.config), record.as_dict())
                store_ladder_game(self.store, record, deal_seed, rotation, self.config, k=k,
                                  start=start, started=started,
                                  log_file=str(writer.path) if writer else None)
                self.played += 1
                self.promised -= 1
                games -= 1
                self.say(f"game {record.index}: {table[0].name} v {table[1].name}: "
                         f"{record.termination}, durak "
                         f"{'-' if record.durak is None else record.players[record.durak]}")
        finally:
            if self.live is not None:  # a twin the pair stopped before is never played
                self.live.deal_over(deal_seed)
            self.promised -= games  # the games this pairing did not play
            self.in_flight -= 1
            for s in (a, b):
                s.busy = False
                if s.failure is not None:
                    s.release()
                elif self._revoked(s):
                    s.release()
                    self.say(f"{s.name} ({s.peer}): its token was revoked; connection "
                             f"closed after its game")

    async def _ping_one(self, s: TcpSeat) -> None:
        """Ping a seat the pinger has already marked busy; free it afterwards."""
        try:
            if not await s.ping(self.limits.ping_timeout):
                self.say(f"{s.name} did not answer a ping; dropped: {s.failure}")
        finally:
            s.busy = False

    async def _pinger(self, done: trio.Event) -> None:
        """Ping every idle seat each ping interval until stopping; ``done`` is set at the end."""
        try:
            while True:
                with trio.move_on_after(self.limits.ping_interval):
                    await self._stopping.wait()
                if self._stopping.is_set():
                    return  # stopping: no new round (the bye must not cross a ping)
                async with trio.open_nursery() as pings:  # concurrently: one slow bot waits alone
                    for seats in list(self.seats.values()):
                        for s in seats:
                            if s.connected and not s.busy:
                                # Busy now, not when ping_one starts: start_soon runs it
                                # later, and meanwhile the scheduler could seat it in a
                                # game whose first frame would cross the ping
                                # (BusyResourceError: the arena crashed).
                                s.busy = True
                                pings.start_soon(self._ping_one, s)
                for seats in self.seats.values():
                    seats[:] = [s for s in seats if s.connected]
        finally:
            done.set()

def serve(arena: Arena, host: str, port: int, http: tuple[str, int] | None = None,
          person_grace: float = 60.0, bot_wait: float | None = None) -> int:
    """Run the arena under ``trio.run``. The first Ctrl-C stops pairing and lets the
    games in flight finish (they are recorded); a second one aborts them. ``http``:
    also serve the live page and the lobby there (referee/web/live.py, lobby.py: people
    play at tables of 2-4 with bots; ``person_grace``: their reconnect grace, seconds;
    ``bot_wait``: the longest a registered bot waits on a person's decision, seconds,
    None: ``lobby.BOT_WAIT_S``) while the arena runs; it closes with the arena, once the
    lobby's games are over."""
    import signal

    from ..web.live import LiveError, live_url, serve_live
    from ..web.lobby import seat_streams_reserved

    probe = LoopProbe()

    async def main() -> int:
        async with trio.open_nursery() as nursery:
            result: list[int] = []
            lobby = None
            nursery.start_soon(probe.run)
            if http is not None:
                from .ladder import LADDER_ID
                from .standings import LIVE_READ_AT_ONCE, StandingsTally
                tally = StandingsTally(arena.store, LADDER_ID, LIVE_READ_AT_ONCE)
                arena.live = LiveHub("durak-ref arena", standings=tally.update,
                                     deal_games=2 if arena.duplicate else 1)
                arena.live.loop_probe = probe
                lobby = _open_lobby(arena, person_grace, bot_wait)
                nursery.start_soon(lobby.run)
                bound = await nursery.start(partial(serve_live, arena.live, *http, site=lobby))
                arena.say(f"live page: {live_url(http[0], bound)}")
                arena.say(f"lobby: {live_url(http[0], bound)}play")
                arena.say(f"lobby: room for {lobby.max_streams} open lobby pages in all (sized "
                          f"by the fd limit), {seat_streams_reserved()} seat streams set aside")

            async def run() -> None:
                try:
                    result.append(await arena.run(host, port))
                    if lobby is not None:
                        lobby.stop()
                        await lobby.finish()  # the people's games in play end first
                finally:
                    if arena.live is not None:
                        arena.live.close()
                nursery.cancel_scope.cancel()

            async def on_signals() -> None:
                with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        if arena._stopping.is_set():
                            arena.say("second interrupt: aborting the games in flight")
                            nursery.cancel_scope.cancel()
                            return
                        arena.say("stopping: no new games; the games in flight finish "
                                  "(interrupt again to abort them)")
                        arena.stop()

            nursery.start_soon(on_signals)
            nursery.start_soon(run)
        return result[0] if result else arena.played

    from ..console.usererror import lifted
    from ..records.matchlog import LogError
    from ..records.store import StoreError
    from ..seats.tcp import ListenError
    with lifted(ListenError, LogError, StoreError, LiveError):
        try:
            return trio.run(main)
        finally:
            arena.say(probe.line())


#: What the store records a person's display name as: this, then their person token's hash.
PERSON = "person:"


def _open_lobby(arena: Arena, grace: float, bot_wait: float | None = None) -> Any:
    """The lobby of ``serve --http``: its tables are played by ``tables.play_table``; it
    offers the built-ins and the registered bots whose owners allow lobby play, with a
    free connection; its streams' cap is sized by the fd limit beside the arena's
    connections (``lobby.stream_cap``)."""
    from ..seats.players import BUILTINS
    from ..seats.tcp import raise_fd_limit
    from ..web.lobby import BOT_WAIT_S, Lobby, RegisteredBots, stream_cap
    from .tables import play_table

    def bots() -> list[str]:
        allowed = arena.lobby_bots()
        return [f"builtin:{b}" for b in BUILTINS] + [b for b in arena.idle_bots() if b[4:] in allowed]

    def why_not(spec: str) -> tuple[int, str]:
        name = spec[4:]
        if name in arena.lobby_bots():
            return 409, (f"{spec} is not connected with a free connection now: pick another "
                         f"bot, or try again in a while")
        if arena.gate is not None and arena.gate.tokens.current(name) is not None:
            return 403, (f"{spec}: its owner has not allowed lobby play (the owner can, with "
                         f"durak-ref register {name} --lobby on)")
        return 400, f"{spec} is not a registered bot here: pick one the lobby lists"

    names = StoredNames(arena.store)

    def claim(name: str, person_key: str) -> str | None:
        # A person's name is recorded as PERSON + their token's hash: theirs from the first
        # seat they take under it. A name a person played under before names were claimed
        # ("human") goes to the first browser that takes it again.
        mine = PERSON + person_key
        with arena.store.transaction():
            command = arena.store.bot_command(name)
            if command is None and (why := _looks_taken(names, name, mine)) is not None:
                return why
            if command is None:
                arena.store.ensure_bot(name, mine)
                names.add(name)
            elif command == "human":
                arena.store.set_bot_command(name, mine)
            elif command != mine:
                if command.startswith(PERSON):
                    return (f"{name!r} is another person's name here (rated under it): choose "
                            f"another, or play from the browser that first used it")
                return f"{name!r} is a bot's name here: choose another display name"
        return None

    async def play(table: Any) -> None:
        await play_table(arena, table)

    tc = arena.config.tc
    registered = RegisteredBots(why_not, tc.move if tc.move is not None else tc.base,
                                BOT_WAIT_S if bot_wait is None else bot_wait)
    raise_fd_limit()  # (as the arena's gate does) before the caps are sized by it
    held = arena.limits.max_connections + arena.limits.pending_cap()
    return Lobby(play, bots, grace=grace, claim=claim, on_event=arena.on_event,
                 registered=registered, max_streams=stream_cap(held))


def _looks_taken(names: StoredNames, name: str, mine: str) -> str | None:
    """Why new display name ``name`` may not be claimed by ``mine`` (PERSON + token hash):
    it looks like a name in the store, or None."""
    stored = names.look_alike(name)
    if stored is None:
        return None
    other, command = stored
    if command == mine:
        return f"{name!r} looks like {other!r}, your own name here: play under {other!r}"
    return f"{name!r} looks like {other!r}, {_whose(command)} name here: choose another display name"
