"""Request frames joined from cached parts are the bytes ``encode(request_msg(...))`` gives.

The referee builds each request frame for a program bot from packed parts
(``referee/table/requests.py``) instead of building the observation map and packing
it. Whatever it caches (card lists by mask, each seat's fixed fields, packed actions),
the bytes must be the canonical encoding of the request the engine's own view makes:
``request_msg(id, game, game.observe(seat), legal wire maps, clock)``. Checked here at
every decision of seeded random games, under every rules preset and the options that
change the observation (reflection adds ``direction``; exchanges move the trump; a
52-card deck and six seats stretch the lists), with request ids and clocks of every
size msgpack packs differently.
"""

from __future__ import annotations

import random

import pytest

from protocol import messages as msg
from protocol.codec import MAX_FRAME, decode, encode, framed
from protocol.errors import LocalProtocolError
from referee.rules import PRESETS, Game, make_rules
from referee.rules.actions import shared_wire
from referee.table.clock import Clock, TimeControl
from referee.table.requests import ACTIONS_BY_BYTES, RequestFrames, action_bytes, frame_body

VARIANTS = [(preset, ()) for preset in PRESETS] + [
    ("classic", ("trump_exchange=on",)),
    ("perevodnoy", ("transfer=reflect",)),
    ("perevodnoy_trump", ("trump_exchange=on", "deck=52")),
    ("classic", ("throw_in_timing=any", "throw_in_ranks=all", "draw_others=counter_clockwise")),
]

#: Request ids and clock values on both sides of msgpack's size classes (fixint, uint8,
#: uint16, uint32, uint64) and of the frame builder's small-int table (1024).
IDS = [1, 2, 127, 128, 255, 256, 1023, 1024, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1]


def clock(tc: str | None, move: float | None, remaining: float | None) -> Clock:
    """A seat's clock under the time control ``tc``/``move``, with ``remaining`` seconds
    left on it (as charging decisions and crediting increments leave it)."""
    made = Clock(TimeControl.parse(tc, move))
    made.remaining = remaining
    return made


#: Clocks whose maps hold None and milliseconds of every size class (the remaining time
#: grows past 2**32 ms with large increments; a clock overrun by a slow bot reads 0).
CLOCKS = [clock(None, None, None), clock(None, 0.001, None), clock(None, 0.128, None),
          clock("0.001+0", None, 0.0), clock("60+0.001", 0.127, 0.127), clock("60", 65.536, -3.5),
          clock("70+1.024", None, 70.0), clock("604800+65.535", 1.0, 4294967.295),
          clock("604800+604800", None, 4294967.296), clock("604800+5", None, 2.0**40)]


def _variant_id(variant: tuple[str, tuple[str, ...]]) -> str:
    return "+".join((variant[0], *variant[1]))


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS, ids=[_variant_id(v) for v in VARIANTS])
@pytest.mark.parametrize("players", [2, 3, 6])
def test_every_request_frame_is_the_canonical_encoding_of_the_engines_request(
        variant: tuple[str, tuple[str, ...]], players: int) -> None:
    preset, overrides = variant
    if players == 6:
        overrides = (*overrides, "deck=52")
    rules = make_rules(preset, overrides)
    checked = 0
    for game_no in range(12):
        rng = random.Random(f"{_variant_id(variant)}-{players}-{game_no}")
        game = Game.new(rules, players, seed=rng.randrange(2**32), dealer=game_no % players)
        index = rng.choice([0, 1, 127, 128, 5000])
        frames = RequestFrames(game, index)  # one per game, reused at every decision
        while not game.is_over:
            seat = game.seat_to_move()
            legal = game.legal_actions()
            request_id = rng.choice(IDS)
            seat_clock = rng.choice(CLOCKS)
            expected = encode(msg.request_msg(
                id=request_id, game=index, observation=game.observe(seat),
                legal=[shared_wire(a) for a in legal], clock=seat_clock.wire()))
            assert frames.frame(seat, request_id, legal, seat_clock) == expected, (
                f"request {request_id} to seat {seat} differs: {game!r}")
            checked += 1
            game.apply_legal(rng.choice(legal))
    assert checked > 12 * 20  # the games were played, not cut short


def test_a_frame_is_built_from_the_game_as_it_is_now_not_as_it_was_cached() -> None:
    """Reading the same position twice gives the same bytes, and after a move (and the
    clock charged for it) the frame shows the new position and time: no part is stale."""
    game = Game.new(make_rules("classic"), 2, seed=7, dealer=0)
    frames = RequestFrames(game, 3)
    seat_clock = Clock(TimeControl.parse("60+1"))
    seat, legal = game.seat_to_move(), game.legal_actions()
    first = frames.frame(seat, 1, legal, seat_clock)
    assert frames.frame(seat, 1, legal, seat_clock) == first
    game.apply_legal(legal[0])
    seat_clock.charge(2.5)
    seat, legal = game.seat_to_move(), game.legal_actions()
    after = decode(frames.frame(seat, 2, legal, seat_clock))
    assert after["observation"] == game.observe(seat)
    assert after["legal"] == [shared_wire(a) for a in legal]
    assert after["clock"] == seat_clock.wire() == msg.clock_map(58500, 1000, None)


