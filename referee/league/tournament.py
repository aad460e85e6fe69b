"""Tournaments: a deterministic schedule of games, played K at a time, stored and resumable.

How it works. ``schedule(settings)`` lists every game of the tournament from the
settings alone (same settings, same list): the tables (round robin, gauntlet, or every
combination of ``players`` bots), and for each table its deals. With duplicate deals
each deal is played once per seat rotation (two players: the same deck with the seats
swapped), so the luck of the deal cancels out in pairs. Every game of deal ``d`` gets
the deck keyed by the tournament's seed (secret unless given) and the deal id
``tournament:<d>`` (``rules.deal``); dealer seat n-1 every game.

With ``--concurrency 1`` the games are played in this process, one at a time, by bot
processes from a pool per bot, started on demand and reused across games. With K > 1,
K worker processes (``referee/league/worker.py``) play one game each at a time, every worker
with a pool of its own: one trio process referees at most one core's worth of
decisions, so parallel games need parallel referees. Either way each finished game
comes back here, ready to write (its log line encoded, its seat rows made where it was
played), and goes to the match log and, with its seats, to the store, many games per
transaction (referee/league/results.py); it counts as done once committed. Resuming replays
the schedule and skips
every game already in the store, so a finished game is never played twice or lost; a
game in flight when the process died is simply played again from scratch.
"""

from __future__ import annotations

import collections
import itertools
import math
import secrets
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..console.usererror import leaves
from ..errors import UserError
from ..records.matchlog import FORMAT, MatchLogWriter, fresh_log_path, safe_name, utc_now
from ..records.store import GameRow, Store, StoreError
from ..rules.deal import DEAL_TEXT, SeedError, check_seed, deal_id
from ..rules.options import RulesError, make_rules, seat_count_error
from ..seats.cgroups import run_header
from ..seats.players import (
    BotSpec,
    BotSpecError,
    BotStartError,
    Player,
    parse_bot_spec,
)
from ..seats.sandbox import Sandbox, SandboxError, duplicate_soundness, seccomp_state, warn_unsound_duplicates
from ..table.adjudicator import AdjudicateError, parse_budget
from ..table.clock import DEFAULT_BACKSTOP, TimeControl, TimeControlError
from ..table.match import (
    GameRecord,
    MatchConfig,
    OnIllegalError,
    Watch,
    parse_on_illegal,
    play_game,
    referee_cost,
    twin_guard,
)
from ..table.seeds import new_seed
from .results import FinishedGame, ResultSink
from .standings import LIVE_READ_AT_ONCE, StandingsTally

FORMATS = ("round-robin", "gauntlet")


class TournamentError(UserError, ValueError):
    """The user's tournament settings are unusable (bad config file, unknown format, too
    few bots, ...). The message names the setting."""

    hint = "fix the setting the message names (docs/CONFIG.md lists every key)"


@dataclass
class BotEntry:
    name: str
    command: str
    cwd: str | None = None
    env: dict[str, str] | None = None

    def spec(self) -> BotSpec:
        spec = parse_bot_spec(self.command)
        return BotSpec(spec.kind, self.name, spec.argv, self.command, named=True)

    def absolute_argv(self) -> tuple[str, ...]:
        """The command's words, those naming existing paths made absolute (from ``cwd``):
        what the other bots' sandboxes hide, whatever their own cwd."""
        import os
        here = self.cwd or os.getcwd()
        return tuple(os.path.abspath(os.path.join(here, w)) if w and os.path.exists(os.path.join(here, w))
                     else w for w in self.spec().argv)


