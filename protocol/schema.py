"""The JSON Schema (draft 2020-12) of every message of protocol v1, both directions, built
from the constants of ``protocol.messages`` (message, action and event types, phases,
terminations, error codes, name and text limits), so it cannot drift from them.

``protocol/vectors/schema.json`` is ``schema()`` written out for authors in any language
(tests/protocol/test_schema.py checks the file is up to date and validates the vectors
and the messages of seeded games against it). Structural only, like ``messages``:
whether an action is legal is the rules' business.
"""

from __future__ import annotations

from typing import Any

from protocol import messages as m
from protocol.cards import ALL_CARDS, SUITS

_INT = {"type": "integer"}
_NAT = {"type": "integer", "minimum": 0}
_CARD = {"enum": sorted(ALL_CARDS)}
_CARDS = {"type": "array", "items": _CARD}
_NULLABLE_INT = {"type": ["integer", "null"]}


def _message(kind: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {"type": {"const": kind}, **properties},
            "required": ["type", *required]}


def _action() -> dict[str, Any]:
    card_actions = sorted(m.CARD_ACTIONS - {"cover"})
    return {"oneOf": [
        {"type": "object", "properties": {"type": {"enum": card_actions}, "card": _CARD},
         "required": ["type", "card"]},
        {"type": "object", "properties": {"type": {"const": "cover"}, "slot": _NAT, "card": _CARD},
         "required": ["type", "slot", "card"]},
        {"type": "object", "properties": {"type": {"enum": [t for t in m.ACTION_TYPES
                                                            if t not in m.CARD_ACTIONS]}},
         "required": ["type"]},
    ]}


def _observation() -> dict[str, Any]:
    props = {
        "seat": _NAT, "players": {"type": "integer", "minimum": 2, "maximum": 6}, "dealer": _NAT,
        "hand": _CARDS, "trump": _CARD, "trump_suit": {"enum": list(SUITS)},
        "trump_holder": _NULLABLE_INT, "talon": _NAT,
        "table": {"type": "array", "items": {"type": "array", "prefixItems": [
            _CARD, {"anyOf": [_CARD, {"type": "null"}]}], "minItems": 2, "maxItems": 2}},
        "discard": _CARDS, "hand_sizes": {"type": "array", "items": _NAT},
        "out": {"type": "array", "items": {"type": "boolean"}}, "attacker": _NAT, "defender": _NAT,
        "phase": {"enum": list(m.PHASES)}, "taking": {"type": "boolean"}, "bout": _NAT,
        "transfers": _NAT, "attack_limit": _NAT, "known": {"type": "array", "items": _CARDS},
        "shown": _CARDS, "direction": {"enum": ["clockwise", "counter_clockwise"]},
    }
    return {"type": "object", "properties": props,
            "required": [k for k in props if k != "direction"]}


def referee_messages() -> dict[str, dict[str, Any]]:
    """The schema of each referee -> bot message, by type."""
    clock = {"type": "object", "properties": {k: _NULLABLE_INT for k in
                                              ("remaining_ms", "increment_ms", "move_ms")},
             "required": ["remaining_ms", "increment_ms", "move_ms"]}
    event = {"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]}
    return {
        "hello": _message("hello", {"protocol": {"type": "integer", "minimum": 1},
                                    "versions": {"type": "array", "items": _INT},
                                    "referee": {"type": "string"}},
                          ["protocol", "versions", "referee"]),
        "game_start": _message("game_start", {
            "game": _NAT, "seat": _NAT, "players": {"type": "integer", "minimum": 2, "maximum": 6},
            "names": {"type": "array", "items": {"type": "string"}}, "rules": {"type": "object"},
            "dealer": _NAT, "trump": _CARD, "trump_suit": {"enum": list(SUITS)}, "hand": _CARDS,
            "attacker": _NAT}, ["game", "seat", "players", "names", "rules", "dealer", "trump",
                                "trump_suit", "hand", "attacker"]),
        "event": _message("event", {"game": _NAT, "event": event}, ["game", "event"]),
        "request": _message("request", {
            "id": {"type": "integer", "minimum": 1}, "game": _NAT, "observation": _observation(),
            "legal": {"type": "array", "items": {"$ref": "#/$defs/action"}, "minItems": 1},
            "clock": clock}, ["id", "game", "observation", "legal", "clock"]),
        "game_end": _message("game_end", {"game": _NAT, "durak": _NULLABLE_INT,
                                          "termination": {"enum": list(m.TERMINATIONS)},
                                          "reason": {"type": "string"}},
                             ["game", "durak", "termination", "reason"]),
        "error": _message("error", {"code": {"enum": list(m.ERROR_CODES)},
                                    "message": {"type": "string"}, "fatal": {"type": "boolean"}},
                          ["code", "message", "fatal"]),
        "bye": _message("bye", {"reason": {"type": "string"}}, []),
        "ping": _message("ping", {"id": _NAT}, ["id"]),
    }


def bot_messages() -> dict[str, dict[str, Any]]:
    """The schema of each bot -> referee message, by type."""
    text = {"type": ["string", "null"], "maxLength": m.MAX_TEXT_LENGTH}
    return {
        "hello": _message("hello", {"protocol": _INT,
                                    "name": {"type": "string", "minLength": 1,
                                             "maxLength": m.MAX_NAME_LENGTH},
                                    "version": text, "author": text, "token": text},
                          ["protocol", "name"]),
        "action": _message("action", {"id": {"type": "integer", "minimum": 1},
                                      "action": {"$ref": "#/$defs/action"}}, ["id", "action"]),
        "pong": _message("pong", {"id": _NAT}, ["id"]),
    }


def schema() -> dict[str, Any]:
    """The whole schema: a message is one of the referee's or one of the bot's
    (``$defs/referee_to_bot`` and ``$defs/bot_to_referee`` validate one direction)."""
    referee, bot = referee_messages(), bot_messages()
    defs: dict[str, Any] = {"action": _action()}
    defs.update({f"referee_{k}": v for k, v in referee.items()})
    defs.update({f"bot_{k}": v for k, v in bot.items()})
    defs["referee_to_bot"] = {"oneOf": [{"$ref": f"#/$defs/referee_{k}"} for k in m.REFEREE_MESSAGE_TYPES]}
    defs["bot_to_referee"] = {"oneOf": [{"$ref": f"#/$defs/bot_{k}"} for k in m.BOT_MESSAGE_TYPES]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://durak-ref.invalid/protocol/v1/messages.json",
            "title": "durak-ref bot protocol v1 messages (protocol/SPEC.md)",
            "anyOf": [{"$ref": "#/$defs/referee_to_bot"}, {"$ref": "#/$defs/bot_to_referee"}],
            "$defs": defs}
