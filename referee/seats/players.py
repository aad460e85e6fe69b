"""Bot specs and the players that sit at a table.

A bot spec is what the user types on the command line:

- ``builtin:NAME`` runs an in-process bot (``random``, ``greedy``, ``gentle``,
  ``ismcts``, ``expert``, ``solver``); ``seat=builtin:NAME`` names its seat; a built-in that takes parameters
  takes them after a second colon, ``builtin:NAME:KEY=VALUE,KEY=VALUE``
  (``builtin:ismcts:iterations=200``, ``builtin:ismcts:ms=40``,
  ``builtin:solver:fallback=ismcts,iterations=200``);
- anything else is a command line, split like a POSIX shell does, with an optional
  ``name=`` prefix: ``alice="./mybot --fast"``;
- ``tcp:NAME`` is reserved for bots that connect over TCP (not yet served).

A ``Player`` is the referee's side of one seat for a whole match; its docstring is the
interface a new kind of seat implements (a synchronous ``attempt`` and an awaited
``finish`` per decision). Built-ins read what their seat may see of the game directly.
"""

from __future__ import annotations

import difflib
import random
import re
import shlex
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from protocol.strategies import gentle_choose

from ..bots.fastchoice import greedy_action, random_action
from ..bots.solverbot import SolverChooser
from ..errors import UserError
from ..rules.game import Game
from .names import look_alike


class BotSpecError(UserError, ValueError):
    """The user's bot spec cannot be used (unknown builtin, empty command, bad name)."""

    hint = "name a bot builtin:NAME, by its command line, or tcp:NAME (README, bot specs)"


class BotStartError(UserError, RuntimeError):
    """A bot program could not be started at all (not found, not executable). The
    user's configuration is at fault, not a game result."""

    hint = "run the bot's command by hand in the same directory to see why it does not start"


class BotFailure(Exception):
    """A bot failed during the match: ``kind`` is one of timeout, crash, protocol,
    disconnect; ``evidence`` is a JSON-ready map (bytes, time, exit code, stderr).
    The referee turns it into the forfeit of the game in progress."""

    def __init__(self, kind: str, reason: str, evidence: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.kind, self.reason = kind, reason
        self.evidence: dict[str, Any] = evidence if evidence is not None else {}


BUILTINS = {
    "random": "uniform random legal action (seeded)",
    "greedy": "lowest sensible card, saves trumps, takes rather than spend high trumps early",
    "gentle": "a patient casual player: one card at a time, spends trumps only on high cards "
              "while the talon lasts, goes out with its last card (the published statistics' bots)",
    "ismcts": "information-set Monte Carlo tree search; parameters iterations=N (default 150), "
              "ms=M (time per decision), c=X (exploration), bias=B (greedy hint)",
    "expert": "ismcts with 1600 iterations, a lean toward greedy's move in the whole tree, "
              "playouts of greedy's moves and the exact endgame solver, with the swindle in lost "
              "and drawn endgames (about 37 ms of CPU per decision); the same parameters, "
              "tree_bias=T, greedy_playout=0|1, solve_nodes=N and swindle=D",
    "solver": "perfect play in two-seat endgames (talon empty) when the endgame solver proves "
              "them in time, else a fallback bot; parameters solve_ms=M (default 100), "
              "solve_nodes=N, fallback=random|greedy|gentle|ismcts (default greedy) and the "
              "fallback's own",
}
#: Built-ins that take ``:KEY=VALUE,...`` parameters: the search bots
#: (referee/bots/ismcts.py, ``SEARCH_BOTS``) and the solver.
PARAMETRIC = ("ismcts", "expert", "solver")
#: Why a TCP seat cannot be played under the cpu clock (``Player.cpu_time_why_not``).
TCP_NO_CPU_TIME = ("a TCP bot runs where the referee cannot read its CPU time (only built-ins "
                   "and the bot programs it starts have a CPU clock); play it with --clock wall")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")
_SCRIPT_RE = re.compile(r"^[^\s]+\.(py|js|mjs|cjs|ts|rb|pl|php|lua|jar|sh|exe)$")


@dataclass(frozen=True)
class BotSpec:
    """A parsed bot spec. ``kind`` is "builtin", "command" or "tcp". For a builtin,
    ``argv`` is the built-in's name (``("greedy",)``), whatever the seat is called."""

    kind: str
    name: str
    argv: tuple[str, ...] = ()
    text: str = ""
    named: bool = False  #: the user gave the name (``name=CMD``); else the bot's hello may rename it

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "spec": self.text,
                "argv": list(self.argv)}


