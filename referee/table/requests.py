"""Request frames for program bots, joined from packed parts.

A ``request`` message (``protocol.messages.request_msg``) holds the seat's observation
(``Game.observe``), the legal list and the clock. Built as a map and packed, it costs
the referee more than any other step of a decision: some twenty fields, five card
lists as text, and msgpack walking all of it, for every decision. msgpack is
compositional (``protocol.codec.pack``), so ``RequestFrames`` joins the frame from
bytes packed once instead: the message head and each seat's fixed fields once per
game, each card list once per distinct card mask in the game (a hand, the discard
pile, a known set recur from decision to decision until they change), each card's
and each action's packed text once per process. What changes at every decision
(ids, sizes, roles, the table, the clock) is packed from small tables.

The contract, which ``tests/referee/test_request_frames.py`` checks at every decision
of seeded games under every rules preset: ``RequestFrames(game, index).frame(seat,
request_id, legal, clock)`` is exactly ``encode(request_msg(id=request_id, game=index,
observation=game.observe(seat), legal=[shared_wire(a) for a in legal], clock=clock))``.
A change to the observation's fields or their order must be made in both places
(the test fails until it is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol.codec import array_head, framed, map_head, pack

from ..rules import Game
from ..rules.actions import shared_wire
from ..rules.cards import CARD_TEXT
from ..rules.game import PHASE_NAMES

_CARD = [pack(text) for text in CARD_TEXT]  #: card index -> its packed text
_SUIT = [pack(s) for s in "CDHS"]
_PHASE = [pack(name) for name in PHASE_NAMES]
_INT = [pack(i) for i in range(1024)]  #: small ints: ids, sizes, seats, bouts
_NIL, _TRUE, _FALSE = pack(None), pack(True), pack(False)
_BOOL = {True: _TRUE, False: _FALSE}
_DIRECTION = {1: pack("clockwise"), -1: pack("counter_clockwise")}


def _int(value: int) -> bytes:
    return _INT[value] if 0 <= value < 1024 else pack(value)


def _key(name: str) -> bytes:
    return pack(name)


#: The request map up to the value of ``id``: its six keys are type, id, game,
#: observation, legal, clock (request_msg's order).
_REQUEST_HEAD = map_head(6) + _key("type") + pack("request") + _key("id")
_K_HAND, _K_TRUMP, _K_TRUMP_SUIT, _K_TRUMP_HOLDER = (
    _key("hand"), _key("trump"), _key("trump_suit"), _key("trump_holder"))
_K_TALON, _K_TABLE, _K_DISCARD, _K_HAND_SIZES, _K_OUT = (
    _key("talon"), _key("table"), _key("discard"), _key("hand_sizes"), _key("out"))
_K_ATTACKER, _K_DEFENDER, _K_PHASE, _K_TAKING, _K_BOUT = (
    _key("attacker"), _key("defender"), _key("phase"), _key("taking"), _key("bout"))
_K_TRANSFERS, _K_ATTACK_LIMIT, _K_KNOWN, _K_SHOWN, _K_DIRECTION = (
    _key("transfers"), _key("attack_limit"), _key("known"), _key("shown"), _key("direction"))
_K_LEGAL, _K_CLOCK = _key("legal"), _key("clock")
_PAIR = array_head(2)  #: a table slot: [attack, cover or nil]

#: Packed wire form of each action met so far (``pack(shared_wire(action))``), and the
#: reverse: those bytes -> the action. At most one entry per distinct well-formed action
#: (8 kinds x 52 cards x 64 slots at worst), so neither grows without bound.
_ACTION_BYTES: dict[int, bytes] = {}
ACTIONS_BY_BYTES: dict[bytes, int] = {}


def action_bytes(action: int) -> bytes:
    """``pack(shared_wire(action))``, packed once per process (``action`` well-formed).
    Registers the reverse in ``ACTIONS_BY_BYTES``: an answer holding exactly these bytes
    names this action (``StreamPlayer.decide_frame``)."""
    data = _ACTION_BYTES.get(action)
    if data is None:
        data = _ACTION_BYTES[action] = pack(shared_wire(action))
        ACTIONS_BY_BYTES[data] = action
    return data


class RequestFrames:
    """The request frames of one game (see the module docstring). Holds the game and
    reads it at each ``frame`` call: valid for that game only."""

    __slots__ = ("_game", "_seat_head", "_masks", "_reflect")

    def __init__(self, game: Game, index: int) -> None:
        self._game = game
        self._reflect = game.rules.transfer == "reflect"  # observe adds "direction" then
        fields = 22 if self._reflect else 21
        # Per seat: from the game's key to the hand's key, fixed for the whole game.
        after_id = _key("game") + _int(index) + _key("observation") + map_head(fields)
        self._seat_head = [
            after_id + _key("seat") + _int(seat) + _key("players") + _int(game.players)
            + _key("dealer") + _int(game.dealer) + _K_HAND
            for seat in range(game.players)]
        #: card mask -> its packed text list (mask_str order: lowest card first). Lives
        #: as long as the game: its hands, discard, known and shown sets.
        self._masks: dict[int, bytes] = {0: array_head(0)}

    def _cards(self, mask: int) -> bytes:
        data = self._masks.get(mask)
        if data is None:
            cards = _CARD
            parts = []
            m = mask
            while m:
                low = m & -m
                parts.append(cards[low.bit_length() - 1])
                m ^= low
            data = self._masks[mask] = array_head(len(parts)) + b"".join(parts)
        return data

    def frame(self, seat: int, request_id: int, legal: Sequence[int],
              clock: Mapping[str, int | None]) -> bytes:
        """The frame of ``request_msg(id=request_id, game=index, observation=
        game.observe(seat), legal=[shared_wire(a) for a in legal], clock=clock)``,
        byte for byte. ``legal`` must not be empty (as request_msg requires)."""
        g = self._game
        cards = self._cards
        hands = g.hands
        n = g.players
        holder = g.trump_holder
        table = [_PAIR + _CARD[a] + (_CARD[c] if c >= 0 else _NIL)
                 for a, c in zip(g.attacks, g.covers)]
        parts = [
            _REQUEST_HEAD, _int(request_id), self._seat_head[seat], cards(hands[seat]),
            _K_TRUMP, _CARD[g.trump_card], _K_TRUMP_SUIT, _SUIT[g.trump_suit],
            _K_TRUMP_HOLDER, _NIL if holder is None else _int(holder),
            _K_TALON, _int(len(g.talon)),
            _K_TABLE, array_head(len(table)), *table,
            _K_DISCARD, cards(g.discard),
            # Hand sizes are at most 52: each packs as one byte (a positive fixint).
            _K_HAND_SIZES, array_head(n), bytes([h.bit_count() for h in hands]),
            _K_OUT, array_head(n), *[_TRUE if o else _FALSE for o in g.out],
            _K_ATTACKER, _int(g.attacker), _K_DEFENDER, _int(g.defender),
            _K_PHASE, _PHASE[g.phase], _K_TAKING, _BOOL[g.taking], _K_BOUT, _int(g.bout),
            _K_TRANSFERS, _int(g.transfers), _K_ATTACK_LIMIT, _int(g.limit),
            _K_KNOWN, array_head(n), *[cards(k) for k in g.known],
            _K_SHOWN, cards(g.shown),
        ]
        if self._reflect:
            parts += (_K_DIRECTION, _DIRECTION[g.direction])
        parts += (_K_LEGAL, array_head(len(legal)), *[action_bytes(a) for a in legal],
                  _K_CLOCK, pack(dict(clock)))
        return framed(b"".join(parts))
