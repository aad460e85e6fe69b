"""Message validation: every field of every bot message, card text, referee messages."""

from __future__ import annotations

from typing import Any

import pytest

from protocol import messages as m
from protocol.cards import ALL_CARDS, is_card_text, parse_card_text, rank_index, suit_of
from protocol.errors import LocalProtocolError, RemoteProtocolError, UnsupportedVersionError

HELLO = {"type": "hello", "protocol": 1, "name": "greedy"}


def action(**fields: Any) -> dict[str, Any]:
    return {"type": "action", "id": 3, "action": fields}


# -- cards -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "card"),
    [("6S", "6S"), ("TH", "TH"), ("10H", "TH"), ("10h", "TH"), ("th", "TH"), ("qd", "QD"),
     ("Ac", "AC"), ("2c", "2C")],
)
def test_card_text_is_normalised(text: str, card: str) -> None:
    assert parse_card_text(text) == card


@pytest.mark.parametrize(
    "text",
    ["X9", "1H", "10", "", "6", "6SS", " 6S", "6S ", "6s\n", "100H", "11H", "6\u017f", "\uff16S",
     6, None, b"6S", ["6S"]],
)
def test_bad_card_text_is_refused(text: Any) -> None:
    with pytest.raises(ValueError, match=r"^expected a card like '6S', got "):
        parse_card_text(text)


def test_card_helpers() -> None:
    assert len(ALL_CARDS) == 52
    assert is_card_text("TH") and not is_card_text("10H") and not is_card_text("th")
    assert suit_of("TH") == "H"
    assert [rank_index(c) for c in ("2C", "9C", "TC", "AC")] == [0, 7, 8, 12]


# -- bot hello -----------------------------------------------------------------------------


def test_full_hello_parses() -> None:
    hello = m.parse_bot_message({**HELLO, "version": "1.0", "author": "Ann", "token": "xyz"})
    assert hello == m.BotHello(protocol=1, name="greedy", version="1.0", author="Ann", token="xyz")


def test_minimal_hello_and_nil_optionals_parse() -> None:
    assert m.parse_bot_message(HELLO) == m.BotHello(1, "greedy")
    assert m.parse_bot_message({**HELLO, "version": None, "author": None}) == m.BotHello(1, "greedy")


def test_unknown_keys_are_ignored() -> None:
    assert m.parse_bot_message({**HELLO, "colour": "blue", "future": [1, {"x": 2}]}) == m.BotHello(1, "greedy")
    parsed = m.parse_bot_message({"type": "action", "id": 1, "extra": 1,
                                  "action": {"type": "take", "card": "6S", "why": "because"}})
    assert parsed == m.ActionMessage(1, {"type": "take"})


@pytest.mark.parametrize(
    ("message", "text", "field"),
    [
        ({"type": "hello", "name": "x"}, "protocol: missing; expected an integer protocol version", "protocol"),
        ({**HELLO, "protocol": "1"}, "protocol: expected an integer protocol version, got '1'", "protocol"),
        ({**HELLO, "protocol": True}, "protocol: expected an integer protocol version, got true", "protocol"),
        ({**HELLO, "protocol": 1.0}, "protocol: expected an integer protocol version, got 1.0", "protocol"),
        ({"type": "hello", "protocol": 1}, "name: missing; expected a non-empty str", "name"),
        ({**HELLO, "name": None}, "name: expected a non-empty str, got nil", "name"),
        ({**HELLO, "name": b"x"}, "name: expected a non-empty str, got bin b'x'", "name"),
        ({**HELLO, "name": ""}, "name: expected a non-empty str, got ''", "name"),
        ({**HELLO, "name": "x" * 65}, "name: is 65 characters long; the limit is 64", "name"),
        ({**HELLO, "name": "a\x1b[2J"}, "name: must be printable text without control characters, got 'a\\x1b[2J'", "name"),
        ({**HELLO, "version": 1}, "version: expected a str or nil, got 1", "version"),
        ({**HELLO, "author": ["me"]}, "author: expected a str or nil, got an array of 1 element", "author"),
        ({**HELLO, "token": "t" * 257}, "token: is 257 characters long; the limit is 256", "token"),
    ],
)
def test_hello_errors_name_the_field(message: dict, text: str, field: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_bot_message(message)
    assert str(info.value) == text
    assert info.value.field == field


def test_version_check() -> None:
    assert m.check_version(m.BotHello(1, "x")) == 1
    with pytest.raises(UnsupportedVersionError) as info:
        m.check_version(m.BotHello(2, "x"))
    assert str(info.value) == "version mismatch: the bot speaks protocol 2, the referee 1"
    assert info.value.code == "version" and info.value.field == "protocol"
    assert isinstance(info.value, RemoteProtocolError)
    with pytest.raises(UnsupportedVersionError, match="the bot speaks protocol 2, the referee 1 or 3$"):
        m.check_version(m.BotHello(2, "x"), supported=(1, 3))
    assert m.PROTOCOL_VERSION == 1 and m.SUPPORTED_VERSIONS == (1,)


# -- message type dispatch --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "text", "field"),
    [
        ({"type": "fold"}, "type: unknown message type 'fold'; expected one of: hello, action, pong", "type"),
        ({"type": "request"}, "type: unknown message type 'request'; expected one of: hello, action, pong",
         "type"),
        ({"type": "ping", "id": 1}, "type: unknown message type 'ping'; expected one of: hello, action, pong",
         "type"),
        ({"type": 7}, "type: expected a str, got 7", "type"),
        ({"name": "x"}, "type: missing; expected one of: hello, action, pong", "type"),
        ([1, 2], "message: expected a map, got an array of 2 elements", None),
    ],
)
def test_message_type_errors(message: Any, text: str, field: str | None) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_bot_message(message)
    assert str(info.value) == text
    assert info.value.field == field