def is_seat_name(name: str) -> bool:
    """Whether ``name`` may name a seat: letters, digits, '_', '-', '.'."""
    return bool(_NAME_RE.match(name))


def parse_bot_spec(text: str) -> BotSpec:
    """Parse one bot spec (see the module docstring). Raises BotSpecError."""
    raw = text.strip()
    if not raw:
        raise BotSpecError("empty bot spec; give builtin:NAME or a command line")
    if raw.startswith("builtin:"):
        builtin, _, params = raw[len("builtin:"):].partition(":")
        if builtin not in BUILTINS:
            close = difflib.get_close_matches(builtin, BUILTINS, n=1)
            hint = f"did you mean builtin:{close[0]}? " if close else ""
            raise BotSpecError(f"unknown built-in bot {builtin!r}; {hint}built-ins: {', '.join(BUILTINS)}")
        return BotSpec("builtin", builtin, (builtin, *_builtin_params(builtin, params, raw)), raw)
    if raw.startswith("tcp:"):
        seat_name = raw[4:]
        if not _NAME_RE.match(seat_name):
            raise BotSpecError(f"tcp:NAME needs a name of letters, digits, '_', '-', '.'; got {seat_name!r}")
        return BotSpec("tcp", seat_name, (), raw)
    name: str | None = None
    head, sep, rest = raw.partition("=")
    if sep and not _NAME_RE.match(head) and (
            rest.lstrip().startswith(("builtin:", "tcp:")) or not re.search(r"[\s/]", head)):
        # NAME=SPEC with a name the grammar refuses: an error naming it, not a program
        # called ":x:=builtin:random" that then cannot be found.
        raise BotSpecError(f"bot name {head!r} in {text!r}: a name is letters, digits, '_', '-' "
                           f"and '.' only")
    if sep and _NAME_RE.match(head):
        name, raw = head, rest
        if raw.strip().startswith(("builtin:", "tcp:")):
            # NAME=builtin:X is one grammar with ``tournament --bot NAME=builtin:X``.
            inner = parse_bot_spec(raw)
            if inner.kind == "tcp":
                raise BotSpecError(f"{text!r}: a tcp seat takes its name from tcp:NAME; "
                                   f"give tcp:{head} instead")
            return BotSpec("builtin", name, inner.argv, text, named=True)
    try:
        argv = tuple(shlex.split(raw))
    except ValueError as exc:
        raise BotSpecError(f"cannot split bot command {text!r}: {exc}") from None
    if not argv:
        raise BotSpecError(f"bot spec {text!r} has no command")
    if name is None:
        # Until the bot's hello names it: its script's file name without extension
        # ("greedy_bot" for python3 x/greedy_bot.py), else the program's ("bot", "python").
        script = next((a for a in reversed(argv[1:]) if _SCRIPT_RE.search(a)), argv[0])
        name = re.sub(r"\.[A-Za-z0-9]+$", "", script.rsplit("/", 1)[-1])
        if not _NAME_RE.match(name):
            name = "bot"
        return BotSpec("command", name, argv, text)
    return BotSpec("command", name, argv, text, named=True)


def _builtin_params(builtin: str, text: str, spec: str) -> tuple[str, ...]:
    """The ``KEY=VALUE`` items after ``builtin:NAME:``, checked by the built-in's own
    parser (so a bad one fails when the spec is read, not when the match starts)."""
    if not text:
        return ()
    if builtin not in PARAMETRIC:
        raise BotSpecError(f"{spec!r}: built-in {builtin} takes no parameters")
    items = tuple(i.strip() for i in text.split(","))
    builtin_param_map(builtin, items, spec)
    return items


