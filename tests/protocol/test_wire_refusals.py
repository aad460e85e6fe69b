"""What the decoder says about frames it refuses, word for word, for the cases the main
codec tests do not list: a frame that holds a bool or a float instead of a map, a
msgpack timestamp of a length msgpack itself cannot read, the evidence quoted for a
refused header or a cut stream, ``at_eof`` on both sides of a whole frame, the exact
bytes every thread encodes, the text of a message refused as our own bug, and the
decoder's frame limit on both sides of what a 4-byte header can say."""

from __future__ import annotations

import struct
import threading

import pytest

from protocol.codec import FrameDecoder, decode, encode, framed, pack
from protocol.errors import LocalProtocolError, RemoteProtocolError


def frame_of(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"\xc3", "frame holds a bool, not a map; every message is a map"),  # true
        (b"\xc2", "frame holds a bool, not a map; every message is a map"),  # false
        (b"\xca\x3f\x80\x00\x00", "frame holds a float, not a map; every message is a map"),  # f32 1.0
        (b"\xcb" + struct.pack(">d", 1.5), "frame holds a float, not a map; every message is a map"),
        # fixext 1 of type -1: a timestamp must be 4, 8 or 12 bytes; msgpack says so itself.
        (b"\x81\xa1a\xd4\xff\x00",
         "frame is not valid msgpack (ValueError: invalid timestamp data (length 1))"),
    ],
)
def test_a_refused_frame_is_named_as_a_bot_author_knows_it(body: bytes, text: str) -> None:
    with pytest.raises(RemoteProtocolError) as refused:
        decode(frame_of(body))
    assert str(refused.value) == text
    assert refused.value.evidence == frame_of(body).hex(" ")


@pytest.mark.parametrize("after_header", [60, 61, 200])
def test_a_refused_header_quotes_the_first_64_bytes_received_and_marks_any_more(after_header: int) -> None:
    data = struct.pack(">I", 2 * 1024 * 1024) + bytes(range(after_header))  # over the 1 MiB limit
    decoder = FrameDecoder()
    with pytest.raises(RemoteProtocolError) as refused:
        decoder.feed(data)
    assert str(refused.value) == "frame header says 2097152 bytes; the limit is 1048576"
    shown = data[:64].hex(" ")
    assert refused.value.evidence == (shown if after_header == 60 else shown + " ...")


@pytest.mark.parametrize("after_header", [60, 61])
def test_a_stream_cut_inside_a_frame_quotes_the_first_64_bytes_received(after_header: int) -> None:
    data = struct.pack(">I", 100) + bytes(range(after_header))
    decoder = FrameDecoder()
    decoder.feed(data)
    decoder.close()
    with pytest.raises(RemoteProtocolError) as refused:
        decoder.next_message()
    assert str(refused.value) == f"stream ended {after_header} bytes into a 100-byte frame"
    shown = data[:64].hex(" ")
    assert refused.value.evidence == (shown if after_header == 60 else shown + " ...")


def test_at_eof_is_false_while_a_whole_frame_waits_and_true_once_it_is_read() -> None:
    frame = encode({"type": "ping", "id": 7})
    decoder = FrameDecoder()
    decoder.feed(frame)
    decoder.close()
    assert decoder.at_eof() is False  # exactly one whole frame is still buffered
    assert decoder.next_message() == {"type": "ping", "id": 7}
    assert decoder.at_eof() is True


@pytest.mark.parametrize(("received", "text"), [
    (b"\x00\x00", "stream ended 2 bytes into a 4-byte frame header"),
    (b"\x00\x00\x00\x0a", "stream ended 0 bytes into a 10-byte frame"),  # a header, no body
    (b"\x00\x00\x00\x0a" + b"\x80" * 9, "stream ended 9 bytes into a 10-byte frame"),
])
def test_at_eof_raises_when_the_stream_ended_inside_a_frame(received: bytes, text: str) -> None:
    decoder = FrameDecoder()
    decoder.feed(received)
    decoder.close()
    with pytest.raises(RemoteProtocolError) as refused:
        decoder.at_eof()
    assert str(refused.value) == text


