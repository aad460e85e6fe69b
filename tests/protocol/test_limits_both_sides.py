"""Every size and length limit of the protocol, on both sides of the limit: the frame
limit when encoding and when decoding (exactly the limit passes, one byte more fails),
the bot name length, the suit letter of ``trump_suit``, the clock's wire fields, and the
decoder's promise that a long stream of small frames costs memory for one frame, not
for the stream."""

from __future__ import annotations

import struct
import tracemalloc

import msgpack
import pytest

from protocol import messages as m
from protocol.codec import FrameDecoder, decode, encode
from protocol.errors import LocalProtocolError, RemoteProtocolError


def padded(body_size: int) -> dict[str, object]:
    """A message whose msgpack body is exactly ``body_size`` bytes."""
    for pad in range(body_size, -1, -1):
        message = {"type": "event", "pad": b"x" * pad}
        size = len(msgpack.packb(message, use_bin_type=True))
        if size == body_size:
            return message
        if size < body_size:
            break
    raise AssertionError(f"no padding gives a {body_size}-byte body")


@pytest.mark.parametrize("limit", [100, 300, 70_000])
def test_encode_takes_a_body_of_exactly_the_limit_and_refuses_one_byte_more(limit: int) -> None:
    frame = encode(padded(limit), max_frame=limit)
    assert len(frame) == 4 + limit and struct.unpack(">I", frame[:4]) == (limit,)
    with pytest.raises(LocalProtocolError, match=f"{limit + 1} bytes; the limit is {limit}"):
        encode(padded(limit + 1), max_frame=limit)


@pytest.mark.parametrize("limit", [100, 300, 70_000])
def test_decode_takes_a_frame_of_exactly_the_limit_and_refuses_one_byte_more(limit: int) -> None:
    exact = encode(padded(limit), max_frame=limit)
    assert decode(exact, max_frame=limit) == padded(limit)
    decoder = FrameDecoder(max_frame=limit)
    decoder.feed(exact)
    assert decoder.next_message() == padded(limit)
    over = encode(padded(limit + 1), max_frame=limit + 1)
    with pytest.raises(RemoteProtocolError, match=f"{limit + 1} bytes; the limit is {limit}"):
        decode(over, max_frame=limit)


@pytest.mark.parametrize("length,ok", [(1, True), (63, True), (64, True), (65, False), (0, False)])
def test_a_bot_name_may_be_up_to_64_characters(length: int, ok: bool) -> None:
    hello = {"type": "hello", "protocol": 1, "name": "n" * length}
    if ok:
        assert m.parse_bot_hello(hello).name == "n" * length
    else:
        with pytest.raises(RemoteProtocolError, match="name"):
            m.parse_bot_hello(hello)


GAME_START = m.game_start_msg(game=0, seat=0, players=2, names=["a", "b"], rules={}, dealer=1,
                              trump="TH", hand=["6S", "7H", "9C", "JD", "QS", "AS"], attacker=0)


@pytest.mark.parametrize("suit", ["C", "D", "H", "S"])
def test_each_suit_letter_is_a_trump_suit(suit: str) -> None:
    message = dict(GAME_START, trump="T" + suit, trump_suit=suit)
    assert m.parse_referee_message(message)["trump_suit"] == suit


@pytest.mark.parametrize("suit", ["X", "", "CD", "c", "h", 1, None, ["H"]])
def test_anything_else_is_not_a_trump_suit(suit: object) -> None:
    with pytest.raises(RemoteProtocolError, match="trump_suit"):
        m.parse_referee_message(dict(GAME_START, trump_suit=suit))
    with pytest.raises(RemoteProtocolError, match="trump_suit"):
        m.parse_referee_message({k: v for k, v in GAME_START.items() if k != "trump_suit"})


