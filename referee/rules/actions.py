"""Actions as small integers, with their text and wire (map) forms.

Like OpenSpiel, the engine speaks in integer actions so that legal move lists cost no
object allocation: ``kind | card << 4 | slot << 10``. Kinds without a card (take,
pass, exchange) are the bare kind number. Convert at the edges:

- ``action_str(a)`` / ``parse_action(text)``: ``"attack 6S"``, ``"cover 0 7S"``, ``"take"``;
- ``action_to_wire(a)`` / ``action_from_wire(map)``: ``{"type": "cover", "slot": 0, "card": "7S"}``.

Two errors, as in python-chess: ``MalformedAction`` (the input does not describe an
action at all) and ``IllegalAction`` (a well-formed action that the rules do not allow
now). Both are ``ValueError``.
"""

from __future__ import annotations

from typing import Any, Final

from .cards import CardError, card_str, parse_card

# The action kinds (an action's low 4 bits). Final: compiled, each use is a constant, not
# a lookup in the module's dict.
ATTACK: Final = 0
COVER: Final = 1
THROW_IN: Final = 2
TRANSFER: Final = 3
SHOW_TRUMP: Final = 4
TAKE: Final = 5
PASS: Final = 6
EXCHANGE: Final = 7
KIND_NAMES = ("attack", "cover", "throw_in", "transfer", "show_trump", "take", "pass", "exchange")
KIND_BY_NAME = {name: kind for kind, name in enumerate(KIND_NAMES)}
_WITH_CARD: Final = (ATTACK, COVER, THROW_IN, TRANSFER, SHOW_TRUMP)
MAX_SLOT: Final = 63


class MalformedAction(ValueError):
    """The input is not an action: unknown type, bad card text, missing or bad slot.
    Says nothing about legality."""


class IllegalAction(ValueError):
    """A well-formed action that the rules do not allow in this position. The message
    says why. The game state is unchanged."""


def attack(card: int) -> int:
    return ATTACK | card << 4


def cover(slot: int, card: int) -> int:
    return COVER | card << 4 | slot << 10


def throw_in(card: int) -> int:
    return THROW_IN | card << 4


def transfer(card: int) -> int:
    return TRANSFER | card << 4


def show_trump(card: int) -> int:
    return SHOW_TRUMP | card << 4


def kind_of(action: int) -> int:
    return action & 15


def card_of(action: int) -> int:
    return action >> 4 & 63


def slot_of(action: int) -> int:
    return action >> 10


def check_action(action: object) -> int:
    """Return ``action`` if it is a valid encoding, else raise MalformedAction."""
    if type(action) is not int or action < 0:
        raise MalformedAction(f"an action is a non-negative int, got {action!r}")
    kind = action & 15
    if kind > EXCHANGE:
        raise MalformedAction(f"action {action}: unknown kind {kind}")
    if kind in _WITH_CARD:
        if card_of(action) > 51:
            raise MalformedAction(f"action {action}: card index {card_of(action)} out of range")
        if kind != COVER and slot_of(action):
            raise MalformedAction(f"action {action}: only cover takes a slot")
        if slot_of(action) > MAX_SLOT:
            raise MalformedAction(f"action {action}: slot {slot_of(action)} out of range")
    elif action != kind:
        raise MalformedAction(f"action {action}: {KIND_NAMES[kind]} takes no card")
    return action


def action_str(action: int) -> str:
    """Text form: ``attack 6S``, ``cover 0 7S``, ``transfer 6D``, ``take``, ``pass``."""
    kind = action & 15
    if kind == COVER:
        return f"cover {slot_of(action)} {card_str(card_of(action))}"
    if kind in _WITH_CARD:
        return f"{KIND_NAMES[kind]} {card_str(card_of(action))}"
    return KIND_NAMES[kind]


def parse_action(text: str) -> int:
    """Parse the text form written by ``action_str``. Raises MalformedAction."""
    words = text.split()
    if not words or words[0] not in KIND_BY_NAME:
        raise MalformedAction(f"expected an action like 'attack 6S', 'cover 0 7S' or 'take', got {text!r}")
    kind = KIND_BY_NAME[words[0]]
    want = 3 if kind == COVER else 2 if kind in _WITH_CARD else 1
    if len(words) != want:
        raise MalformedAction(f"{words[0]} takes {want - 1} argument(s), got {text!r}")
    try:
        if kind == COVER:
            if not words[1].isdigit():
                raise MalformedAction(f"cover: slot must be a number, got {words[1]!r}")
            return cover(int(words[1]), parse_card(words[2]))
        if kind in _WITH_CARD:
            return kind | parse_card(words[1]) << 4
    except CardError as exc:
        raise MalformedAction(str(exc)) from None
    return kind


def action_to_wire(action: int) -> dict[str, Any]:
    """The protocol's map form of an action."""
    kind = action & 15
    if kind == COVER:
        return {"type": "cover", "slot": slot_of(action), "card": card_str(card_of(action))}
    if kind in _WITH_CARD:
        return {"type": KIND_NAMES[kind], "card": card_str(card_of(action))}
    return {"type": KIND_NAMES[kind]}


#: Wire maps of the actions met so far (at most 8 kinds x 52 cards x 64 slots).
_WIRE: dict[int, dict[str, Any]] = {}


def shared_wire(action: int) -> dict[str, Any]:
    """``action_to_wire(action)`` from a cache: the same map object every time, for a
    caller that only reads it (encodes it, compares it), as the referee does for every
    legal list it sends. Never change the map returned. ``action`` must be well-formed."""
    wire = _WIRE.get(action)
    if wire is None:
        wire = _WIRE[action] = action_to_wire(action)
    return wire


def action_from_wire(data: object) -> int:
    """Parse the protocol's map form. Raises MalformedAction naming the field."""
    if not isinstance(data, dict):
        raise MalformedAction(f"action: expected a map, got {type(data).__name__}")
    name = data.get("type")
    if name not in KIND_BY_NAME:
        raise MalformedAction(
            f"action.type: expected one of {', '.join(KIND_NAMES)}, got {name!r}")
    kind = KIND_BY_NAME[name]
    if kind not in _WITH_CARD:
        return kind
    try:
        card = parse_card(data.get("card"))
    except CardError:
        raise MalformedAction(f"action.card: expected a card like '6S', got {data.get('card')!r}") from None
    if kind != COVER:
        return kind | card << 4
    slot = data.get("slot")
    if type(slot) is not int or not 0 <= slot <= MAX_SLOT:
        raise MalformedAction(f"action.slot: expected a table slot number 0..{MAX_SLOT}, got {slot!r}")
    return cover(slot, card)