@dataclass
class TournamentSettings:
    """Everything that defines a tournament; stored as JSON so it can be resumed."""

    bots: list[BotEntry]
    format: str = "round-robin"
    players: int = 2
    games: int = 10
    duplicate: bool = True
    seed: str = field(default_factory=new_seed)  #: keys every deal; secret unless given
    preset: str = "classic"
    rules: dict[str, str] = field(default_factory=dict)
    tc: str | None = None
    move_time: float | None = None
    startup_time: float = 10.0
    clock: str = "wall"  #: wall | cpu (table/clock.py)
    backstop: float = DEFAULT_BACKSTOP  #: under the cpu clock: wall time waited per CPU budget
    on_illegal: str = "forfeit"
    adjudicate: str | None = None  #: the solver's budget per game (``adjudicator.parse_budget``)
    max_restarts: int = 3
    concurrency: int = 1
    fresh_bots: bool = False  #: restart program bots before every game (no memory of deals)
    #: keep a program bot's process for another seat rotation of a deal it played (it
    #: may remember the hands; off: the twin gets a fresh process: match.twin_guard)
    keep_bots_across_twins: bool = False
    sandbox: str = "auto"  #: auto | bwrap | none, for program bots (referee/seats/sandbox.py)
    bind: list[str] = field(default_factory=list)  #: extra read-only paths for sandboxed bots

    def sandbox_policy(self, *hide: str | Path | None) -> Sandbox:
        """The sandbox policy of these settings, hiding ``hide`` too (not resolved)."""
        return Sandbox(self.sandbox, tuple(self.bind)).hiding(*hide)

    def has_programs(self) -> bool:
        return any(b.spec().kind == "command" for b in self.bots)

    def __post_init__(self) -> None:
        if isinstance(self.seed, int) and not isinstance(self.seed, bool):
            self.seed = str(self.seed)  # an int seed keys the deals as its decimal text

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentSettings:
        data = dict(data)
        data["bots"] = [BotEntry(**b) for b in data["bots"]]
        return cls(**data)

    def validate(self) -> MatchConfig:
        """Check everything; return the MatchConfig the games use. Raises TournamentError."""
        names = [b.name for b in self.bots]
        if len(names) < 2:
            raise TournamentError("a tournament needs at least two bots (--bot NAME=CMD, repeated)")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise TournamentError(f"bot names must be unique; repeated: {', '.join(dupes)}")
        if self.format not in FORMATS:
            raise TournamentError(f"unknown format {self.format!r}; formats: {', '.join(FORMATS)}")
        problem = seat_count_error(self.players)
        if problem:
            raise TournamentError(f"--players {self.players}: {problem}")
        if self.players > len(names):
            raise TournamentError(f"--players {self.players} needs at least that many bots; "
                                  f"there are {len(names)}")
        if self.games < 1 or self.concurrency < 1:
            raise TournamentError("--games and --concurrency must be at least 1")
        check_bot_reuse(self.fresh_bots, self.keep_bots_across_twins)
        try:
            check_seed(self.seed)
        except SeedError as exc:
            raise TournamentError(f"--seed: {exc}") from None
        try:
            for b in self.bots:
                if b.spec().kind == "tcp":
                    raise TournamentError(
                        f"bot {b.name}: {b.command} is a TCP seat; bots that connect over TCP play "
                        f"in the arena (durak-ref register / serve), tournaments start their bots")
            rules = make_rules(self.preset, self.rules)
            rules.check_table(self.players)
            self.sandbox_policy().check()
            return MatchConfig(rules=rules, games=1, seed=self.seed,
                               tc=TimeControl.parse(self.tc, self.move_time, self.startup_time,
                                                    self.clock, self.backstop),
                               illegal_retries=parse_on_illegal(self.on_illegal),
                               max_restarts=self.max_restarts,
                               keep_bots_across_twins=self.keep_bots_across_twins,
                               adjudicate=parse_budget(self.adjudicate))
        except (BotSpecError, RulesError, TimeControlError, OnIllegalError, SandboxError,
                AdjudicateError) as exc:
            raise TournamentError(str(exc)) from None


def check_bot_reuse(fresh_bots: bool, keep_bots_across_twins: bool) -> None:
    """Raise TournamentError if both ways of reusing program bots are asked for: a fresh
    process every game contradicts keeping processes across a deal's rotations."""
    if fresh_bots and keep_bots_across_twins:
        raise TournamentError("--fresh-bots restarts bots before every game and "
                              "--keep-bots-across-twins keeps them for a deal's rotations: "
                              "give one of them")


_CONFIG_KEYS = {"bots", "format", "players", "games", "duplicate", "seed", "rules", "preset",
                "time_control", "concurrency", "on_illegal", "max_restarts", "fresh_bots",
                "keep_bots_across_twins", "sandbox", "bind", "adjudicate"}


_CONFIG_TYPES: dict[str, type | tuple[type, ...]] = {
    "bots": list, "format": str, "players": int, "games": int, "duplicate": bool, "seed": (int, str),
    "rules": dict, "preset": str, "time_control": dict, "concurrency": int, "on_illegal": str,
    "max_restarts": int, "fresh_bots": bool, "keep_bots_across_twins": bool, "sandbox": str,
    "bind": list, "adjudicate": str}
_TC_TYPES: dict[str, type | tuple[type, ...]] = {
    "tc": str, "move_time": (int, float), "startup_time": (int, float), "clock": str,
    "backstop": (int, float)}
