"""Message types of protocol v1: validation of what arrives, constructors for what leaves.

Bot -> referee (``hello``, ``action``, ``pong``) is validated strictly into frozen dataclasses,
because a bot's mistakes must become a precise ``RemoteProtocolError`` naming the field:
``"action.card: expected a card like '6S', got 'X9'"``. Referee -> bot messages are built
only by the constructors here (``hello_msg``, ``request_msg``, ...), so their shape lives
in one place, and the SDK checks them with ``parse_referee_message``.

Rules shared by every message: it is a map with a str ``type``; an unknown ``type`` is an
error; unknown keys are ignored (forward compatibility) and dropped from parsed results.

Validation is structural only. Whether an action is legal now is the rules engine's call:
a well-formed ``{"type": "cover", "slot": 5, "card": "AS"}`` parses fine here even if slot
5 is empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.cards import ALL_CARDS, SUITS, parse_card_text
from protocol.codec import pack
from protocol.errors import LocalProtocolError, RemoteProtocolError, UnsupportedVersionError

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
    "disconnect",
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


# -- describing values for error messages ----------------------------------------------


def describe(value: Any, limit: int = 40) -> str:
    """A value as a bot author would recognise it in an error message: str quoted, nil,
    true/false, bin marked as such, containers by kind and size."""
    if value is None:
        return "nil"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (bytes, bytearray)):
        text = f"bin {bytes(value)!r}"
    elif isinstance(value, dict):
        return f"a map of {len(value)} entries" if len(value) != 1 else "a map of 1 entry"
    elif isinstance(value, (list, tuple)):
        return f"an array of {len(value)} elements" if len(value) != 1 else "an array of 1 element"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bad(field: str, problem: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"{field}: {problem}", field=field)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is_int(value: Any) -> bool:
    # msgpack true/false decode to bool, a subclass of int; they are not integers here.
    return type(value) is int


# -- field checkers (each returns the value or raises RemoteProtocolError) -------------


def _required(message: Mapping[str, Any], key: str, path: str, expected: str) -> Any:
    if key not in message:
        raise _bad(_join(path, key), f"missing; expected {expected}")
    return message[key]


def _int_field(
    message: Mapping[str, Any], key: str, path: str = "", *, minimum: int | None = None,
    expected: str | None = None, optional: bool = False, nullable: bool = False,
) -> int | None:
    """``optional``: may be missing or nil. ``nullable``: must be present, may be nil."""
    if expected is None:
        expected = "an integer" if minimum is None else (
            "a non-negative integer" if minimum == 0 else f"an integer >= {minimum}"
        )
    if optional and message.get(key) is None:
        return None
    value = _required(message, key, path, expected)
    if nullable and value is None:
        return None
    if not _is_int(value) or (minimum is not None and value < minimum):
        raise _bad(_join(path, key), f"expected {expected}, got {describe(value)}")
    return value


def _str_field(
    message: Mapping[str, Any], key: str, path: str = "", *, optional: bool = False,
    max_length: int | None = None, nonempty: bool = False,
) -> str | None:
    if optional and message.get(key) is None:
        return None
    expected = "a non-empty str" if nonempty else "a str"
    value = _required(message, key, path, expected)
    if type(value) is not str:
        suffix = " or nil" if optional else ""
        raise _bad(_join(path, key), f"expected {expected}{suffix}, got {describe(value)}")
    if nonempty and not value:
        raise _bad(_join(path, key), "expected a non-empty str, got ''")
    if max_length is not None and len(value) > max_length:
        raise _bad(
            _join(path, key),
            f"is {len(value)} characters long; the limit is {max_length}",
        )
    return value


def _card_field(message: Mapping[str, Any], key: str, path: str) -> str:
    value = _required(message, key, path, "a card like '6S'")
    try:
        return parse_card_text(value)
    except ValueError:
        raise _bad(_join(path, key), f"expected a card like '6S', got {describe(value)}") from None


def _map_field(message: Mapping[str, Any], key: str, path: str = "") -> dict[str, Any]:
    value = _required(message, key, path, "a map")
    if type(value) is not dict:
        raise _bad(_join(path, key), f"expected a map, got {describe(value)}")
    return value


def _list_field(message: Mapping[str, Any], key: str, path: str = "") -> list[Any]:
    value = _required(message, key, path, "an array")
    if type(value) is not list:
        raise _bad(_join(path, key), f"expected an array, got {describe(value)}")
    return value


def _check_type(message: Any, allowed: Sequence[str]) -> str:
    if type(message) is not dict:
        raise RemoteProtocolError(f"message: expected a map, got {describe(message)}")
    kind = _required(message, "type", "", f"one of: {', '.join(allowed)}")
    if type(kind) is not str:
        raise _bad("type", f"expected a str, got {describe(kind)}")
    if kind not in allowed:
        raise _bad(
            "type",
            f"unknown message type {describe(kind)}; expected one of: {', '.join(allowed)}",
        )
    return kind


# -- bot -> referee: validation -----------------------------------------------------------


def parse_action(value: Any, field: str = "action") -> dict[str, Any]:
    """The canonical form of an action map (see ``ActionMessage.action``).

    ``field`` is the path used in error messages. Raises ``RemoteProtocolError`` naming
    the exact field: ``"action.slot: expected a non-negative integer, got 'a'"``.
    """
    if type(value) is not dict:
        raise _bad(field, f"expected an action map like {{'type': 'take'}}, got {describe(value)}")
    kind = _required(value, "type", field, f"one of: {', '.join(ACTION_TYPES)}")
    if type(kind) is not str or kind not in ACTION_TYPES:
        raise _bad(
            _join(field, "type"),
            f"unknown action type {describe(kind)}; expected one of: {', '.join(ACTION_TYPES)}",
        )
    if kind not in CARD_ACTIONS:
        return {"type": kind}
    if kind == "cover":
        slot = _int_field(value, "slot", field, minimum=0)
        return {"type": kind, "slot": slot, "card": _card_field(value, "card", field)}
    return {"type": kind, "card": _card_field(value, "card", field)}


def parse_bot_hello(message: Mapping[str, Any]) -> BotHello:
    """Validate a bot's hello (``type`` already known to be ``"hello"``). Does not judge
    the version: see ``check_version``."""
    protocol = _int_field(message, "protocol", expected="an integer protocol version")
    name = _str_field(message, "name", nonempty=True, max_length=MAX_NAME_LENGTH)
    assert protocol is not None and name is not None
    if not name.isprintable():
        raise _bad("name", f"must be printable text without control characters, got {describe(name)}")
    return BotHello(
        protocol=protocol,
        name=name,
        version=_str_field(message, "version", optional=True, max_length=MAX_TEXT_LENGTH),
        author=_str_field(message, "author", optional=True, max_length=MAX_TEXT_LENGTH),
        token=_str_field(message, "token", optional=True, max_length=MAX_TEXT_LENGTH),
    )


def parse_action_message(message: Mapping[str, Any]) -> ActionMessage:
    """Validate a bot's action message (``type`` already known to be ``"action"``)."""
    request_id = _int_field(message, "id", minimum=1, expected="a positive integer request id")
    assert request_id is not None
    action = parse_action(_required(message, "action", "", "an action map"), "action")
    return ActionMessage(id=request_id, action=action)


