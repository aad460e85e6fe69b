"""Message types of protocol v1: validation of what arrives, constructors for what leaves.

Each message's fields are declared once, below, as a ``fields.Record`` (names, order,
types, which are optional): ``REQUEST``, ``OBSERVATION``, ``CLOCK``, ``GAME_START``,
``EVENT`` and each event type's fields (``EVENTS``), ``GAME_END``, ... The constructors
(``hello_msg``, ``request_msg``, ...) build their maps from them, ``parse_referee_message``
checks by them, ``protocol/schema.py`` writes them out, and the referee joins its frames
from their packed parts (``referee/table/requests.py``), so a field changes in one place.

Bot -> referee (``hello``, ``action``, ``pong``) is validated strictly into frozen dataclasses,
because a bot's mistakes must become a precise ``RemoteProtocolError`` naming the field:
``"action.card: expected a card like '6S', got 'X9'"``. The SDK checks what the referee
sends with ``parse_referee_message``.

Rules shared by every message: it is a map with a str ``type``; an unknown ``type`` is an
error; unknown keys are ignored (forward compatibility) and dropped from parsed results.

Validation is structural only. Whether an action is legal now is the rules engine's call:
a well-formed ``{"type": "cover", "slot": 5, "card": "AS"}`` parses fine here even if slot
5 is empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from protocol.cards import parse_card_text
from protocol.errors import LocalProtocolError, RemoteProtocolError, UnsupportedVersionError
from protocol.fields import (
    CARDS,
    AnyMap,
    Array,
    Card,
    Choice,
    Field,
    Flag,
    Int,
    Pair,
    Record,
    Ref,
    Suit,
    Text,
    bad,
    describe,
    join,
)

PROTOCOL_VERSION = 1
"""The protocol version this code speaks by default."""

SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
"""Every protocol version this code can speak."""

BOT_MESSAGE_TYPES = ("hello", "action", "pong")
"""Message types a bot may send."""

REFEREE_MESSAGE_TYPES = (
    "hello", "game_start", "event", "request", "game_end", "error", "bye", "ping",
)
"""Message types the referee sends."""

ACTION_TYPES = (
    "attack", "cover", "throw_in", "transfer", "show_trump", "take", "pass", "exchange",
)
"""Every action ``type``, in the order the spec lists them."""

CARD_ACTIONS = frozenset({"attack", "cover", "throw_in", "transfer", "show_trump"})
"""Action types that carry a ``card``; ``cover`` also carries a ``slot``."""

EVENT_TYPES = (
    "attack", "cover", "throw_in", "transfer", "show_trump", "take", "pass", "exchange",
    "decline", "bout_end", "draw", "out",
)
"""Event types of protocol v1. The SDK tolerates others (events are informational)."""

PHASES = ("attack", "defend", "throw_in", "exchange")
"""Values of ``observation.phase``."""

TERMINATIONS = (
    "normal", "draw", "stalemate", "action_cap", "timeout", "crash", "protocol", "illegal",
    "disconnect", "adjudicated",
)
"""Values of ``game_end.termination``."""

ERROR_CODES = ("protocol", "illegal", "version", "timeout", "stale", "auth", "busy", "limit")
"""Values of ``error.code``."""

REFUSAL_CODES = ("version", "auth", "busy", "limit")
"""Error codes that refuse the connection itself (always ``fatal``; the referee closes the
connection after sending one). ``auth``, ``busy`` and ``limit`` occur only over TCP."""

MAX_NAME_LENGTH = 64
"""Longest bot name accepted in a hello, in characters."""

MAX_TEXT_LENGTH = 256
"""Longest ``version``, ``author`` or ``token`` accepted in a hello, in characters."""


# -- bot -> referee: parsed forms ---------------------------------------------------------


@dataclass(frozen=True)
class BotHello:
    """A bot's hello. ``protocol`` is whatever version the bot asked for: check it with
    ``check_version``. Optional fields the bot left out are None."""

    protocol: int
    name: str
    version: str | None = None
    author: str | None = None
    token: str | None = None


@dataclass(frozen=True)
class ActionMessage:
    """A bot's answer to request ``id``. ``action`` is the canonical action map (keys in
    the order ``type``, ``slot``, ``card``; cards in canonical text; unknown keys dropped),
    so it compares equal to the matching element of the request's ``legal`` list."""

    id: int
    action: dict[str, Any]


