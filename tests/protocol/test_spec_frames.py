"""Every example frame in protocol/SPEC.md decodes to the JSON shown next to it, encodes
back to the same bytes, and is a valid message for its direction."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import protocol
from protocol.codec import decode, encode
from protocol.messages import (
    BOT_MESSAGE_TYPES,
    REFEREE_MESSAGE_TYPES,
    ActionMessage,
    parse_bot_message,
    parse_referee_message,
)

SPEC = Path(protocol.__file__).with_name("SPEC.md")

FRAME_RE = re.compile(
    r"<!-- frame: (?P<name>\S+) from: (?P<sender>referee|bot) -->\s*"
    r"```hex\n(?P<hex>.*?)```\s*```json\n(?P<json>.*?)```",
    re.DOTALL,
)


def spec_frames() -> list[tuple[str, str, bytes, dict]]:
    text = SPEC.read_text(encoding="utf-8")
    frames = [
        (m["name"], m["sender"], bytes.fromhex(m["hex"]), json.loads(m["json"]))
        for m in FRAME_RE.finditer(text)
    ]
    # Every marker must have been matched: a malformed block must not be silently skipped.
    assert len(frames) == text.count("<!-- frame:"), "a frame marker is not followed by hex + json"
    return frames


FRAMES = spec_frames()


def test_spec_has_an_example_frame_for_every_message_type() -> None:
    named = {(sender, message["type"]) for name, sender, _, message in FRAMES
             if not name.startswith("conversation-")}
    expected = {("referee", t) for t in REFEREE_MESSAGE_TYPES} | {("bot", t) for t in BOT_MESSAGE_TYPES}
    assert expected <= named


@pytest.mark.parametrize(("name", "sender", "frame", "message"), FRAMES, ids=[f[0] for f in FRAMES])
def test_spec_frame_decodes_to_its_json_and_encodes_back(name: str, sender: str, frame: bytes, message: dict) -> None:
    decoded = decode(frame)
    assert decoded == message
    assert list(decoded) == list(message)  # same key order, as the encoder writes it
    assert encode(message) == frame
    if sender == "bot":
        parse_bot_message(decoded)
    else:
        parse_referee_message(decoded)


def test_spec_conversation_is_consistent() -> None:
    conversation = [(s, m) for name, s, _, m in FRAMES if name.startswith("conversation-")]
    assert conversation[0] == ("referee", conversation[0][1]) and conversation[0][1]["type"] == "hello"
    assert conversation[1][0] == "bot" and conversation[1][1]["type"] == "hello"
    assert conversation[-1][1]["type"] == "bye"
    open_request = None
    last_id = 0
    for sender, message in conversation[2:]:
        if message["type"] == "request":
            assert open_request is None, "a request before the previous one was answered"
            assert message["id"] > last_id
            last_id = message["id"]
            open_request = message
        elif sender == "bot":
            parsed = parse_bot_message(message)
            assert isinstance(parsed, ActionMessage)
            assert open_request is not None and parsed.id == open_request["id"]
            assert parsed.action in open_request["legal"]
            open_request = None
    assert open_request is None


def test_spec_framing_example_is_right() -> None:
    text = SPEC.read_text(encoding="utf-8")
    found = re.search(r"Example: the frame `([0-9a-f \n]+)`", text)
    assert found is not None
    assert decode(bytes.fromhex(found[1])) == {"type": "bye", "reason": "match_end"}