def parse_pong(message: Mapping[str, Any]) -> Pong:
    """Validate a bot's pong (``type`` already known to be ``"pong"``)."""
    ping_id = _int_field(message, "id", minimum=0, expected="a non-negative integer ping id")
    assert ping_id is not None
    return Pong(id=ping_id)


def parse_bot_message(message: Any) -> BotHello | ActionMessage | Pong:
    """Validate any message a bot sent, dispatching on ``type``.

    Raises ``RemoteProtocolError`` with ``field`` set, e.g. ``"type: unknown message type
    'fold'; expected one of: hello, action, pong"``.
    """
    kind = _check_type(message, BOT_MESSAGE_TYPES)
    if kind == "action":
        return parse_action_message(message)
    if kind == "pong":
        return parse_pong(message)
    return parse_bot_hello(message)


def check_version(hello: BotHello, supported: Sequence[int] = SUPPORTED_VERSIONS) -> int:
    """The version to speak with this bot: its ``protocol`` if supported. Otherwise raises
    ``UnsupportedVersionError`` with a message saying which versions work."""
    if hello.protocol in supported:
        return hello.protocol
    versions = ", ".join(str(v) for v in supported)
    raise UnsupportedVersionError(
        f"protocol: the bot speaks protocol version {hello.protocol}; this referee supports "
        f"version{'s' if len(supported) != 1 else ''} {versions}",
        field="protocol",
    )


# -- referee -> bot: validation (for the SDK and for tests) ------------------------------


