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
from protocol.codec import decode, encode
from referee.rules import PRESETS, Game, make_rules
from referee.rules.actions import shared_wire
from referee.table.requests import ACTIONS_BY_BYTES, RequestFrames, action_bytes

VARIANTS = [(preset, ()) for preset in PRESETS] + [
    ("classic", ("trump_exchange=on",)),
    ("perevodnoy", ("transfer=reflect",)),
    ("perevodnoy_trump", ("trump_exchange=on", "deck=52")),
    ("classic", ("throw_in_timing=any", "throw_in_ranks=all", "draw_others=counter_clockwise")),
]

#: Request ids and clock values on both sides of msgpack's size classes (fixint, uint8,
#: uint16, uint32) and of the frame builder's small-int table (1024).
IDS = [1, 2, 127, 128, 255, 256, 1023, 1024, 65535, 65536, 2**32]
CLOCKS = [msg.clock_map(), msg.clock_map(0, 0, 0), msg.clock_map(127, None, 128),
          msg.clock_map(70_000, 1024, None), msg.clock_map(2**33, 5, 65536)]


def _variant_id(variant: tuple[str, tuple[str, ...]]) -> str:
    return "+".join((variant[0], *variant[1]))


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
            clock = rng.choice(CLOCKS)
            expected = encode(msg.request_msg(
                id=request_id, game=index, observation=game.observe(seat),
                legal=[shared_wire(a) for a in legal], clock=clock))
            assert frames.frame(seat, request_id, legal, clock) == expected, (
                f"request {request_id} to seat {seat} differs: {game!r}")
            checked += 1
            game.apply_legal(rng.choice(legal))
    assert checked > 12 * 20  # the games were played, not cut short


def test_a_frame_is_built_from_the_game_as_it_is_now_not_as_it_was_cached() -> None:
    """Reading the same position twice gives the same bytes, and after a move the frame
    shows the new position (no part of it is stale)."""
    game = Game.new(make_rules("classic"), 2, seed=7, dealer=0)
    frames = RequestFrames(game, 3)
    seat, legal = game.seat_to_move(), game.legal_actions()
    first = frames.frame(seat, 1, legal, msg.clock_map())
    assert frames.frame(seat, 1, legal, msg.clock_map()) == first
    game.apply_legal(legal[0])
    seat, legal = game.seat_to_move(), game.legal_actions()
    after = decode(frames.frame(seat, 2, legal, msg.clock_map()))
    assert after["observation"] == game.observe(seat)
    assert after["legal"] == [shared_wire(a) for a in legal]


def test_the_packed_action_table_maps_each_actions_bytes_back_to_that_action() -> None:
    game = Game.new(make_rules("perevodnoy"), 3, seed=11, dealer=2)
    while not game.is_over:
        legal = game.legal_actions()
        for action in legal:
            data = action_bytes(action)
            assert encode(msg.action_msg(1, shared_wire(action))).endswith(data)  # the map is last
            assert ACTIONS_BY_BYTES[data] == action
        game.apply_legal(legal[-1])
