"""``durak-ref check-bot CMD``: the conformance check a bot author runs before a tournament.

What is checked, in order:

1. **handshake**: the bot answers the referee's hello within the start-up time with a
   valid hello (protocol 1, a name). A missing ``version`` or ``author`` is a warning.
2. **games**: the bot plays games against the built-in bots (greedy and random) under
   several rule sets chosen so that every decision type the rules allow is requested
   from it (``CONFIGS``). Each rule set is one match (one bot process): games are
   played seed by seed until the decision types that rule set is there for have each
   been requested and answered legally, and the bot has sat in every seat, or until
   ``games_per_config`` games. A rule set stops at its first failure (timeout, crash,
   protocol error, illegal action); the other rule sets still run.
3. **decision types**: per type, how many requests offered it, how many the bot
   answered legally, how many times it chose it. A type passes once the bot answered
   legally at least once in a request that offered it; a type never offered is "not
   reached" (a warning, with the reason); a type offered but never answered legally
   fails. Two pseudo-types: ``decline`` (the trump-exchange offer, answered with pass
   or exchange) and ``forced`` (a request whose only legal action is pass or take; sent
   under the default ``ask_forced=on``; with ``ask_forced=off`` the bot gets the forced
   move as an event marked ``forced`` instead, which its own rule set checks it reads).
4. **latency**: median and worst decision time, from the request being written to
   the answer being read (a warning when the worst is over half the move limit).
5. **exit after bye**: after each clean match the referee says ``bye`` and closes the
   bot's stdin, as in a tournament; the bot must exit with status 0 within the grace
   period (SPEC section 12).
6. **one answer per request**: after an answer is read, check-bot waits a short settle
   window (``SETTLE_S``) and looks whether another frame came; a second action for the
   same request fails. Probed after the first ``PROBES_PER_GAME`` answers and after the
   game_start of the first ``PROBE_GAMES`` games of each rule set, and after its last
   game, before bye (a second answer found later is the referee's own protocol error).
7. **no answer before request**: game_start is written on its own, then the same settle
   window: any frame then (an action guessing the next id, say), and any action for a
   request not yet sent, fails. Pongs are always fine. A frame found by a probe is taken
   off the stream, so the games go on as if the bot had behaved.
8. **no processes left**: while the check runs, check-bot is a child subreaper, so
   every process the bot starts stays below it in the process tree, even a daemon that
   double-forks and calls ``setsid()`` (``referee.seats.leftovers``). After bye, once the bot
   has exited, its processes get ``LINGER`` grace periods to exit too; any process
   still running then, or still running after the referee killed the bot's process
   group, fails, named by pid and command line. check-bot kills and reaps them all.

Every failure carries its evidence: what was sent (request id and a short form of the
request), what came back (the referee's evidence: the received map or bytes, the exit
code and stderr tail, the time waited) and what the spec requires.

The games are played by the match machinery itself (``play_game`` with a
``MatchConfig``, the players made by ``runner.make_players``): the bot's player is
wrapped in a ``_Tap`` that notes every request, answer and time on its way through.
Nothing here re-implements the game loop or the referee's judgement: whether an answer
was accepted is read off the game record's forfeit.
"""

from __future__ import annotations

import os
import shlex
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import trio

from protocol import messages as msg
from protocol.codec import decode
from protocol.errors import RemoteProtocolError

from ..rules import Game
from ..rules.actions import MalformedAction, action_from_wire, action_str, shared_wire
from ..rules.deal import deal_deck, deal_id
from ..rules.match import first_dealer
from ..rules.options import MAX_SEATS, make_rules
from ..seats.leftovers import ProcInfo, Watch, subreaper
from ..seats.players import (
    Ask,
    BotFailure,
    BotSpec,
    BotStartError,
    Player,
    free_name,
    parse_bot_spec,
    unique_names,
)
from ..seats.process import ProcessPlayer
from ..seats.sandbox import Sandbox
from ..seats.wire import READ_CHUNK, brief
from ..table.clock import TimeControl
from ..table.match import MatchConfig, play_game
from ..table.runner import CONNECT_WAIT_S, SeatOptions, make_players

Status = Literal["pass", "warn", "fail", "skip"]

#: Decision types, in the order reports list them: the eight action types, then the
#: pseudo-types ``decline`` (an exchange offer) and ``forced`` (a lone pass or take).
DECISION_TYPES = ("attack", "cover", "throw_in", "transfer", "show_trump", "take", "pass",
                  "exchange", "decline", "forced", "reflect", "lead_more", "throw_in_open")

#: Why a type may be missing, for "not reached" warnings.
WHERE_OFFERED = {
    "attack": "offered to the main attacker at the start of every bout",
    "cover": "offered to the defender who holds a card that beats an attack card",
    "throw_in": "offered to an attacker holding a card of a rank on the table",
    "transfer": "offered under transfer=on to a defender holding the attacked rank, "
                "before covering",
    "show_trump": "offered under transfer=trump_show to a defender holding the trump of "
                  "the attacked rank",
    "take": "offered to the defender in every defence",
    "pass": "offered to attackers in the throw-in phase and with every exchange offer",
    "exchange": "offered under trump_exchange=on, before the first attack, to the holder "
                "of the deck's lowest trump",
    "decline": "the exchange offer answered (exchange or pass); see exchange",
    "forced": "a request whose only legal action is pass or take; sent under "
              "ask_forced=on (the default)",
    "reflect": "a transfer under transfer=reflect (the bout goes back to the main attacker "
               "and the direction of play reverses)",
    "lead_more": "under lead=same_rank, the main attacker's choice to add another card of "
                 "the lead's rank or pass to end the lead",
    "throw_in_open": "under throw_in_timing=any, a throw-in while attack cards are still "
                     "uncovered",
}

#: The action type that counts as choosing a pseudo-type (``forced``: any answer).
_CHOSEN_AS = {"decline": "pass", "reflect": "transfer", "lead_more": "attack",
              "throw_in_open": "throw_in"}

SPEC_HELLO = ("a hello map {{type: hello, protocol: 1, name: <1..64 printable characters>}} "
              "within the start-up time of {startup:g} s (SPEC sections 4 and 6)")
#: What a TCP bot that never connected was to do: the wait is the one the check used.
SPEC_CONNECT = ("a connection to the check's address as seat {name} within {wait:g} s, "
                "then its hello with the seat's token within the start-up "
                "time of {startup:g} s (SPEC section 13)")