@pytest.mark.parametrize("bout", [1, 127, 128, 1023, 1024, 65535, 65536, 2**32, 2**40])
def test_a_bout_number_of_any_size_is_packed_as_the_encoder_packs_it(bout: int) -> None:
    """Bouts count up for the whole game (past the small-int table in a very long one)."""
    game = Game.new(make_rules("perevodnoy"), 3, seed=5, dealer=1)
    game.bout = bout
    seat, legal = game.seat_to_move(), game.legal_actions()
    seat_clock = Clock(TimeControl())
    assert RequestFrames(game, 9).frame(seat, 4, legal, seat_clock) == encode(msg.request_msg(
        id=4, game=9, observation=game.observe(seat), legal=[shared_wire(a) for a in legal],
        clock=seat_clock.wire()))


def test_a_request_over_the_frame_limit_is_refused_as_the_encoder_refuses_it() -> None:
    """No game comes near the limit (a request is some hundreds of bytes), but the joined
    frame keeps the encoder's guarantee: our bug, said as such, never an oversized frame."""
    game = Game.new(make_rules("classic"), 2, seed=3, dealer=0)
    seat, legal = game.seat_to_move(), game.legal_actions()
    too_many = legal * (MAX_FRAME // len(action_bytes(legal[0])))
    with pytest.raises(LocalProtocolError, match=f"the limit is {MAX_FRAME}"):
        RequestFrames(game, 0).frame(seat, 1, too_many, Clock(TimeControl()))
    with pytest.raises(LocalProtocolError, match=f"the limit is {MAX_FRAME}"):
        encode(msg.request_msg(id=1, game=0, observation=game.observe(seat),
                               legal=[shared_wire(a) for a in too_many], clock=msg.clock_map()))


def test_the_packed_action_table_maps_each_actions_bytes_back_to_that_action() -> None:
    game = Game.new(make_rules("perevodnoy"), 3, seed=11, dealer=2)
    while not game.is_over:
        legal = game.legal_actions()
        for action in legal:
            data = action_bytes(action)
            assert encode(msg.action_msg(1, shared_wire(action))).endswith(data)  # the map is last
            assert ACTIONS_BY_BYTES[data] == action
        game.apply_legal(legal[-1])


@pytest.mark.parametrize("size", [0, 1, 255, 256, 4095, 4096, 65535, 65536, MAX_FRAME])
def test_frame_body_frames_every_size_as_codec_does(size: int) -> None:
    # (Below 4096 bytes the header comes from a table; above, it is computed.)
    body = bytes(range(256)) * (size // 256) + bytes(size % 256)
    assert frame_body(body) == framed(body)


def test_frame_body_refuses_a_body_past_the_frame_limit_as_codec_does() -> None:
    body = bytes(MAX_FRAME + 1)
    with pytest.raises(LocalProtocolError) as ours:
        frame_body(body)
    with pytest.raises(LocalProtocolError) as codecs:
        framed(body)
    assert str(ours.value) == str(codecs.value)


def test_games_played_one_after_another_share_nothing_of_their_state() -> None:
    """Request frames keep nothing past their game (every table they fill is their
    own): a game played after others with other tables, trumps and rules frames exactly
    what a fresh process would (the reference encoding)."""
    rules = make_rules("classic", ())
    for k, players in enumerate([2, 3, 2, 6, 2]):
        game = Game.new(rules, players, seed=f"shared-{k}", record_events=False)
        frames = RequestFrames(game, k)
        clocks = [Clock(TimeControl(base=60.0, increment=1.0)) for _ in range(players)]
        for request_id in range(1, 40):
            if game.is_over:
                break
            seat, legal = game.seat_to_move(), game.legal_actions()
            expected = encode(msg.request_msg(
                id=request_id, game=k, observation=game.observe(seat),
                legal=[shared_wire(a) for a in legal], clock=clocks[seat].wire()))
            assert frames.frame(seat, request_id, legal, clocks[seat]) == expected
            game.apply_legal(legal[-1])


def test_the_engines_observation_holds_the_declared_fields_in_their_order() -> None:
    """``Game.observe`` (the engine cannot import the protocol) builds the map the
    declaration describes: every field, in order, ``direction`` only under reflection."""
    for overrides, present in (((), ()), (("transfer=reflect",), ("direction",))):
        game = Game.new(make_rules("perevodnoy", overrides), 3, seed=2, dealer=0)
        declared = [f.name for f in msg.OBSERVATION.fields if not f.optional or f.name in present]
        assert list(game.observe(1)) == declared
        observation = game.observe(1)
        for f in msg.OBSERVATION.fields:  # each of its declared kind
            if f.name in observation:
                f.kind.check(observation[f.name], f.name)


def test_a_joiner_whose_fields_are_not_the_declared_ones_is_refused_at_import() -> None:
    """What keeps the joined frames in step with the declaration: the order in which
    requests.py writes each message's fields is checked against it when it is imported,
    so a field added or moved in protocol/messages.py fails at once, saying where."""
    from referee.table import requests

    names = [f.name for f in msg.REQUEST.fields]
    requests._check_layout(msg.REQUEST, names)
    with pytest.raises(LocalProtocolError, match="join the declared fields here"):
        requests._check_layout(msg.REQUEST, [names[1], names[0], *names[2:]])
    with pytest.raises(LocalProtocolError, match="protocol/messages.py declares"):
        requests._check_layout(msg.REQUEST, names[:-1])
