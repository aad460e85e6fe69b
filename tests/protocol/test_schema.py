"""protocol/vectors/schema.json, the JSON Schema (draft 2020-12) of every message in both
directions: it is exactly what protocol/schema.py builds from protocol/messages.py (so it
cannot drift), a valid schema, and every vector and every message of seeded games under
every rule variant (the referee's real encoders; bot hellos, actions and pongs) is valid
against it, in its own direction."""

from __future__ import annotations

import json
import random
from importlib import resources
from typing import Any

import jsonschema
import pytest

from protocol import messages as msg
from protocol.codec import decode
from protocol.schema import schema
from referee.conformance.checkbot import CONFIGS
from referee.seats.players import Ask, BotSpec, BuiltinPlayer, Player, parse_bot_spec
from referee.table.match import MatchConfig, play_game

SCHEMA = json.loads(resources.files("protocol").joinpath("vectors/schema.json").read_text("utf-8"))
VECTORS = json.loads(resources.files("protocol").joinpath("vectors/frames.json").read_text("utf-8"))


def validator(direction: str) -> jsonschema.Draft202012Validator:
    """A validator of one direction's messages: the schema, with its root narrowed."""
    return jsonschema.Draft202012Validator(dict(SCHEMA, anyOf=[{"$ref": f"#/$defs/{direction}"}]))


REFEREE, BOT = validator("referee_to_bot"), validator("bot_to_referee")


def test_the_schema_file_is_what_messages_py_builds() -> None:
    assert SCHEMA == json.loads(json.dumps(schema()))
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("vector", VECTORS["valid"], ids=lambda v: v["name"])
def test_every_vector_is_valid_in_its_direction(vector: dict[str, Any]) -> None:
    mine, other = (BOT, REFEREE) if vector["direction"] == "bot_to_referee" else (REFEREE, BOT)
    mine.validate(vector["message"])
    if vector["message"]["type"] not in ("hello",):
        assert not other.is_valid(vector["message"])


def test_malformed_messages_are_invalid() -> None:
    for bad in ({"type": "action", "id": 1, "action": {"type": "attack", "card": "X9"}},
                {"type": "action", "id": 0, "action": {"type": "pass"}},
                {"type": "hello", "protocol": 1, "name": ""}, {"type": "fold"},
                {"type": "action", "id": 1, "action": {"type": "cover", "card": "6S"}}):
        assert not BOT.is_valid(bad), bad


class Recorder(Player):
    """A seat that records every message the referee sends it, answers with a random
    legal action, and notes its own hello, actions and pongs."""

    def __init__(self, name: str, rng: random.Random) -> None:
        super().__init__(name, BotSpec("command", name, (name,), name, named=True), wants_events=True)
        self.rng, self.sent, self.answers = rng, [], []
        self.failure = None

    def hear(self, frame: bytes) -> None:
        self.sent.append(decode(frame))

    async def tell(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def finish(self, ask: Ask) -> dict[str, Any]:
        request = ask.message()
        self.sent.append(json.loads(json.dumps(request)))
        action = self.rng.choice(request["legal"])
        self.answers.append(msg.action_msg(request["id"], action))
        return action


@pytest.mark.slow
@pytest.mark.parametrize("rs", CONFIGS, ids=lambda rs: rs.key)
async def test_every_message_of_seeded_games_is_valid(rs: Any) -> None:
    rules = rs.rules()
    config = MatchConfig(rules=rules, games=3, seed="schema")
    recorders = [Recorder(f"r{i}", random.Random(i)) for i in range(2)]
    others = [BuiltinPlayer(f"b{i}", parse_bot_spec("builtin:random"), config.seed)
              for i in range(rs.players - 2)]
    for index in range(3):
        table = [*recorders, *others]
        await play_game(table, config, index=index, seed=f"schema:{index}", dealer=index % rs.players)
    referee_side = [m for r in recorders for m in r.sent]
    bot_side = [m for r in recorders for m in r.answers]
    bot_side += [msg.bot_hello_msg("r0", version="1.0", author="x", token="t"), msg.pong_msg(3),
                 msg.hello_msg("durak-ref")]
    assert {m["type"] for m in referee_side} >= {"game_start", "event", "request", "game_end"}
    assert len(referee_side) + len(bot_side) > 200
    for message in referee_side:
        REFEREE.validate(message)
    for message in bot_side[:-1]:
        BOT.validate(message)
    REFEREE.validate(bot_side[-1])