@dataclass(frozen=True)
class Pong:
    """A bot's answer to the referee's ``ping`` carrying the same ``id``."""

    id: int


__all__ = ["describe"]  # (re-exported: bot authors' tools describe values as the errors do)


# -- actions -------------------------------------------------------------------------------


def _card_field(message: Mapping[str, Any], key: str, path: str) -> str:
    if key not in message:
        raise bad(join(path, key), "missing; expected a card like '6S'")
    value = message[key]
    try:
        return parse_card_text(value)
    except ValueError:
        raise bad(join(path, key), f"expected a card like '6S', got {describe(value)}") from None


def parse_action(value: object, field: str = "action") -> dict[str, Any]:
    """The canonical form of an action map (see ``ActionMessage.action``).

    ``field`` is the path used in error messages. Raises ``RemoteProtocolError`` naming
    the exact field: ``"action.slot: expected a non-negative integer, got 'a'"``.
    """
    if type(value) is not dict:
        raise bad(field, f"expected an action map like {{'type': 'take'}}, got {describe(value)}")
    if "type" not in value:
        raise bad(join(field, "type"), f"missing; expected one of: {', '.join(ACTION_TYPES)}")
    kind = value["type"]
    if type(kind) is not str or kind not in ACTION_TYPES:
        raise bad(
            join(field, "type"),
            f"unknown action type {describe(kind)}; expected one of: {', '.join(ACTION_TYPES)}",
        )
    if kind not in CARD_ACTIONS:
        return {"type": kind}
    if kind == "cover":
        slot = value.get("slot")
        if "slot" not in value:
            raise bad(join(field, "slot"), "missing; expected a non-negative integer")
        _NAT.check(slot, join(field, "slot"))
        return {"type": kind, "slot": slot, "card": _card_field(value, "card", field)}
    return {"type": kind, "card": _card_field(value, "card", field)}


# -- the declarations: every message's fields, in wire order --------------------------------

_NAT = Int(0)
#: The engine's seat bound (referee/rules/options.py MIN_SEATS, MAX_SEATS) on the wire: the
#: protocol may not import the engine, so tests/app/test_seat_bound.py holds the two equal.
_SEATS = Int(2, maximum=6)
_ACTION = Ref("action", parse_action, "an action map")
_MS = Int(nullable=True, expected="an integer (milliseconds) or nil")
_FORCED = Field("forced", Flag(), optional=True, private=True)
"""On an action event: the move was forced (``ask_forced: false``), only in the mover's copy."""

CLOCK = Record(None, [Field("remaining_ms", _MS), Field("increment_ms", _MS), Field("move_ms", _MS)])
"""A request's ``clock``, in whole milliseconds; nil where no limit applies."""

OBSERVATION = Record(None, [
    Field("seat", _NAT), Field("players", _SEATS), Field("dealer", _NAT), Field("hand", CARDS),
    Field("trump", Card()), Field("trump_suit", Suit()), Field("trump_holder", Int(nullable=True)),
    Field("talon", _NAT), Field("table", Array(Pair(Card(), Card(nullable=True)))),
    Field("discard", CARDS), Field("hand_sizes", Array(_NAT)), Field("out", Array(Flag())),
    Field("attacker", _NAT), Field("defender", _NAT), Field("phase", Choice(PHASES)),
    Field("taking", Flag()), Field("bout", _NAT), Field("transfers", _NAT),
    Field("attack_limit", _NAT), Field("known", Array(CARDS)), Field("shown", CARDS),
    Field("direction", Choice(("clockwise", "counter_clockwise")), optional=True),
], deep=False)
"""What a seat sees (SPEC section 8; ``Game.observe`` builds it): ``direction`` only under
``transfer: reflect``. The SDK checks only that it is a map."""

