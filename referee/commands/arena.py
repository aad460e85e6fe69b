"""The arena: `register` and `unregister` bots, `serve` their games over TCP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..printing.jsonresult import emit_result, ladder_rows
from ..rules.options import make_rules
from ..table.adjudicator import parse_budget
from ..table.clock import TimeControl
from ..table.match import MatchConfig
from .common import (
    check_range,
    err,
    fail,
    http_address,
    open_store_at,
    out,
    store_target,
)
from .ladder import print_ladder
from .options import (
    DEFAULT_DB,
    WEEK_S,
    AdjudicateOption,
    DbOption,
    HttpOption,
    ReconnectGraceOption,
    RulesOption,
    SetOption,
)


def register(
    name: Annotated[str, typer.Argument(help="The bot's name on the arena.", show_default=False)],
    rotate: Annotated[bool, typer.Option("--rotate", help="Give an already registered bot a new "
                                         "token; the old one stops working at once, also for a "
                                         "running serve (a game in progress finishes).")] = False,
    lobby: Annotated[str | None, typer.Option(
        "--lobby", metavar="on|off", show_default=False,
        help="Whether people may seat this bot at their tables in the browser lobby of "
        "`serve --http` (under the arena's time per move; a person keeps it waiting at most "
        "--lobby-bot-wait seconds on a move). Default for a new bot: off. For a registered "
        "bot, without --rotate, only this is changed (no new token), also for a running "
        "serve.")] = None,
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help='Print {"name", "token", "lobby"} '
                                          '(token null when only --lobby changed).')] = False,
) -> None:
    """Register a bot for `durak-ref serve` and print its token (with --rotate: a new one;
    with --lobby on|off for a registered bot: only whether the lobby may seat it).

    Only the token's hash is stored; the store is made readable by its owner only (0600).
    A built-in's name is refused, and so is a name that looks like a built-in's or like
    any name in the store (a1pha or ALPHA beside alpha: Unicode's confusables, any case).
    """
    from ..league.arena import allow_lobby, registered
    from ..league.arena import register as register_bot

    if lobby not in (None, "on", "off"):
        fail(f"--lobby {lobby!r}: say on or off")
    allowed = None if lobby is None else lobby == "on"
    with open_store_at(db) as store:
        token = None
        if allowed is not None and not rotate and registered(store, name):
            allow_lobby(store, name, allowed)
        else:
            token = register_bot(store, name, rotate=rotate, lobby=allowed)
        in_lobby = name in store.lobby_bots()
    if as_json:
        emit_result("register", {"name": name, "token": token, "lobby": in_lobby})
        return
    play = "people may seat it in the lobby" if in_lobby else "not offered in the lobby"
    if token is None:
        out.print(f"{name}: {play}", markup=False, highlight=False)
        return
    out.print(f"{name}: token {token} ({play})", markup=False, highlight=False)
    err.print("Keep the token: only its hash is stored. Connect with e.g. "
              f"examples/python/random_bot.py --connect HOST:PORT --name {name} --token TOKEN",
              markup=False, highlight=False)


def unregister(
    name: Annotated[str, typer.Argument(help="The registered bot's name.", show_default=False)],
    db: DbOption = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help='Print {"name", "unregistered": true}.')] = False,
) -> None:
    """Revoke an arena bot's token: it can no longer connect, also to a running serve
    (a game in progress finishes; the connection is then closed). Its games and rating
    stay in the store; `register NAME` admits it again with a new token."""
    from ..league.arena import unregister as unregister_bot

    target = store_target(db)
    if isinstance(target, Path) and not target.exists():
        fail(f"{target}: no such store; give the --db where the bot was registered")
    with open_store_at(db) as store:
        unregister_bot(store, name)
    if as_json:
        emit_result("unregister", {"name": name, "unregistered": True})
        return
    out.print(f"{name}: unregistered (its token no longer works)", markup=False, highlight=False)


MaxPendingOption = Annotated[int, typer.Option(
    "--max-pending", min=0, help="Unauthenticated connections in total, apart from the bots' room; "
    "when full, the oldest silent one gives way. 0: sized by the file descriptor limit (raised "
    "to its hard limit, at most 65536), less --max-connections and 128, within 16..16384.")]
PersonGraceOption = Annotated[float, typer.Option(
    help="With --http: seconds a person's game waits, paused, for their browser to come back "
    "(all pauses of a game together); then it is their forfeit (disconnect).")]
LobbyBotWaitOption = Annotated[float, typer.Option(
    help="With --http: the longest a registered bot seated in the lobby waits on a person's "
    "one move (the time their page is away included), 1 s to a week; then it is the "
    "person's timeout and the bot is back in the arena.")]
ArenaDuplicateFlag = Annotated[bool, typer.Option(
    "--duplicate", help="Both games of a pairing share one deal (seats swapped) instead of two "
    "secret deals. Unsound against untrusted bots: a remote bot that remembers the first game "
    "knows its opponent's hand in the second.")]


def serve(
    listen: Annotated[str, typer.Option(help="HOST:PORT to listen on (loopback unless you say otherwise).")]
    = "127.0.0.1:7724",
    db: DbOption = DEFAULT_DB,
    games: Annotated[int | None, typer.Option(min=1, help="Stop after this many games (default: "
                                             "run until Ctrl-C): no pairing beyond them, and the last "
                                             "plays one game when one is left. Lobby games count "
                                             "too; a lobby table in play then finishes.")] = None,
    max_games_per_bot: Annotated[int, typer.Option(min=1, help="Games one bot may play at once "
                                                   "(one connection each).")] = 1,
    max_connections: Annotated[int, typer.Option(min=1, help="Authenticated connections (bots) "
                                                 "in total.")] = 256,
    max_pending: MaxPendingOption = 0,
    max_per_address: Annotated[int, typer.Option(min=1, help="Unauthenticated connections from "
                                                 "one address.")] = 8,
    max_per_network: Annotated[int, typer.Option(min=1, help="Unauthenticated connections from "
                                                 "one /24 (IPv4) or /64 (IPv6) network.")] = 16,
    handshake_time: Annotated[float, typer.Option(min=0.1, help="Seconds a new connection has "
                                                  "for the whole handshake (however slowly its "
                                                  "bytes come).")] = 5.0,
    duplicate: ArenaDuplicateFlag = False,
    ping_interval: Annotated[float, typer.Option(help="Seconds between pings of idle bots.")] = 15.0,
    reconnect_grace: ReconnectGraceOption = 0.0,
    move_time: Annotated[float, typer.Option(help="Seconds per decision.")] = 10.0,
    rules: RulesOption = "classic",
    set_: SetOption = None,
    log_dir: Annotated[Path, typer.Option(help="Where game logs go.")] = Path("logs"),
    http: HttpOption = None,
    adjudicate: AdjudicateOption = None,
    person_grace: PersonGraceOption = 60.0,
    lobby_bot_wait: LobbyBotWaitOption = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="At the end, print games played and the ladder as JSON.")] = False,
) -> None:
    """Run the arena: registered bots connect over TCP and play rated games continuously.

    Register bots first with `durak-ref register NAME`; `register --rotate NAME` and
    `unregister NAME` take effect while this runs. Every game is dealt from a fresh
    secret seed (recorded in the log and store) unless --duplicate. Failed tokens are
    throttled per address and network (growing penalties) and logged in aggregate.
    Ratings go to the ladder in the store (`durak-ref ladder show`). Ctrl-C stops
    pairing and lets games in flight finish; a second Ctrl-C aborts them. With --http,
    a live page shows the games in play (public information only), the standings and
    the recent games, each with its replay; and /play is a lobby where people create
    and join tables of 2-4 and play bots (built-ins, connected TCP bots) and each other.
    """
    from ..league.arena import Arena
    from ..league.arena import serve as serve_arena
    from ..seats.tcp import TcpLimits, is_loopback, parse_listen

    web = http_address(http)
    host, port = parse_listen(listen)
    config = MatchConfig(rules=make_rules(rules, set_ or []), tc=TimeControl.parse(None, move_time),
                         adjudicate=parse_budget(adjudicate))
    _check_waits(ping_interval, handshake_time, reconnect_grace, person_grace, lobby_bot_wait)
    if not is_loopback(host):
        err.print(f"durak-ref: note: listening on {host}, not loopback: other machines can connect "
                  "(tokens are checked)", markup=False)
    limits = TcpLimits(handshake_s=handshake_time, max_connections=max_connections,
                       max_pending=max_pending, max_per_address=max_per_address,
                       max_per_network=max_per_network, ping_interval=ping_interval)
    with open_store_at(db) as store:
        if not store.token_hashes() and web is None:  # the lobby's built-ins need none
            fail(f"no bots are registered in {store_target(db)}; register one with: durak-ref register NAME")
        arena = Arena(store, config, limits, max_games_per_bot=max_games_per_bot, games=games,
                      log_dir=log_dir, duplicate=duplicate, reconnect_grace=reconnect_grace,
                      on_event=lambda text: err.print(text, markup=False, highlight=False))
        lobby = store.lobby_bots()
        names = [n + (" (lobby)" if n in lobby and web is not None else "") for n in sorted(store.token_hashes())]
        err.print(f"arena on {host}:{port}; bots: {', '.join(names)}", markup=False, highlight=False)
        played = serve_arena(arena, host, port, http=web, person_grace=person_grace,
                             bot_wait=lobby_bot_wait)
        if as_json:
            emit_result("serve", {"played": played,
                                  "refusals": len(arena.gate.refusals) if arena.gate else 0,
                                  "standings": ladder_rows(store.ladder())})
            return
        out.print(f"{played} games played", markup=False)
        print_ladder(store)


def _check_waits(ping_interval: float, handshake_time: float, reconnect_grace: float,
                 person_grace: float, lobby_bot_wait: float) -> None:
    """serve's waits within their bounds (exit 2 naming the option otherwise)."""
    check_range(ping_interval, "--ping-interval", 0, WEEK_S, low_open=True)
    check_range(handshake_time, "--handshake-time", 0.1, WEEK_S)
    check_range(reconnect_grace, "--reconnect-grace", 0, WEEK_S)
    check_range(person_grace, "--person-grace", 0, WEEK_S)
    check_range(lobby_bot_wait, "--lobby-bot-wait", 1, WEEK_S)
