"""Framing: the decoder under every split, every bad input, and arbitrary bytes."""

from __future__ import annotations

import struct

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import messages as m
from protocol.codec import MAX_FRAME, FrameDecoder, decode, encode
from protocol.errors import LocalProtocolError, RemoteProtocolError


def frame_of(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def decode_all(data: bytes, **kwargs: int) -> list[dict]:
    decoder = FrameDecoder(**kwargs)
    decoder.feed(data)
    decoder.close()
    out = list(decoder.messages())
    assert decoder.at_eof()
    return out


def remote_error(data: bytes, **kwargs: int) -> RemoteProtocolError:
    with pytest.raises(RemoteProtocolError) as info:
        decode_all(data, **kwargs)
    return info.value


OBSERVATION = {
    "seat": 0, "players": 2, "dealer": 1, "hand": ["6S", "7H"], "trump": "TH",
    "trump_suit": "H", "trump_holder": None, "talon": 12, "table": [["6S", "7S"], ["6H", None]],
    "discard": [], "hand_sizes": [2, 6], "out": [False, False], "attacker": 0, "defender": 1,
    "phase": "defend", "taking": False, "bout": 3, "transfers": 0, "attack_limit": 6,
    "known": [[], ["QS"]], "shown": [],
}

EVERY_MESSAGE = [
    m.hello_msg("durak-ref 0.1.0"),
    m.bot_hello_msg("greedy", version="1.0", author="me", token="t0k"),
    m.game_start_msg(game=0, seat=1, players=2, names=["a", "b"], rules={"deck": 36},
                     dealer=1, trump="TH", hand=["6S", "7H"], attacker=0),
    m.event_msg(0, {"type": "draw", "seat": 1, "count": 2, "cards": ["9C", "TH"]}),
    m.request_msg(17, 0, OBSERVATION, [{"type": "cover", "slot": 1, "card": "7H"}, {"type": "take"}],
                  m.clock_map(59500, 500, None)),
    m.action_msg(17, {"type": "cover", "slot": 1, "card": "7H"}),
    m.game_end_msg(0, None, "draw", "both went out"),
    m.error_msg("illegal", "no", fatal=False),
    m.bye_msg(),
]


# -- round trips and splits ---------------------------------------------------------------


@pytest.mark.parametrize("message", EVERY_MESSAGE, ids=[x["type"] for x in EVERY_MESSAGE])
def test_every_message_type_round_trips(message: dict) -> None:
    frame = encode(message)
    assert struct.unpack(">I", frame[:4])[0] == len(frame) - 4
    assert decode(frame) == message
    assert list(decode(frame)) == list(message)


STREAM = b"".join(encode(x) for x in EVERY_MESSAGE)


def test_one_byte_at_a_time() -> None:
    decoder = FrameDecoder()
    got = []
    for i in range(len(STREAM)):
        decoder.feed(STREAM[i : i + 1])
        got.extend(decoder.messages())
    decoder.feed(b"")
    assert decoder.next_message() is None
    assert decoder.at_eof()
    assert got == EVERY_MESSAGE


def test_split_at_every_position() -> None:
    for cut in range(1, len(STREAM)):  # (feed(b"") would mean end of stream)
        decoder = FrameDecoder()
        decoder.feed(STREAM[:cut])
        got = list(decoder.messages())
        decoder.feed(STREAM[cut:])
        got.extend(decoder.messages())
        assert got == EVERY_MESSAGE, cut


def test_need_more_data_returns_none_and_keeps_state() -> None:
    frame = encode(m.bye_msg())
    decoder = FrameDecoder()
    decoder.feed(frame[:2])
    assert decoder.next_message() is None
    assert decoder.buffered == 2
    assert not decoder.at_eof()
    decoder.feed(frame[2:])
    assert decoder.next_message() == m.bye_msg()
    assert decoder.next_message() is None


def test_many_frames_fed_piecewise_stay_linear() -> None:
    # 20 000 frames fed in 7-byte pieces: a decoder that re-slices its whole buffer per
    # frame would take minutes here.
    frame = encode(m.action_msg(1, {"type": "take"}))
    data = frame * 20_000
    decoder = FrameDecoder()
    count = 0
    for i in range(0, len(data), 7):
        decoder.feed(data[i : i + 7])
        count += sum(1 for _ in decoder.messages())
    assert count == 20_000


def test_frames_fed_in_one_chunk_come_out_in_order() -> None:
    decoder = FrameDecoder()
    decoder.feed(STREAM)
    assert [decoder.next_message() for _ in EVERY_MESSAGE] == EVERY_MESSAGE
    assert decoder.next_message() is None


def test_clean_end_of_stream() -> None:
    decoder = FrameDecoder()
    assert decoder.eof is False
    decoder.close()
    assert decoder.eof is True and decoder.at_eof() is True
    assert decoder.next_message() is None


def test_complete_frames_are_delivered_before_a_truncation_error() -> None:
    decoder = FrameDecoder()
    decoder.feed(encode(m.bye_msg()) + b"\x00\x00\x00\x09\x81")
    decoder.close()
    assert not decoder.at_eof()
    assert decoder.next_message() == m.bye_msg()
    with pytest.raises(RemoteProtocolError, match="stream ended 1 byte into a 9-byte frame"):
        decoder.next_message()


def test_feeding_nothing_means_end_of_stream() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"\x00\x00\x00\x05")
    decoder.feed(b"")
    assert decoder.eof
    with pytest.raises(RemoteProtocolError, match="stream ended 0 bytes into a 5-byte frame"):
        decoder.next_message()


