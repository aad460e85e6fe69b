"""The JSON Schema (draft 2020-12) of every message of protocol v1, both directions, written
out from the declarations of ``protocol.messages`` (each message's fields, their kinds and
bounds, the message, action and event types, phases, terminations, error codes, name and
text limits), so it cannot drift from them.

``protocol/vectors/schema.json`` is ``schema()`` written out for authors in any language
(tests/protocol/test_schema.py checks the file is up to date and validates the vectors
and the messages of seeded games against it). Structural only, like ``messages``:
whether an action is legal is the rules' business.
"""

from __future__ import annotations

from typing import Any

from protocol import messages as m
from protocol.cards import ALL_CARDS

_CARD = {"enum": sorted(ALL_CARDS)}
_NAT = {"type": "integer", "minimum": 0}


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


def referee_messages() -> dict[str, dict[str, Any]]:
    """The schema of each referee -> bot message, by type."""
    return {kind: record.schema() for kind, record in m.REFEREE_MESSAGES.items()}


def bot_messages() -> dict[str, dict[str, Any]]:
    """The schema of each bot -> referee message, by type."""
    return {kind: record.schema() for kind, record in m.BOT_MESSAGES.items()}


def events() -> dict[str, dict[str, Any]]:
    """The schema of each event map of protocol v1, by type (an ``event`` message may hold
    others: bots ignore the event types they do not know)."""
    return {kind: record.schema() for kind, record in m.EVENTS.items()}


def schema() -> dict[str, Any]:
    """The whole schema: a message is one of the referee's or one of the bot's
    (``$defs/referee_to_bot`` and ``$defs/bot_to_referee`` validate one direction;
    ``$defs/event_<type>`` each known event's map)."""
    referee, bot = referee_messages(), bot_messages()
    defs: dict[str, Any] = {"action": _action()}
    defs.update({f"referee_{k}": v for k, v in referee.items()})
    defs.update({f"bot_{k}": v for k, v in bot.items()})
    defs.update({f"event_{k}": v for k, v in events().items()})
    defs["referee_to_bot"] = {"oneOf": [{"$ref": f"#/$defs/referee_{k}"} for k in m.REFEREE_MESSAGE_TYPES]}
    defs["bot_to_referee"] = {"oneOf": [{"$ref": f"#/$defs/bot_{k}"} for k in m.BOT_MESSAGE_TYPES]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://durak-ref.invalid/protocol/v1/messages.json",
            "title": "durak-ref bot protocol v1 messages (protocol/SPEC.md)",
            "anyOf": [{"$ref": "#/$defs/referee_to_bot"}, {"$ref": "#/$defs/bot_to_referee"}],
            "$defs": defs}


def write() -> None:
    """Write ``schema()`` to protocol/vectors/schema.json (``python -m protocol.schema``),
    as the file is kept: one-space indents, no newline at the end."""
    import json
    from pathlib import Path

    path = Path(__file__).with_name("vectors") / "schema.json"
    path.write_text(json.dumps(schema(), indent=1), encoding="utf-8")


if __name__ == "__main__":
    write()
