"""game_start and game_end frames joined from packed parts are the bytes the reference
path gives, and a bot that misbehaves around them is handled as before.

``referee/table/requests.py`` joins the frames of a game's ``game_start`` (per seat) and
``game_end`` messages from parts packed once per match (names, rules, players) and small
tables; ``play_game`` queues a pipe bot's game_start with ``queue_frame`` and writes its
game_end with ``pipelane.flush_now``, awaiting ``StreamPlayer.flush`` only for what the
pipe did not take. The contract: every frame is exactly ``encode(msg.game_start_msg(...))``
/ ``encode(msg.game_end_msg(...))`` for every value (every msgpack size class of the
index, names of any length and script, 2 to 6 seats, every rules preset and option,
reasons of any length), and the bot gets them when it got them before.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import messages as msg
from protocol.codec import MAX_FRAME, FrameDecoder, decode, encode
from protocol.errors import LocalProtocolError
from referee.rules import PRESETS, Game, make_rules
from referee.rules.cards import CardError, card_str, mask_str
from referee.seats import pipelane
from referee.seats.players import BotFailure, BotSpec, BuiltinPlayer, parse_bot_spec
from referee.seats.wire import WRITE_TIMEOUT, StreamPlayer
from referee.table.match import MatchConfig, forfeit_reason, play_match
from referee.table.requests import game_end_frame, game_start_frame
from tests.referee.test_known_answers import PipePlayer

VARIANTS = [(preset, ()) for preset in PRESETS] + [
    ("classic", ("trump_exchange=on",)),
    ("perevodnoy", ("transfer=reflect",)),
    ("perevodnoy_trump", ("trump_exchange=on", "deck=52")),
    ("classic", ("throw_in_timing=any", "throw_in_ranks=all", "draw_others=counter_clockwise")),
]

#: Game indexes on both sides of every msgpack int size class and of the small-int table.
INDEXES = [0, 1, 127, 128, 255, 256, 1023, 1024, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1]

#: Names on both sides of msgpack's str size classes (fixstr < 32 bytes, str8 < 256,
#: str16 < 65536, str32), in ASCII and in multi-byte UTF-8 (a name is the bot's own
#: choice: user input), and ones that look like framing.
NAMES = ["a", "x" * 31, "x" * 32, "y" * 255, "y" * 256, "z" * 65535, "z" * 65536,
         "дурак", "🃏" * 8, "🃏" * 64, "é" * 128, "\x00\x00\x00\x05\x81", "tab\tnl\n",
         "ᚠ" * 21845 + "ab"]


def reference_start(index: int, seat: int, names: list[str], rules: Any, dealer: int,
                    trump_card: int, hand: int, attacker: int) -> bytes:
    return encode(msg.game_start_msg(
        game=index, seat=seat, players=len(names), names=names, rules=rules.as_dict(),
        dealer=dealer, trump=card_str(trump_card), hand=mask_str(hand), attacker=attacker))


def _variant_id(variant: tuple[str, tuple[str, ...]]) -> str:
    return "+".join((variant[0], *variant[1]))


@pytest.mark.parametrize("variant", VARIANTS, ids=[_variant_id(v) for v in VARIANTS])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_every_game_start_frame_of_seeded_games_is_the_canonical_encoding(
        variant: tuple[str, tuple[str, ...]], players: int) -> None:
    preset, overrides = variant
    if players >= 5:
        overrides = (*overrides, "deck=52")
    rules = make_rules(preset, overrides)
    rng = random.Random(f"{_variant_id(variant)}-{players}")
    for game_no in range(20):
        names = [rng.choice(NAMES[:6] + NAMES[7:12]) for _ in range(players)]
        dealer = game_no % players
        game = Game.new(rules, players, seed=rng.randrange(2**32), dealer=dealer)
        index = rng.choice(INDEXES)
        for seat in range(players):
            args = (index, seat, names, rules, dealer, game.trump_card, game.hands[seat],
                    game.attacker)
            assert game_start_frame(*args) == reference_start(*args)


def test_names_of_every_size_class_and_script_are_packed_exactly() -> None:
    rules = make_rules("classic")
    game = Game.new(rules, 2, seed=3, dealer=1)
    for name in NAMES:
        for names in ([name, "other"], ["other", name]):
            args = (70000, 1, names, rules, 1, game.trump_card, game.hands[1], game.attacker)
            assert game_start_frame(*args) == reference_start(*args)


def test_the_parts_kept_per_match_never_go_stale() -> None:
    """A name list changed in place, an equal list, another rules object: each frame is
    the one its arguments give now, whatever was packed for earlier ones."""
    classic, reflect = make_rules("classic"), make_rules("perevodnoy", ("transfer=reflect",))
    game = Game.new(classic, 3, seed=11, dealer=2)
    names = ["north", "east", "south"]
    for rules in (classic, reflect, classic, make_rules("classic")):
        for change in ("", "renamed", "back"):
            if change == "renamed":
                names[1] = "east (restarted)"
            elif change == "back":
                names[1] = "east"
            for seat in range(3):
                args = (5, seat, list(names) if seat else names, rules, 2, game.trump_card,
                        game.hands[seat], game.attacker)
                assert game_start_frame(*args) == reference_start(*args)
    # Many matches in turn (each its own names): each frame is packed from its own
    # arguments, whatever was packed before.
    many = [[f"bot{k}", f"bot{k + 1}"] for k in range(40)]
    for names in many + many:
        args = (1, 0, names, classic, 0, game.trump_card, game.hands[0], game.attacker)
        assert game_start_frame(*args) == reference_start(*args)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(index=st.integers(0, 2**64 - 1), players=st.integers(2, 6), data=st.data(),
       names=st.lists(st.text(max_size=40), min_size=6, max_size=6),
       preset=st.sampled_from(sorted(PRESETS)), trump_card=st.integers(0, 51),
       hand=st.integers(0, 2**52 - 1))
def test_any_game_start_values_give_the_canonical_encoding(
        index: int, players: int, data: Any, names: list[str], preset: str, trump_card: int,
        hand: int) -> None:
    seat = data.draw(st.integers(0, players - 1))
    dealer = data.draw(st.integers(0, players - 1))
    attacker = data.draw(st.integers(0, players - 1))
    args = (index, seat, names[:players], make_rules(preset), dealer, trump_card, hand, attacker)
    assert game_start_frame(*args) == reference_start(*args)


def test_a_game_start_the_reference_refuses_is_refused() -> None:
    rules = make_rules("classic")
    with pytest.raises(LocalProtocolError):
        game_start_frame(0, 2, ["a", "b"], rules, 0, 3, 0, 0)  # no seat 2 at a table of two
    with pytest.raises(CardError):
        game_start_frame(0, 1, ["a", "b"], rules, 0, 52, 0, 0)  # no card 52
    with pytest.raises(LocalProtocolError, match="limit"):  # names too long for one frame
        game_start_frame(0, 0, ["x" * (MAX_FRAME // 2), "y" * (MAX_FRAME // 2)], rules, 0, 3, 0, 1)
    with pytest.raises(LocalProtocolError, match="limit"):
        encode(msg.game_start_msg(game=0, seat=0, players=2, names=["x" * (MAX_FRAME // 2),
               "y" * (MAX_FRAME // 2)], rules=rules.as_dict(), dealer=0, trump=card_str(3),
               hand=[], attacker=1))


REASONS = ["", "seat 1 holds cards at the end", "r" * 31, "r" * 32, "r" * 255, "r" * 256,
           "é" * 16, "é" * 128, "🃏" * 16383 + "abcd", "r" * 65535, "r" * 65536,
           "бот «дурак» forfeited (protocol): \x00\x00\x00\x01"]


@pytest.mark.parametrize("termination", msg.TERMINATIONS)
@pytest.mark.parametrize("durak", [None, 0, 1, 5])
def test_every_game_end_frame_is_the_canonical_encoding(termination: str, durak: int | None) -> None:
    for index in INDEXES:
        for reason in REASONS:
            assert game_end_frame(index, durak, termination, reason) == encode(
                msg.game_end_msg(index, durak, termination, reason))


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(index=st.integers(0, 2**64 - 1), durak=st.none() | st.integers(0, 5),
       termination=st.sampled_from(msg.TERMINATIONS), reason=st.text(max_size=300))
def test_any_game_end_values_give_the_canonical_encoding(
        index: int, durak: int | None, termination: str, reason: str) -> None:
    assert game_end_frame(index, durak, termination, reason) == encode(
        msg.game_end_msg(index, durak, termination, reason))


def test_a_game_end_the_reference_refuses_is_refused() -> None:
    with pytest.raises(LocalProtocolError, match="unknown termination"):
        game_end_frame(1, 0, "resigned", "why")
    with pytest.raises(LocalProtocolError, match="limit"):
        game_end_frame(1, 0, "normal", "r" * MAX_FRAME)
    with pytest.raises(LocalProtocolError):  # a lone surrogate is no UTF-8: the encoder refuses it
        encode(msg.game_end_msg(1, 0, "normal", "\udcff"))
    with pytest.raises(LocalProtocolError):
        game_end_frame(1, 0, "normal", "\udcff")


# -- in a match: what a bot on real pipes receives ------------------------------------------


def _pipe_pair() -> tuple[trio.lowlevel.FdStream, trio.lowlevel.FdStream, int, int]:
    """(referee's send stream, referee's receive stream, the bot's input fd, the bot's
    output fd): two real pipes."""
    to_bot_r, to_bot_w = os.pipe()
    from_bot_r, from_bot_w = os.pipe()
    return (trio.lowlevel.FdStream(to_bot_w), trio.lowlevel.FdStream(from_bot_r),
            to_bot_r, from_bot_w)


async def _bot(fd_in: int, fd_out: int, frames: list[bytes], close_input_after: int | None,
               illegal_at: int | None = None) -> None:
    """A bot on real pipes: answers every request with its first legal action and keeps
    every frame it reads, raw. ``close_input_after``: closes its input just before it
    answers that many requests, and stops. ``illegal_at``: answers that request with an
    action that is not legal."""
    inp, out = trio.lowlevel.FdStream(fd_in), trio.lowlevel.FdStream(fd_out)
    buffer = bytearray()
    answered = 0
    try:
        while chunk := await inp.receive_some(65536):
            buffer += chunk
            while len(buffer) >= 4 and len(buffer) >= 4 + int.from_bytes(buffer[:4], "big"):
                size = 4 + int.from_bytes(buffer[:4], "big")
                frame = bytes(buffer[:size])
                del buffer[:size]
                frames.append(frame)
                m = decode(frame)
                if m["type"] == "request":
                    answered += 1
                    if answered == close_input_after:
                        await inp.aclose()  # before it answers: nothing more reaches it
                    action = m["legal"][0]
                    if answered == illegal_at:
                        action = next(a for a in ({"type": "take"}, {"type": "pass"})
                                      if a not in m["legal"])
                    await out.send_all(encode(msg.action_msg(m["id"], action)))
                    if answered == close_input_after:
                        return
    finally:
        if not inp.fileno() < 0:
            await inp.aclose()
        await out.aclose()


async def _play_on_pipes(games: int, pipe_bots: int = 1, close_input_after: int | None = None,
                         illegal_at: int | None = None) -> tuple[list[Any], list[list[bytes]]]:
    """A match of ``pipe_bots`` bots on real pipes (named to test the framing: user
    input) and a built-in; the records and the frames each pipe bot read."""
    players: list[Any] = []
    streams: list[Any] = []
    frames: list[list[bytes]] = [[] for _ in range(pipe_bots)]
    config = MatchConfig(rules=make_rules("classic"), games=games, seed=9, max_restarts=0)
    records: list[Any] = []
    async with trio.open_nursery() as nursery:
        for k in range(pipe_bots):
            send, receive, bot_in, bot_out = _pipe_pair()
            player = PipePlayer(send, receive)
            player.name = f"pipe{k} «бот» " + "🃏" * 40 + "\x00\x00\x00\x05"
            players.append(player)
            streams += [send, receive]
            nursery.start_soon(_bot, bot_in, bot_out, frames[k], close_input_after,
                               illegal_at if k == 0 else None)
        if pipe_bots == 1:
            players.append(BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy")))
        await play_match(players, config, on_game=lambda r, _: records.append(r))
        for stream in streams:
            await stream.aclose()
    return records, frames


def _moves(record: Any) -> tuple[Any, ...]:
    """What a game's record says was played and how it ended (not how long it took)."""
    return ([(d.seat, d.action) for d in record.decisions], record.termination, record.durak,
            record.reason, record.forfeit)