def test_feed_after_close_is_a_local_error() -> None:
    decoder = FrameDecoder()
    decoder.close()
    with pytest.raises(LocalProtocolError):
        decoder.feed(b"\x00")


# -- frame-level errors ----------------------------------------------------------------


def test_four_gib_header_is_refused_before_the_body_arrives() -> None:
    decoder = FrameDecoder()
    with pytest.raises(RemoteProtocolError) as info:
        decoder.feed(b"\xff\xff\xff\xff")  # no body at all: refused on the header alone
    assert str(info.value) == "frame header says 4294967295 bytes; the limit is 1048576"
    assert info.value.evidence == "ff ff ff ff"
    assert info.value.code == "protocol"


def test_header_checked_when_it_follows_a_good_frame() -> None:
    decoder = FrameDecoder()
    decoder.feed(encode(m.bye_msg()) + b"\x7f\xff\xff\xff" + b"A" * 100)
    assert decoder.next_message() == m.bye_msg()
    with pytest.raises(RemoteProtocolError, match="frame header says 2147483647 bytes"):
        decoder.next_message()


def test_configured_limit_is_inclusive() -> None:
    body = msgpack.packb({"type": "x", "pad": "a" * 100})
    assert decode_all(frame_of(body), max_frame=len(body)) == [msgpack.unpackb(body)]
    error = remote_error(frame_of(body), max_frame=len(body) - 1)
    assert str(error) == f"frame header says {len(body)} bytes; the limit is {len(body) - 1}"


def test_default_limit_is_one_mib() -> None:
    assert MAX_FRAME == 1_048_576
    error = remote_error(struct.pack(">I", MAX_FRAME + 1))
    assert str(error) == "frame header says 1048577 bytes; the limit is 1048576"


def test_zero_length_frame() -> None:
    error = remote_error(b"\x00\x00\x00\x00")
    assert str(error) == "frame header says 0 bytes; a frame must hold one msgpack map"
    assert error.evidence == "00 00 00 00"


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"\x00\x00\x00\x0a\x81\x01\x02", "stream ended 3 bytes into a 10-byte frame"),
        (b"\x00\x00\x00\x0a", "stream ended 0 bytes into a 10-byte frame"),
        (b"\x00\x00", "stream ended 2 bytes into a 4-byte frame header"),
        (b"\x00", "stream ended 1 byte into a 4-byte frame header"),
    ],
)
def test_truncated_frame_at_end_of_stream(data: bytes, text: str) -> None:
    error = remote_error(data)
    assert str(error) == text
    assert error.evidence == data.hex(" ")