# -- pong ------------------------------------------------------------------------------------


@pytest.mark.parametrize("ping_id", [0, 1, 7, 2**40])
def test_pong_parses(ping_id: int) -> None:
    parsed = m.parse_bot_message({"type": "pong", "id": ping_id, "future": "ignored"})
    assert parsed == m.Pong(ping_id)
    with pytest.raises(AttributeError):
        parsed.id = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ({"type": "pong"}, "id: missing; expected a non-negative integer ping id"),
        ({"type": "pong", "id": -1}, "id: expected a non-negative integer ping id, got -1"),
        ({"type": "pong", "id": "1"}, "id: expected a non-negative integer ping id, got '1'"),
        ({"type": "pong", "id": True}, "id: expected a non-negative integer ping id, got true"),
        ({"type": "pong", "id": None}, "id: expected a non-negative integer ping id, got nil"),
    ],
)
def test_pong_errors_name_the_field(message: dict, text: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_bot_message(message)
    assert str(info.value) == text
    assert info.value.field == "id"


def test_ping_and_pong_constructors() -> None:
    assert m.ping_msg(5) == {"type": "ping", "id": 5}
    assert m.pong_msg(5) == {"type": "pong", "id": 5}
    assert m.parse_bot_message(m.pong_msg(0)) == m.Pong(0)
    assert m.parse_referee_message(m.ping_msg(0)) == {"type": "ping", "id": 0}
    for build in (m.ping_msg, m.pong_msg):
        for bad in (-1, "1", True, 1.0, None):
            with pytest.raises(LocalProtocolError, match="id must be a non-negative int"):
                build(bad)  # type: ignore[arg-type]


def test_message_type_lists() -> None:
    assert m.BOT_MESSAGE_TYPES == ("hello", "action", "pong")
    assert m.REFEREE_MESSAGE_TYPES == (
        "hello", "game_start", "event", "request", "game_end", "error", "bye", "ping")
    assert m.ERROR_CODES == ("protocol", "illegal", "version", "timeout", "stale", "auth", "busy", "limit")
    assert set(m.REFUSAL_CODES) == {"version", "auth", "busy", "limit"} <= set(m.ERROR_CODES)


@pytest.mark.parametrize("code", ["auth", "busy", "limit"])
def test_tcp_refusal_errors(code: str) -> None:
    message = m.error_msg(code, "go away", True)
    assert message == {"type": "error", "code": code, "message": "go away", "fatal": True}
    assert m.parse_referee_message(message) is message


# -- actions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "canonical"),
    [
        ({"type": "attack", "card": "6S"}, {"type": "attack", "card": "6S"}),
        ({"card": "7s", "slot": 2, "type": "cover"}, {"type": "cover", "slot": 2, "card": "7S"}),
        ({"type": "throw_in", "card": "10H"}, {"type": "throw_in", "card": "TH"}),
        ({"type": "transfer", "card": "6D"}, {"type": "transfer", "card": "6D"}),
        ({"type": "show_trump", "card": "6H"}, {"type": "show_trump", "card": "6H"}),
        ({"type": "take"}, {"type": "take"}),
        ({"type": "pass"}, {"type": "pass"}),
        ({"type": "exchange", "card": None}, {"type": "exchange"}),
    ],
)
def test_every_action_type_parses_to_canonical_form(fields: dict, canonical: dict) -> None:
    parsed = m.parse_bot_message(action(**fields))
    assert parsed == m.ActionMessage(3, canonical)
    assert list(parsed.action) == list(canonical)  # canonical key order too