def _expected_start(record: Any, seat: int) -> bytes:
    rules = make_rules("classic")
    game = Game.new(rules, len(record.players), deck=record.deck, dealer=record.dealer)
    return reference_start(record.index, seat, record.players, rules, record.dealer,
                           game.trump_card, game.hands[seat], game.attacker)


@pytest.mark.parametrize("pipe_bots", [1, 2])
async def test_a_pipe_bot_gets_each_games_start_and_end_exactly_as_the_reference_encodes_them(
        pipe_bots: int) -> None:
    records, frames = await _play_on_pipes(3, pipe_bots)
    assert len(records) == 3
    for k in range(pipe_bots):
        kinds = [decode(f)["type"] for f in frames[k]]
        starts = [f for f, kind in zip(frames[k], kinds, strict=True) if kind == "game_start"]
        ends = [f for f, kind in zip(frames[k], kinds, strict=True) if kind == "game_end"]
        # Each game's start before its first request, its end after its last one.
        assert [kind for kind in kinds if kind in ("game_start", "game_end")] == [
            "game_start", "game_end"] * 3
        assert kinds[0] == "game_start" and kinds[-1] == "game_end"
        for record, start, end in zip(records, starts, ends, strict=True):
            seat = record.players.index(f"pipe{k} «бот» " + "🃏" * 40 + "\x00\x00\x00\x05")
            assert start == _expected_start(record, seat)
            assert end == encode(msg.game_end_msg(record.index, record.durak,
                                                  record.termination, record.reason))