# -- body-level errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"\xc1", "frame is not valid msgpack: it uses the reserved type byte 0xc1"),
        (b"\x90", "frame holds an array, not a map; every message is a map"),
        (b"\x2a", "frame holds an int, not a map; every message is a map"),
        (b"\xc0", "frame holds nil, not a map; every message is a map"),
        (b"\xa2hi", "frame holds a str, not a map; every message is a map"),
        (b"\xc4\x01x", "frame holds a bin, not a map; every message is a map"),
        (b"\x80\x80", "frame holds 1 byte after the end of its msgpack value; a frame holds "
                      "exactly one map and the header must give its exact size"),
        (b"\x81\xa1a", "frame ends in the middle of a msgpack value; the header said 3 bytes "
                       "but the value needs more"),
        (b"\x81\xa1a\xa2\xff\xfe", "frame holds a msgpack str that is not valid UTF-8 (invalid "
                                   "start byte at byte 0 of the string); strings must be UTF-8"),
        (b"\x81\x01\x02", "frame has a map key of type int; map keys must be str"),
        (b"\x81\xc4\x01a\x02", "frame has a map key b'a' (a bin); map keys must be str"),
        (b"\x81\xa1a\x81\xc4\x01b\x02", "frame has a map key b'b' (a bin) in a; map keys must be str"),
        (b"\x82\xa1a\x01\xa1a\x02", "frame has a map with the key 'a' twice; keys must be unique"),
        # the key named is the repeated one, not the map's first key
        (b"\x83\xa4type\xa1x\xa1a\x01\xa1a\x02",
         "frame has a map with the key 'a' twice; keys must be unique"),
        # the smallest map of 2 entries (5 bytes): its length is possible, its keys repeat
        (b"\x82\xa0\x00\xa0\x00", "frame has a map with the key '' twice; keys must be unique"),
        (b"\x81\xa1a\xd4\x05x", "frame uses msgpack extension type 5; the protocol allows only "
                                "nil, bool, int, float, str, bin, array and map"),
        (b"\x81\xa1a\x91\xd6\xff\x00\x00\x00\x01", "frame uses a msgpack timestamp (extension "
         "type -1) at a[0]; the protocol allows only nil, bool, int, float, str, bin, array and map"),
        (b"\x81\xa1a\xdd\x7f\xff\xff\xff", "frame declares a msgpack array of 2147483647 elements, "
                                           "more than its 8 bytes can hold"),
        (b"\x81\xa1a\xdf\x7f\xff\xff\xff", "frame declares a msgpack map of 2147483647 entries, "
                                           "more than its 8 bytes can hold"),
        (b"\x81\xa1a\xdb\x7f\xff\xff\xff", "frame ends in the middle of a msgpack value; the header "
                                           "said 8 bytes but the value needs more"),
    ],
)
def test_bad_body(body: bytes, text: str) -> None:
    error = remote_error(frame_of(body))
    assert str(error) == text
    assert error.evidence == frame_of(body).hex(" ")


def test_evidence_is_capped_at_64_bytes() -> None:
    body = b"\x92" + b"\xa1x" * 40  # an array of strings, well over 64 bytes
    error = remote_error(frame_of(body))
    assert error.evidence is not None
    assert error.evidence.endswith(" ...")
    assert len(error.evidence.removesuffix(" ...").split()) == 64


def test_nesting_at_the_limit_is_fine() -> None:
    value: object = 1
    for _ in range(31):
        value = [value]
    assert decode(encode({"type": "x", "v": value}))["v"] == value


def test_nesting_one_past_the_limit() -> None:
    body = b"\x81\xa1v" + b"\x91" * 32 + b"\x01"
    error = remote_error(frame_of(body))
    assert str(error).startswith("frame nests arrays/maps more than 32 deep (at v[0][0]")
    assert str(error).endswith("; the limit is 32")