def builtin_param_map(builtin: str, items: tuple[str, ...], spec: str) -> Any:
    """The parameters of built-in ``builtin`` (``PARAMETRIC``) from its ``KEY=VALUE``
    items: its own parser's result. Raises BotSpecError naming ``spec``."""
    from ..bots import ismcts, solverbot
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise BotSpecError(f"{spec!r}: expected KEY=VALUE parameters after builtin:{builtin}:, "
                               f"got {item!r}")
        pairs[key.strip()] = value.strip()
    try:
        if builtin == "solver":
            params = solverbot.parse_params(pairs)
            if params.fallback in PARAMETRIC:  # (the fallback's own parameters, checked)
                builtin_param_map(params.fallback, params.fallback_items, spec)
            return params
        return ismcts.parse_params(pairs, builtin)
    except (ismcts.IsmctsParamError, solverbot.SolverBotParamError) as exc:
        raise BotSpecError(f"{spec!r}: {exc}") from None


def unique_names(names: list[str]) -> list[str]:
    """Make seat names unique: the second ``greedy`` becomes ``greedy#2``."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def free_name(wanted: str, taken: set[str]) -> str:
    """The name a bot that says hello as ``wanted`` gets: ``wanted`` itself unless a seat
    of the run already has it or one that looks like it (a built-in, a name the user
    gave, an earlier seat; ``names.look_alike``: ``grееdy`` with Cyrillic е, ``Greedy``),
    else the first of ``wanted#2``, ``wanted#3``, ... that none has or looks like. A bot
    chooses its hello name, so it must never take, mimic or push aside a name the run's
    results go by."""
    name, k = wanted, 1
    while look_alike(name, taken) is not None:
        k += 1
        name = f"{wanted}#{k}"
    return name


class Ask(Protocol):
    """One decision asked of a seat (the table's ``framelane.Ask``): what a player reads
    to answer it. Valid while the decision is open (its frame and message read the
    game as it is then). Its request fields (``id``, ``budget``, ``answers``, ``timing``,
    ``frame``) are a compiled ``pipelane.Request``'s, which a pipe player requires."""

    game: Game  #: the game in play (the seat may read only what it may see)
    seat: int  #: the seat asked
    index: int  #: the game's number in its match
    id: int  #: the request id (1, 2, ... per seat per game)
    legal: list[int]  #: the legal actions, as action numbers
    #: seconds of wall time the answer may take (None: no limit; under the cpu clock the
    #: backstop, table/clock.py)
    budget: float | None
    #: under the cpu clock, the CPU seconds the answer may use (None: the wall clock rules)
    cpu_budget: float | None
    answers: Mapping[bytes, int]  #: canonical packed action maps -> the action they name
    #: (written, answered): run-clock times of the request fully written and of the
    #: answer complete, for a player that knows them; None: the loop times the call.
    timing: tuple[float, float] | None
    #: the CPU seconds the seat spent on the answer, for a player that measures them (a
    #: program bot's control group, a built-in's thread); -1: not measured. Under the cpu
    #: clock an answer whose CPU is not measured is charged its wall time.
    cpu: float

    def frame(self) -> bytes:
        """The request's frame (``encode(self.message())``, byte for byte)."""
        ...

    def legal_wire(self) -> list[dict[str, Any]]:
        """The legal actions as protocol maps (shared and read-only: compare or copy)."""
        ...

    def message(self, observation: Any = None) -> dict[str, Any]:
        """The request message (``observation`` in place of the seat's observation map)."""
        ...


@dataclass
class Player:
    """The referee's side of one seat for a whole match: what a new kind of seat implements.

    A decision is asked in two steps, the same for every seat (``framelane``'s loop):

    - ``attempt(ask)``, synchronous: finish the decision now if it can (a built-in
      choosing from the engine, a pipe bot that answers within a millisecond) and
      return the answer, or return None ("not yet"; a request may be left open);
    - ``await finish(ask)``: the rest, for as long as it takes (within ``ask.budget``:
      the loop forfeits a late answer), continuing whatever ``attempt`` left open.

    An answer is an action number from ``ask.legal`` or ``ask.answers``' values, or an
    action map as the bot sent it; the loop judges it (clock, form, legality) and may ask
    again after an illegal one. A player that knows when the bot's time started and
    ended sets ``ask.timing``; otherwise the loop charges the time of the calls. A seat
    that fails (crash, timeout, protocol, disconnect) raises BotFailure from either.

    Messages that need no answer come as frames to ``hear`` (queued: nothing waits), and
    ``flush`` writes what is queued at once (the game's end). ``wants_events`` False: the
    seat is sent no messages at all (the built-ins, which read the game itself).
    """

    name: str
    spec: BotSpec
    wants_events: bool = True
    info: dict[str, Any] = field(default_factory=dict)
    busy: bool = False  #: in a game right now (set by the game loop)
    #: The player has left the table for good (a person who closed their input): the
    #: match ends after the game in progress.
    left: bool = False
    #: The bot is the referee's own code, deciding in its process: its time is counted as
    #: its own CPU, not the referee's (``GameRecord.inprocess_cpu_s``), it is not told
    #: why it lost, and an answer of it that is no legal action is the referee's bug
    #: (raised, not a forfeit). Not a way of asking: every seat is asked the same way.
    in_process: bool = False

    def attempt(self, ask: Ask) -> Any:
        """The decision now, or None (not yet: ``finish`` is awaited next). None by default."""
        return None

    def cpu_time_why_not(self) -> str | None:
        """None when this seat measures the CPU time of its decisions (``Ask.cpu``), so the
        cpu clock can charge it (table/clock.py); else why not, and the run refuses
        ``--clock cpu``. By default a seat does not: a TCP bot runs on a machine or in a
        process the referee cannot look into, a person thinks without a CPU."""
        if self.spec.kind == "tcp":
            return TCP_NO_CPU_TIME
        return f"a {self.spec.kind} seat has no CPU time the referee can read"

    async def finish(self, ask: Ask) -> Any:
        """The answer to ``ask``, continuing what ``attempt`` left open. Raises BotFailure."""
        raise NotImplementedError

    def hear(self, frame: bytes) -> None:
        """Take a message that needs no answer (an encoded frame: game_start, event, a
        non-fatal error, game_end), queued until the next request or ``flush``. Raises
        BotFailure when the bot has already failed. Ignored by default."""

    async def flush(self) -> None:
        """Write what ``hear`` queued now (the end of a game). Raises BotFailure."""

    async def start(self, nursery: Any) -> None:
        """Start the bot and complete the handshake; background tasks go in ``nursery``.
        Raises BotStartError if the bot cannot be started, BotFailure if it fails the
        handshake."""

    async def tell(self, message: dict[str, Any]) -> None:
        """Best effort, never raises: write ``message`` now (the fatal ``error`` that tells
        a bot why it lost a game), within a short time; a bot that is not reading does
        not hold the referee up. In-process bots need no telling."""

    async def prepare_game(self, max_restarts: int, fresh: bool = False,
                           deal: str | None = None) -> None:
        """Called before each game: a failed bot is restarted here, if it may be;
        with ``fresh`` a program bot is restarted anyway (no memory of earlier games),
        and with ``deal`` (the coming game's deal id) when its process was already
        prepared for that deal (no memory of a duplicate deal's other rotation)."""

    async def close(self) -> None:
        """Say bye and release the bot. Must complete even when cancelled."""


class ObservationOnDemand(Mapping[str, Any]):
    """``game.observe(seat)`` as a read-only Mapping, computed on first use: for a bot in
    the referee's process that may decide without looking at it. It reads the game when
    first used, so it is valid only while the request is open."""

    __slots__ = ("_game", "_seat", "_view")

    def __init__(self, game: Game, seat: int) -> None:
        self._game, self._seat = game, seat
        self._view: dict[str, Any] | None = None

    def _full(self) -> dict[str, Any]:
        view = self._view
        if view is None:
            view = self._view = self._game.observe(self._seat)
        return view

    def __getitem__(self, key: str) -> Any:
        return self._full()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._full().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._full())

    def __len__(self) -> int:
        return len(self._full())


