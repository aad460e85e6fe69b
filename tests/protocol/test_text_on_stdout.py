"""Text where a frame belongs (a print() left in a bot, a JVM's start-up error on stdout)
is named as text, and shown as text, not as an absurd frame length."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from protocol.codec import FrameDecoder, encode
from protocol.errors import RemoteProtocolError
from support import cli


def error_for(data: bytes, eof: bool = False) -> RemoteProtocolError:
    decoder = FrameDecoder()
    with pytest.raises(RemoteProtocolError) as caught:
        decoder.feed(data)
        if eof:
            decoder.feed(b"")
        decoder.next_message()
    return caught.value


def test_a_line_of_text_is_named_and_quoted() -> None:
    exc = error_for(b"Error occurred during initialization of VM\nToo small heap\n")
    assert exc.message == ("the bot sent text where a frame belongs: 'Error occurred during "
                           "initialization of VM\\nToo small heap\\n'; a frame is a 4-byte length "
                           "and one msgpack map (a bot on pipes writes its logs to stderr, never stdout)")


def test_long_text_is_shown_up_to_the_evidence_limit() -> None:
    exc = error_for(b"x" * 500)
    assert "'" + "x" * 64 + "'" in exc.message


def test_text_shorter_than_a_header_then_the_end_is_named_as_text() -> None:
    exc = error_for(b"hi\n", eof=True)
    assert exc.message.startswith("the bot sent text where a frame belongs: 'hi\\n'")


def test_control_characters_in_the_text_are_escaped() -> None:
    exc = error_for(b"Oops \x1b]52;c;aGk=\x07 clipboard\n")
    assert "\x1b" not in exc.message and "\x07" not in exc.message and "\\x1b]52" in exc.message


@pytest.mark.parametrize("data", [b"\xff\xff\xff\xff", b"\x7f\x00\x00\x00" + b"x" * 10])
def test_binary_that_is_not_text_keeps_the_frame_length_message(data: bytes) -> None:
    assert error_for(data).message.startswith("frame header says ")


def test_a_real_frame_is_never_mistaken_for_text() -> None:
    decoder = FrameDecoder()
    decoder.feed(encode({"type": "pong", "id": 1}))
    assert decoder.next_message() == {"type": "pong", "id": 1}


@pytest.mark.process
def test_a_bot_that_prints_is_told_so_through_the_cli(tmp_path: Path) -> None:
    bot = tmp_path / "chatty.py"
    bot.write_text("print('starting my bot, hello referee!', flush=True)\nimport time\ntime.sleep(30)\n")
    proc = cli("match", f"{sys.executable} {bot}", "builtin:greedy", "--no-log", "--sandbox", "none",
               cwd=tmp_path)
    assert proc.returncode == 2
    assert "(protocol): the bot sent text where a frame belongs: 'starting my bot, hello referee!\\n'" \
        in proc.stderr