def test_the_clock_map_keeps_whole_milliseconds_and_none_for_no_limit() -> None:
    assert m.clock_map() == {"remaining_ms": None, "increment_ms": None, "move_ms": None}
    assert m.clock_map(remaining_ms=1500, increment_ms=100, move_ms=2000) == {
        "remaining_ms": 1500, "increment_ms": 100, "move_ms": 2000}
    assert m.clock_map(move_ms=0) == {"remaining_ms": None, "increment_ms": None, "move_ms": 0}
    for field in ("remaining_ms", "increment_ms", "move_ms"):
        for bad in (1.5, "10", True):
            with pytest.raises(LocalProtocolError, match=f"clock.{field}"):
                m.clock_map(**{field: bad})  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_long_stream_of_small_frames_costs_memory_for_a_frame_not_for_the_stream() -> None:
    """2 MB through the decoder, fed and drained a frame at a time (a bot answering
    request after request): what the decoder holds stays a few frames' worth."""
    frame = encode({"type": "action", "id": 1, "action": {"type": "pass"}, "pad": "y" * 90})
    decoder = FrameDecoder()
    tracemalloc.start()
    try:
        for _ in range(2_000):  # warm-up
            decoder.feed(frame)
            assert decoder.next_message() is not None
        base, _ = tracemalloc.get_traced_memory()
        for _ in range(2_000_000 // len(frame)):
            decoder.feed(frame)
            assert decoder.next_message() is not None
        now, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert decoder.buffered == 0
    assert now - base < 64 * 1024, f"the decoder kept {now - base} bytes after 2 MB"


def test_frames_fed_a_byte_at_a_time_and_in_bulk_give_the_same_messages() -> None:
    frames = [encode({"type": "pong", "id": i}) for i in range(300)]
    whole = FrameDecoder()
    whole.feed(b"".join(frames))
    bulk = list(whole.messages())
    trickle = FrameDecoder()
    got = []
    for byte in b"".join(frames):
        trickle.feed(bytes([byte]))
        got.extend(trickle.messages())
    assert bulk == got == [{"type": "pong", "id": i} for i in range(300)]
    assert trickle.buffered == 0


@pytest.mark.parametrize("length,shown", [(79, None), (80, None), (81, 77), (500, 77)])
def test_a_local_error_quotes_at_most_80_characters_of_the_bad_value(length: int, shown: int | None) -> None:
    value = ["x" * (length - 4)]  # its repr, ['xx...'], is the length asked for
    text = repr(value)
    assert len(text) == length
    with pytest.raises(LocalProtocolError) as error:
        encode(value)  # type: ignore[arg-type]
    quoted = str(error.value).split("got list: ", 1)[1]
    assert quoted == (text if shown is None else text[:shown] + "...")


@pytest.mark.parametrize("make,kind", [(m.ping_msg, "ping"), (m.pong_msg, "pong")])
def test_ping_and_pong_ids_are_non_negative_ints_and_the_error_names_the_message(make: object, kind: str) -> None:
    assert make(0) == {"type": kind, "id": 0}  # type: ignore[operator]
    for bad in (-1, 1.0, "1", None, True):
        with pytest.raises(LocalProtocolError, match=f"^{kind}: id must be a non-negative int, got "):
            make(bad)  # type: ignore[operator]


def nested(depth: int, key: str = "k") -> dict[str, object]:
    """A message whose maps nest ``depth`` deep (the message itself is depth 1)."""
    message: dict[str, object] = {"type": "event"}
    inner = message
    for _ in range(depth - 1):
        child: dict[str, object] = {}
        inner[key] = child
        inner = child
    return message


@pytest.mark.parametrize("limit", [2, 5, 32])
def test_nesting_up_to_the_depth_limit_decodes_and_one_more_is_refused_naming_where(limit: int) -> None:
    assert decode(encode(nested(limit)), max_depth=limit) == nested(limit)
    with pytest.raises(RemoteProtocolError) as error:
        decode(encode(nested(limit + 1)), max_depth=limit)
    path = ".".join(["k"] * limit)
    where = path if len(path) <= 40 else path[:37] + "..."
    assert str(error.value) == (f"frame nests arrays/maps more than {limit} deep (at {where}); "
                                f"the limit is {limit}")


def test_the_path_of_a_refused_nesting_names_array_indexes_and_is_cut_at_40_characters() -> None:
    deep = {"type": "event", "a": [0, [1, {"b": [[2]]}]]}
    with pytest.raises(RemoteProtocolError, match=r"more than 4 deep \(at a\[1\]\[1\]\.b\)"):
        decode(encode(deep), max_depth=4)
    long = nested(3, key="x" * 30)
    with pytest.raises(RemoteProtocolError, match=r"\(at " + "x" * 30 + r"\.x{6}\.\.\.\)"):
        decode(encode(long), max_depth=2)
    exactly = nested(3, key="y" * 20)  # the path "yyy...y.yyy...y" is 41 characters: cut
    with pytest.raises(RemoteProtocolError, match=r"\(at " + "y" * 20 + r"\.y{16}\.\.\.\)"):
        decode(encode(exactly), max_depth=2)
    fits = {"type": "event", "z" * 40: {"q": 1}}  # a 40-character path is shown whole
    with pytest.raises(RemoteProtocolError, match=r"\(at " + "z" * 40 + r"\)"):
        decode(encode(fits), max_depth=1)


def test_a_timestamp_is_refused_naming_where_it_is() -> None:
    body = msgpack.packb({"type": "event", "a": {"when": msgpack.Timestamp(1, 0)}, "l": [0]})
    with pytest.raises(RemoteProtocolError, match=r"msgpack timestamp \(extension type -1\) at a\.when;"):
        decode(struct.pack(">I", len(body)) + body)
    body = msgpack.packb({"type": "event", "t": msgpack.Timestamp(1, 0)})
    with pytest.raises(RemoteProtocolError, match=r"timestamp \(extension type -1\) at t;"):
        decode(struct.pack(">I", len(body)) + body)
    body = msgpack.packb({"type": "event", "l": [1, msgpack.Timestamp(1, 0)]})
    with pytest.raises(RemoteProtocolError, match=r"timestamp \(extension type -1\) at l\[1\];"):
        decode(struct.pack(">I", len(body)) + body)


def test_decode_keeps_the_evidence_of_what_was_wrong() -> None:
    with pytest.raises(RemoteProtocolError, match="^no frame in the data: the input is empty$") as empty:
        decode(b"")
    assert empty.value.evidence == ""  # the (empty) input, as hex
    frame = encode({"type": "pong", "id": 1})
    with pytest.raises(RemoteProtocolError, match="^3 bytes follow the frame") as extra:
        decode(frame + b"abc")
    assert extra.value.evidence == "61 62 63"  # the bytes after the frame, as hex


@pytest.mark.parametrize("value,text", [
    ({}, "a map of 0 entries"), ({"a": 1}, "a map of 1 entry"), ({"a": 1, "b": 2}, "a map of 2 entries"),
    ([], "an array of 0 elements"), ([1], "an array of 1 element"), ([1, 2], "an array of 2 elements"),
    (None, "nil"), (True, "true"), (False, "false"), ("x" * 40, repr("x" * 40)[:37] + "..."),
    ("x" * 38, repr("x" * 38)), (b"ab", "bin b'ab'"),
])
def test_values_in_error_messages_are_described_as_a_bot_author_knows_them(value: object, text: str) -> None:
    assert m.describe(value) == text


REQUEST = m.request_msg(1, 0, {"phase": "attack"}, [{"type": "pass"}], m.clock_map(move_ms=100))


@pytest.mark.parametrize("message,field,value,error", [
    (GAME_START, "rules", None, "rules: missing; expected a map"),
    (GAME_START, "rules", [1], "rules: expected a map, got an array of 1 element"),
    (GAME_START, "names", None, "names: missing; expected an array"),
    (GAME_START, "names", "ab", "names: expected an array, got 'ab'"),
    (GAME_START, "names", {}, "names: expected an array, got a map of 0 entries"),
    (GAME_START, "hand", None, "hand: missing; expected an array"),
    (REQUEST, "observation", None, "observation: missing; expected a map"),
    (REQUEST, "observation", 3, "observation: expected a map, got 3"),
    (REQUEST, "legal", None, "legal: missing; expected an array"),
    (REQUEST, "legal", {"type": "pass"}, "legal: expected an array, got a map of 1 entry"),
    (REQUEST, "clock", None, "clock: missing; expected a map"),
])
def test_a_missing_or_mistyped_map_or_array_is_named_in_the_error(
        message: dict[str, object], field: str, value: object, error: str) -> None:
    bad = dict(message)
    if value is None:
        del bad[field]
    else:
        bad[field] = value
    with pytest.raises(RemoteProtocolError) as raised:
        m.parse_referee_message(bad)
    assert str(raised.value) == error and raised.value.field == field
