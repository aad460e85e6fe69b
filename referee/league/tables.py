"""Lobby tables (referee/web/lobby.py) played in the arena's server: a full table's game
goes through ``play_game`` like every arena game, is written to a log of its own (one
file per table: its rules and clock are its own) and to the store as a game of the
lobby's run (``LOBBY_ID``), never of the ladder: the ladder's ratings are the arena's
pairings' alone, so whom a person seats a registered bot against rates nobody there
(``report --tournament lobby`` rates the lobby's players over its games). The live page
watches it and lists its replay once it is over. A registered bot is seated only while
its owner allows lobby play, on a connection it has free. The people's pages show every seat's clock as the table may
see it (``human/clocks.py``): the referee's public clocks, from the game's spectator
messages, and whose public move is open, from the people's seats.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio

from ..human.clocks import TableClocks
from ..records.matchlog import MatchLogWriter, fresh_log_path, timestamp, utc_now
from ..records.store import Store, StoreError
from ..seats.confined import confined, resolved_sandbox, seat_builtin
from ..seats.players import BotFailure, BotStartError, Player, parse_bot_spec, unique_names
from ..seats.sandbox import Sandbox
from ..table.match import BotStats, MatchResult, play_game
from ..table.runner import log_header
from ..web.live import replay_header
from ..web.lobby import LobbyTable
from ..web.seat import BrowserSeat
from .ladder import LOBBY_ID, game_row


def ensure_lobby(store: Store) -> None:
    """The lobby's run in the store (kind ``lobby``), created on first use."""
    try:
        store.tournament(LOBBY_ID)
    except StoreError:  # no lobby game yet
        store.create_tournament(LOBBY_ID, "lobby", {})


def _seat_players(arena: Any, table: LobbyTable,
                  sandbox: Sandbox) -> tuple[list[Player], list[Any]] | None:
    """The players of ``table``'s seats (its people, its built-ins, confined in the
    resolved ``sandbox``, its TCP bots taken from the arena's idle ones), under unique
    names, and the TCP seats taken; None, with the reason on the table and nothing taken,
    when a TCP bot is no longer free."""
    players: list[Player] = []
    taken: list[Any] = []
    for s in table.seats:
        if s.person is not None:
            players.append(s.person)
        elif s.bot is not None and s.bot.startswith("tcp:"):
            allowed = s.bot[4:] in arena.lobby_bots()
            seat = arena.take_idle(s.bot[4:]) if allowed else None
            if seat is None:
                for t in taken:
                    t.busy = False
                why = ("is not connected with a free connection now" if allowed else
                       "may no longer be seated in the lobby (its owner's choice)")
                table.result = {"error": f"{s.bot} {why}: create the table again"}
                return None
            taken.append(seat)
            players.append(seat)
        else:
            assert s.bot is not None
            spec = parse_bot_spec(s.bot)
            # A search never runs on the server's loop: a confined process, like a bot's.
            players.append(seat_builtin(spec.name, spec, table.config.seed, confine=True,
                                        startup_time=table.config.tc.startup, sandbox=sandbox))
    for p, name in zip(players, unique_names([p.name for p in players]), strict=True):
        p.name = name
    return players, taken


@asynccontextmanager
async def _confined_started(players: list[Player]) -> AsyncIterator[bool]:
    """Start the table's confined built-ins (their processes live while inside) and yield
    whether all of them started; they are closed on the way out, whatever happens."""
    bots = confined(players)
    async with trio.open_nursery() as nursery:
        try:
            ready = True
            for bot in bots:
                try:
                    await bot.start(nursery)
                except (BotStartError, BotFailure) as exc:
                    print(f"durak-ref: lobby: {bot.name} did not start: {exc}", file=sys.stderr)
                    ready = False
                    break
            yield ready
        finally:
            for bot in bots:
                await bot.close()
            nursery.cancel_scope.cancel()


def _show_clocks(players: list[Player], config: Any) -> TableClocks:
    """The table's public clocks, published to every person at the table on each change."""
    tc = config.tc
    people = [p for p in players if isinstance(p, BrowserSeat)]
    clocks = TableClocks(len(players), tc.base, tc.move)

    def show_clocks() -> None:
        for person in people:
            person.publish()

    clocks.on_change = show_clocks
    for person in people:
        person.clocks = clocks
    return clocks


async def play_table(arena: Any, table: LobbyTable) -> None:
    """Play ``table``'s one game (``arena``: the running ``arena.Arena``) and record it (log, store, live page); the result goes
    on the table. A TCP bot of the table that is no longer free ends the table unplayed."""
    config = table.config
    seated = _seat_players(arena, table, await resolved_sandbox())
    if seated is None:
        return
    players, taken = seated
    index = arena.next_index()
    table.game = index
    deal = f"L{secrets.token_hex(16)}"
    ensure_lobby(arena.store)
    writer = None
    if arena.log_dir is not None:
        writer = MatchLogWriter(fresh_log_path(arena.log_dir, f"table-{timestamp()}"))
        # (The header looks at the sandbox's seccomp state: /etc read, milliseconds.)
        header = await trio.to_thread.run_sync(log_header, players, config)
        writer.write(dict(header, tournament=LOBBY_ID, lobby_table=table.number))
    clocks = _show_clocks(players, config)

    async def watch(message: dict[str, Any]) -> None:
        clocks.follow(message)
        if arena.live is not None:
            await arena.live.watch(message)

    try:
        started = utc_now()
        async with _confined_started(players) as ready:
            if not ready:
                table.result = {"error": "a built-in of the table could not start: create the "
                                         "table again (the server's log says why)"}
                return
            record = await play_game(players, config, index=index, seed=deal,
                                     dealer=len(players) - 1, watch=watch)
        row = game_row(LOBBY_ID, record, deal, 0, config, started=started,
                       log_file=str(writer.path) if writer else None)
        with arena.store.transaction():
            for p in players:
                arena.store.ensure_bot(p.name, "human" if p.spec.kind == "human" else p.spec.text)
            arena.store.insert_game(row)
        if writer is not None:
            result = MatchResult(config, [BotStats(p.name) for p in players])
            result.add(record)
            writer.write(record.as_dict())
            writer.write({"type": "footer", "ended": utc_now(), "interrupted": False,
                          "summary": result.summary()})
        arena.played += 1
        replay = None
        if arena.live is not None:
            arena.live.finished(replay_header(config), record.as_dict())
            arena.live.deal_over(deal)
            replay = f"/game/{index}"
        durak = None if record.durak is None else record.players[record.durak]
        table.result = {"durak": durak, "termination": record.termination, "replay": replay,
                        "log": str(writer.path) if writer else None}
        arena.say(f"table {table.number} (game {index}): {', '.join(record.players)}: "
                  f"{record.termination}, durak {durak or '-'}")
        for person in table.people:
            person.finished(replay)
    finally:
        if writer is not None:
            writer.close()
        for t in taken:
            t.busy = False
            if t.failure is not None:
                t.release()
