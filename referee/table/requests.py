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
_INT = [pack(i) for i in range(1024)]  #: small ints: ids, sizes, seats, bouts
_NIL = pack(None)
_ARRAY = [array_head(length) for length in range(64)]  #: array heads of card lists


def _int(value: int) -> bytes:
    return _INT[value] if 0 <= value < 1024 else pack(value)


def _key(name: str) -> bytes:
    return pack(name)


def _field(name: str, values: Sequence[object]) -> list[bytes]:
    """Key and value bytes of the field ``name`` for each of ``values``, by index."""
    return [_key(name) + pack(value) for value in values]


#: The request map up to the value of ``id``: its six keys are type, id, game,
#: observation, legal, clock (request_msg's order).
_REQUEST_HEAD = map_head(6) + _key("type") + pack("request") + _key("id")
#: Fields whose few values are packed with their key once: indexed by the game's value.
_TRUMP = [[_key("trump") + _CARD[card] + _key("trump_suit") + pack("CDHS"[suit])
           for suit in range(4)] for card in range(52)]  #: [trump_card][trump_suit]
_HOLDER = _field("trump_holder", [None, *range(6)])  #: [trump_holder + 1], None first
_TALON = _field("talon", range(53))
_ATTACKER = _field("attacker", range(6))
_DEFENDER = _field("defender", range(6))
_PHASE = _field("phase", PHASE_NAMES)
_TAKING = _field("taking", [False, True])
_DIRECTION = {1: _key("direction") + pack("clockwise"),
              -1: _key("direction") + pack("counter_clockwise")}
_K_TABLE, _K_DISCARD, _K_HAND_SIZES, _K_OUT, _K_BOUT = (
    _key("table"), _key("discard"), _key("hand_sizes"), _key("out"), _key("bout"))
_K_TRANSFERS, _K_ATTACK_LIMIT, _K_KNOWN, _K_SHOWN = (
    _key("transfers"), _key("attack_limit"), _key("known"), _key("shown"))
_K_LEGAL, _K_CLOCK = _key("legal"), _key("clock")
_PAIR = array_head(2)  #: a table slot: [attack, cover or nil]
_OUT_FLAG = (pack(False)[0], pack(True)[0])  #: one byte each

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

    __slots__ = ("_game", "_seat_head", "_masks", "_reflect", "_sizes_head", "_out_head",
                 "_known_head")

    def __init__(self, game: Game, index: int) -> None:
        self._game = game
        self._reflect = game.rules.transfer == "reflect"  # observe adds "direction" then
        fields = 22 if self._reflect else 21
        n = game.players
        # Per seat: from the game's key to the hand's key, fixed for the whole game.
        after_id = _key("game") + _int(index) + _key("observation") + map_head(fields)
        self._seat_head = [
            after_id + _key("seat") + _int(seat) + _key("players") + _int(n)
            + _key("dealer") + _int(game.dealer) + _key("hand")
            for seat in range(n)]
        self._sizes_head = _K_HAND_SIZES + array_head(n)
        self._out_head = _K_OUT + array_head(n)
        self._known_head = _K_KNOWN + array_head(n)
        #: card mask -> its packed text list (mask_str order: lowest card first). Lives
        #: as long as the game: its hands, discard, known and shown sets.
        self._masks: dict[int, bytes] = {0: array_head(0)}

    def _cards(self, mask: int) -> bytes:
        """The packed text list of the cards of ``mask`` (cached for the game)."""
        cards = _CARD
        parts = []
        m = mask
        while m:
            low = m & -m
            parts.append(cards[low.bit_length() - 1])
            m ^= low
        data = self._masks[mask] = _ARRAY[len(parts)] + b"".join(parts)
        return data

    def frame(self, seat: int, request_id: int, legal: Sequence[int],
              clock: Mapping[str, int | None]) -> bytes:
        """The frame of ``request_msg(id=request_id, game=index, observation=
        game.observe(seat), legal=[shared_wire(a) for a in legal], clock=clock)``,
        byte for byte. ``legal`` must not be empty (as request_msg requires)."""
        g = self._game
        masks = self._masks
        cards = self._cards
        hands = g.hands
        hand, discard, shown = hands[seat], g.discard, g.shown
        holder = g.trump_holder
        ints = _INT  # (ids and bouts may pass 1023: _int; other counts are always smaller)
        parts = [
            _REQUEST_HEAD, _int(request_id),
            self._seat_head[seat],
            masks.get(hand) or cards(hand),
            _TRUMP[g.trump_card][g.trump_suit], _HOLDER[0 if holder is None else holder + 1],
            _TALON[len(g.talon)], _K_TABLE,
        ]
        attacks = g.attacks
        if attacks:
            parts.append(_ARRAY[len(attacks)])  # (at most 52)
            parts += [_PAIR + _CARD[a] + (_CARD[c] if c >= 0 else _NIL)
                      for a, c in zip(attacks, g.covers)]
        else:
            parts.append(_ARRAY[0])
        parts += (
            _K_DISCARD, masks.get(discard) or cards(discard),
            # Hand sizes are at most 52 (each packs as one byte, a positive fixint), and
            # each out flag packs as one byte too.
            self._sizes_head, bytes([h.bit_count() for h in hands]),
            self._out_head, bytes([_OUT_FLAG[o] for o in g.out]),
            _ATTACKER[g.attacker], _DEFENDER[g.defender], _PHASE[g.phase], _TAKING[g.taking],
            _K_BOUT, _int(g.bout), _K_TRANSFERS, ints[g.transfers],
            _K_ATTACK_LIMIT, ints[g.limit], self._known_head,
        )
        parts += [masks.get(k) or cards(k) for k in g.known]
        parts += (_K_SHOWN, masks.get(shown) or cards(shown))
        if self._reflect:
            parts.append(_DIRECTION[g.direction])
        n_legal = len(legal)
        parts += (_K_LEGAL, _ARRAY[n_legal] if n_legal < 64 else array_head(n_legal))
        parts += [_ACTION_BYTES.get(a) or action_bytes(a) for a in legal]
        parts += (_K_CLOCK, pack(clock if type(clock) is dict else dict(clock)))
        return framed(b"".join(parts))