async def test_after_a_forfeit_the_durak_is_told_why_and_the_others_get_the_public_reason(
        ) -> None:
    records, frames = await _play_on_pipes(1, pipe_bots=2, illegal_at=3)
    (record,) = records
    assert record.forfeit is not None and record.termination == "illegal"
    durak = record.durak
    assert durak is not None and record.players[durak].startswith("pipe0")
    public = forfeit_reason(record.players[durak], "illegal")
    assert record.reason != public  # the durak's reason holds the detail
    for k, reason in ((0, record.reason), (1, public)):
        ends = [f for f in frames[k] if decode(f)["type"] == "game_end"]
        assert ends == [encode(msg.game_end_msg(0, durak, "illegal", reason))]


async def test_a_bot_that_closed_its_input_before_the_game_end_fails_its_next_game() -> None:
    # The same match twice (the same deal, the same moves): first to count the requests
    # of game 0, then with a bot that closes its input just before it answers the last
    # of them. The game is decided by that answer; the write of its end fails (the
    # pipe's reader is gone), which is swallowed as before, and the bot fails its next
    # game (no restarts here).
    played, frames = await _play_on_pipes(2)
    asked = sum(1 for f in frames[0] if decode(f)["type"] == "request" and decode(f)["game"] == 0)
    records, frames = await _play_on_pipes(2, close_input_after=asked)
    assert len(records) == 2
    assert _moves(records[0]) == _moves(played[0]) and records[0].forfeit is None
    assert records[1].forfeit is not None and records[1].termination == "crash"
    assert records[1].players[records[1].forfeit["seat"]].startswith("pipe0")
    assert "game_end" not in [decode(f)["type"] for f in frames[0]]


