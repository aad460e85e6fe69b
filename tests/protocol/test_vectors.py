"""protocol/vectors/frames.json, the test vectors bot authors get: every valid vector's
bytes decode to its message and its message encodes to its bytes; every invalid vector
is refused with exactly its error; and the SPEC's example frames are exactly the valid
vectors (one source: a frame changed in one place and not the other fails here)."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

import protocol
from protocol.codec import decode, encode
from protocol.errors import RemoteProtocolError
from protocol.messages import parse_bot_message, parse_referee_message

VECTORS = json.loads(resources.files("protocol").joinpath("vectors/frames.json").read_text("utf-8"))
SPEC = Path(protocol.__file__).with_name("SPEC.md").read_text(encoding="utf-8")
SPEC_FRAME = re.compile(r"<!-- frame: (?P<name>\S+) from: (?P<sender>referee|bot) -->\s*"
                        r"```hex\n(?P<hex>.*?)```\s*```json\n(?P<json>.*?)```", re.DOTALL)
DIRECTION = {"referee": "referee_to_bot", "bot": "bot_to_referee"}


@pytest.mark.parametrize("vector", VECTORS["valid"], ids=lambda v: v["name"])
def test_a_valid_vector_decodes_to_its_message_and_encodes_to_its_bytes(vector: dict) -> None:
    frame = bytes.fromhex(vector["hex"])
    decoded = decode(frame)
    assert decoded == vector["message"] and list(decoded) == list(vector["message"])
    assert encode(vector["message"]) == frame
    parse = parse_bot_message if vector["direction"] == "bot_to_referee" else parse_referee_message
    parse(decoded)


@pytest.mark.parametrize("vector", VECTORS["invalid"], ids=lambda v: v["name"])
def test_an_invalid_vector_is_refused_with_its_exact_error(vector: dict) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode(bytes.fromhex(vector["hex"]))
    assert info.value.message == vector["error"]


def test_the_specs_example_frames_are_the_valid_vectors() -> None:
    in_spec = [{"name": m["name"], "direction": DIRECTION[m["sender"]],
                "message": json.loads(m["json"]), "hex": bytes.fromhex(m["hex"]).hex()}
               for m in SPEC_FRAME.finditer(SPEC)]
    assert len(in_spec) == SPEC.count("<!-- frame:")
    assert in_spec == VECTORS["valid"]


def test_the_vectors_ship_with_the_package() -> None:
    root = Path(__file__).resolve().parents[2]
    assert '"vectors/*.json"' in (root / "pyproject.toml").read_text()