class BuiltinPlayer(Player):
    """An in-process bot: it reads the game itself and is sent no messages.

    ``random`` and ``greedy`` choose from the engine's state (referee/bots/fastchoice.py),
    at once, in ``attempt``: the same choice their request-reading strategies make.
    ``gentle``, ``ismcts`` and ``expert`` choose from the request map (built on demand), in
    ``finish``, after a look for a pending Ctrl-C (they never wait, so nothing else
    would see one). ``solver`` searches the engine's position in ``finish`` too and
    hands what it cannot prove to its fallback built-in. ``random`` draws from a generator seeded by (seed, seat name, game
    index), so a game's moves do not depend on which games the same object played
    before: the same schedule gives the same games sequentially or concurrently.
    """

    def __init__(self, name: str, spec: BotSpec, seed: int | str = 0) -> None:
        kind = spec.argv[0]
        super().__init__(name, spec, wants_events=False, in_process=True)
        self.info = {"name": kind, "version": "builtin", "author": "durak-ref"}
        self._seed = seed
        self._kind = kind
        self._now = kind in ("random", "greedy")  #: chooses in ``attempt``
        self._game: int | None = None
        self._rng = random.Random()
        params: Any = builtin_param_map(kind, spec.argv[1:], spec.text) if kind in PARAMETRIC else None
        #: ``solver``: its solver, and the built-in that decides where the solver does not.
        self._chooser: SolverChooser | None = None
        self._fallback: BuiltinPlayer | None = None
        if kind == "solver":
            self._chooser = SolverChooser(params)
            self._fallback = BuiltinPlayer(name, BotSpec(
                "builtin", name, (params.fallback, *params.fallback_items), spec.text), seed)
            params = None
        from ..bots.ismcts import SearchSeat
        #: ``ismcts``, ``expert``: the search (``SearchSeat``: the same in a confined process)
        self._search = None if params is None else SearchSeat(params)
        #: The CPU of the decisions made in ``finish`` (this thread's: what a busy
        #: machine's other jobs do not inflate), and how many there were; ``random`` and
        #: ``greedy``, which choose in ``attempt``, are not counted.
        self.decide_cpu_s = 0.0
        self.decided = 0

    def attempt(self, ask: Ask) -> Any:
        if not self._now:
            return None
        if ask.cpu_budget is None:  # the wall clock: the loop times the call
            return self._choose_now(ask)
        cpu = time.thread_time()
        answer = self._choose_now(ask)
        ask.cpu = time.thread_time() - cpu
        return answer

    def cpu_time_why_not(self) -> str | None:
        """None: a built-in's decision is timed by the CPU clock of its thread."""
        return None

    def _choose_now(self, ask: Ask) -> Any:
        """``random``'s or ``greedy``'s choice, from the engine."""
        if self._kind == "random":
            index = ask.index
            return random_action(ask.legal, self._rng if index == self._game else self._game_rng(index))
        return greedy_action(ask.game, ask.seat, ask.legal)

    async def finish(self, ask: Ask) -> Any:
        import trio

        await trio.lowlevel.checkpoint_if_cancelled()
        if self._now:  # (asked through finish alone: the same choice)
            return self.attempt(ask)
        cpu = time.thread_time()
        answer = await self._decide(ask)  # (it never waits: this thread's CPU is its own)
        ask.cpu = time.thread_time() - cpu
        self.decide_cpu_s += ask.cpu
        self.decided += 1
        return answer

    async def _decide(self, ask: Ask) -> Any:
        """``finish``'s choice for the built-ins that do not choose in ``attempt``."""
        if self._chooser is not None:
            action = self._chooser.choose(ask.game, ask.index, ask.budget if ask.cpu_budget is None
                                          else ask.cpu_budget)
            if action is not None:
                return action
            assert self._fallback is not None
            return await self._fallback.finish(ask)
        if self._search is not None:
            request = ask.message()
            return self._search.choose(f"{self._seed}:{self.name}", ask.game.rules, ask.game,
                                       ask.index, ask.id, request["observation"], request["legal"])
        # gentle may decide without reading the whole observation: computed on demand.
        view: Any = ObservationOnDemand(ask.game, ask.seat)
        return gentle_choose(view, ask.legal_wire())

    def _game_rng(self, game_index: int) -> random.Random:
        """The random bot's generator, seeded afresh at the first decision of each game."""
        if game_index != self._game:
            self._game = game_index
            self._rng.seed(f"{self._seed}:{self.name}:{game_index}")
        return self._rng