async def test_flush_now_writes_what_the_pipe_takes_and_leaves_the_rest() -> None:
    send, receive, bot_in, bot_out = _pipe_pair()
    lane = PipePlayer(send, receive)._lane
    try:
        assert pipelane.flush_now(lane)  # nothing queued: nothing to do
        lane.out += b"\x00\x00\x00\x01\x7f"  # (bytes the awaited path queued)
        pipelane.queue_frame(lane, b"\x00\x00\x00\x01\x80")  # (frames queued apart)
        pipelane.queue_frame(lane, b"\x00\x00\x00\x01\xc0")
        assert pipelane.flush_now(lane) and lane.out == b"" and lane.queued == []
        assert os.read(bot_in, 100) == b"\x00\x00\x00\x01\x7f\x00\x00\x00\x01\x80\x00\x00\x00\x01\xc0"
        _fill(send)  # a bot that stops reading: its pipe fills up
        pipelane.queue_frame(lane, b"\x00\x00\x00\x01\x81")
        assert not pipelane.flush_now(lane)
        assert lane.out == b"\x00\x00\x00\x01\x81" and lane.queued == []  # kept whole for the awaited write
    finally:
        for stream in (send, receive):
            await stream.aclose()
        os.close(bot_in)
        os.close(bot_out)


