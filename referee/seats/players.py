"""Bot specs and the players that sit at a table.

A bot spec is what the user types on the command line:

- ``builtin:NAME`` runs an in-process bot (``random``, ``greedy``, ``gentle``,
  ``ismcts``); ``seat=builtin:NAME`` names its seat; a built-in that takes parameters
  takes them after a second colon, ``builtin:NAME:KEY=VALUE,KEY=VALUE``
  (``builtin:ismcts:iterations=200``, ``builtin:ismcts:ms=40``);
- anything else is a command line, split like a POSIX shell does, with an optional
  ``name=`` prefix: ``alice="./mybot --fast"``;
- ``tcp:NAME`` is reserved for bots that connect over TCP (not yet served).

A ``Player`` is the referee's side of one bot for a whole match. All players speak
in protocol messages (maps), so a built-in bot sees exactly what a remote bot sees; the
built-ins ``random`` and ``greedy`` also ``decide_now``: the same choice from the engine's
state, with no request built (referee/bots/fastchoice.py).
"""

from __future__ import annotations

import difflib
import random
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, ClassVar

from protocol.strategies import gentle_choose, greedy_choose, random_choose

from ..bots.fastchoice import greedy_action, random_action
from ..rules.game import Game
from ..errors import UserError


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
}
#: Built-ins that take ``:KEY=VALUE,...`` parameters.
PARAMETRIC = ("ismcts",)
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
    _param_map(builtin, items, spec)
    return items


def _param_map(builtin: str, items: tuple[str, ...], spec: str) -> Any:
    from ..bots.ismcts import IsmctsParamError, parse_params
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise BotSpecError(f"{spec!r}: expected KEY=VALUE parameters after builtin:{builtin}:, "
                               f"got {item!r}")
        pairs[key.strip()] = value.strip()
    try:
        return parse_params(pairs)
    except IsmctsParamError as exc:
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
    of the run already has it (a built-in, a name the user gave, an earlier seat), else
    the first of ``wanted#2``, ``wanted#3``, ... that none has. A bot chooses its hello
    name, so it must never take, or push aside, a name the run's results go by."""
    name, k = wanted, 1
    while name in taken:
        k += 1
        name = f"{wanted}#{k}"
    return name