_TYPE_NAMES = {list: "an array", str: "a string", int: "an integer", bool: "true or false",
               dict: "a table", (int, float): "a number", (int, str): "a string or an integer"}


def _check_type(path: Path, key: str, value: Any, kind: type | tuple[type, ...]) -> None:
    # bool is an int in Python, but ``players = true`` is a mistake, not 1.
    if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
        return
    raise TournamentError(f"{path}: {key} must be {_TYPE_NAMES[kind]}, got {value!r}")


def load_config(path: Path) -> dict[str, Any]:
    """Read a tournament TOML file into settings keywords. Raises TournamentError naming
    the file and the key. The format, every key with its type, and an example file:
    docs/CONFIG.md (tests/tournament/test_config_doc.py keeps the two in step)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TournamentError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TournamentError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - _CONFIG_KEYS)
    if unknown:
        raise TournamentError(f"{path}: unknown key(s) {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(_CONFIG_KEYS))}")
    for key, value in data.items():
        _check_type(path, key, value, _CONFIG_TYPES[key])
    for key, value in data.get("time_control", {}).items():
        if key in _TC_TYPES:
            _check_type(path, f"time_control.{key}", value, _TC_TYPES[key])
    for i, b in enumerate(data.get("bots", [])):
        if isinstance(b, dict) and "env" in b:
            _check_type(path, f"bots[{i + 1}].env", b["env"], dict)
    out: dict[str, Any] = {k: data[k] for k in ("format", "players", "games", "duplicate", "seed",
                                                  "concurrency", "on_illegal", "max_restarts",
                                                  "fresh_bots", "keep_bots_across_twins", "sandbox",
                                                  "adjudicate")
                           if k in data}
    if "bind" in data:  # relative to the config file, like a bot's cwd
        out["bind"] = [str((path.parent / str(b)).resolve()) for b in data["bind"]]
    rules = dict(data.get("rules", {}))
    if "preset" in data:
        out["preset"] = data["preset"]
    if "preset" in rules:
        out["preset"] = rules.pop("preset")
    out["rules"] = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in rules.items()}
    tc = data.get("time_control", {})
    bad_tc = sorted(set(tc) - set(_TC_TYPES))
    if bad_tc:
        raise TournamentError(f"{path}: unknown [time_control] key(s) {', '.join(bad_tc)}; "
                              f"known: {', '.join(_TC_TYPES)}")
    out.update({k: tc[k] for k in tc})
    bots = []
    for i, b in enumerate(data.get("bots", [])):
        if not isinstance(b, dict):
            raise TournamentError(f"{path}: [[bots]] entry {i + 1} needs a name and a command")
        extra = sorted(set(b) - {"name", "command", "cwd", "env"})
        if extra:  # before the missing keys: a typo of "command" is named as such
            raise TournamentError(f"{path}: [[bots]] entry {i + 1} ({b.get('name', '?')}): unknown "
                                  f"key(s) {', '.join(extra)}; known: name, command, cwd, env")
        if "name" not in b or "command" not in b:
            raise TournamentError(f"{path}: [[bots]] entry {i + 1} needs a name and a command")
        cwd = b.get("cwd")
        if cwd is not None:  # relative to the config file, not to wherever durak-ref runs
            cwd = str((path.parent / str(cwd)).resolve())
        bots.append(BotEntry(str(b["name"]), str(b["command"]), cwd,
                             {str(k): str(v) for k, v in b.get("env", {}).items()} or None))
    out["bots"] = bots
    return out


def settings_from_options(config: Path | None, bots: list[str], sets: list[str],
                          overrides: dict[str, Any]) -> TournamentSettings:
    """Settings from a TOML file (optional), ``NAME=CMD`` bot options, ``name=value`` rules
    overrides and other options (None: not given); the command line wins over the file.
    Raises TournamentError naming the bad option."""
    values: dict[str, Any] = load_config(config) if config else {"bots": []}
    for item in bots:
        name, sep, command = item.partition("=")
        if not sep or not name.strip() or not command.strip():
            raise TournamentError(f"--bot {item!r}: expected NAME=CMD, e.g. "
                                  f"--bot alice=\"python3 alice.py\"")
        values["bots"].append(BotEntry(name.strip(), command.strip()))
    extra_binds = overrides.pop("bind_extra", None) or []
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        # An explicit seed (a file's integer included) is text; none: a secret one.
        values["seed"] = check_seed(values["seed"]) if "seed" in values else new_seed()
    except SeedError as exc:
        where = "--seed" if overrides.get("seed") is not None or config is None else str(config)
        raise TournamentError(f"{where}: {exc}") from None
    if extra_binds:  # --bind adds to the config's bind list
        values["bind"] = [*values.get("bind", []), *extra_binds]
    if sets:
        rules = dict(values.get("rules", {}))
        for item in sets:
            k, sep, v = item.partition("=")
            if not sep:
                raise TournamentError(f"--set {item!r}: expected name=value")
            rules[k.strip()] = v.strip()
        values["rules"] = rules
    try:
        settings = TournamentSettings(**values)
    except TypeError as exc:
        raise TournamentError(f"bad tournament settings: {exc}") from None
    settings.validate()
    return settings


def register_tournament(store: Store, settings: TournamentSettings) -> str:
    """Record a new tournament and its bots in the store; returns its id."""
    tid = new_tournament_id()
    with store.transaction():
        for b in settings.bots:
            store.ensure_bot(b.name, b.command)
    store.create_tournament(tid, "tournament", settings.as_dict())
    return tid


def load_tournament(store: Store, tid: str) -> TournamentSettings:
    """The settings of stored tournament ``tid``, checked; StoreError if there is no such
    tournament or its row cannot be used (a damaged store)."""
    _, saved, _ = store.tournament(tid)
    try:
        settings = TournamentSettings.from_dict(saved)
        settings.validate()
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StoreError(f"{store.name}: damaged store: table tournaments, row ({tid!r}): "
                         f"the settings cannot be used ({type(exc).__name__}: {exc}); "
                         f"restore it from a backup") from None
    return settings


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule: the bots in seat order, and the deal's id (``seed``,
    shared by the rotations of one deal; the deck is keyed by it and the run's seed)."""

    index: int
    deal: int
    rotation: int
    table: tuple[str, ...]
    seed: str


