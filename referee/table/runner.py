"""The match job as the CLI runs it: bot specs in, players started and closed, a log
written, the result out.

This is the one place that turns specs into players, so the CLI, the tests and the
tournament runner start bots the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from protocol.messages import PROTOCOL_VERSION

from .. import __version__
from ..records.matchlog import FORMAT, MatchLogWriter, new_log_path, safe_name, utc_now
from ..rules.deal import DEAL_TEXT
from ..seats.cgroups import Limits, default_limits
from ..seats.players import BotFailure, BotSpec, BotSpecError, BotStartError, Player, free_name, unique_names
from ..seats.sandbox import Sandbox, duplicate_soundness, seccomp_state, warn_unsound_duplicates
from ..seats.tcp import ListenError, TcpLimits
from .failfast import first_start_error
from .match import BotStats, GameRecord, MatchConfig, MatchResult, play_match

#: How long `match --listen` and `check-bot tcp:NAME` wait, by default, for a TCP bot to
#: connect (their --connect-wait); what they say when none came names the wait used.
CONNECT_WAIT_S = 120.0


@dataclass(frozen=True)
class SeatOptions:
    """How the seats are filled: how bot processes are run, and where TCP bots connect."""

    grace: float = 1.0
    stderr_cap: int = 1 << 20
    max_memory_mb: int | None = None  #: an rlimit, only where no memory cgroup can be had
    #: each bot's resource walls (referee/seats/cgroups.py)
    limits: Limits = field(default_factory=default_limits)
    max_cpu_s: int | None = None
    listen: tuple[str, int] = ("127.0.0.1", 7724)
    tokens: tuple[tuple[str, str], ...] = ()  #: (name, secret) for tcp:NAME seats
    connect_wait: float = CONNECT_WAIT_S  #: seconds to wait for a TCP bot to connect
    reconnect_grace: float = 0.0  #: seconds a game waits, paused, for a TCP bot that dropped
    sandbox: str = "auto"  #: auto | bwrap | none (see referee/seats/sandbox.py)
    binds: tuple[str, ...] = ()  #: extra read-only paths for sandboxed bots
    hide: tuple[str, ...] = ()  #: paths bots must not see (store, config, tokens; logs are added)
    #: A connected TCP seat waiting for the other seats is pinged this often, and dropped
    #: when it does not answer within ``ping_timeout`` (protocol/SPEC.md, ping).
    ping_interval: float = TcpLimits.ping_interval
    ping_timeout: float = TcpLimits.ping_timeout

    def sandbox_policy(self, *hide: str | Path | None) -> Sandbox:
        """The sandbox for this run's program bots, hiding ``hide`` too (not resolved)."""
        return Sandbox(self.sandbox, self.binds, self.hide, limits=self.limits).hiding(*hide)


def make_players(specs: Sequence[BotSpec], config: MatchConfig, *, stderr_stem: Path | None,
                 options: SeatOptions = SeatOptions(), sandbox: Sandbox | None = None,
                 human: Player | None = None) -> list[Player]:
    """One player per spec, with unique names. Raises BotSpecError for unusable specs, and
    SandboxError when the sandbox asked for cannot be used. ``sandbox``: the resolved
    policy (default: ``options.sandbox_policy()``, resolved here). ``human``: the player
    of the spec of kind "human" (``durak-ref play``, referee/human/terminal.py; the learner
    of referee/env/single_agent.py)."""
    from ..seats.confined import confine_searching, searching, seat_builtin
    from ..seats.process import ProcessPlayer

    confine = confine_searching(specs)  # (a program bot must not think on their time)
    if sandbox is None and any(s.kind == "command" or confine and searching(s) for s in specs):
        sandbox = options.sandbox_policy().resolve()
    names = unique_names([s.name for s in specs])
    players: list[Player] = []
    for seat, (name, spec) in enumerate(zip(names, specs, strict=True)):
        if spec.kind == "builtin":
            players.append(seat_builtin(name, spec, config.seed, confine=confine,
                                        startup_time=config.tc.startup, sandbox=sandbox))
        elif spec.kind == "command":
            stderr = (None if stderr_stem is None else
                      stderr_stem.with_name(f"{stderr_stem.name}.seat{seat}-{safe_name(name)}.stderr.log"))
            players.append(ProcessPlayer(
                name, spec, startup_time=config.tc.startup, grace=options.grace,
                stderr_path=stderr, stderr_cap=options.stderr_cap,
                max_memory_mb=options.max_memory_mb, max_cpu_s=options.max_cpu_s,
                sandbox=None if sandbox is None else sandbox.against(*(
                    other.argv for other in specs if other is not spec and other.kind == "command"))))
        elif spec.kind == "human":
            if human is None:
                raise BotSpecError(f"seat {seat} is a person's, but no human player was given")
            human.name = name
            players.append(human)
        else:
            from ..seats.tcp import TcpSeat
            players.append(TcpSeat(name, spec, wait_s=options.connect_wait,
                                   reconnect_grace=options.reconnect_grace))
    return players