SPEC_REQUIRES = {
    "timeout": "an action message {{type: action, id: {id}, action: <one element of legal>}} "
               "within move_ms = {move_ms} ms of the request (SPEC sections 5, 6 and 10)",
    "protocol": "exactly one frame holding {{type: action, id: {id}, action: <one element of "
                "legal>}}, and nothing but frames on stdout (SPEC sections 2, 6, 7 and 12)",
    "illegal": "one element of `legal`, copied verbatim, is always legal; any other action "
               "is illegal (SPEC section 7)",
    "crash": "the bot keeps running and reading stdin for the whole match; it exits (with "
             "status 0) only after bye or at end of stdin (SPEC sections 11 and 12)",
    "disconnect": "the bot stays connected for the whole match (SPEC section 12)",
}
SPEC_ONCE = ("exactly one action per request: after answering request {id}, write nothing "
             "more until the next request arrives (SPEC section 6: one action per request)")
SPEC_ASKED = ("write an action only to answer a request that has arrived, with that request's "
              "id; before a request there is nothing to answer, and nothing but hello, actions "
              "and pongs is ever sent (SPEC sections 5 and 6)")
SPEC_LEFTOVER = ("when the bot exits after bye (or at end of stdin), every process it started "
                 "has exited too: the referee owns the bot's processes (SPEC section 12), and "
                 "a child that outlives the bot, or a daemon in a session of its own, is a "
                 "process nobody owns")

#: The settle window of a probe for frames nobody asked for, in seconds: a bot that
#: writes a second answer does so at once (usually it is read with the first), and one
#: that answers before it is asked does so as soon as game_start arrives, which gets
#: twice the window. Generous on a busy machine; every probe costs it, though.
SETTLE_S = 0.05
#: Answers per game (the first ones) after which a probe looks for a second answer.
PROBES_PER_GAME = 2
#: Games of each rule set (the first ones) that are probed: how a bot writes its frames
#: does not depend on the rules, and every probe costs its settle window. A second
#: answer written later is still caught, by the referee itself, before the next request
#: (a protocol error: the rule set fails).
PROBE_GAMES = 1
#: After the bot has exited, the processes it started get this many grace periods to
#: exit too (less than one: the referee kills the bot's group a grace period after exit).
LINGER = 0.5
#: Problems listed per conduct check (the summary counts them all).
MAX_PROBLEMS = 3

SPEC_EXIT = ("after bye and the end of stdin, exit with status 0 within the referee's grace "
             "period of {grace:g} s (SPEC section 12)")


@dataclass(frozen=True)
class TcpCheck:
    """A check over TCP: the referee listens at ``listen`` for the bot of seat ``name``,
    which connects and says hello with ``token`` (SPEC section 13), as in ``match
    --listen`` with a ``tcp:NAME`` seat; it plays every rule set on that connection."""

    name: str
    token: str
    listen: tuple[str, int] = ("127.0.0.1", 7724)
    connect_wait: float = CONNECT_WAIT_S  #: seconds to wait for the first connection
    on_tcp: Callable[[str], None] | None = None  #: operator lines (listening, refusals)


@dataclass(frozen=True)
class RuleSet:
    """One rule set the bot plays under, and the decision types it is there to reach."""

    key: str
    title: str
    preset: str
    overrides: tuple[tuple[str, str], ...]
    players: int
    targets: tuple[str, ...]

    def rules(self) -> Any:
        return make_rules(self.preset, dict(self.overrides))


_BASIC = ("attack", "cover", "take", "throw_in", "pass")

#: Every rule variant a bot may meet, each played as its own probe match: the transfer
#: modes, the lead and throw-in timings, the trump exchange, forced moves asked, every
#: deck (24, 36, 52) and every table size (MIN_SEATS to MAX_SEATS players; a 24-card deck seats at most
#: 4, which deals every card: no talon, the trump in the dealer's hand).
CONFIGS: tuple[RuleSet, ...] = (
    RuleSet("classic", "classic", "classic", (), 2, (*_BASIC, "forced")),
    RuleSet("perevodnoy", "perevodnoy (transfer)", "perevodnoy", (), 2, ("transfer",)),
    RuleSet("perevodnoy_trump", "perevodnoy_trump (show_trump)", "perevodnoy_trump", (), 2,
            ("show_trump",)),
    RuleSet("reflect", "transfer=reflect (reflection)", "classic", (("transfer", "reflect"),), 2,
            ("reflect",)),
    RuleSet("trump_exchange", "classic, trump_exchange=on", "classic", (("trump_exchange", "on"),),
            2, ("exchange", "decline")),
    RuleSet("same_rank", "classic, lead=same_rank (same-rank leads)", "classic",
            (("lead", "same_rank"),), 2, ("lead_more",)),
    RuleSet("throw_in_any", "classic, throw_in_timing=any (throw-in any time)", "classic",
            (("throw_in_timing", "any"),), 2, ("throw_in_open",)),
    RuleSet("three_players", "classic, 3 players", "classic", (), 3, _BASIC),
    RuleSet("deck24_4p", "classic, deck=24, 4 players (every card dealt)", "classic",
            (("deck", "24"),), 4, _BASIC),
    RuleSet("deck52_5p", "classic, deck=52, 5 players", "classic", (("deck", "52"),), 5, _BASIC),
    RuleSet("full_table", f"classic, {MAX_SEATS} players (the fullest table)", "classic", (), MAX_SEATS,
            _BASIC),
    RuleSet("ask_forced_off", "classic, ask_forced=off", "classic", (("ask_forced", "off"),), 2,
            ("attack", "take")),
)


# -- the report ------------------------------------------------------------------------


@dataclass
class Problem:
    """One failure or warning with its evidence."""

    kind: str
    message: str
    where: dict[str, Any] = field(default_factory=dict)
    sent: dict[str, Any] | None = None
    received: Any = None
    required: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "where": self.where,
                "sent": self.sent, "received": self.received, "required": self.required}


@dataclass
class Check:
    """One line of the verdict: ``fail`` fails the bot; ``warn`` passes with a note."""

    name: str
    status: Status
    summary: str
    problems: list[Problem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "summary": self.summary,
                "problems": [p.as_dict() for p in self.problems]}


@dataclass
class TypeStats:
    offered: int = 0   #: requests that offered the type
    answered: int = 0  #: of those, answered legally
    chosen: int = 0    #: legal answers of this type

    def as_dict(self) -> dict[str, int]:
        return {"offered": self.offered, "answered": self.answered, "chosen": self.chosen}


