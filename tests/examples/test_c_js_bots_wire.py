"""Wire-level tests of the example bots in examples/c and examples/javascript.

Each bot runs as a real subprocess; the referee side of the conversation is
scripted here with ``msgpack`` directly (4-byte big-endian length + one msgpack
map per frame, see the protocol contract). Every read has a deadline, so a bot
that hangs fails the test instead of blocking the run.
"""

from __future__ import annotations

import os
import select
import struct
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest

ROOT = Path(__file__).resolve().parents[2]

TIMEOUT = 10.0  # seconds for any single read or exit
MAX_FRAME = 1024 * 1024


# The c_bot_cmd and js_bot_cmd fixtures (build, skip reasons) are in conftest.py.


@pytest.fixture(params=["c", "javascript"])
def bot_cmd(request: pytest.FixtureRequest) -> list[str]:
    return request.getfixturevalue(f"{'c' if request.param == 'c' else 'js'}_bot_cmd")


# --------------------------------------------------------------------------- process


def frame(msg: Any) -> bytes:
    body = msgpack.packb(msg, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


class BotProcess:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )
        self._stderr: bytes | None = None

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        view = memoryview(data)
        while view:
            n = self.proc.stdin.write(view)
            view = view[n:]

    def send(self, msg: dict[str, Any]) -> None:
        self.send_raw(frame(msg))

    def _read_exact(self, n: int, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"bot sent {len(buf)} of {n} byte(s) before the timeout")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                raise EOFError(
                    f"bot closed stdout after {len(buf)} of {n} byte(s); "
                    f"stderr: {self.stderr_text()!r}"
                )
            buf += chunk
        return bytes(buf)

    def recv(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        (n,) = struct.unpack(">I", self._read_exact(4, deadline))
        assert 0 < n <= MAX_FRAME, f"bot sent a frame header of {n} bytes"
        msg = msgpack.unpackb(self._read_exact(n, deadline), raw=False)
        assert isinstance(msg, dict), msg
        return msg

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass

    def wait(self, timeout: float = TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"bot did not exit within {timeout} s; stderr: {self.stderr_text()!r}")

    def stderr_text(self) -> str:
        if self._stderr is None:
            if self.proc.poll() is None:
                return "<still running>"
            assert self.proc.stderr is not None
            self._stderr = self.proc.stderr.read()
        return self._stderr.decode("utf-8", "replace")

    def remaining_stdout(self) -> bytes:
        assert self.proc.stdout is not None and self.proc.poll() is not None
        return self.proc.stdout.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.close_stdin()
        self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()


@pytest.fixture
def start_bot(bot_cmd: list[str]):
    started: list[BotProcess] = []

    def start(argv: list[str] | None = None) -> BotProcess:
        bot = BotProcess(argv or bot_cmd)
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.close()


# --------------------------------------------------------------------------- messages

REFEREE_HELLO = {"type": "hello", "protocol": 1, "versions": [1], "referee": "durak-ref 0.1.0"}

RULES = {"players": 2, "deck": 36, "perevodnoy": False, "attack_limit": 6}

GAME_START = {
    "type": "game_start",
    "game": 0,
    "seat": 0,
    "players": 2,
    "names": ["bot", "greedy"],
    "rules": RULES,
    "dealer": 1,
    "trump": "TS",
    "trump_suit": "S",
    "hand": ["6C", "7C", "8D", "9H", "QH", "7S"],
    "attacker": 0,
}

EVENTS = [
    {"type": "attack", "seat": 1, "card": "8H"},
    {"type": "draw", "seat": 0, "count": 2, "cards": ["9C", "TH"]},
    {"type": "take", "seat": 1, "forced": True},
    {"type": "bout_end", "result": "taken", "defender": 1},
]


def observation(
    *,
    hand: list[str],
    table: list[list[str | None]] | None = None,
    talon: int = 12,
    phase: str = "attack",
    attacker: int = 0,
    defender: int = 1,
) -> dict[str, Any]:
    return {
        "seat": 0,
        "players": 2,
        "dealer": 1,
        "hand": hand,
        "trump": "TS",
        "trump_suit": "S",
        "trump_holder": None,
        "talon": talon,
        "table": table or [],
        "discard": ["6H", "7H"],
        "hand_sizes": [len(hand), 6],
        "out": [False, False],
        "attacker": attacker,
        "defender": defender,
        "phase": phase,
        "taking": False,
        "bout": 3,
        "transfers": 0,
        "attack_limit": 6,
        "known": [[], ["QD"]],
        "shown": [],
    }


def request(req_id: int, obs: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "request",
        "id": req_id,
        "game": 0,
        "observation": obs,
        "legal": legal,
        "clock": {"remaining_ms": 59500, "increment_ms": 500, "move_ms": None},
    }


def cover(slot: int, card: str) -> dict[str, Any]:
    return {"type": "cover", "slot": slot, "card": card}


def act(type_: str, card: str | None = None) -> dict[str, Any]:
    return {"type": type_} if card is None else {"type": type_, "card": card}


TAKE, PASS, EXCHANGE = act("take"), act("pass"), act("exchange")

# (name, observation, legal, expected choice of the shared heuristic); trump suit is S.
SCENARIOS: list[tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = [
    (
        "only_take",
        observation(hand=["6C", "7D"], table=[["AH", None]], phase="defend", attacker=1, defender=0),
        [TAKE],
        TAKE,
    ),
    (
        "cover_lowest_non_trump",
        observation(hand=["QH", "9H", "7S"], table=[["8H", None]], phase="defend", attacker=1, defender=0),
        [cover(0, "QH"), cover(0, "9H"), cover(0, "7S"), TAKE],
        cover(0, "9H"),
    ),
    (
        "cover_two_slots",
        observation(
            hand=["7H", "TC", "AS"], table=[["6H", None], ["6C", None]], phase="defend", attacker=1, defender=0
        ),
        [cover(0, "7H"), cover(0, "AS"), cover(1, "TC"), cover(1, "AS"), TAKE],
        cover(0, "7H"),
    ),
    (
        "cover_needs_trump_big_talon_takes",
        observation(hand=["7S", "AS", "6D"], table=[["KH", None]], talon=12, phase="defend", attacker=1, defender=0),
        [cover(0, "AS"), cover(0, "7S"), TAKE],
        TAKE,
    ),
    (
        "cover_needs_trump_small_talon_covers",
        observation(hand=["7S", "AS", "6D"], table=[["KH", None]], talon=3, phase="defend", attacker=1, defender=0),
        [cover(0, "AS"), cover(0, "7S"), TAKE],
        cover(0, "7S"),
    ),
    (
        "transfer_options",
        observation(hand=["6C", "6S", "9D"], table=[["6D", None]], phase="defend", attacker=1, defender=0),
        [act("transfer", "6C"), act("show_trump", "6S"), cover(0, "9D"), TAKE],
        cover(0, "9D"),
    ),
    (
        "throw_in_vs_pass",
        observation(hand=["8S", "8D", "KC"], table=[["8H", "9H"]], phase="throw_in"),
        [act("throw_in", "8S"), act("throw_in", "8D"), PASS],
        act("throw_in", "8D"),
    ),
    (
        "pass_over_trump_throw_in",
        observation(hand=["8S", "KC"], table=[["8H", "9H"]], phase="throw_in"),
        [act("throw_in", "8S"), PASS],
        PASS,
    ),
    (
        "attack_lowest_non_trump",
        observation(hand=["KD", "6S", "TH", "7C"]),
        [act("attack", "KD"), act("attack", "6S"), act("attack", "TH"), act("attack", "7C")],
        act("attack", "7C"),
    ),
    (
        "attack_only_trumps",
        observation(hand=["QS", "9S"]),
        [act("attack", "QS"), act("attack", "9S")],
        act("attack", "9S"),
    ),
    (
        "exchange_vs_pass",
        observation(hand=["6S", "KD"], phase="exchange"),
        [EXCHANGE, PASS],
        EXCHANGE,
    ),
]


def handshake(bot: BotProcess) -> dict[str, Any]:
    bot.send(REFEREE_HELLO)
    hello = bot.recv()
    assert hello["type"] == "hello"
    assert hello["protocol"] == 1
    assert isinstance(hello["name"], str) and hello["name"]
    for key in ("version", "author"):
        assert isinstance(hello.get(key, ""), str)
    return hello


def ask(bot: BotProcess, req: dict[str, Any]) -> dict[str, Any]:
    bot.send(req)
    reply = bot.recv()
    assert reply["type"] == "action", reply
    assert reply["id"] == req["id"]
    assert reply["action"] in req["legal"], reply
    return reply["action"]


def say_bye(bot: BotProcess) -> None:
    bot.send({"type": "game_end", "game": 0, "durak": 1, "termination": "normal", "reason": "done"})
    bot.send({"type": "bye", "reason": "match_end"})
    rc = bot.wait()
    assert rc == 0, bot.stderr_text()
    assert bot.remaining_stdout() == b""


# --------------------------------------------------------------------------- tests


@pytest.mark.process
@pytest.mark.parametrize(
    ("obs", "legal", "expected"),
    [s[1:] for s in SCENARIOS],
    ids=[s[0] for s in SCENARIOS],
)
def test_request_answered_with_legal_action(start_bot, obs, legal, expected) -> None:
    bot = start_bot()
    hello = handshake(bot)
    assert hello["name"] in ("c-bot", "js-bot")
    bot.send(GAME_START)
    for event in EVENTS:
        bot.send({"type": "event", "game": 0, "event": event})
    assert ask(bot, request(1, obs, legal)) == expected
    # a non-fatal error is followed by a new request, which must be answered too
    bot.send({"type": "error", "code": "illegal", "message": "try again", "fatal": False})
    assert ask(bot, request(2, obs, legal)) == expected
    say_bye(bot)


@pytest.mark.process
def test_full_match_conversation(start_bot) -> None:
    bot = start_bot()
    handshake(bot)
    req_id = 0
    for game in range(2):
        bot.send({**GAME_START, "game": game})
        for name, obs, legal, expected in SCENARIOS:
            bot.send({"type": "event", "game": game, "event": EVENTS[0]})
            req_id += 1
            assert ask(bot, {**request(req_id, obs, legal), "game": game}) == expected, name
        bot.send({"type": "game_end", "game": game, "durak": None, "termination": "draw", "reason": "x"})
    bot.send({"type": "error", "code": "stale", "message": "late answer ignored", "fatal": False})
    say_bye(bot)


@pytest.mark.process
def test_unknown_keys_wide_ints_and_long_strings(start_bot) -> None:
    """Forward compatibility: unknown keys (floats, bin, negative ints of every
    width, str8/16/32, nesting) are ignored, and a 64-bit id is echoed back."""
    extras = {
        "x_float": 1.5,
        "x_bin": b"\x00\x01\xff",
        "x_ints": [-1, -33, -200, -40000, -3_000_000_000, 200, 70_000, 5_000_000_000, 2**64 - 1],
        "x_str8": "s" * 40,
        "x_str16": "m" * 300,
        "x_str32": "L" * 70_000,
        "x_nested": {"a": [[{"b": None, "c": True, "d": False}]]},
    }
    bot = start_bot()
    bot.send({**REFEREE_HELLO, **extras})
    assert bot.recv()["type"] == "hello"
    bot.send({**GAME_START, **extras})
    name, obs, legal, expected = SCENARIOS[1]
    req = {**request(2**32 + 5, {**obs, **extras}, legal), **extras}
    assert ask(bot, req) == expected
    req = request(300, obs, [{**a, "x_float": 0.25} for a in legal])
    bot.send(req)
    reply = bot.recv()
    assert reply["id"] == 300
    assert reply["action"] == {**expected, "x_float": 0.25}
    bot.send({"type": "future_message", "x": 1})  # unknown types are ignored, with a note
    say_bye(bot)


@pytest.mark.process
def test_frames_coalesced_and_split(start_bot) -> None:
    """Several frames in one write, and one frame spread over many writes."""
    bot = start_bot()
    name, obs, legal, expected = SCENARIOS[6]
    bot.send_raw(frame(REFEREE_HELLO) + frame(GAME_START) + frame(request(1, obs, legal)))
    assert bot.recv()["type"] == "hello"
    reply = bot.recv()
    assert (reply["id"], reply["action"]) == (1, expected)
    data = frame(request(2, obs, legal))
    for i in range(0, len(data), 7):
        bot.send_raw(data[i : i + 7])
        time.sleep(0.001)
    reply = bot.recv()
    assert (reply["id"], reply["action"]) == (2, expected)
    say_bye(bot)


@pytest.mark.process
def test_backpressure_unread_output(start_bot) -> None:
    """The referee sends many requests before reading any answer: the bot's
    stdout pipe fills up; every answer must still arrive, in order."""
    bot = start_bot()
    name, obs, legal, expected = SCENARIOS[1]
    count = 3000  # ~50 bytes per answer: well over a 64 KiB pipe buffer

    def writer() -> None:
        bot.send(REFEREE_HELLO)
        for i in range(1, count + 1):
            bot.send(request(i, obs, legal))
        bot.send({"type": "bye", "reason": "match_end"})

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    time.sleep(0.5)
    assert bot.recv()["type"] == "hello"
    for i in range(1, count + 1):
        reply = bot.recv()
        assert (reply["id"], reply["action"]) == (i, expected)
    thread.join(TIMEOUT)
    assert not thread.is_alive()
    assert bot.wait() == 0, bot.stderr_text()


@pytest.mark.process
def test_ping_answered_with_pong(start_bot) -> None:
    """Pings (sent to idle TCP bots; also valid over pipes) get a pong with the same id,
    before the first game and between games, whatever the id's width."""
    bot = start_bot()
    handshake(bot)
    for ping_id in (0, 1, 300, 2**33 + 1):
        bot.send({"type": "ping", "id": ping_id})
        assert bot.recv() == {"type": "pong", "id": ping_id}
    bot.send(GAME_START)
    name, obs, legal, expected = SCENARIOS[1]
    assert ask(bot, request(1, obs, legal)) == expected
    bot.send({"type": "game_end", "game": 0, "durak": 1, "termination": "normal", "reason": "x"})
    bot.send_raw(frame({"type": "ping", "id": 7}) + frame({"type": "ping", "id": 8}))
    assert [bot.recv(), bot.recv()] == [{"type": "pong", "id": 7}, {"type": "pong", "id": 8}]
    say_bye(bot)


@pytest.mark.process
@pytest.mark.parametrize("code", ["auth", "busy", "limit", "version"])
def test_refusal_after_hello_exits_1(start_bot, code: str) -> None:
    bot = start_bot()
    handshake(bot)
    bot.send({"type": "error", "code": code, "message": "refused for a test", "fatal": True})
    assert bot.wait() == 1
    assert "refused for a test" in bot.stderr_text()


@pytest.mark.process
def test_refusal_instead_of_hello_exits_1(start_bot) -> None:
    bot = start_bot()
    bot.send({"type": "error", "code": "limit", "message": "too many connections", "fatal": True})
    assert bot.wait() == 1
    assert "too many connections" in bot.stderr_text()
    assert bot.remaining_stdout() == b""  # no hello to a referee that refused us


@pytest.mark.process
def test_eof_exits_zero(start_bot) -> None:
    bot = start_bot()
    handshake(bot)
    bot.send(GAME_START)
    bot.close_stdin()
    assert bot.wait() == 0, bot.stderr_text()


def _raw_frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


MALFORMED = {
    # header announcing 4 GiB - 1: rejected on the header, stdin stays open
    "header_4gib": (struct.pack(">I", 0xFFFFFFFF), False),
    "header_over_1mib": (struct.pack(">I", MAX_FRAME + 1), False),
    "empty_frame": (struct.pack(">I", 0), False),
    "invalid_type_byte": (_raw_frame(b"\xc1"), False),
    "not_a_map": (frame([1, 2, 3]), False),
    "trailing_bytes": (_raw_frame(b"\x81\xa4type\xa5event\x01"), False),
    "str32_past_end": (_raw_frame(b"\x81\xdb\xff\xff\xff\xff"), False),
    "map32_claims_4g_pairs": (_raw_frame(b"\xdf\xff\xff\xff\xff"), False),
    "array32_claims_4g": (_raw_frame(b"\x82\xa4type\xa5event\xa1x\xdd\xff\xff\xff\xff"), False),
    "no_type": (frame({"id": 1}), False),
    "request_without_legal": (frame({"type": "request", "id": 9, "legal": []}), False),
    "truncated_body_then_eof": (struct.pack(">I", 100) + b"\x81\xa4type", True),
    "truncated_header_then_eof": (b"\x00\x00", True),
}


@pytest.mark.process
@pytest.mark.parametrize(("data", "close"), list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_input_exits_nonzero(start_bot, data: bytes, close: bool) -> None:
    bot = start_bot()
    handshake(bot)
    bot.send(GAME_START)
    try:
        bot.send_raw(data)
    except BrokenPipeError:  # the bot may already have given up
        pass
    if close:
        bot.close_stdin()
    rc = bot.wait()
    assert rc != 0
    assert bot.stderr_text().strip(), "the bot should say on stderr what went wrong"


@pytest.mark.process
def test_first_message_must_be_hello(start_bot) -> None:
    bot = start_bot()
    bot.send(GAME_START)
    assert bot.wait() != 0
    assert "hello" in bot.stderr_text()


def test_c_bot_rejects_deep_nesting(c_bot_cmd: list[str]) -> None:
    """The C reader limits nesting (no stack overflow on hostile input)."""
    bot = BotProcess(c_bot_cmd)
    try:
        handshake(bot)
        depth = 100_000
        body = b"\x82\xa4type\xa5event\xa5event" + b"\x91" * depth + b"\xc0"
        bot.send_raw(struct.pack(">I", len(body)) + body)
        assert bot.wait() != 0
        assert "nested" in bot.stderr_text()
    finally:
        bot.close()