def _cards_field(message: Mapping[str, Any], key: str, path: str = "") -> list[str]:
    cards = _list_field(message, key, path)
    for index, card in enumerate(cards):
        # The referee always sends canonical text: "10H" or "th" would be its bug.
        if type(card) is not str or card not in ALL_CARDS:
            raise _bad(f"{_join(path, key)}[{index}]", f"expected a card like '6S', got {describe(card)}")
    return cards


def _check_clock(message: Mapping[str, Any]) -> None:
    clock = _map_field(message, "clock")
    for key in ("remaining_ms", "increment_ms", "move_ms"):
        _int_field(clock, key, "clock", expected="an integer (milliseconds) or nil", nullable=True)


def parse_referee_message(message: Any) -> dict[str, Any]:
    """Check a message from the referee (for bots and the SDK) and return it unchanged.

    Checks ``type`` and the required top-level fields of each message type, and every
    element of a request's ``legal`` list. Unknown keys are allowed; unknown event types
    inside ``event`` are allowed too (bots should ignore events they do not know).
    Raises ``RemoteProtocolError`` (the referee's fault) naming the field.
    """
    kind = _check_type(message, REFEREE_MESSAGE_TYPES)
    if kind == "request":
        _int_field(message, "id", minimum=1)
        _int_field(message, "game", minimum=0)
        _map_field(message, "observation")
        legal = _list_field(message, "legal")
        if not legal:
            raise _bad("legal", "expected at least one legal action, got an empty array")
        for index, action in enumerate(legal):
            parse_action(action, f"legal[{index}]")
        _check_clock(message)
    elif kind == "event":
        _int_field(message, "game", minimum=0)
        event = _map_field(message, "event")
        _str_field(event, "type", "event")
    elif kind == "hello":
        _int_field(message, "protocol", minimum=1)
        versions = _list_field(message, "versions")
        for index, version in enumerate(versions):
            if not _is_int(version):
                raise _bad(f"versions[{index}]", f"expected an integer, got {describe(version)}")
        _str_field(message, "referee")
    elif kind == "game_start":
        for key in ("game", "seat", "dealer", "attacker"):
            _int_field(message, key, minimum=0)
        _int_field(message, "players", minimum=2)
        names = _list_field(message, "names")
        for index, name in enumerate(names):
            if type(name) is not str:
                raise _bad(f"names[{index}]", f"expected a str, got {describe(name)}")
        _map_field(message, "rules")
        _card_field(message, "trump", "")
        suit = _required(message, "trump_suit", "", "a suit letter")
        if type(suit) is not str or len(suit) != 1 or suit not in SUITS:
            raise _bad("trump_suit", f"expected one of 'C', 'D', 'H', 'S', got {describe(suit)}")
        _cards_field(message, "hand")
    elif kind == "game_end":
        _int_field(message, "game", minimum=0)
        _int_field(message, "durak", minimum=0, nullable=True, expected="a seat number or nil")
        _str_field(message, "termination")
        _str_field(message, "reason")
    elif kind == "error":
        _str_field(message, "code")
        _str_field(message, "message")
        fatal = _required(message, "fatal", "", "true or false")
        if type(fatal) is not bool:
            raise _bad("fatal", f"expected true or false, got {describe(fatal)}")
    elif kind == "bye":
        _str_field(message, "reason", optional=True)
    elif kind == "ping":
        _int_field(message, "id", minimum=0)
    return message


# -- constructors: referee -> bot --------------------------------------------------------
#
# Keyword arguments and key order follow the spec. They check the few things that are
# cheap to check (codes, terminations); a bad argument raises LocalProtocolError, because
# it is a bug in the referee, never the bot's fault.


def hello_msg(
    referee: str, *, versions: Sequence[int] = SUPPORTED_VERSIONS, protocol: int = PROTOCOL_VERSION
) -> dict[str, Any]:
    """The referee's hello: the version it prefers, every version it speaks, its name."""
    return {"type": "hello", "protocol": protocol, "versions": list(versions), "referee": referee}


def game_start_msg(
    *, game: int, seat: int, players: int, names: Sequence[str], rules: Mapping[str, Any],
    dealer: int, trump: str, hand: Sequence[str], attacker: int,
) -> dict[str, Any]:
    """A new game begins; ``seat`` is the receiving bot's seat. ``trump_suit`` is derived
    from ``trump``."""
    if not 0 <= seat < players:
        raise LocalProtocolError(f"game_start: seat {seat} is not in 0..{players - 1}")
    return {
        "type": "game_start", "game": game, "seat": seat, "players": players,
        "names": list(names), "rules": dict(rules), "dealer": dealer, "trump": trump,
        "trump_suit": trump[1], "hand": list(hand), "attacker": attacker,
    }