def test_action_types_are_the_eight_of_the_spec() -> None:
    assert m.ACTION_TYPES == ("attack", "cover", "throw_in", "transfer", "show_trump", "take", "pass", "exchange")


@pytest.mark.parametrize(
    ("message", "text", "field"),
    [
        (action(type="attack", card="X9"), "action.card: expected a card like '6S', got 'X9'", "action.card"),
        (action(type="attack"), "action.card: missing; expected a card like '6S'", "action.card"),
        (action(type="throw_in", card=None), "action.card: expected a card like '6S', got nil", "action.card"),
        (action(type="transfer", card=6), "action.card: expected a card like '6S', got 6", "action.card"),
        (action(type="show_trump", card=b"6H"), "action.card: expected a card like '6S', got bin b'6H'", "action.card"),
        (action(type="cover", slot="a", card="6S"), "action.slot: expected a non-negative integer, got 'a'", "action.slot"),
        (action(type="cover", slot=-1, card="6S"), "action.slot: expected a non-negative integer, got -1", "action.slot"),
        (action(type="cover", slot=False, card="6S"), "action.slot: expected a non-negative integer, got false", "action.slot"),
        (action(type="cover", slot=0.0, card="6S"), "action.slot: expected a non-negative integer, got 0.0", "action.slot"),
        (action(type="cover", card="6S"), "action.slot: missing; expected a non-negative integer", "action.slot"),
        (action(type="cover", slot=0, card="6X"), "action.card: expected a card like '6S', got '6X'", "action.card"),
        (action(type="fold"), "action.type: unknown action type 'fold'; expected one of: attack, cover, "
                              "throw_in, transfer, show_trump, take, pass, exchange", "action.type"),
        (action(type=None), "action.type: unknown action type nil; expected one of: attack, cover, "
                            "throw_in, transfer, show_trump, take, pass, exchange", "action.type"),
        (action(), "action.type: missing; expected one of: attack, cover, throw_in, transfer, "
                   "show_trump, take, pass, exchange", "action.type"),
        ({"type": "action", "id": 3, "action": "take"},
         "action: expected an action map like {'type': 'take'}, got 'take'", "action"),
        ({"type": "action", "id": 3, "action": ["take"]},
         "action: expected an action map like {'type': 'take'}, got an array of 1 element", "action"),
        ({"type": "action", "id": 3}, "action: missing; expected an action map", "action"),
        ({"type": "action", "action": {"type": "take"}}, "id: missing; expected a positive integer request id", "id"),
        ({"type": "action", "id": 0, "action": {"type": "take"}}, "id: expected a positive integer request id, got 0", "id"),
        ({"type": "action", "id": "3", "action": {"type": "take"}}, "id: expected a positive integer request id, got '3'", "id"),
        ({"type": "action", "id": True, "action": {"type": "take"}}, "id: expected a positive integer request id, got true", "id"),
    ],
)
def test_action_errors_name_the_field(message: dict, text: str, field: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_bot_message(message)
    assert str(info.value) == text
    assert info.value.field == field
    assert info.value.code == "protocol"


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_action({"type": "attack", "card": "Z" * 1000})
    assert len(str(info.value)) < 120 and str(info.value).endswith("...")


def test_parsed_messages_are_frozen() -> None:
    hello = m.parse_bot_hello(HELLO)
    with pytest.raises(AttributeError):
        hello.name = "other"  # type: ignore[misc]


# -- referee -> bot ---------------------------------------------------------------------------

OBS = {"seat": 0, "hand": ["6S"]}
REQUEST = m.request_msg(1, 0, OBS, [{"type": "attack", "card": "6S"}], m.clock_map(1000, None, None))
GAME_START = m.game_start_msg(game=0, seat=0, players=2, names=["a", "b"], rules={}, dealer=1,
                              trump="TH", hand=["6S"], attacker=0)


@pytest.mark.parametrize(
    "message",
    [
        m.hello_msg("durak-ref 0.1.0"), GAME_START, m.event_msg(0, {"type": "take", "seat": 1}),
        REQUEST, m.game_end_msg(0, 1, "normal", "x"), m.game_end_msg(0, None, "draw", "x"),
        m.error_msg("stale", "late", False), m.bye_msg(), {"type": "bye"}, m.ping_msg(1),
        m.event_msg(0, {"type": "something_new", "seat": 1}),
    ],
)
def test_referee_messages_from_the_constructors_validate(message: dict) -> None:
    assert m.parse_referee_message(message) is message


def test_constructor_shapes() -> None:
    assert m.hello_msg("r") == {"type": "hello", "protocol": 1, "versions": [1], "referee": "r"}
    assert GAME_START["trump_suit"] == "H"
    assert list(GAME_START) == ["type", "game", "seat", "players", "names", "rules", "dealer",
                                "trump", "trump_suit", "hand", "attacker"]
    assert m.request_msg(2, 0, {}, [{"type": "take"}])["clock"] == {
        "remaining_ms": None, "increment_ms": None, "move_ms": None}
    assert m.bot_hello_msg("b") == {"type": "hello", "protocol": 1, "name": "b"}
    assert m.bot_hello_msg("b", author="me") == {"type": "hello", "protocol": 1, "name": "b", "author": "me"}
    assert m.action_msg(4, {"type": "pass"}) == {"type": "action", "id": 4, "action": {"type": "pass"}}
    assert m.error_msg("illegal", "no", 0) == {"type": "error", "code": "illegal", "message": "no", "fatal": False}
    assert m.bye_msg() == {"type": "bye", "reason": "match_end"}


@pytest.mark.parametrize(
    "build",
    [
        lambda: m.error_msg("oops", "x", True),
        lambda: m.game_end_msg(0, 1, "won", "x"),
        lambda: m.request_msg(1, 0, {}, []),
        lambda: m.clock_map(1.5),
        lambda: m.event_msg(0, {"seat": 1}),
        lambda: m.game_start_msg(game=0, seat=2, players=2, names=[], rules={}, dealer=0,
                                 trump="TH", hand=[], attacker=0),
    ],
)
def test_constructors_refuse_bad_arguments_as_our_bug(build: Any) -> None:
    with pytest.raises(LocalProtocolError):
        build()


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ({"type": "game_end", "game": 0}, "durak: missing; expected a seat number or nil"),
        ({**REQUEST, "legal": []}, "legal: expected at least one legal action, got an empty array"),
        ({**REQUEST, "legal": [{"type": "attack", "card": "X"}]},
         "legal[0].card: expected a card like '6S', got 'X'"),
        ({**REQUEST, "id": 0}, "id: expected an integer >= 1, got 0"),
        ({**REQUEST, "clock": {"remaining_ms": 1.5}},
         "clock.remaining_ms: expected an integer (milliseconds) or nil, got 1.5"),
        ({**REQUEST, "observation": []}, "observation: expected a map, got an array of 0 elements"),
        ({**GAME_START, "hand": ["6S", "10H"]}, "hand[1]: expected a card like '6S', got '10H'"),
        ({**GAME_START, "trump_suit": "X"}, "trump_suit: expected one of 'C', 'D', 'H', 'S', got 'X'"),
        ({**GAME_START, "names": ["a", 1]}, "names[1]: expected a str, got 1"),
        ({"type": "event", "game": 0, "event": {}}, "event.type: missing; expected a str"),
        ({"type": "error", "code": "x", "message": "y", "fatal": 1}, "fatal: expected true or false, got 1"),
        ({"type": "hello", "protocol": 1, "versions": [1, "2"], "referee": "r"},
         "versions[1]: expected an integer, got '2'"),
        ({"type": "action", "id": 1}, "type: unknown message type 'action'; expected one of: hello, "
                                      "game_start, event, request, game_end, error, bye, ping"),
        ({"type": "ping"}, "id: missing; expected a non-negative integer"),
        ({"type": "ping", "id": -3}, "id: expected a non-negative integer, got -3"),
        ({"type": "ping", "id": "x"}, "id: expected a non-negative integer, got 'x'"),
    ],
)
def test_referee_message_errors(message: dict, text: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_referee_message(message)
    assert str(info.value) == text


# Each number field of a referee message at its minimum is accepted and one below is
# refused, naming the field and its bound (the SDK's check of what the referee sent).
GAME_END = m.game_end_msg(0, 1, "normal", "x")
EVENT = m.event_msg(0, {"type": "take", "seat": 1})
REFEREE_HELLO = m.hello_msg("r")


@pytest.mark.parametrize(("message", "field", "minimum", "expected"), [
    (REQUEST, "game", 0, "a non-negative integer"),
    (EVENT, "game", 0, "a non-negative integer"),
    (GAME_END, "game", 0, "a non-negative integer"),
    (GAME_END, "durak", 0, "a seat number or nil"),
    (REFEREE_HELLO, "protocol", 1, "an integer >= 1"),
    (GAME_START, "game", 0, "a non-negative integer"),
    (GAME_START, "seat", 0, "a non-negative integer"),
    (GAME_START, "dealer", 0, "a non-negative integer"),
    (GAME_START, "attacker", 0, "a non-negative integer"),
    (GAME_START, "players", 2, "an integer >= 2"),
])
def test_every_number_a_referee_message_holds_is_checked_at_its_minimum(
        message: dict, field: str, minimum: int, expected: str) -> None:
    at_minimum = {**message, field: minimum}
    assert m.parse_referee_message(at_minimum) is at_minimum
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_referee_message({**message, field: minimum - 1})
    assert str(info.value) == f"{field}: expected {expected}, got {minimum - 1}"
    assert info.value.field == field


@pytest.mark.parametrize(("message", "field", "text"), [
    (GAME_START, "trump", "trump: missing; expected a card like '6S'"),
    (GAME_START, "trump_suit", "trump_suit: missing; expected a suit letter"),
    (m.error_msg("illegal", "no", True), "fatal", "fatal: missing; expected true or false"),
])
def test_a_missing_field_of_a_referee_message_is_named_with_what_was_expected(
        message: dict, field: str, text: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_referee_message({k: v for k, v in message.items() if k != field})
    assert str(info.value) == text and info.value.field == field


def test_a_bad_trump_card_is_named_at_the_top_level() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_referee_message({**GAME_START, "trump": "1H"})
    assert str(info.value) == "trump: expected a card like '6S', got '1H'"
    assert info.value.field == "trump"


def test_a_bye_may_leave_out_its_reason_but_a_reason_is_text() -> None:
    assert m.parse_referee_message({"type": "bye", "reason": None}) == {"type": "bye", "reason": None}
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_referee_message({"type": "bye", "reason": 3})
    assert str(info.value) == "reason: expected a str or nil, got 3"


@pytest.mark.parametrize("field", ["version", "author", "token"])
def test_each_text_of_a_hello_may_be_256_characters_and_not_257(field: str) -> None:
    hello = {"type": "hello", "protocol": 1, "name": "b"}
    assert getattr(m.parse_bot_hello({**hello, field: "x" * 256}), field) == "x" * 256
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_bot_hello({**hello, field: "x" * 257})
    assert str(info.value) == f"{field}: is 257 characters long; the limit is 256"
    assert info.value.field == field


def test_an_event_whose_type_is_not_text_is_named_inside_the_event() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_referee_message({"type": "event", "game": 0, "event": {"type": 1}})
    assert str(info.value) == "event.type: expected a str, got 1"
    assert info.value.field == "event.type"


def test_parse_action_names_the_field_action_unless_told_another() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_action({"type": "attack"})
    assert str(info.value) == "action.card: missing; expected a card like '6S'"
    with pytest.raises(RemoteProtocolError) as info:
        m.parse_action({"type": "attack"}, "legal[3]")
    assert str(info.value) == "legal[3].card: missing; expected a card like '6S'"


def test_game_start_holds_every_field_of_the_spec_under_its_name() -> None:
    # Built here, not at import: what a constructor returns while the test runs.
    start = m.game_start_msg(game=2, seat=1, players=3, names=["a", "b", "c"], rules={"deck": 36},
                             dealer=0, trump="9D", hand=["6S"], attacker=1)
    assert start == {"type": "game_start", "game": 2, "seat": 1, "players": 3,
                     "names": ["a", "b", "c"], "rules": {"deck": 36}, "dealer": 0, "trump": "9D",
                     "trump_suit": "D", "hand": ["6S"], "attacker": 1}


@pytest.mark.parametrize(("build", "text"), [
    (lambda: m.game_start_msg(game=0, seat=3, players=3, names=[], rules={}, dealer=0, trump="TH",
                              hand=[], attacker=0), "game_start: seat 3 is not in 0..2"),
    (lambda: m.event_msg(0, {"seat": 1}), "event without a str type: {'seat': 1}"),
    (lambda: m.error_msg("oops", "x", True),
     "error: unknown code 'oops'; expected one of ('protocol', 'illegal', 'version', 'timeout', "
     "'stale', 'auth', 'busy', 'limit')"),
    (lambda: m.game_end_msg(0, 1, "won", "x"),
     "game_end: unknown termination 'won'; expected one of ('normal', 'draw', 'stalemate', "
     "'action_cap', 'timeout', 'crash', 'protocol', 'illegal', 'disconnect', "
     "'adjudicated')"),
    (lambda: m.request_msg(7, 0, {}, []), "request 7: the legal list is empty"),
])
def test_a_constructor_refusal_says_what_was_wrong(build: Any, text: str) -> None:
    with pytest.raises(LocalProtocolError) as info:
        build()
    assert str(info.value) == text