@dataclass
class ConfigRun:
    """What happened under one rule set."""

    key: str
    title: str
    rules: str
    players: int
    games: list[dict[str, Any]] = field(default_factory=list)
    decisions: int = 0
    covered: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failure: Problem | None = None
    exit: dict[str, Any] | None = None
    leftovers: list[dict[str, Any]] = field(default_factory=list)  #: see _Checker.leftovers
    status: Status = "skip"  #: this variant's verdict (its "games: TITLE" check)

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title, "status": self.status, "rules": self.rules,
                "players": self.players,
                "games": self.games, "decisions": self.decisions, "covered": self.covered,
                "missing": self.missing,
                "failure": self.failure.as_dict() if self.failure else None, "exit": self.exit,
                "leftovers": self.leftovers}


@dataclass
class CheckReport:
    command: list[str]
    settings: dict[str, Any]
    hello: dict[str, Any] | None = None
    checks: list[Check] = field(default_factory=list)
    coverage: dict[str, TypeStats] = field(default_factory=lambda: {t: TypeStats() for t in DECISION_TYPES})
    configs: list[ConfigRun] = field(default_factory=list)
    latency: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        """True when no check failed (warnings allowed): the CLI exits 0."""
        return all(c.status != "fail" for c in self.checks)

    @property
    def failures(self) -> list[Problem]:
        return [p for c in self.checks if c.status == "fail" for p in c.problems]

    def check(self, name: str) -> Check:
        return next(c for c in self.checks if c.name == name)

    def as_dict(self) -> dict[str, Any]:
        """The ``--json`` form."""
        return {
            "ok": self.ok, "command": self.command, "settings": self.settings, "hello": self.hello,
            "checks": [c.as_dict() for c in self.checks],
            "coverage": {t: s.as_dict() for t, s in self.coverage.items()},
            "configs": [c.as_dict() for c in self.configs],
            "variants": {c.key: c.status for c in self.configs},
            "latency": self.latency, "wall_s": round(self.wall_s, 3),
            "counts": {s: sum(1 for c in self.checks if c.status == s)
                       for s in ("pass", "warn", "fail", "skip")},
        }


# -- the tap on the bot's player ---------------------------------------------------------


@dataclass
class _Asked:
    request: dict[str, Any]
    answer: dict[str, Any] | None
    seconds: float
    failure: BotFailure | None


@dataclass
class _Unasked:
    """A frame the bot wrote while no request was open, caught by a probe."""

    when: str  #: "game_start", "answer" (after an answer was read) or "bye" (before it)
    where: dict[str, Any]
    last: dict[str, Any] | None  #: the request answered last, if any
    answer: dict[str, Any] | None  #: the answer it got
    frame: Any
    ms: float  #: when the frame was seen, after the probe began (0: already buffered)

    @property
    def double(self) -> bool:
        """A second action for the request answered last."""
        return (isinstance(self.frame, dict) and self.frame.get("type") == "action"
                and self.last is not None and self.frame.get("id") == self.last["id"])


class _Tap(Player):
    """The bot's player as the table sees it: passes everything through to the real
    player and notes each request, answer, decision time and failure in order.

    It also probes for frames nobody asked for (``settle`` seconds each, twice that
    after game_start, none when 0): after game_start (flushed before the first
    request of that game: an answer then is an answer before the question), after the
    first ``probes_per_game``
    answers of each game (a second answer), and on ``probe("bye")`` before bye. A probe
    runs when the table next awaits the bot (its next request, the end of the game),
    before the request is written, so its wait is never charged to the bot's clock
    (the inner player's ``ask.timing``). What it finds is noted in ``unasked`` and taken
    off the stream, so the game goes on as if the bot had behaved."""

    def __init__(self, inner: Player, settle: float = 0.0, probes_per_game: int = 0) -> None:
        super().__init__(inner.name, inner.spec, wants_events=inner.wants_events, info=inner.info,
                         in_process=inner.in_process)
        self.inner = inner
        self.trail: list[_Asked | tuple[str, BotFailure]] = []
        self.settle, self.probes_per_game = settle, probes_per_game
        self.context: dict[str, Any] = {}  #: where the table is, stamped on each finding
        self.unasked: list[_Unasked] = []
        self.probes = {"game_start": 0, "answer": 0, "bye": 0}
        self.last: tuple[dict[str, Any], dict[str, Any]] | None = None
        self._asked_in_game = 0
        self._games = 0  #: game_starts sent (probes are made in the first PROBE_GAMES)
        self._due: list[str] = []  #: probes to make when the table next talks to the bot

    def hear(self, frame: bytes) -> None:
        kind = decode(frame).get("type")
        try:
            self.inner.hear(frame)
        except BotFailure as exc:
            self.trail.append((str(kind), exc))
            raise
        if kind == "game_start":
            self._asked_in_game = 0
            self._games += 1
            if self._games <= PROBE_GAMES:
                self._due.append("game_start")

    async def flush(self) -> None:
        try:
            await self._probe_due()
            await self.inner.flush()
        except BotFailure as exc:
            self.trail.append(("game_end", exc))
            raise

    async def finish(self, ask: Ask) -> Any:
        request = ask.message()
        start = trio.current_time()
        try:
            await self._probe_due()
            answer = self.inner.attempt(ask)
            if answer is None:
                answer = await self.inner.finish(ask)
        except BotFailure as exc:
            self.trail.append(_Asked(request, None, trio.current_time() - start, exc))
            raise
        seen = dict(shared_wire(answer)) if type(answer) is int else answer
        self.trail.append(_Asked(request, seen, trio.current_time() - start, None))
        self.last = (request, seen)
        self._asked_in_game += 1
        if self._asked_in_game <= self.probes_per_game and self._games <= PROBE_GAMES:
            self._due.append("answer")
        return answer

    async def _probe_due(self) -> None:
        """The probes due since the table last talked to the bot, in order."""
        due, self._due = self._due, []
        for when in due:
            await self.probe(when)

    async def probe(self, when: str) -> None:
        """Write what is queued, then note every frame (pongs aside) that is already
        there or arrives within ``settle`` seconds. Raises BotFailure (protocol) for
        bytes that are not a frame."""
        inner: Any = self.inner  # a StreamPlayer: the probe reads its stream and decoder
        decoder = getattr(inner, "decoder", None)
        stream = getattr(inner, "_receive_stream", None)
        if self.settle <= 0 or decoder is None or stream is None or getattr(inner, "failure", None):
            return
        await inner.flush()
        self.probes[when] += 1
        start = trio.current_time()
        deadline = start + self.settle * (2 if when == "game_start" else 1)
        try:
            while True:
                frame = decoder.next_message()
                if frame is not None:
                    if not (isinstance(frame, dict) and frame.get("type") == "pong"):
                        last = self.last
                        self.unasked.append(_Unasked(
                            when, dict(self.context), None if last is None else last[0],
                            None if last is None else last[1], frame,
                            _ms(trio.current_time() - start)))
                    continue
                chunk = b""
                with trio.move_on_at(deadline):
                    try:
                        chunk = await stream.receive_some(READ_CHUNK)
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        pass
                if not chunk:  # the window closed, or the stream ended (the game will see it)
                    return
                decoder.feed(chunk)
        except RemoteProtocolError as exc:
            raise inner._fail("protocol", f"{exc} (written while no request was open)",
                              bytes=exc.evidence) from None