@pytest.mark.parametrize("depth", [1_000, 100_000, MAX_FRAME - 10])
def test_nesting_bombs(depth: int) -> None:
    body = b"\x81\xa1v" + b"\x91" * depth + b"\x01"
    body = body[:MAX_FRAME]
    error = remote_error(frame_of(body))
    assert "more than 32 deep" in str(error)


def test_map_nesting_bomb() -> None:
    body = b"\x81\xa1v" + b"\x81\xa1k" * 5000 + b"\x01"
    assert "more than 32 deep" in str(remote_error(frame_of(body)))


def test_configurable_depth() -> None:
    message = {"type": "x", "v": [[1]]}
    assert decode(encode(message), max_depth=3) == message
    with pytest.raises(RemoteProtocolError, match="more than 2 deep"):
        decode(encode(message), max_depth=2)


def test_decode_refuses_bytes_after_the_frame() -> None:
    with pytest.raises(RemoteProtocolError, match="2 bytes follow the frame"):
        decode(encode(m.bye_msg()) + b"\x00\x00")


def test_decode_refuses_empty_input() -> None:
    with pytest.raises(RemoteProtocolError, match="no frame in the data: the input is empty"):
        decode(b"")


def test_unknown_keys_survive_decoding() -> None:
    assert decode(encode({"type": "action", "future": {"x": [1]}}))["future"] == {"x": [1]}


# -- poisoning ---------------------------------------------------------------------------


def test_decoder_is_poisoned_after_an_error() -> None:
    decoder = FrameDecoder()
    decoder.feed(frame_of(b"\xc1") + encode(m.bye_msg()))
    with pytest.raises(RemoteProtocolError) as first:
        decoder.next_message()
    for call in (decoder.next_message, decoder.close, decoder.at_eof,
                 lambda: decoder.feed(encode(m.bye_msg())), lambda: list(decoder.messages())):
        with pytest.raises(RemoteProtocolError) as again:
            call()
        assert again.value is first.value


# -- encoding ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ([1], "a message must be a dict, got list"),
        ({"id": 1}, "a message must have a str 'type', got None"),
        ({"type": 3}, "a message must have a str 'type', got 3"),
        ({"type": "x", 1: 2}, "x message: keys must be str, got 1"),
        ({"type": "x", "v": object()}, "x message cannot be encoded: TypeError"),
        ({"type": "x", "v": 2**70}, "x message cannot be encoded: OverflowError"),
    ],
)
def test_encode_refuses_bad_messages_as_our_bug(message: object, text: str) -> None:
    with pytest.raises(LocalProtocolError) as info:
        encode(message)  # type: ignore[arg-type]
    assert str(info.value).startswith(text)
    assert not isinstance(info.value, RemoteProtocolError)


def test_encode_refuses_oversized_message() -> None:
    with pytest.raises(LocalProtocolError, match=r"^request message encodes to \d+ bytes; the limit is 100$"):
        encode({"type": "request", "pad": "x" * 200}, max_frame=100)


def test_encode_writes_str_as_str_and_bytes_as_bin() -> None:
    frame = encode({"type": "x", "b": b"\x00"})
    assert b"\xa1x" in frame and b"\xc4\x01\x00" in frame


def test_decoder_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match=r"^max_frame must be 1\.\.4294967295 bytes, got 0$"):
        FrameDecoder(0)
    with pytest.raises(ValueError, match=r"^max_frame must be 1\.\.4294967295 bytes, got 4294967296$"):
        FrameDecoder(2**32)
    with pytest.raises(ValueError, match=r"^max_depth must be at least 1, got 0$"):
        FrameDecoder(max_depth=0)


# -- the bot side: strict=False ---------------------------------------------------------------