def tables(settings: TournamentSettings) -> list[tuple[str, ...]]:
    names = [b.name for b in settings.bots]
    k = settings.players
    combos = list(itertools.combinations(names, k))
    if settings.format == "gauntlet":
        combos = [c for c in combos if names[0] in c]
    return combos


def schedule(settings: TournamentSettings) -> list[ScheduledGame]:
    """Every game, in a fixed order, as a list (``iter_schedule``)."""
    return list(iter_schedule(settings))


def schedule_size(settings: TournamentSettings) -> int:
    """How many games ``iter_schedule`` yields, without listing them."""
    rotations = settings.players if settings.duplicate else 1
    return len(tables(settings)) * math.ceil(settings.games / rotations) * rotations


def iter_schedule(settings: TournamentSettings, start: int = 0) -> Iterator[ScheduledGame]:
    """Every game from index ``start`` on, in a fixed order, one at a time (a long
    tournament's schedule is never held in memory). Games of one table are interleaved
    with the other tables' deal by deal, so an interrupted tournament has results for
    every table: step s (rotation s mod R of deal s div R, R rotations per deal) plays
    every table t in turn; game s*T + t, deal (s div R)*T + t for T tables."""
    combos = tables(settings)
    count = len(combos)
    rotations = settings.players if settings.duplicate else 1
    deals = math.ceil(settings.games / rotations)
    for index in range(start, count * deals * rotations):
        step, t = divmod(index, count)
        d, rotation = divmod(step, rotations)
        table = combos[t]
        deal = d * count + t
        yield ScheduledGame(index, deal, rotation, tuple(table[rotation:] + table[:rotation]),
                            deal_id("tournament", deal))