# -- helpers ---------------------------------------------------------------------------------


def offered_types(request: dict[str, Any]) -> set[str]:
    """The decision types a request offers (pseudo-types included)."""
    legal = request["legal"]
    types = {a["type"] for a in legal}
    if request["observation"]["phase"] == "exchange":
        types.add("decline")
    if len(legal) == 1 and legal[0]["type"] in ("pass", "take"):
        types.add("forced")
    obs = request["observation"]
    if "transfer" in types and "direction" in obs:  # observations hold it under reflect only
        types.add("reflect")
    if obs["phase"] == "attack" and obs["table"]:  # the lead so far is on the table
        types.add("lead_more")
    if "throw_in" in types and any(cover is None for _, cover in obs["table"]):
        types.add("throw_in_open")
    return types


def _wire_text(action: dict[str, Any]) -> str:
    try:
        return action_str(action_from_wire(action))
    except MalformedAction:
        return repr(action)


def short_request(request: dict[str, Any]) -> dict[str, Any]:
    """A request in a few words: id, phase, hand, table, legal (as text)."""
    obs = request["observation"]
    return {"request": request["id"], "game": request["game"], "seat": obs["seat"],
            "phase": obs["phase"] + (" (defender taking)" if obs.get("taking") else ""),
            "hand": obs["hand"], "table": obs["table"],
            "legal": [_wire_text(a) for a in request["legal"]], "clock": request["clock"]}


def _command_spec(argv: list[str]) -> BotSpec:
    """The bot's spec, named as ``durak-ref match`` names an unnamed command (until its
    hello names it)."""
    text = shlex.join(argv)
    try:
        spec = parse_bot_spec(text)
    except ValueError:
        spec = None
    name = spec.name if spec is not None and spec.kind == "command" and list(spec.argv) == argv else "bot"
    return BotSpec("command", name, tuple(argv), text)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


# -- the check ------------------------------------------------------------------------------


