"""Each message is declared once (protocol/fields.py, protocol/messages.py), and every form
of it is derived from that declaration: the map the constructors build, the check of a
map that arrived, the schema, and the packed parts frames are joined from. A part that
would put fields out of their declared order is refused when it is made."""

from __future__ import annotations

import pytest

from protocol import messages as m
from protocol.codec import encode, framed, pack
from protocol.errors import LocalProtocolError
from protocol.fields import Field, Int, Record, Text


def test_every_constructor_builds_its_map_in_the_declared_order() -> None:
    built = {
        "hello": m.hello_msg("r"),
        "game_start": m.game_start_msg(game=0, seat=0, players=2, names=["a", "b"], rules={},
                                       dealer=1, trump="TH", hand=["6S"], attacker=0),
        "event": m.event_msg(0, {"type": "take", "seat": 1}),
        "request": m.request_msg(1, 0, {}, [{"type": "take"}]),
        "game_end": m.game_end_msg(0, None, "draw", "x"),
        "error": m.error_msg("illegal", "no", False),
        "bye": m.bye_msg(),
        "ping": m.ping_msg(3),
    }
    assert list(built) == list(m.REFEREE_MESSAGES) == list(m.REFEREE_MESSAGE_TYPES)
    for kind, message in built.items():
        assert tuple(message) == m.REFEREE_MESSAGES[kind].names
    assert tuple(m.clock_map()) == m.CLOCK.names
    assert tuple(m.bot_hello_msg("b", version="1", author="a", token="t")) == m.BOT_HELLO.names
    assert list(m.BOT_MESSAGES) == list(m.BOT_MESSAGE_TYPES)
    assert list(m.EVENTS) == list(m.EVENT_TYPES)


def test_a_message_is_its_head_and_its_runs_of_packed_fields() -> None:
    """The packed parts join to exactly the bytes ``encode`` gives for the whole map."""
    end = m.game_end_msg(70000, 1, "normal", "why")
    joined = (m.GAME_END.head() + m.GAME_END.run({"game": 70000, "durak": 1})
              + m.GAME_END.run({"termination": "normal"}, then="reason") + pack("why"))
    assert framed(joined) == encode(end)
    reflect_head = m.OBSERVATION.head(["direction"])
    assert reflect_head == pack({k: None for k in m.OBSERVATION.names})[:len(reflect_head)]


def test_parts_out_of_the_declared_order_are_refused_when_they_are_made() -> None:
    with pytest.raises(LocalProtocolError, match="does not follow"):
        m.GAME_END.run({"game": 1, "termination": "normal"})  # durak left out between
    with pytest.raises(LocalProtocolError, match="does not follow"):
        m.GAME_END.run({"durak": 1, "game": 1})
    with pytest.raises(LocalProtocolError, match="no field"):
        m.GAME_END.key("winner")
    with pytest.raises(LocalProtocolError, match="not optional"):
        m.GAME_END.head(["durak"])
    # An optional field that is absent may be skipped: direction is the observation's last.
    m.OBSERVATION.follows("attack_limit", "known")


def test_make_refuses_what_the_declaration_does_not_hold() -> None:
    record = Record("demo", [Field("a", Int()), Field("b", Text(), optional=True)])
    assert record.make(a=1) == {"type": "demo", "a": 1}
    assert record.make(a=1, b="x") == {"type": "demo", "a": 1, "b": "x"}
    with pytest.raises(LocalProtocolError, match="a is required"):
        record.make(b="x")
    with pytest.raises(LocalProtocolError, match="no field c"):
        record.make(a=1, c=2)
    with pytest.raises(LocalProtocolError, match="declared twice"):
        Record("twice", [Field("a", Int()), Field("a", Int())])
    with pytest.raises(LocalProtocolError, match="private field must be optional"):
        Field("cards", Int(), private=True)


def test_what_is_private_in_an_event_is_declared_there() -> None:
    """The hidden-information marks the referee's frames and views read (SPEC section 9):
    a draw's cards, a declined exchange, the mark of a forced move."""
    private = {kind: [f.name for f in r.fields if f.private] for kind, r in m.EVENTS.items()}
    assert private["draw"] == ["cards"]
    assert all(private[kind] == ["forced"] for kind in m.ACTION_TYPES)
    assert [kind for kind, r in m.EVENTS.items() if r.private] == ["decline"]
    assert private["bout_end"] == private["out"] == []