def _event(kind: str) -> Record:
    seat = Field("seat", _NAT)
    if kind == "cover":
        return Record(kind, [seat, Field("slot", _NAT), Field("card", Card()), _FORCED])
    if kind in CARD_ACTIONS:
        return Record(kind, [seat, Field("card", Card()), _FORCED])
    if kind == "exchange":
        return Record(kind, [seat, Field("card", Card()), Field("trump", Card()), _FORCED])
    if kind == "bout_end":
        return Record(kind, [Field("result", Choice(("beaten", "taken"))), Field("defender", _NAT)])
    if kind == "draw":
        return Record(kind, [seat, Field("count", _NAT),
                             Field("cards", CARDS, optional=True, private=True)])
    if kind == "out":
        return Record(kind, [seat])
    return Record(kind, [seat, _FORCED], private=kind == "decline")  # take, pass, decline


EVENTS: dict[str, Record] = {kind: _event(kind) for kind in EVENT_TYPES}
"""Each event type's map (SPEC section 9), by type, in ``EVENT_TYPES`` order. What is
private (``Field.private``, ``Record.private``) goes only to the event's ``seat``: the
cards of a draw, a declined exchange, the mark of a forced move."""

_ANY_EVENT = Record(None, [Field("type", Text())])

HELLO = Record("hello", [Field("protocol", Int(1)), Field("versions", Array(Int())),
                         Field("referee", Text())])
GAME_START = Record("game_start", [
    Field("game", _NAT), Field("seat", _NAT), Field("players", _SEATS),
    Field("names", Array(Text())), Field("rules", AnyMap()), Field("dealer", _NAT),
    Field("trump", Card()), Field("trump_suit", Suit()), Field("hand", CARDS),
    Field("attacker", _NAT)])
EVENT = Record("event", [Field("game", _NAT), Field("event", _ANY_EVENT)])
"""An event message; the SDK checks only that its ``event`` has a str ``type`` (bots
ignore the event types they do not know)."""
REQUEST = Record("request", [
    Field("id", Int(1)), Field("game", _NAT), Field("observation", OBSERVATION),
    Field("legal", Array(_ACTION, min_items=1,
                         empty="expected at least one legal action, got an empty array")),
    Field("clock", CLOCK)])
GAME_END = Record("game_end", [
    Field("game", _NAT), Field("durak", Int(0, nullable=True, expected="a seat number or nil")),
    Field("termination", Text(values=TERMINATIONS)), Field("reason", Text())])
ERROR = Record("error", [Field("code", Text(values=ERROR_CODES)), Field("message", Text()),
                         Field("fatal", Flag())])
BYE = Record("bye", [Field("reason", Text(nullable=True), optional=True)])
PING = Record("ping", [Field("id", _NAT)])

REFEREE_MESSAGES: dict[str, Record] = {
    r.type: r for r in (HELLO, GAME_START, EVENT, REQUEST, GAME_END, ERROR, BYE, PING)
    if r.type is not None}
"""Each referee -> bot message's declaration, by type (``REFEREE_MESSAGE_TYPES`` order)."""

_TEXT = Text(nullable=True, max_length=MAX_TEXT_LENGTH)
BOT_HELLO = Record("hello", [
    Field("protocol", Int(expected="an integer protocol version")),
    Field("name", Text(nonempty=True, max_length=MAX_NAME_LENGTH, printable=True)),
    Field("version", _TEXT, optional=True), Field("author", _TEXT, optional=True),
    Field("token", _TEXT, optional=True)])
ACTION = Record("action", [Field("id", Int(1, expected="a positive integer request id")),
                           Field("action", _ACTION)])
PONG = Record("pong", [Field("id", Int(0, expected="a non-negative integer ping id"))])

BOT_MESSAGES: dict[str, Record] = {r.type: r for r in (BOT_HELLO, ACTION, PONG) if r.type is not None}
"""Each bot -> referee message's declaration, by type (``BOT_MESSAGE_TYPES`` order)."""


def _check_type(message: object, allowed: Sequence[str]) -> str:
    if type(message) is not dict:
        raise RemoteProtocolError(f"message: expected a map, got {describe(message)}")
    if "type" not in message:
        raise bad("type", f"missing; expected one of: {', '.join(allowed)}")
    kind = message["type"]
    if type(kind) is not str:
        raise bad("type", f"expected a str, got {describe(kind)}")
    if kind not in allowed:
        raise bad(
            "type",
            f"unknown message type {describe(kind)}; expected one of: {', '.join(allowed)}",
        )
    return kind


# -- bot -> referee: validation -----------------------------------------------------------