def test_every_thread_encodes_str_as_msgpack_str_and_bytes_as_msgpack_bin() -> None:
    message = {"type": "event", "s": "é", "b": b"\x01"}
    expected = b"\x00\x00\x00\x16\x83\xa4type\xa5event\xa1s\xa2\xc3\xa9\xa1b\xc4\x01\x01"
    assert encode(message) == expected
    out: list[bytes] = []
    worker = threading.Thread(target=lambda: out.append(encode(message)))  # its own packer
    worker.start()
    worker.join()
    assert out == [expected]


def test_a_message_without_a_str_type_is_our_bug_quoting_the_message() -> None:
    with pytest.raises(LocalProtocolError) as refused:
        encode({"type": 5, "id": 1})
    assert str(refused.value) == "a message must have a str 'type', got 5 in {'type': 5, 'id': 1}"


@pytest.mark.parametrize("max_frame", [1, 0xFFFFFFFF])
def test_a_frame_limit_from_1_byte_to_what_the_header_can_say_is_accepted(max_frame: int) -> None:
    assert FrameDecoder(max_frame=max_frame).max_frame == max_frame


@pytest.mark.parametrize("max_frame", [0, 0x100000000])
def test_a_frame_limit_the_header_cannot_say_is_refused(max_frame: int) -> None:
    with pytest.raises(ValueError) as refused:
        FrameDecoder(max_frame=max_frame)
    assert str(refused.value) == f"max_frame must be 1..4294967295 bytes, got {max_frame}"


def test_feeding_after_the_end_is_a_local_error_saying_so() -> None:
    decoder = FrameDecoder()
    decoder.close()
    with pytest.raises(LocalProtocolError) as refused:
        decoder.feed(b"\x00")
    assert str(refused.value) == "feed() called after the end of the stream was signalled"


# -- parts joined by a sender: ``pack`` and ``framed`` (what the referee caches) -----------

def test_packed_parts_joined_and_framed_are_the_bytes_encode_gives() -> None:
    message = {"type": "event", "game": 3, "cards": ["7H", "QS"], "raw": b"\x00\x01"}
    head = bytes([0x80 | len(message)])  # a fixmap header of four entries
    body = head + b"".join(pack(key) + pack(value) for key, value in message.items())
    assert framed(body) == encode(message)
    assert pack(b"\x00\x01") == b"\xc4\x02\x00\x01"  # bytes pack as msgpack bin, not str


def test_pack_refuses_a_value_msgpack_cannot_encode_naming_the_error_and_the_value() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque thing>"

    with pytest.raises(LocalProtocolError) as info:
        pack({"type": "x", "what": Opaque()})
    assert str(info.value) == ("value cannot be encoded: TypeError: can not serialize "
                               "'Opaque' object: {'type': 'x', 'what': <opaque thing>}")


def test_framed_takes_a_body_of_exactly_the_limit_and_refuses_one_byte_more() -> None:
    assert framed(b"\x80" * 10, max_frame=10) == struct.pack(">I", 10) + b"\x80" * 10
    with pytest.raises(LocalProtocolError) as info:
        framed(b"\x80" * 11, max_frame=10)
    assert str(info.value) == "a message encodes to 11 bytes; the limit is 10"


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_stream_that_ends_inside_a_frame_header_is_refused_by_next_message(cut: int) -> None:
    decoder = FrameDecoder()
    decoder.feed(encode({"type": "hello"})[:cut])
    assert decoder.next_message() is None  # the stream may go on
    decoder.close()
    with pytest.raises(RemoteProtocolError) as info:
        decoder.next_message()
    byte_s = "byte" if cut == 1 else "bytes"
    assert str(info.value) == f"stream ended {cut} {byte_s} into a 4-byte frame header"