class PlayerPool:
    """Idle bot processes per bot name; a process serves one game at a time."""

    def __init__(self, settings: TournamentSettings, config: MatchConfig, nursery: trio.Nursery,
                 stderr_stem: Path | None, sandbox: Sandbox | None = None,
                 recover: bool = False) -> None:
        """``sandbox``: the resolved policy for program bots (default: the settings', resolved
        at the first program bot). ``recover``: a bot that fails its first start-up plays
        on (forfeits) instead of stopping the run (referee/table/failfast.py)."""
        self.entries = {b.name: b for b in settings.bots}
        self.settings = settings
        self.sandbox = sandbox
        self.config = config
        self.nursery = nursery
        self.stderr_stem = stderr_stem
        self.idle: dict[str, list[Player]] = {name: [] for name in self.entries}
        self.all: list[Player] = []
        self.recover = recover
        self.handshaken: set[str] = set()  #: bots that completed a handshake in this pool

    async def acquire(self, name: str) -> Player:
        if self.idle[name]:
            return self.idle[name].pop()
        entry = self.entries[name]
        spec = entry.spec()
        if spec.kind == "builtin":
            from ..seats.confined import confine_searching, searching, seat_builtin
            # In a run with program bots a searching built-in may sit opposite one.
            confine = confine_searching([e.spec() for e in self.entries.values()])
            if confine and searching(spec) and self.sandbox is None:
                self.sandbox = self.settings.sandbox_policy().resolve()
            player: Player = seat_builtin(name, spec, self.config.seed, confine=confine,
                                          startup_time=self.config.tc.startup, sandbox=self.sandbox)
        else:
            from ..seats.process import ProcessPlayer
            stderr = (None if self.stderr_stem is None else self.stderr_stem.with_name(
                f"{self.stderr_stem.name}.{safe_name(name)}-{len(self.all)}.stderr.log"))
            if self.sandbox is None:
                self.sandbox = self.settings.sandbox_policy().resolve()
            player = ProcessPlayer(name, spec, startup_time=self.config.tc.startup,
                                   stderr_path=stderr, cwd=entry.cwd,
                                   env=entry.env, sandbox=self.sandbox.against(*(
                                       e.absolute_argv() for n, e in self.entries.items()
                                       if n != name and e.spec().kind == "command")))
        self.all.append(player)
        try:
            await player.start(self.nursery)
        except BotStartError:
            raise
        except Exception as exc:  # a BotFailure: the player's first game records it
            from ..seats.players import BotFailure
            if not isinstance(exc, BotFailure):
                raise
            if not self.recover and name not in self.handshaken:
                from ..table.failfast import first_start_error
                raise await first_start_error(player, exc) from None
        else:
            self.handshaken.add(name)
        return player

    def release(self, player: Player) -> None:
        self.idle[player.name].append(player)

    async def play(self, sg: ScheduledGame, fresh: bool = False,
                   watch: Watch | None = None) -> tuple[GameRecord, str]:
        """Play scheduled game ``sg`` with players from the pool (the last seat deals):
        the record and the start time. Raises BotStartError if a bot cannot start.
        ``watch``: the spectator hook of ``play_game`` (the live page)."""
        players = [await self.acquire(name) for name in sg.table]
        try:
            for p in players:
                await p.prepare_game(self.config.max_restarts, fresh, twin_guard(self.config, sg.seed))
            started = utc_now()
            record = await play_game(players, self.config, index=sg.index, seed=sg.seed,
                                     dealer=len(players) - 1, watch=watch)
        finally:
            for p in players:
                self.release(p)
        return record, started

    async def close(self) -> None:
        for p in self.all:
            await p.close()


async def with_pool(settings: TournamentSettings, config: MatchConfig, stem: Path | None,
                    start_tasks: Callable[[PlayerPool, trio.Nursery], None],
                    sandbox: Sandbox | None = None, recover: bool = False) -> None:
    """Run the game-playing tasks that ``start_tasks`` starts in the given nursery, with
    a PlayerPool for them; the pool's bots are always closed afterwards.

    A Ctrl-C or a bot program that cannot start leaves as itself (KeyboardInterrupt,
    BotStartError), not inside an exception group (trio's strict groups would wrap it),
    so the callers' ``except`` clauses and the CLI's exit codes work.
    """
    try:
        async with trio.open_nursery() as nursery:
            pool = PlayerPool(settings, config, nursery, stem, sandbox, recover)
            try:
                async with trio.open_nursery() as tasks:
                    start_tasks(pool, tasks)
            finally:
                await pool.close()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        found = leaves(group)
        if any(isinstance(e, KeyboardInterrupt) for e in found):
            raise KeyboardInterrupt from None
        starts = [e for e in found if isinstance(e, BotStartError)]
        if starts:
            raise starts[0] from None
        raise


def new_tournament_id() -> str:
    return time.strftime("t%Y%m%d-%H%M%S-") + secrets.token_hex(2)