async def test_flush_now_says_false_when_the_pipe_took_only_part() -> None:
    # A pipe with two pages free and a frame of five: the write takes part (writes past
    # PIPE_BUF may be partial); the rest stays queued, in order, for the awaited write.
    send, receive, bot_in, bot_out = _pipe_pair()
    lane = PipePlayer(send, receive)._lane
    try:
        _fill(send)
        os.read(bot_in, 8192)
        frame = bytes(range(256)) * 80  # 20480 bytes
        pipelane.queue_frame(lane, frame)
        assert not pipelane.flush_now(lane)
        assert 0 < len(lane.out) < len(frame) and frame.endswith(bytes(lane.out))
    finally:
        for stream in (send, receive):
            await stream.aclose()
        os.close(bot_in)
        os.close(bot_out)


def test_flush_now_leaves_a_stream_that_is_not_a_pipe_to_the_awaited_write() -> None:
    lane = pipelane.Lane()  # (no fds: a TCP or in-memory stream)
    pipelane.queue_frame(lane, b"\x00\x00\x00\x01\x80")
    assert not pipelane.flush_now(lane)
    assert lane.out == b"\x00\x00\x00\x01\x80"


def _fill(send: trio.lowlevel.FdStream) -> None:
    """Fill the pipe behind ``send`` (nobody reads it)."""
    while True:
        try:
            os.write(send.fileno(), b"f" * 65536)
        except BlockingIOError:
            return


async def test_flush_now_never_writes_a_closed_pipes_fd() -> None:
    send, receive, bot_in, bot_out = _pipe_pair()
    player = PipePlayer(send, receive)
    number = send.fileno()
    await send.aclose()
    recycled_r, recycled_w = os.pipe()  # takes the lowest free numbers: the closed one's
    try:
        assert number in (recycled_r, recycled_w)
        player.hear(b"\x00\x00\x00\x01\x80")
        assert not pipelane.flush_now(player._lane)  # left for the awaited path, which says why
        with pytest.raises(BotFailure) as failure:
            await player.flush()
        assert failure.value.kind == "crash"
        os.set_blocking(recycled_r, False)
        with pytest.raises(BlockingIOError):  # nothing went into the recycled fd
            os.read(recycled_r, 100)
    finally:
        await receive.aclose()
        for fd in (bot_in, bot_out, recycled_r, recycled_w):
            os.close(fd)