def parse_bot_hello(message: Mapping[str, Any]) -> BotHello:
    """Validate a bot's hello (``type`` already known to be ``"hello"``). Does not judge
    the version: see ``check_version``."""
    BOT_HELLO.check(message)
    return BotHello(protocol=message["protocol"], name=message["name"],
                    version=message.get("version"), author=message.get("author"),
                    token=message.get("token"))


def parse_action_message(message: Mapping[str, Any]) -> ActionMessage:
    """Validate a bot's action message (``type`` already known to be ``"action"``)."""
    request_id, action = ACTION.fields
    if "id" not in message:
        raise bad("id", f"missing; expected {request_id.kind.expected}")
    request_id.kind.check(message["id"], "id")
    if "action" not in message:
        raise bad("action", f"missing; expected {action.kind.expected}")
    return ActionMessage(id=message["id"], action=parse_action(message["action"], "action"))


def parse_pong(message: Mapping[str, Any]) -> Pong:
    """Validate a bot's pong (``type`` already known to be ``"pong"``)."""
    PONG.check(message)
    return Pong(id=message["id"])


def parse_bot_message(message: object) -> BotHello | ActionMessage | Pong:
    """Validate any message a bot sent, dispatching on ``type``.

    Raises ``RemoteProtocolError`` with ``field`` set, e.g. ``"type: unknown message type
    'fold'; expected one of: hello, action, pong"``.
    """
    kind = _check_type(message, BOT_MESSAGE_TYPES)
    checked = cast("dict[str, Any]", message)  # _check_type: a map with a known type
    if kind == "action":
        return parse_action_message(checked)
    if kind == "pong":
        return parse_pong(checked)
    return parse_bot_hello(checked)


def check_version(hello: BotHello, supported: Sequence[int] = SUPPORTED_VERSIONS) -> int:
    """The version to speak with this bot: its ``protocol`` if supported. Otherwise raises
    ``UnsupportedVersionError`` saying ``version mismatch: the bot speaks protocol X, the
    referee Y`` (Y: every version that works, joined by "or")."""
    if hello.protocol in supported:
        return hello.protocol
    # Its own words, apart from a malformed hello's: the bot works but speaks another
    # version (the forfeit of a restarted process is still termination ``protocol``).
    versions = " or ".join(str(v) for v in supported)
    raise UnsupportedVersionError(
        f"version mismatch: the bot speaks protocol {hello.protocol}, the referee {versions}",
        field="protocol",
    )


# -- referee -> bot: validation (for the SDK and for tests) ------------------------------


def parse_referee_message(message: object) -> dict[str, Any]:
    """Check a message from the referee (for bots and the SDK) and return it unchanged.

    Checks ``type`` and each declared field of that message (``REFEREE_MESSAGES``), every
    element of a request's ``legal`` list and its clock; of the observation only that it
    is a map, of an event only its ``type``. Unknown keys are allowed; unknown event types
    inside ``event`` are allowed too (bots should ignore events they do not know).
    Raises ``RemoteProtocolError`` (the referee's fault) naming the field.
    """
    REFEREE_MESSAGES[_check_type(message, REFEREE_MESSAGE_TYPES)].check(message)
    return cast("dict[str, Any]", message)  # _check_type: a map with a known type


# -- constructors: referee -> bot --------------------------------------------------------
#
# Each builds its map from its declaration (keys in wire order). They check the few
# things that are cheap to check (codes, terminations); a bad argument raises
# LocalProtocolError, because it is a bug in the referee, never the bot's fault.


def hello_msg(
    referee: str, *, versions: Sequence[int] = SUPPORTED_VERSIONS, protocol: int = PROTOCOL_VERSION
) -> dict[str, Any]:
    """The referee's hello: the version it prefers, every version it speaks, its name."""
    return HELLO.make(protocol=protocol, versions=list(versions), referee=referee)


def game_start_msg(
    *, game: int, seat: int, players: int, names: Sequence[str], rules: Mapping[str, Any],
    dealer: int, trump: str, hand: Sequence[str], attacker: int,
) -> dict[str, Any]:
    """A new game begins; ``seat`` is the receiving bot's seat. ``trump_suit`` is derived
    from ``trump``."""
    if not 0 <= seat < players:
        raise LocalProtocolError(f"game_start: seat {seat} is not in 0..{players - 1}")
    return GAME_START.make(game=game, seat=seat, players=players, names=list(names),
                           rules=dict(rules), dealer=dealer, trump=trump, trump_suit=trump[1],
                           hand=list(hand), attacker=attacker)


