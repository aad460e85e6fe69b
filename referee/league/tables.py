"""Lobby tables (referee/web/lobby.py) played in the arena's server: a full table's game
goes through ``play_game`` like every arena game, is written to a log of its own (one
file per table: its rules and clock are its own) and to the ladder in the store, so the
people at it are rated under their display names; the live page watches it and lists
its replay once it is over.
"""

from __future__ import annotations

import secrets
from typing import Any

from .ladder import ensure_ladder, store_ladder_game
from ..records.matchlog import MatchLogWriter, fresh_log_path, timestamp, utc_now
from ..seats.players import BuiltinPlayer, Player, parse_bot_spec, unique_names
from ..table.match import MatchResult, BotStats, play_game
from ..table.runner import log_header
from ..web.live import replay_header
from ..web.lobby import LobbyTable


async def play_table(arena: Any, table: LobbyTable) -> None:
    """Play ``table``'s one game (``arena``: the running ``arena.Arena``) and record it (log, store, live page); the result goes
    on the table. A TCP bot of the table that is no longer free ends the table unplayed."""
    config = table.config
    players: list[Player] = []
    taken: list[Any] = []
    for s in table.seats:
        if s.person is not None:
            players.append(s.person)
        elif s.bot is not None and s.bot.startswith("tcp:"):
            seat = arena.take_idle(s.bot[4:])
            if seat is None:
                for t in taken:
                    t.busy = False
                table.result = {"error": f"{s.bot} is no longer connected: create the table again"}
                return
            taken.append(seat)
            players.append(seat)
        else:
            assert s.bot is not None
            spec = parse_bot_spec(s.bot)
            players.append(BuiltinPlayer(spec.name, spec, config.seed))
    for p, name in zip(players, unique_names([p.name for p in players])):
        p.name = name
    index = arena.next_index()
    table.game = index
    deal = f"L{secrets.token_hex(16)}"
    settings = ensure_ladder(arena.store)
    writer = None
    if arena.log_dir is not None:
        writer = MatchLogWriter(fresh_log_path(arena.log_dir, f"table-{timestamp()}"))
        writer.write(dict(log_header(players, config), lobby_table=table.number))
    try:
        started = utc_now()
        record = await play_game(players, config, index=index, seed=deal, dealer=len(players) - 1,
                                 watch=None if arena.live is None else arena.live.watch)
        with arena.store.transaction():
            for p in players:
                arena.store.ensure_bot(p.name, "human" if p.spec.kind == "human" else p.spec.text)
        store_ladder_game(arena.store, record, deal, 0, config, k=float(settings["k"]),
                          start=float(settings["start"]), started=started,
                          log_file=str(writer.path) if writer else None)
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