async def test_a_bot_that_stops_reading_fails_at_write_timeout_and_never_hangs(
        autojump_clock: Any) -> None:
    send, receive, bot_in, bot_out = _pipe_pair()
    player = PipePlayer(send, receive)
    try:
        _fill(send)
        player.hear(game_end_frame(1, 0, "normal", "seat 0 holds cards"))
        assert not pipelane.flush_now(player._lane)
        start = trio.current_time()
        with pytest.raises(BotFailure) as failure:
            await player.flush()
        assert failure.value.kind == "timeout"
        assert trio.current_time() - start == pytest.approx(WRITE_TIMEOUT)
        assert player.failure is failure.value  # it fails its next game
    finally:
        for stream in (send, receive):
            await stream.aclose()
        os.close(bot_in)
        os.close(bot_out)


class LockstepBot(StreamPlayer):
    """A bot on a stream whose writes wait for the far side to read them (no buffer)."""

    def __init__(self, stream: Any) -> None:
        super().__init__("lockstep", BotSpec("command", "lockstep", ("lockstep",), "lockstep",
                                             named=True))
        self._attach(stream, stream)

    async def _stream_failure(self) -> BotFailure:
        return BotFailure("crash", "the far side ended its stream", {})

    def _write_failure(self) -> BotFailure:
        return BotFailure("crash", "the far side closed its stream", {})


async def _lockstep_match(stop_after: int | None) -> tuple[list[Any], list[dict[str, Any]], float]:
    """Two games of a bot on a lockstep stream against a built-in; the far side stops
    reading once it has answered ``stop_after`` requests. The records, what it read,
    and the (virtual) time the match took."""
    left, right = trio.testing.lockstep_stream_pair()
    bot = LockstepBot(left)
    opponent = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"))
    config = MatchConfig(rules=make_rules("classic"), games=2, seed=4, max_restarts=0)
    received: list[dict[str, Any]] = []
    records: list[Any] = []

    async def far_side() -> None:
        decoder = FrameDecoder()
        answered = 0
        while chunk := await right.receive_some(65536):
            decoder.feed(chunk)
            for m in decoder.messages():
                received.append(m)
                if m["type"] == "request":
                    await right.send_all(encode(msg.action_msg(m["id"], m["legal"][0])))
                    answered += 1
                    if answered == stop_after:
                        await trio.sleep_forever()

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(far_side)
        await play_match([bot, opponent], config, on_game=lambda r, _: records.append(r))
        nursery.cancel_scope.cancel()
    return records, received, trio.current_time() - start


async def test_in_a_match_a_bot_that_stops_reading_before_the_game_end_costs_write_timeout_once(
        autojump_clock: Any) -> None:
    # The same match twice (the same deal, the same moves): first to count the requests
    # of game 0, then with a far side that stops reading once it has answered them all,
    # so the game_end cannot be written. The referee waits WRITE_TIMEOUT (virtual time),
    # the game's result stands, and the bot fails its next game.
    records, received, _ = await _lockstep_match(None)
    asked = sum(1 for m in received if m["type"] == "request" and m["game"] == 0)
    assert records[0].forfeit is None and asked > 0
    stopped, _, took = await _lockstep_match(asked)
    assert _moves(stopped[0]) == _moves(records[0])
    assert stopped[1].forfeit is not None and stopped[1].forfeit["kind"] == "timeout"
    assert took == pytest.approx(WRITE_TIMEOUT, abs=1.0)


@pytest.mark.slow
def test_the_packed_rules_are_kept_only_as_long_as_their_rules_object() -> None:
    """game_start frames pack a match's rules once (per Rules object), and keep nothing
    once that object is gone: a process that plays many matches holds no old rules."""
    import dataclasses
    import gc

    from referee.table import requests

    rules = dataclasses.replace(make_rules("perevodnoy", ("deck=52",)))  # (an object of its own)
    game = Game.new(rules, 2, seed=1, dealer=0)
    args = (0, 0, ["a", "b"], rules, 0, game.trump_card, game.hands[0], game.attacker)
    assert game_start_frame(*args) == reference_start(*args)
    key = id(rules)
    assert requests._PACKED_RULES[key][0]() is rules
    del rules, game, args
    gc.collect()
    assert key not in requests._PACKED_RULES