def test_the_bot_side_decoder_keeps_the_last_value_of_a_repeated_key() -> None:
    """Not strict (a bot reading its referee) checks framing and sizes only: a map that
    repeats a key decodes as msgpack decodes it, the last value winning, even in the
    smallest body a 2-entry map can have (5 bytes)."""
    decoder = FrameDecoder(strict=False)
    decoder.feed(frame_of(b"\x82\xa0\x00\xa0\x01") + frame_of(b"\x82\xa1a\x01\xa1a\x02"))
    assert list(decoder.messages()) == [{"": 1}, {"a": 2}]


def test_the_bot_side_decoder_nests_as_deep_as_msgpack_allows_and_says_so() -> None:
    """Not strict, the only depth limit is msgpack's own: 1024 levels (the top-level map is
    level 1) decode; one level more is refused naming that limit, not ``max_depth``."""
    def nested(levels: int) -> bytes:  # a map holding levels - 1 arrays, one in another
        return b"\x81\xa1a" + b"\x91" * (levels - 2) + b"\x90"

    decoder = FrameDecoder(strict=False)
    decoder.feed(frame_of(nested(1024)))
    message = decoder.next_message()
    assert message is not None
    levels, node = 2, message["a"]  # the map, then its outermost array
    while node:
        levels, node = levels + 1, node[0]
    assert levels == 1024
    decoder.feed(frame_of(nested(1025)))
    with pytest.raises(RemoteProtocolError) as refused:
        decoder.next_message()
    assert str(refused.value) == "frame nests arrays/maps more than 1024 deep; the limit is 1024"


# -- properties ------------------------------------------------------------------------------


def _feed_everything(chunks: list[bytes]) -> None:
    decoder = FrameDecoder(max_frame=4096)
    try:
        for chunk in chunks:
            if not chunk:
                continue  # b"" means end of stream; covered by close() below
            decoder.feed(chunk)
            for message in decoder.messages():
                assert type(message) is dict
        decoder.close()
        list(decoder.messages())
    except RemoteProtocolError:
        pass


@pytest.mark.slow
@settings(max_examples=500)
@given(st.lists(st.binary(max_size=64), max_size=8))
def test_arbitrary_bytes_raise_only_remote_protocol_error(chunks: list[bytes]) -> None:
    _feed_everything(chunks)


@pytest.mark.slow
@settings(max_examples=500)
@given(st.binary(min_size=1, max_size=200))
def test_arbitrary_bodies_behind_a_valid_header_raise_only_remote_protocol_error(body: bytes) -> None:
    _feed_everything([frame_of(body)])


msgpack_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=10) | st.binary(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=300)
@given(st.dictionaries(st.text(max_size=8), msgpack_values, max_size=5), st.text(min_size=1, max_size=8),
       st.data())
def test_encode_decode_round_trip_any_split(extra: dict, kind: str, data: st.DataObject) -> None:
    message = {"type": kind, **{k: v for k, v in extra.items() if k != "type"}}
    stream = encode(message) * 2
    cut = data.draw(st.integers(1, len(stream) - 1))
    decoder = FrameDecoder()
    decoder.feed(stream[:cut])
    got = list(decoder.messages())
    decoder.feed(stream[cut:])
    got.extend(decoder.messages())
    assert got == [message, message]


@pytest.mark.parametrize("length", [0, 1, 15, 16, 17, 65535, 65536])
def test_array_and_map_heads_start_exactly_what_pack_writes(length: int) -> None:
    """array_head/map_head followed by the packed elements (keys and values, in order)
    are the bytes of the packed array/map, in every msgpack size class (fix, 16, 32)."""
    from protocol.codec import array_head, map_head, pack

    items = [i % 300 for i in range(length)]
    assert array_head(length) + b"".join(pack(x) for x in items) == msgpack.packb(items)
    mapping = {f"k{i}": i % 300 for i in range(length)}
    body = b"".join(pack(k) + pack(v) for k, v in mapping.items())
    assert map_head(length) + body == msgpack.packb(mapping)
    assert msgpack.unpackb(array_head(length) + b"\xc0" * length) == [None] * length