@dataclass
class Progress:
    total: int
    done: int
    started: float
    durak: dict[str, int] = field(default_factory=dict)
    games: dict[str, int] = field(default_factory=dict)
    sandbox: str | None = None  #: the sandbox program bots ran in (None: no program bots)
    duplicates: str | None = None  #: see duplicate_soundness()
    #: bot name -> this run's stderr logs of its processes (the log dir's files)
    stderr_logs: dict[str, list[str]] = field(default_factory=dict)
    #: The referee's cost of the games played by this run: decisions asked, CPU seconds
    #: (this process and every worker, in-process bots excluded), and game wall seconds
    #: not charged to any bot.
    decisions: int = 0
    cpu_s: float = 0.0
    overhead_s: float = 0.0

    def count(self, game: FinishedGame) -> None:
        """Count one game this run stored (whoever played it)."""
        self.done += 1
        self.decisions += game.decisions
        self.overhead_s += game.overhead_s
        # A worker's CPU comes with its game; this process's own is measured at the end.
        self.cpu_s += game.cpu_s
        for seat, name in enumerate(game.players):
            self.games[name] = self.games.get(name, 0) + 1
            self.durak[name] = self.durak.get(name, 0) + (seat == game.durak)

    def count_stored(self, rows: Iterable[GameRow]) -> None:
        """Count the games a run stored before this one (a resumed run's)."""
        for row in rows:
            for s in row.seats:
                self.games[s.bot] = self.games.get(s.bot, 0) + 1
                self.durak[s.bot] = self.durak.get(s.bot, 0) + (s.result == "durak")

    def referee_cost(self) -> dict[str, float | None]:
        """The referee_cpu/wall_us_per_decision of this run's games (match.referee_cost)."""
        return referee_cost(self.cpu_s, self.overhead_s, self.decisions)

    def leader(self) -> str:
        if not self.games:
            return ""
        best = min(self.games, key=lambda b: self.durak.get(b, 0) / self.games[b])
        return f"{best} ({self.durak.get(best, 0)}/{self.games[best]} durak)"

    def progress_text(self) -> str:
        """The leader so far, for a progress line ("" before any game)."""
        leader = self.leader()
        return f"leader: {leader}" if leader else ""


def stderr_logs_of(stem: Path | None, names: Sequence[str]) -> dict[str, list[str]]:
    """Bot name -> the stderr logs its processes wrote in a run whose PlayerPools (and
    workers) were given ``stem`` (None: not logged, an empty map). Names without a log
    (builtin bots) are left out."""
    logs: dict[str, list[str]] = {}
    if stem is None:
        return logs
    for name in names:
        # Named <stem>[.wN].<bot>-<k>.stderr.log by PlayerPool (in a worker: .wN).
        files = sorted(str(p) for p in stem.parent.glob(f"{stem.name}*.{safe_name(name)}-*.stderr.log"))
        if files:
            logs[name] = files
    return logs


DEFAULT_LOG_DIR = Path("logs")


def run_log_dir(given: Path | None, store: Store, tid: str | None) -> Path:
    """Where a run's logs go: ``--log-dir`` when given; for a resumed run (``tid``) without
    it, the directory of the logs its stored games point into (a resume must not scatter
    one run's logs over two directories); else ``logs``."""
    if given is not None:
        return given
    if tid is not None:
        for row in reversed(store.games(tid)):
            if row.log_file:
                return Path(row.log_file).parent
    return DEFAULT_LOG_DIR


def resolve_sandbox(settings: TournamentSettings, *hide: str | Path | None) -> Sandbox | None:
    """The resolved sandbox for the settings' program bots, hiding ``hide`` (None: no
    program bots). Raises SandboxError (the user's option) when it cannot be used."""
    if not settings.has_programs():
        return None
    return settings.sandbox_policy(*hide).resolve()


def _open_log(log_dir: Path, tid: str, fresh: bool, settings: TournamentSettings, config: MatchConfig,
              progress: Progress) -> MatchLogWriter:
    """A new game log of tournament ``tid`` in ``log_dir`` (a resumed run's is named so),
    its header written."""
    suffix = "" if fresh else "-resumed-" + time.strftime("%H%M%S")
    writer = MatchLogWriter(fresh_log_path(log_dir, f"tournament-{safe_name(tid)}{suffix}"))
    writer.write({"type": "header", "format": FORMAT, "tournament": tid, "started": utc_now(),
                  "preset": config.rules.preset, "rules": config.rules.as_dict(),
                  "bots": [asdict(b) for b in settings.bots], "settings": settings.as_dict(),
                  "time_control": config.tc.as_dict(), "seed": settings.seed,
                  "sandbox": progress.sandbox, "seccomp": seccomp_state(progress.sandbox),
                  "duplicates": progress.duplicates, "confinement": run_header(progress.sandbox),
                  "deal": DEAL_TEXT})
    return writer