async def open_gate(players: Sequence[Player], options: SeatOptions, nursery: trio.Nursery,
                     on_tcp: Callable[[str], None] | None, handshake_s: float) -> None:
    """If any seat is tcp:NAME, listen for those bots (they authenticate with tokens)."""
    from ..seats.tcp import TcpGate, TcpLimits, TcpSeat, TokenBook

    seats = {p.spec.name: p for p in players if isinstance(p, TcpSeat)}
    if not seats:
        return
    for seat in seats.values():
        seat.on_event = on_tcp
    tokens = TokenBook()
    for name, secret in options.tokens:
        tokens.add(name, secret)

    def claim(name: str) -> TcpSeat | None:
        seat = seats.get(name)
        if seat is None:
            return None
        if seat.connected:
            # A connection that died while nobody was reading it (between games, or
            # while other seats connect) gives way to the bot's new one; during a game
            # the seat stays busy and the bot reconnects for the next game.
            if seat.busy or seat.alive():
                return None
            seat.release()
        return seat

    # The start-up limit applies to a TCP bot's hello as to a process's.
    # The arena's defences (pending pool, eviction, token throttle) with its defaults; the
    # fd limit stays as it is (the bots, child processes, would inherit a raised one).
    gate = TcpGate(tokens, claim, TcpLimits(handshake_s=handshake_s), on_event=on_tcp,
                   raise_fds=False)
    host, port = options.listen
    await nursery.start(gate.serve, host, port)
    if on_tcp is not None:
        on_tcp(f"listening on {host}:{gate.port} for {', '.join(seats)}")


def _adopt_hello_names(players: Sequence[Player]) -> None:
    """Unnamed command bots take the name from their hello, in seat order, unless a seat
    of the run has it already (``free_name``: then ``NAME#2``, ...). Every other seat
    (built-ins, names the user gave, tcp:NAME, a bot without a hello) keeps its name."""
    adopting = [p for p in players
                if p.spec.kind == "command" and not p.spec.named and p.info.get("name")]
    keep = {id(p) for p in adopting}
    taken = {p.name for p in players if id(p) not in keep}
    for p in adopting:
        p.name = free_name(p.info["name"], taken)
        taken.add(p.name)


def sandbox_used(players: Sequence[Player]) -> str | None:
    """The sandbox mode the program bots actually run in (None: no program bots)."""
    from ..seats.process import ProcessPlayer

    modes = {p.sandbox.mode for p in players if isinstance(p, ProcessPlayer)}
    return modes.pop() if len(modes) == 1 else None


def confinement_used(players: Sequence[Player]) -> dict[str, Any] | None:
    """What the resource walls of the program bots enforce (None: no program bots)."""
    from ..seats.process import ProcessPlayer

    for p in players:
        if isinstance(p, ProcessPlayer):
            return p.confinement.header()
    return None


def log_header(players: Sequence[Player], config: MatchConfig) -> dict[str, Any]:
    return {
        "type": "header", "format": FORMAT, "durak_ref": __version__, "protocol": PROTOCOL_VERSION,
        "started": utc_now(), "preset": config.rules.preset, "rules": config.rules.as_dict(),
        "bots": [dict(p.spec.as_dict(), seat=i, name=p.name, hello=p.info)
                 for i, p in enumerate(players)],
        "time_control": config.tc.as_dict(), "seed": config.seed, "games": config.games,
        "until_durak": config.until_durak, "illegal_retries": config.illegal_retries,
        "duplicate": config.duplicate,
        "deal": DEAL_TEXT, "sandbox": sandbox_used(players),
        "seccomp": seccomp_state(sandbox_used(players)),
        "confinement": confinement_used(players),
        # (only when on: a log of a run without adjudication reads as it always did)
        **({"adjudicate": config.adjudicate.text} if config.adjudicate is not None else {}),
    }


@asynccontextmanager
async def _pinging_connected(players: Sequence[Player], options: SeatOptions) -> AsyncIterator[None]:
    """While inside (the seats start), ping every connected TCP seat each
    ``options.ping_interval`` seconds, so a bot that connected first learns the referee
    is alive and a dead connection is dropped before the first game. Leaving waits for
    a ping round in flight: no ping may cross the first game's frames."""
    from ..seats.tcp import TcpSeat

    seats = [p for p in players if isinstance(p, TcpSeat)]
    if not seats:
        yield
        return
    stop, done = trio.Event(), trio.Event()

    async def pinger() -> None:
        try:
            while True:
                with trio.move_on_after(options.ping_interval):
                    await stop.wait()
                if stop.is_set():
                    return
                for seat in seats:
                    if seat.connected and seat.failure is None:
                        await seat.ping(options.ping_timeout)
        finally:
            done.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pinger)
        try:
            yield
        finally:
            stop.set()
            await done.wait()