def event_msg(game: int, event: Mapping[str, Any]) -> dict[str, Any]:
    """One public event of game ``game``, as the receiving seat may see it."""
    if type(event.get("type")) is not str:
        raise LocalProtocolError(f"event without a str type: {event!r}")
    return {"type": "event", "game": game, "event": dict(event)}


def event_head(game: int) -> bytes:
    """The msgpack bytes of ``event_msg(game, event)`` up to its ``event`` map: that
    message's body is ``event_head(game) + codec.pack(event)`` (see ``codec.pack``), so
    a referee sending many events of one game packs the head once per game."""
    return pack({"type": "event", "game": game, "event": None})[:-1]  # less the nil (0xc0)


def clock_map(
    remaining_ms: int | None = None, increment_ms: int | None = None, move_ms: int | None = None
) -> dict[str, int | None]:
    """The ``clock`` of a request, in whole milliseconds; None where no limit applies."""
    for name, value in (("remaining_ms", remaining_ms), ("increment_ms", increment_ms),
                        ("move_ms", move_ms)):
        if value is not None and type(value) is not int:
            raise LocalProtocolError(f"clock.{name} must be an int (milliseconds) or None, got {value!r}")
    return {"remaining_ms": remaining_ms, "increment_ms": increment_ms, "move_ms": move_ms}


def request_msg(
    id: int, game: int, observation: Mapping[str, Any], legal: Sequence[Mapping[str, Any]],
    clock: Mapping[str, int | None] | None = None,
) -> dict[str, Any]:
    """A decision request: the seat's observation, every legal action, the clock."""
    if not legal:
        raise LocalProtocolError(f"request {id}: the legal list is empty")
    return {
        "type": "request", "id": id, "game": game, "observation": observation,
        "legal": list(legal), "clock": dict(clock) if clock is not None else clock_map(),
    }


def game_end_msg(game: int, durak: int | None, termination: str, reason: str) -> dict[str, Any]:
    """Game ``game`` is over: who is the durak (None for a draw), how and why it ended."""
    if termination not in TERMINATIONS:
        raise LocalProtocolError(
            f"game_end: unknown termination {termination!r}; expected one of {TERMINATIONS}"
        )
    return {"type": "game_end", "game": game, "durak": durak, "termination": termination,
            "reason": reason}


def error_msg(code: str, message: str, fatal: bool) -> dict[str, Any]:
    """Why the bot's last message was rejected. ``fatal`` False: a new request follows."""
    if code not in ERROR_CODES:
        raise LocalProtocolError(f"error: unknown code {code!r}; expected one of {ERROR_CODES}")
    return {"type": "error", "code": code, "message": message, "fatal": bool(fatal)}


def bye_msg(reason: str = "match_end") -> dict[str, Any]:
    """The referee is done with this bot; it should exit with status 0."""
    return {"type": "bye", "reason": reason}


def _check_ping_id(kind: str, id: int) -> None:
    if type(id) is not int or id < 0:
        raise LocalProtocolError(f"{kind}: id must be a non-negative int, got {id!r}")


def ping_msg(id: int) -> dict[str, Any]:
    """Is the bot still there? It answers with ``pong_msg(id)``. Sent to idle bots only."""
    _check_ping_id("ping", id)
    return {"type": "ping", "id": id}


# -- constructors: bot -> referee (used by the SDK) --------------------------------------


def bot_hello_msg(
    name: str, *, version: str | None = None, author: str | None = None,
    token: str | None = None, protocol: int = PROTOCOL_VERSION,
) -> dict[str, Any]:
    """A bot's hello. Optional fields that are None are left out."""
    message: dict[str, Any] = {"type": "hello", "protocol": protocol, "name": name}
    for key, value in (("version", version), ("author", author), ("token", token)):
        if value is not None:
            message[key] = value
    return message


def action_msg(id: int, action: Mapping[str, Any]) -> dict[str, Any]:
    """A bot's answer to request ``id``."""
    return {"type": "action", "id": id, "action": dict(action)}


def pong_msg(id: int) -> dict[str, Any]:
    """A bot's answer to ping ``id``."""
    _check_ping_id("pong", id)
    return {"type": "pong", "id": id}