async def run_tournament(settings: TournamentSettings, store: Store, tid: str, *,
                         log_dir: Path | None,
                         on_game: Callable[[FinishedGame, Progress], None] | None = None,
                         fresh: bool = True, hide: Sequence[str | Path] = (),
                         recover: bool = False, watch: Watch | None = None) -> Progress:
    """Play every scheduled game not yet in the store. Returns the progress counts.

    ``hide``: more paths bots must not see (config, token files); the log dir and the
    store are always hidden. Raises BotStartError if a bot program cannot be started,
    SandboxError if the sandbox asked for cannot be used; unless ``recover``, raises
    BotFirstStartError when a bot fails its first start-up (referee/table/failfast.py; finished
    games are stored, the tournament stays resumable). KeyboardInterrupt (Ctrl-C)
    propagates after every bot is closed and every finished game is stored.
    ``on_game(game, progress)`` is called for each game once it is stored (games are
    committed in batches: referee/league/results.py), with ``progress`` counting it. ``watch``:
    a spectator hook for every game (the live page), in a worker too; None costs nothing.
    """
    config = settings.validate()
    sandbox = resolve_sandbox(settings, log_dir, getattr(store, "path", None), *hide)
    soundness = duplicate_soundness(settings.duplicate, None if sandbox is None else sandbox.mode,
                                    settings.keep_bots_across_twins)
    total = schedule_size(settings)
    done = store.finished_indices(tid)
    todo = total - len(done)  # how many are left; the games themselves are made one at a time
    progress = Progress(total, len(done), time.monotonic(),
                        sandbox=None if sandbox is None else sandbox.mode, duplicates=soundness)
    progress.count_stored(store.games(tid))
    if not todo:
        # Everything is stored (e.g. killed between the last game and the status update).
        store.set_status(tid, "finished")
        return progress
    warn_unsound_duplicates(soundness)
    writer = None if log_dir is None else _open_log(log_dir, tid, fresh, settings, config, progress)
    log_path = None if writer is None else writer.path
    stem = log_path.with_suffix("") if log_path else None
    rules = config.rules.as_dict()

    def game_row(sg: ScheduledGame, game: FinishedGame, log_line: int | None) -> GameRow:
        return GameRow(tid, sg.index, sg.seed, sg.rotation, rules,
                       str(log_path) if log_path else None, log_line, game.termination,
                       None if game.durak is None else game.players[game.durak],
                       game.started, game.ended, game.seats)

    def count(game: FinishedGame) -> None:
        progress.count(game)
        if on_game is not None:
            on_game(game, progress)

    # Logged and stored in batches, counted once committed: see referee/league/results.py.
    sink = ResultSink(store, writer, game_row, count)

    def start_tasks(pool: PlayerPool, tasks: trio.Nursery) -> None:
        tasks.start_soon(_play_schedule, pool, settings, done, todo, stem, sink, sandbox, recover, watch)

    cpu = time.process_time()
    try:
        await with_pool(settings, config, stem, start_tasks, sandbox, recover)
    finally:
        sink.flush()  # every game finished so far, however the run ends
        progress.cpu_s += time.process_time() - cpu
        progress.stderr_logs = stderr_logs_of(stem, [b.name for b in settings.bots])
        if writer is not None:
            writer.write({"type": "footer", "ended": utc_now(), "interrupted": progress.done < progress.total,
                          "summary": {"games": progress.done, "total": progress.total}})
            writer.close()
    if progress.done >= progress.total:
        store.set_status(tid, "finished")
    return progress


#: Games go to a worker in chunks worth about this many seconds of play, at most
#: MAX_CHUNK games (and at most a fair share of what is left: ``fair_chunk``), and the
#: next chunk goes out while it plays the last: a worker of quick games never waits for
#: the parent, and parent and worker wake once per chunk, not per game (the worker sends
#: a chunk's results together: referee/league/worker.py). Games slower than this go one at a time.
CHUNK_S = 0.25
MAX_CHUNK = 16