async def _start_players(players: Sequence[Player], nursery: trio.Nursery, *, recover: bool) -> None:
    """Start every player in seat order. A program bot that fails its first handshake
    raises BotFirstStartError, unless ``recover``: then it stays failed, and its first
    game starts it again or is its forfeit."""
    from ..seats.process import ProcessPlayer
    for p in players:
        try:
            await p.start(nursery)
        except BotFailure as exc:
            if not recover and isinstance(p, ProcessPlayer):
                raise await first_start_error(p, exc) from None


def _begin_result(result: MatchResult, players: Sequence[Player]) -> None:
    """Name the result's seats once every player has said hello: one row of statistics
    a seat, and where each program bot's stderr is kept."""
    _adopt_hello_names(players)
    result.bots = [BotStats(p.name) for p in players]
    result.stderr_logs = {p.name: str(path) for p in players
                          if (path := getattr(p, "stderr_path", None)) is not None}


async def run_match_async(specs: Sequence[BotSpec], config: MatchConfig, *,
                          log_dir: Path | None = None,
                          options: SeatOptions = SeatOptions(),
                          on_game: Callable[[GameRecord, MatchResult], None] | None = None,
                          on_start: Callable[[MatchResult], None] | None = None,
                          on_tcp: Callable[[str], None] | None = None,
                          recover: bool = False,
                          human: Player | None = None,
                          ) -> MatchResult:
    """Start the bots, play the match, close the bots, write the log.

    Raises BotStartError when a bot program cannot be started at all, and (unless
    ``recover``) BotFirstStartError when one fails its first handshake (referee/table/failfast.py;
    with ``recover`` its games are forfeits). ``human`` plays the spec of kind "human".
    A Ctrl-C ends the match early: the result comes back with ``interrupted`` set, every bot closed and
    the log holding every finished game.
    """
    config.rules.check_table(len(specs))
    log_path = new_log_path(log_dir) if log_dir is not None else None
    sandbox = None
    if any(s.kind == "command" for s in specs):
        # The log dir holds the log and every bot's stderr: no bot sees it.
        sandbox = options.sandbox_policy(log_path.parent if log_path else None).resolve()
    players = make_players(specs, config, options=options, sandbox=sandbox, human=human,
                           stderr_stem=log_path.with_suffix("") if log_path else None)
    writer = MatchLogWriter(log_path) if log_path else None
    result = MatchResult(config, [])
    result.sandbox = sandbox_used(players)
    duplicates = result.duplicates = duplicate_soundness(config.duplicate, result.sandbox,
                                                         config.keep_bots_across_twins)
    warn_unsound_duplicates(duplicates)
    result.log_path = str(log_path) if log_path else None

    def record_game(record: GameRecord, res: MatchResult) -> None:
        if writer is not None:
            writer.write(record.as_dict())
        if on_game is not None:
            on_game(record, res)

    start_error: BotStartError | ListenError | None = None
    try:
        async with trio.open_nursery() as nursery:
            try:
                await open_gate(players, options, nursery, on_tcp, config.tc.startup)
                async with _pinging_connected(players, options):
                    await _start_players(players, nursery, recover=recover)
                _begin_result(result, players)
                if writer is not None:
                    writer.write(dict(log_header(players, config), duplicates=duplicates))
                if on_start is not None:
                    on_start(result)
                await play_match(players, config, on_game=record_game, result=result)
            except KeyboardInterrupt:
                result.interrupted = True
            except (BotStartError, ListenError) as exc:
                start_error = exc  # raised below, outside the nursery, as itself
            finally:
                for p in players:
                    await p.close()
                # Players are closed; their reader tasks may still wait on pipes.
                nursery.cancel_scope.cancel()
    finally:
        if writer is not None:
            if result.bots:
                writer.write({"type": "footer", "ended": utc_now(), "interrupted": result.interrupted,
                              "summary": result.summary()})
            writer.close()
    if start_error is not None:
        if log_path is not None and not result.bots:
            log_path.unlink(missing_ok=True)  # nothing was played: leave no empty log
        raise start_error
    return result


def run_match(specs: Sequence[BotSpec], config: MatchConfig, **kwargs: Any) -> MatchResult:
    """Synchronous entry point: run a whole match under ``trio.run``. Ctrl-C (and SIGTERM,
    see referee/console/interrupt.py) is only delivered at checkpoints, so it never cuts a log
    record in half."""
    from ..console.interrupt import run_interruptible
    return run_interruptible(lambda: run_match_async(specs, config, **kwargs))