@dataclass
class Player:
    """The referee's side of one bot for a whole match.

    Subclasses implement the async methods. ``wants_events`` lets the referee skip
    building event messages for bots that ignore them (the built-ins).
    """

    name: str
    spec: BotSpec
    wants_events: bool = True
    info: dict[str, Any] = field(default_factory=dict)
    busy: bool = False  #: in a game right now (set by the game loop)
    #: (written, answered): trio times at which ``decide`` finished writing its request
    #: and the answer's frame was complete, so the bot is charged only for the time in
    #: between. None (in-process bots): the caller times the whole ``decide`` call.
    timing: tuple[float, float] | None = None
    #: The player has left the table for good (a person who closed their input): the
    #: match ends after the game in progress.
    left: bool = False
    #: The bot decides inside the referee's process (its CPU is not the referee's).
    in_process: bool = False
    #: The bot reads a request's ``observation`` only during ``decide`` and only through
    #: the Mapping interface, so the referee may hand it a view computed on first use
    #: (in-process built-ins: a random choice never looks at it).
    lazy_view: bool = False
    #: The bot can choose synchronously from the engine's state (``decide_now``), with
    #: the same choice ``decide`` would make from the request: the referee then builds no
    #: request at all (in-process ``random`` and ``greedy``).
    decides_now: bool = False
    #: The player takes requests as frame bytes too (``decide_frame``, ``decide_frame_now``,
    #: ``queue_frame``, and ``yield_due`` / ``pause`` for the frame lane's yields to trio:
    #: wire.StreamPlayer), so the referee can send it requests joined from packed parts
    #: instead of message maps. A class fact, not a field.
    takes_frames: ClassVar[bool] = False
    #: For a ``takes_frames`` player whose ``decide_frame_now``, ``queue_frame`` and
    #: ``yield_due`` are pipelane's applied to its connection (wire.StreamPlayer): that
    #: connection's ``pipelane.Lane``, which the compiled frame lane uses directly (no
    #: interpreted call per decision or event). None for every other player. It is the
    #: same object for the player's whole life (a new stream resets its fields), so a
    #: table may hold it for a game in which a TCP seat reconnects.
    lane: ClassVar[Any] = None

    def yield_due(self) -> bool:
        """For a player that ``takes_frames``: whether it is due a yield to trio before its
        next decision (the caller then awaits ``pause``). None is ever due by default."""
        return False

    async def pause(self) -> None:
        """The yield to trio ``yield_due`` asked for: one checkpoint."""
        import trio

        await trio.lowlevel.checkpoint()

    async def start(self, nursery: Any) -> None:
        """Start the bot and complete the handshake; background tasks go in ``nursery``.
        Raises BotStartError if the bot cannot be started, BotFailure if it fails the
        handshake."""

    async def send(self, message: dict[str, Any]) -> None:
        """Deliver a referee-to-bot message that needs no answer."""

    async def send_frame(self, frame: bytes) -> None:
        """Deliver an already encoded message that needs no answer (queued, written with
        the next request). For bots that take events."""

    async def tell(self, message: dict[str, Any]) -> None:
        """Best effort, never raises: write ``message`` now (the fatal ``error`` that tells
        a bot why it lost a game), within a short time; a bot that is not reading does
        not hold the referee up. In-process bots need no telling."""

    async def decide(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send a request message and return the bot's action map (structurally valid,
        not checked for legality) within ``timeout`` seconds of the request being sent
        (None: no limit). Sets ``timing`` where it can. Raises BotFailure."""
        raise NotImplementedError

    def decide_now(self, game: Game, seat: int, legal: list[int], game_index: int) -> int:
        """For a player with ``decides_now``: the element of ``legal`` (the legal actions
        of ``seat``, the seat to move in ``game``, table game number ``game_index``) that
        ``decide`` would answer with. Reads only what ``seat`` may see."""
        raise NotImplementedError

    async def prepare_game(self, max_restarts: int, fresh: bool = False) -> None:
        """Called before each game: a failed bot is restarted here, if it may be;
        with ``fresh`` a program bot is restarted anyway (no memory of earlier games)."""

    async def close(self) -> None:
        """Say bye and release the bot. Must complete even when cancelled."""


class BuiltinPlayer(Player):
    """An in-process bot that decides from the request map alone.

    ``random`` draws from a generator seeded by (seed, seat name, game index), so a
    game's moves do not depend on which games the same object played before: the same
    schedule gives the same games sequentially or concurrently.
    """

    def __init__(self, name: str, spec: BotSpec, seed: int | str = 0) -> None:
        kind = spec.argv[0]
        # ismcts needs the table rules, which a bot learns from game_start as a remote
        # bot does; the others need nothing but the request.
        super().__init__(name, spec, wants_events=kind == "ismcts", in_process=True,
                         lazy_view=kind != "ismcts", decides_now=kind in ("random", "greedy"))
        self.info = {"name": kind, "version": "builtin", "author": "durak-ref"}
        self._seed = seed
        self._random = kind == "random"  #: decide_now's choice of strategy, read once
        self._game: int | None = None
        self._rng = random.Random()
        self._params = _param_map(kind, spec.argv[1:], spec.text) if kind in PARAMETRIC else None
        self._search: Any = None

    async def send(self, message: dict[str, Any]) -> None:
        if message.get("type") == "game_start" and self._params is not None:
            from ..bots.ismcts import IsmctsStrategy
            from ..rules.options import rules_from_dict
            self._search = IsmctsStrategy(rules_from_dict(message["rules"]), self._params)

    async def decide(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        obs, legal = request["observation"], request["legal"]
        if self._search is not None:
            # Seeded per decision: the choice is a function of (seed, seat, game,
            # request id, observation, legal list) alone.
            rng = random.Random(f"{self._seed}:{self.name}:{request['game']}:{request['id']}")
            return self._search.choose(obs, legal, rng)
        if self.spec.argv[0] == "gentle":
            return gentle_choose(obs, legal)
        if self.spec.argv[0] == "random":
            return random_choose(obs, legal, self._game_rng(request["game"]))
        return greedy_choose(obs, legal)

    def decide_now(self, game: Game, seat: int, legal: list[int], game_index: int) -> int:
        if self._random:
            rng = self._rng if game_index == self._game else self._game_rng(game_index)
            return random_action(legal, rng)
        return greedy_action(game, seat, legal)

    def _game_rng(self, game_index: int) -> random.Random:
        """The random bot's generator, seeded afresh at the first decision of each game."""
        if game_index != self._game:
            self._game = game_index
            self._rng.seed(f"{self._seed}:{self.name}:{game_index}")
        return self._rng