def event_msg(game: int, event: Mapping[str, Any]) -> dict[str, Any]:
    """One public event of game ``game``, as the receiving seat may see it."""
    if type(event.get("type")) is not str:
        raise LocalProtocolError(f"event without a str type: {event!r}")
    return EVENT.make(game=game, event=dict(event))


def event_head(game: int) -> bytes:
    """The msgpack bytes of ``event_msg(game, event)`` up to its ``event`` map: that
    message's body is ``event_head(game) + codec.pack(event)`` (see ``codec.pack``), so
    a referee sending many events of one game packs the head once per game."""
    return EVENT.head() + EVENT.run({"game": game}, then="event")


def clock_map(
    remaining_ms: int | None = None, increment_ms: int | None = None, move_ms: int | None = None
) -> dict[str, int | None]:
    """The ``clock`` of a request, in whole milliseconds; None where no limit applies."""
    for name, value in (("remaining_ms", remaining_ms), ("increment_ms", increment_ms),
                        ("move_ms", move_ms)):
        if value is not None and type(value) is not int:
            raise LocalProtocolError(f"clock.{name} must be an int (milliseconds) or None, got {value!r}")
    return CLOCK.make(remaining_ms=remaining_ms, increment_ms=increment_ms, move_ms=move_ms)


def request_msg(
    id: int, game: int, observation: Mapping[str, Any], legal: Sequence[Mapping[str, Any]],
    clock: Mapping[str, int | None] | None = None,
) -> dict[str, Any]:
    """A decision request: the seat's observation, every legal action, the clock."""
    if not legal:
        raise LocalProtocolError(f"request {id}: the legal list is empty")
    return REQUEST.make(id=id, game=game, observation=observation, legal=list(legal),
                        clock=dict(clock) if clock is not None else clock_map())


def game_end_msg(game: int, durak: int | None, termination: str, reason: str) -> dict[str, Any]:
    """Game ``game`` is over: who is the durak (None for a draw), how and why it ended."""
    if termination not in TERMINATIONS:
        raise LocalProtocolError(
            f"game_end: unknown termination {termination!r}; expected one of {TERMINATIONS}"
        )
    return GAME_END.make(game=game, durak=durak, termination=termination, reason=reason)


def error_msg(code: str, message: str, fatal: bool) -> dict[str, Any]:
    """Why the bot's last message was rejected. ``fatal`` False: a new request follows."""
    if code not in ERROR_CODES:
        raise LocalProtocolError(f"error: unknown code {code!r}; expected one of {ERROR_CODES}")
    return ERROR.make(code=code, message=message, fatal=bool(fatal))


def bye_msg(reason: str = "match_end") -> dict[str, Any]:
    """The referee is done with this bot; it should exit with status 0."""
    return BYE.make(reason=reason)


def _check_ping_id(kind: str, id: int) -> None:
    if type(id) is not int or id < 0:
        raise LocalProtocolError(f"{kind}: id must be a non-negative int, got {id!r}")


def ping_msg(id: int) -> dict[str, Any]:
    """Is the bot still there? It answers with ``pong_msg(id)``. Sent to idle bots only."""
    _check_ping_id("ping", id)
    return PING.make(id=id)


# -- constructors: bot -> referee (used by the SDK) --------------------------------------


def bot_hello_msg(
    name: str, *, version: str | None = None, author: str | None = None,
    token: str | None = None, protocol: int = PROTOCOL_VERSION,
) -> dict[str, Any]:
    """A bot's hello. Optional fields that are None are left out."""
    return BOT_HELLO.make(protocol=protocol, name=name, version=version, author=author, token=token)


def action_msg(id: int, action: Mapping[str, Any]) -> dict[str, Any]:
    """A bot's answer to request ``id``."""
    return ACTION.make(id=id, action=dict(action))


def pong_msg(id: int) -> dict[str, Any]:
    """A bot's answer to ping ``id``."""
    _check_ping_id("pong", id)
    return PONG.make(id=id)