async def _play_schedule(pool: PlayerPool, settings: TournamentSettings, done: set[int], todo: int,
                         stem: Path | None, sink: ResultSink, sandbox: Sandbox | None, recover: bool,
                         watch: Watch | None) -> None:
    """Play the scheduled games not in ``done`` (``todo`` of them), in this process with
    ``pool`` or, at a concurrency above one, in worker processes, each game handed to
    ``sink`` as it finishes (``sink``'s batches are committed on its timer meanwhile)."""
    # Unbuffered: the feeder makes each game as a player takes it, so memory does not
    # grow with the length of the schedule.
    queue_send, queue_recv = trio.open_memory_channel[ScheduledGame](0)
    handed_out = [0]

    async def feed() -> None:
        async with queue_send:
            for g in iter_schedule(settings):
                if g.index not in done:
                    await queue_send.send(g)
                    handed_out[0] += 1

    async def in_process() -> None:
        async for sg in queue_recv:
            record, started = await pool.play(sg, settings.fresh_bots, watch)
            sink.add(sg, FinishedGame.from_record(record, started, utc_now(), -record.inprocess_cpu_s))

    workers_needed = min(settings.concurrency, todo)

    def fair_chunk() -> int:
        # Guided scheduling: chunks shrink as the schedule runs out, so that at its end
        # no worker sits on a queue of games while another has none.
        return max(1, (todo - handed_out[0]) // (4 * workers_needed))

    async with trio.open_nursery() as batching:
        batching.start_soon(sink.run_timer)
        async with trio.open_nursery() as games:
            games.start_soon(feed)
            if workers_needed > 1:
                # One referee process per worker: see referee/league/worker.py.
                for number in range(workers_needed):
                    games.start_soon(_drive_worker, number, settings, stem, queue_recv, sink.add, sandbox,
                                     recover, fair_chunk, watch)
            else:
                games.start_soon(in_process)
        batching.cancel_scope.cancel()


async def _drive_worker(number: int, settings: TournamentSettings, stem: Path | None,
                        queue: trio.MemoryReceiveChannel[ScheduledGame],
                        finished: Callable[[ScheduledGame, FinishedGame], None],
                        sandbox: Sandbox | None = None, recover: bool = False,
                        fair_chunk: Callable[[], int] = lambda: 1,
                        watch: Watch | None = None) -> None:
    """Start worker process ``number``, hand it games from ``queue`` (in chunks while
    games are quick: CHUNK_S; ``fair_chunk()``: the most games one chunk may take of the
    schedule left), and pass each result to ``finished`` in the order played. The
    worker is always ended (it closes its bots). ``watch``: the spectator hook."""
    from .workerclient import WorkerClient

    client = WorkerClient(number, settings, stem, sandbox, recover, watch)
    try:
        await client.start()
        sent: collections.deque[ScheduledGame] = collections.deque()
        more, chunk = True, 1
        first_result, results = 0.0, 0  # for the mean time per game, from the first result on
        while True:
            # Refill: one game when games are slow; else up to two chunks, once one is done.
            size = min(chunk, fair_chunk())
            window, low = (2 * size, size) if size > 1 else (1, 0)
            if more and len(sent) <= low:
                games: list[ScheduledGame] = []
                while len(sent) + len(games) < window:
                    try:
                        games.append(await queue.receive())
                    except trio.EndOfChannel:
                        more = False
                        break
                if games:
                    await client.send_games(games)
                    sent.extend(games)
            if not sent:
                break
            sg = sent.popleft()
            finished(sg, await client.receive_game(sg))
            results += 1
            if results == 1:
                first_result = trio.current_time()
            else:
                per_game = (trio.current_time() - first_result) / (results - 1)
                chunk = max(1, min(MAX_CHUNK, int(CHUNK_S / per_game))) if per_game > 0 else MAX_CHUNK
    finally:
        await client.close()


def play_tournament(settings: TournamentSettings, store: Store, tid: str, *,
                    http: tuple[str, int] | None = None,
                    on_url: Callable[[str], None] | None = None, **kwargs: Any) -> Progress:
    """Synchronous entry point: ``run_tournament`` under ``trio.run``; Ctrl-C and SIGTERM
    are delivered only at checkpoints, so they never cut a store write or log line.
    ``http``: also serve the live page there while the tournament runs (``on_url`` is
    told its address); raises LiveError if it cannot listen there."""
    from ..console.interrupt import run_interruptible
    if http is None:
        return run_interruptible(lambda: run_tournament(settings, store, tid, **kwargs))
    from ..web.live import LiveHub, replay_header, with_live

    hub = LiveHub(f"tournament {tid}", standings=StandingsTally(store, tid, LIVE_READ_AT_ONCE).update,
                  deal_games=settings.players if settings.duplicate else 1)
    header = replay_header(settings.validate())
    on_game = kwargs.pop("on_game", None)

    def listed(game: FinishedGame, progress: Progress) -> None:
        # The full record only when a page shows it (the replay of a finished game).
        hub.finished(header, game.record().as_dict())
        if on_game is not None:
            on_game(game, progress)

    return run_interruptible(lambda: with_live(hub, *http, lambda: run_tournament(
        settings, store, tid, watch=hub.watch, on_game=listed, **kwargs), on_url=on_url))