class _Checker:
    def __init__(self, argv: Sequence[str], games_per_config: int, move_time: float,
                 startup_time: float, grace: float, seed: int, configs: Sequence[RuleSet],
                 on_progress: Callable[[str], None] | None, settle: float = SETTLE_S,
                 probes_per_game: int = PROBES_PER_GAME, sandbox: Sandbox | None = None,
                 on_phase: Callable[[str], None] | None = None,
                 tcp: TcpCheck | None = None) -> None:
        self.argv = list(argv)
        self.tcp = tcp
        self.tcp_seat: Any = None  #: the one TcpSeat of a check over TCP
        self.settle, self.probes_per_game = settle, probes_per_game
        self.linger = LINGER * grace
        self.sandbox = (sandbox or Sandbox()).resolve()
        self.budget = games_per_config
        self.move_time, self.startup_time, self.grace, self.seed = move_time, startup_time, grace, seed
        self.rule_sets = list(configs)
        self.on_progress = on_progress or (lambda text: None)
        self.on_phase = on_phase or (lambda text: None)
        self.spec = _command_spec(self.argv)
        self.report = CheckReport(self.argv, {
            "games_per_config": games_per_config, "move_time_s": move_time,
            "startup_time_s": startup_time, "grace_s": grace, "seed": seed,
            "configs": [c.key for c in self.rule_sets], "settle_ms": _ms(settle),
            "probes_per_game": probes_per_game, "linger_s": self.linger,
            "sandbox": self.sandbox.mode})
        self.times: list[float] = []
        self.handshake: Check | None = None
        self.exits: list[tuple[str, dict[str, Any]]] = []
        self.unasked: list[_Unasked] = []
        self.probes = {"game_start": 0, "answer": 0, "bye": 0}
        self.watch: Watch | None = None  #: None where leftovers cannot be tracked
        self.processes = 0  #: bot processes whose leftovers were looked for

    async def run(self) -> CheckReport:
        with subreaper() as tracking:
            if tracking:
                self.watch = Watch()
            return await self._run()

    async def _run(self) -> CheckReport:
        start = trio.current_time()
        start_error: BotStartError | None = None
        async with trio.open_nursery() as nursery:
            try:
                if self.tcp is not None:
                    await self.open_tcp(nursery)
                total = len(self.rule_sets)
                for number, rule_set in enumerate(self.rule_sets, 1):
                    await self.run_rule_set(rule_set, nursery)
                    if self.handshake is not None and self.handshake.status == "fail":
                        break
                    self.on_phase(f"variant {number}/{total}: {self.phase_line(self.report.configs[-1])}")
            except BotStartError as exc:
                start_error = exc  # raised below, outside the nursery, as itself
            finally:
                if self.tcp_seat is not None:
                    await self.tcp_seat.close()  # bye, then the gate closes the connection
            nursery.cancel_scope.cancel()  # the closed bots' reader tasks may still wait
        if start_error is not None:
            raise start_error
        self.finish()
        self.report.wall_s = trio.current_time() - start
        return self.report

    async def open_tcp(self, nursery: trio.Nursery) -> None:
        """Listen for the bot (as ``match --listen`` does for a ``tcp:NAME`` seat): one
        seat, one connection for every rule set, the start-up time as handshake time."""
        from ..seats.tcp import TcpSeat
        from ..table.runner import open_gate
        assert self.tcp is not None
        seat = TcpSeat(self.tcp.name, wait_s=self.tcp.connect_wait)
        options = SeatOptions(listen=self.tcp.listen, tokens=((self.tcp.name, self.tcp.token),))
        await open_gate([seat], options, nursery, self.tcp.on_tcp, self.startup_time)
        self.tcp_seat = seat

    # -- one rule set: one match, one bot process

    async def run_rule_set(self, rs: RuleSet, nursery: trio.Nursery) -> None:
        rules = rs.rules()
        rules.check_table(rs.players)
        config = MatchConfig(rules=rules, games=self.budget, seed=str(self.seed),
                             tc=TimeControl(move=self.move_time, startup=self.startup_time),
                             illegal_retries=0, max_restarts=0)
        run = ConfigRun(rs.key, rs.title, rules.describe(), rs.players)
        self.report.configs.append(run)
        # The opponents: the built-ins greedy and random, alternating, one per other seat.
        specs = [self.spec] + [parse_bot_spec(("builtin:greedy", "builtin:random")[i % 2])
                               for i in range(max(rs.players - 1, 2))]
        if self.tcp_seat is not None:  # over TCP: the one connection plays every rule set
            specs = specs[1:]
        players = make_players(specs, config, stderr_stem=None,
                               options=SeatOptions(grace=self.grace), sandbox=self.sandbox)
        bot, *opponents = [self.tcp_seat, *players] if self.tcp_seat is not None else players
        # What would outlive the bot's process group on a host without cgroups is what
        # the check reports: the group's own kill waits until it has looked.
        if isinstance(bot, ProcessPlayer):
            bot.sweep_group = self.watch is None
        tap: _Tap | None = None
        lingering: dict[int, ProcInfo] = {}
        try:
            if not await self.start(bot, run, nursery):
                return
            hello_name = bot.info.get("name") or "bot"
            # The built-ins keep their names (greedy, random, greedy#2, ...); the bot's
            # hello name never takes one of them.
            for player, name in zip(opponents, unique_names([p.spec.name for p in opponents]), strict=True):
                player.name = name
            bot.name = free_name(hello_name, {p.name for p in opponents})
            tap = _Tap(bot, self.settle, self.probes_per_game)
            await self.play(rs, run, config, tap, opponents)
        finally:
            if self.watch is not None:
                self.watch.ignore(getattr(bot, "pid", None))  # trio reaps the bot itself
            if tap is not None and run.failure is None:
                await self.last_probe(rs, run, tap)
            if bot is self.tcp_seat:
                pass  # its exit is its own (SPEC section 13); closed after the last rule set
            elif run.failure is None and self.handshake is not None and self.handshake.status != "fail":
                run.exit, lingering = await self.close_and_watch_exit(bot)
                self.exits.append((rs.title, run.exit))
            else:
                await bot.close()
            if tap is not None:
                self.unasked += tap.unasked
                for when, count in tap.probes.items():
                    self.probes[when] += count
            await self.leftovers(run, bot, lingering)
            if isinstance(bot, ProcessPlayer):
                await bot.sweep_groups()

    async def start(self, bot: Any, run: ConfigRun, nursery: trio.Nursery) -> bool:
        """Start the bot; the first start is the handshake check. False if it failed."""
        start = trio.current_time()
        try:
            if bot is self.tcp_seat and self.handshake is not None:
                await bot.prepare_game(0)  # after a failure: a reconnection, within wait_s
                if bot.failure is not None:
                    raise bot.failure
                return True
            await bot.start(nursery)
            if bot is self.tcp_seat:
                bot.wait_s = self.startup_time  # a later reconnection gets the start-up time
        except BotFailure as exc:
            absent = bot is self.tcp_seat and not bot.connected  # no hello was ever sent
            sent = None if absent else {"message": "hello", "protocol": 1, "versions": [1]}
            required = (SPEC_CONNECT.format(name=bot.name, wait=bot.wait_s, startup=self.startup_time)
                        if absent else SPEC_HELLO.format(startup=self.startup_time))
            problem = Problem(exc.kind, f"handshake failed: {exc.reason}", {"config": run.key},
                              sent=sent, received=exc.evidence, required=required)
            run.failure = problem
            if self.handshake is None:
                self.handshake = Check("handshake", "fail", problem.message, [problem])
                self.on_phase(f"handshake: fail: {problem.message}")
            return False
        seconds = trio.current_time() - start
        if self.handshake is None:
            info = dict(bot.info)
            self.report.hello = dict(info, protocol=1, handshake_ms=_ms(seconds))
            missing = [k for k in ("version", "author") if not info.get(k)]
            summary = (f"hello in {seconds * 1000:.1f} ms: name {info['name']!r}, protocol 1"
                       + (f", version {info['version']!r}" if info.get("version") else "")
                       + (f", author {info['author']!r}" if info.get("author") else ""))
            problems = [Problem("hello", f"the hello has no {k!r} (optional, but shown in "
                                f"tournament tables and logs)", required="SPEC section 6: "
                                f"hello.{k} is an optional str of up to 256 characters")
                        for k in missing]
            if missing:
                summary += f"; no {' and no '.join(missing)} (optional)"
            self.handshake = Check("handshake", "warn" if missing else "pass", summary, problems)
            self.on_phase(f"handshake: {self.handshake.status}: {summary}")
        return True

    async def play(self, rs: RuleSet, run: ConfigRun, config: MatchConfig, tap: _Tap,
                   opponents: list[Player]) -> None:
        n = rs.players
        rules = config.rules
        local = {t: TypeStats() for t in DECISION_TYPES}
        for index in range(self.budget):
            seed = deal_id(f"check-bot:{rs.key}", index)  # keyed by config.seed (--seed)
            dealer = (first_dealer(n) + index) % n
            seat = index % n
            if rules.trump_exchange:
                # Sit the bot where the exchange is offered, if it is offered this deal.
                peek = Game.new(rules, n, deck=deal_deck(config.seed, seed, rules.deck),
                                dealer=dealer)
                if peek.observe(0)["phase"] == "exchange" and peek.current_seat is not None:
                    seat = peek.current_seat
            # Seats rotate; opponents alternate so the first two games meet both built-ins.
            others = opponents[:n - 1] if (index + index // n) % 2 == 0 else opponents[::-1][:n - 1]
            table: list[Player] = list(others)
            table.insert(seat, tap)
            tap.trail = []
            tap.context = {"config": rs.key, "rules": rs.title, "game": index, "seed": seed,
                           "seat": seat}
            record = await play_game(table, config, index=index, seed=seed, dealer=dealer)
            asked = [t for t in tap.trail if isinstance(t, _Asked)]
            forfeit = record.forfeit if record.forfeit and record.forfeit["seat"] == seat else None
            culprit = self.culprit(tap.trail, forfeit)
            for item in asked:
                accepted = item is not culprit and item.failure is None
                if item.answer is not None:
                    self.times.append(item.seconds)
                types = offered_types(item.request)
                chosen = item.answer.get("type") if accepted and item.answer else None
                for stats in (self.report.coverage, local):
                    for t in types:
                        stats[t].offered += 1
                        if accepted:
                            stats[t].answered += 1
                            if t == chosen or t == "forced" or _CHOSEN_AS.get(t) == chosen:
                                stats[t].chosen += 1
            run.decisions += len(asked)
            run.games.append({"game": index, "seed": seed, "seat": seat,
                              "players": [p.name for p in table], "termination": record.termination,
                              "durak": record.durak, "asked": len(asked)})
            if forfeit is not None:
                run.failure = self.problem(rs, index, seed, forfeit, culprit)
            run.covered = [t for t in rs.targets if local[t].answered]
            run.missing = [t for t in rs.targets if not local[t].answered]
            self.on_progress(f"{rs.title}: game {index + 1}, covered "
                             f"{len(run.covered)}/{len(rs.targets)}"
                             + (f", FAILED ({forfeit['kind']})" if forfeit else ""))
            if forfeit is not None or (not run.missing and index + 1 >= n):
                return

    @staticmethod
    def culprit(trail: list[Any], forfeit: dict[str, Any] | None) -> Any:
        """What the bot's forfeit is about: the first failed request or send, else (an
        answer the referee refused: illegal, malformed, late) the last answer."""
        if forfeit is None:
            return None
        for item in trail:
            if isinstance(item, tuple) or item.failure is not None:
                return item
        asked = [t for t in trail if isinstance(t, _Asked)]
        return asked[-1] if asked else None

    def problem(self, rs: RuleSet, index: int, seed: str, forfeit: dict[str, Any],
                culprit: Any) -> Problem:
        kind = forfeit["kind"]
        where = {"config": rs.key, "rules": rs.title, "game": index, "seed": seed,
                 "seat": forfeit["seat"], "decision": forfeit["decision"]}
        if isinstance(culprit, _Asked):
            sent: dict[str, Any] = short_request(culprit.request)
            rid = culprit.request["id"]
            move_ms = culprit.request["clock"].get("move_ms")
            where["request"] = rid
        else:
            sent = {"message": culprit[0]} if isinstance(culprit, tuple) else {}
            rid, move_ms = "<the request's id>", _ms(self.move_time)
        template = SPEC_REQUIRES.get(kind, SPEC_REQUIRES["protocol"])
        return Problem(kind, forfeit["reason"], where, sent=sent, received=forfeit["evidence"],
                       required=template.format(id=rid, move_ms=move_ms))

    async def last_probe(self, rs: RuleSet, run: ConfigRun, tap: _Tap) -> None:
        """After the last game, before bye: a last look for a second answer."""
        tap.context = dict(tap.context, after="the last game")
        try:
            with trio.CancelScope(shield=True):
                await tap.probe("bye")
        except BotFailure as exc:
            run.failure = Problem(exc.kind, exc.reason, dict(tap.context),
                                  sent={"message": "game_end", "then": "nothing"},
                                  received=exc.evidence, required=SPEC_REQUIRES["protocol"].format(
                                      id="<the request's id>", move_ms=_ms(self.move_time)))

    async def close_and_watch_exit(self, bot: Any) -> tuple[dict[str, Any], dict[int, ProcInfo]]:
        """Close the bot as the referee does at a match's end (bye, stdin closed, grace,
        SIGTERM, SIGKILL for its process group) and note when and how it exited; and,
        if it exited, which processes it started still ran ``linger`` seconds later
        (looked for before the referee kills the bot's group, which would hide them)."""
        process = bot.conn.process if getattr(bot, "conn", None) is not None else None
        if process is None:
            await bot.close()
            return {"ok": False, "exit_code": None, "after_bye_ms": None}, {}
        lingering: dict[int, ProcInfo] = {}
        start = trio.current_time()
        with trio.CancelScope(shield=True):  # like bot.close(): this must finish the job
            with trio.move_on_after(self.grace):
                try:
                    await bot.send(msg.bye_msg())  # written at once
                except BotFailure:
                    pass
            try:
                await process.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
            with trio.move_on_after(self.grace):
                await process.wait()
            exited = trio.current_time() if process.returncode is not None else None
            if exited is not None and self.watch is not None:
                lingering = await self.watch.wait_gone(self.linger)
            await bot.close()  # the rest of the referee's sequence; reaps the process
        after = None if exited is None else exited - start
        code = process.returncode
        in_time = after is not None
        return ({"ok": code == 0 and in_time, "exit_code": code,
                 "after_bye_ms": None if after is None else _ms(after), "in_grace": in_time},
                lingering)

    async def leftovers(self, run: ConfigRun, bot: Any, lingering: dict[int, ProcInfo]) -> None:
        """After the bot process is gone: note every process it left (``lingering``: still
        running ``linger`` s after the bot exited; and whatever still runs now, after the
        referee killed the bot's process group), then kill and reap them all."""
        watch = self.watch
        if watch is None or getattr(bot, "pid", None) is None:
            return
        self.processes += 1
        with trio.CancelScope(shield=True):
            # A process just killed with the bot's group needs a moment to be gone.
            survivors = await watch.wait_gone(self.linger)
            killed = {p.pid for p in await watch.kill_all()} if survivors else set()
        me = os.getpid()
        for pid, p in {**lingering, **survivors}.items():
            run.leftovers.append(dict(
                p.as_dict(), bot_pid=bot.pid, own_session=p.sid != bot.pid,
                reparented=p.ppid == me, after_exit=pid in lingering,
                survived_group_kill=pid in survivors, killed_by_check_bot=pid in killed))

    # -- the verdict

    def finish(self) -> None:
        r = self.report
        handshake = self.handshake or Check("handshake", "skip", "no rule set was run")
        r.checks.append(handshake)
        started = handshake.status != "fail"
        for run in r.configs if started else ():
            check = self.config_check(run)
            run.status = check.status
            r.checks.append(check)
        if started:
            r.checks.extend(self.type_check(t) for t in DECISION_TYPES)
        else:
            r.checks.append(Check("decision types", "skip", "the handshake failed"))
        r.checks.append(self.latency_check())
        r.checks.append(self.exit_check())
        r.checks.extend(self.conduct_checks())
        r.checks.append(self.leftover_check())

    def phase_line(self, run: ConfigRun) -> str:
        """One progress line for a finished rule set: its verdict so far and its games."""
        check = self.config_check(run)
        return f"{run.title}: {check.status}: {check.summary}"

    def config_check(self, run: ConfigRun) -> Check:
        name = f"games: {run.title}"
        games = len(run.games)
        text = f"{games} game{'s' * (games != 1)}, {run.decisions} decisions"
        if run.failure is not None:
            return Check(name, "fail", f"{text}; {run.failure.kind} in game "
                         f"{run.failure.where.get('game', '-')}: {run.failure.message}", [run.failure])
        if run.missing:
            return Check(name, "warn", f"{text}; not reached: {', '.join(run.missing)}")
        return Check(name, "pass", f"{text}; reached {', '.join(run.covered)}")

    def type_check(self, t: str) -> Check:
        s = self.report.coverage[t]
        name = f"decision: {t}"
        counts = (f"offered in {s.offered} request{'s' * (s.offered != 1)}, answered {s.answered}, "
                  f"chosen {s.chosen}")
        if s.answered:
            return Check(name, "pass", counts)
        if s.offered:
            return Check(name, "fail", f"{counts}: never answered legally (see the failures)")
        stopped = [c.title for c in self.report.configs if c.failure is not None and t in
                   next((rs.targets for rs in self.rule_sets if rs.key == c.key), ())]
        games = sum(len(c.games) for c in self.report.configs)
        reason = f"never offered in {games} games ({WHERE_OFFERED[t]})"
        if stopped:
            reason += f"; the rule set meant to reach it stopped at a failure: {', '.join(stopped)}"
        return Check(name, "warn", "not reached: " + reason,
                     [Problem("not_reached", reason, {"type": t})])

    def latency_check(self) -> Check:
        times = self.times
        if not times:
            self.report.latency = {"decisions": 0, "median_ms": None, "worst_ms": None,
                                   "limit_ms": _ms(self.move_time)}
            return Check("latency", "skip", "no decision was answered")
        median, worst = statistics.median(times), max(times)
        self.report.latency = {"decisions": len(times), "median_ms": _ms(median),
                               "worst_ms": _ms(worst), "limit_ms": _ms(self.move_time)}
        text = (f"median {median * 1000:.2f} ms, worst {worst * 1000:.2f} ms over {len(times)} decisions "
                f"(limit {self.move_time:g} s per decision)")
        if worst > self.move_time / 2:
            return Check("latency", "warn", text + "; the worst is over half the limit",
                         [Problem("slow", "the slowest decision used over half the move limit",
                                  received={"worst_ms": _ms(worst)},
                                  required=f"every decision within move_ms = {_ms(self.move_time):g} ms")])
        return Check("latency", "pass", text)

    def exit_check(self) -> Check:
        name = "exit after bye"
        if not self.exits:
            return Check(name, "skip", "no match ended cleanly, so no exit was checked")
        bad = [(title, e) for title, e in self.exits if not e["ok"]]
        required = SPEC_EXIT.format(grace=self.grace)
        if bad:
            problems = []
            for title, e in bad:
                code, after = e["exit_code"], e["after_bye_ms"]
                if not e.get("in_grace"):
                    how = (f"still running {self.grace:g} s after bye; stopped by the referee "
                           f"(exit status {code})")
                else:
                    how = f"exited with status {code} {after:g} ms after bye"
                problems.append(Problem("exit", how, {"rules": title},
                                        sent={"message": "bye", "then": "stdin closed"},
                                        received=e, required=required))
            return Check(name, "fail", f"{len(bad)} of {len(self.exits)} processes: "
                         + problems[0].message, problems)
        worst = max(e["after_bye_ms"] for _, e in self.exits)
        return Check(name, "pass", f"{len(self.exits)} processes exited with status 0 "
                     f"(at most {worst:.1f} ms after bye)")


    _WHEN = {"game_start": "after game_start, before any request of that game",
             "answer": "right after its answer was read, before the next message",
             "bye": "after the last game had ended, before bye"}

    _AGAIN = {"game_start": "after its game had ended, seen after the next game_start",
              "answer": "right after the first was read, before the next message",
              "bye": "after the last game had ended, before bye"}

    def conduct_checks(self) -> list[Check]:
        """"one answer per request" and "no answer before request", from the probes."""
        probes = sum(self.probes.values())
        window = f"{probes} probes of {self.settle * 1000:g} ms (twice that after game_start)"
        if not probes:
            return [Check(name, "skip", "no probe was made (no game was played)")
                    for name in ("one answer per request", "no answer before request")]
        def verdict(name: str, found: list[_Unasked], problem: Callable[[_Unasked], Problem],
                    noun: str, rest: str, passed: str) -> Check:
            if not found:
                return Check(name, "pass", passed)
            problems = [problem(u) for u in found[:MAX_PROBLEMS]]
            return Check(name, "fail", f"{len(found)} {noun}{'s' * (len(found) != 1)}{rest} in {window}: "
                         + problems[0].message, problems)

        return [
            verdict("one answer per request", [u for u in self.unasked if u.double], self.double_problem,
                    "second answer", "", f"no second answer in {window}: {self.probes['answer']} after "
                    f"answers, {self.probes['game_start']} after game_start, {self.probes['bye']} before bye"),
            verdict("no answer before request", [u for u in self.unasked if not u.double], self.early_problem,
                    "frame", " nobody asked for", f"nothing written unasked in {window}, "
                    f"{self.probes['game_start']} of them after game_start"),
        ]

    def double_problem(self, u: _Unasked) -> Problem:
        assert u.last is not None
        rid = u.last["id"]
        seen = "in the same read as the first" if u.ms == 0 else f"{u.ms:g} ms into the probe"
        return Problem(
            "double_answer", f"answered request {rid} twice: a second action "
            f"{_wire_text(u.frame.get('action'))} came {self._AGAIN[u.when]} ({seen})",
            dict(u.where, request=rid), sent=short_request(u.last),
            received={"first": u.answer, "second": brief(u.frame), "probe": u.when,
                      "after_ms": u.ms}, required=SPEC_ONCE.format(id=rid))

    def early_problem(self, u: _Unasked) -> Problem:
        frame = u.frame
        kind = frame.get("type") if isinstance(frame, dict) else None
        if kind == "action":
            what = (f"wrote an action for request {frame.get('id')!r} "
                    f"({_wire_text(frame.get('action'))}) {self._WHEN[u.when]}, when no request "
                    f"with that id had been sent")
        else:
            what = f"wrote a {kind or type(frame).__name__!r} message {self._WHEN[u.when]}, " \
                   f"when nothing was asked"
        last = {"game_start": "game_start", "bye": "game_end"}.get(u.when)
        sent = ({"message": last, "then": "check-bot waited, sending nothing"} if last
                else short_request(u.last) if u.last else None)
        return Problem("early_answer" if kind == "action" else "unasked", what, dict(u.where),
                       sent=sent, received={"frame": brief(frame), "probe": u.when,
                                            "after_ms": u.ms}, required=SPEC_ASKED)

    def leftover_check(self) -> Check:
        name = "no processes left"
        if self.watch is None:
            return Check(name, "skip", "cannot follow the bot's processes here (needs Linux: "
                         "/proc and PR_SET_CHILD_SUBREAPER)")
        if not self.processes:
            return Check(name, "skip", "no bot process was started")
        problems = []
        for run in self.report.configs:
            for left in run.leftovers:
                when = []
                if left["after_exit"]:
                    when.append(f"still running {self.linger:g} s after the bot exited")
                if left["survived_group_kill"]:
                    when.append("still running after the referee killed the bot's process group")
                how = (f"in a session of its own (sid {left['sid']}), re-parented away from the bot"
                       if left["own_session"] else "in the bot's process group")
                end = ("check-bot killed it" if left["killed_by_check_bot"] else
                       "the referee's kill of the bot's process group ended it")
                problems.append(Problem(
                    "leftover", f"pid {left['pid']} ({left['cmdline']}), started by the bot, was "
                    f"{' and '.join(when)}; {how}; {end}",
                    {"config": run.key, "rules": run.title}, sent={"message": "bye",
                                                                    "then": "stdin closed"},
                    received=left, required=SPEC_LEFTOVER))
        if problems:
            return Check(name, "fail", f"{len(problems)} process{'es' * (len(problems) != 1)} left "
                         f"behind: " + problems[0].message, problems)
        return Check(name, "pass", f"{self.processes} bot process{'es' * (self.processes != 1)}: "
                     f"nothing they started was left running")


async def check_bot(argv: Sequence[str], *, games_per_config: int = 40, move_time: float = 5.0,
                    startup_time: float = 10.0, grace: float = 1.0, seed: int = 1,
                    configs: Sequence[RuleSet] = CONFIGS,
                    on_progress: Callable[[str], None] | None = None,
                    settle: float = SETTLE_S, probes_per_game: int = PROBES_PER_GAME,
                    sandbox: Sandbox | None = None,
                    on_phase: Callable[[str], None] | None = None,
                    tcp: TcpCheck | None = None) -> CheckReport:
    """Run the conformance check of the bot started by ``argv`` (see the module docstring).

    ``settle`` and ``probes_per_game`` tune the probes for unasked frames (0: none).
    ``on_progress`` is told of every game; ``on_phase`` of every finished phase (the
    handshake, then each rule set with its verdict so far), one line each.
    While it runs, this process is a child subreaper (see referee.seats.leftovers).

    Raises BotStartError if the program cannot be started at all (not found, not
    executable): the user's command is at fault, as for ``durak-ref match``; and
    TimeControlError for a non-positive ``move_time`` or ``startup_time``; SandboxError
    when ``sandbox`` (default: auto) cannot be used.
    """
    if not argv:
        raise ValueError("check_bot needs a command line")
    if games_per_config < 1:
        raise ValueError("games_per_config must be at least 1")
    tc = TimeControl.parse(None, move_time, startup_time)  # raises TimeControlError
    assert tc.move is not None
    checker = _Checker(argv, games_per_config, tc.move, tc.startup, grace, seed, configs,
                       on_progress, settle, probes_per_game, sandbox, on_phase, tcp)
    return await checker.run()


def check_bot_sync(argv: Sequence[str], **kwargs: Any) -> CheckReport:
    """Synchronous entry point: ``check_bot`` under ``trio.run``."""
    return trio.run(lambda: check_bot(argv, **kwargs),
                    restrict_keyboard_interrupt_to_checkpoints=True)


# -- rendering --------------------------------------------------------------------------------

_STYLE = {"pass": ("PASS", "green"), "warn": ("WARN", "yellow"), "fail": ("FAIL", "bold red"),
          "skip": ("SKIP", "dim")}


def render(report: CheckReport, console: Any) -> None:
    """Print the report for a human: the checks, every failure with its evidence, the verdict."""
    from rich.table import Table
    from rich.text import Text

    console.print(Text(f"durak-ref check-bot: {shlex.join(report.command)}", style="bold"))
    if report.hello:
        h = report.hello
        console.print(Text(f"bot: {h.get('name')} {h.get('version') or ''} "
                           f"(author: {h.get('author') or '-'}), protocol {h.get('protocol')}"))
    table = Table(show_header=True, header_style="bold", expand=False)
    table.add_column("check")
    table.add_column("result")
    table.add_column("details", overflow="fold")
    for c in report.checks:
        label, style = _STYLE[c.status]
        table.add_row(c.name, Text(label, style=style), Text(c.summary))
    console.print(table)
    failures = report.failures
    if failures:
        console.print(Text(f"Failures ({len(failures)}):", style="bold red"))
        for i, p in enumerate(failures, 1):
            where = ", ".join(f"{k} {v}" for k, v in p.where.items() if k != "rules")
            console.print(Text(f"{i}. [{p.kind}] {p.message}", style="red"))
            if where:
                console.print(Text(f"   where:    {where}"))
            if p.sent:
                console.print(Text(f"   sent:     {_brief(p.sent)}"))
            console.print(Text(f"   received: {_brief(p.received)}"))
            if p.required:
                console.print(Text(f"   required: {p.required}"))
    warns = sum(1 for c in report.checks if c.status == "warn")
    if report.ok:
        console.print(Text(f"PASSED ({warns} warning{'s' * (warns != 1)}) in {report.wall_s:.1f} s",
                           style="bold green"))
    else:
        failed = sum(1 for c in report.checks if c.status == "fail")
        console.print(Text(f"FAILED: {failed} of {len(report.checks)} checks failed "
                           f"({report.wall_s:.1f} s)", style="bold red"))


def _brief(value: Any, limit: int = 400) -> str:
    import json
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + " ..."
