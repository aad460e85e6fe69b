"""Request frames for program bots, joined from packed parts (and, at the end, each
game's ``game_start`` and ``game_end`` frames, joined the same way).

A ``request`` message (``protocol.messages.request_msg``) holds the seat's observation
(``Game.observe``), the legal list and the clock. Built as a map and packed, it costs
the referee more than any other step of a decision: some twenty fields, five card
lists as text, and msgpack walking all of it, for every decision. msgpack is
compositional (``protocol.codec.pack``), so ``RequestFrames`` joins the frame from
bytes packed once instead: the message head and each seat's fixed fields once per
game, each card list when its set changes (a hand, the discard pile, a known set
stay the same for several decisions), the clock map's fixed end once per clock, each
card's and each action's packed text once per process. What changes at every
decision (ids, sizes, roles, the table, the remaining time) is packed from small
tables, and neighbouring fields with few values share one table entry: the cost of a
frame is mostly the number of parts it joins.

The contract, which ``tests/referee/test_request_frames.py`` checks at every decision
of seeded games under every rules preset: ``RequestFrames(game, index).frame(seat,
request_id, legal, clock)`` is exactly ``encode(request_msg(id=request_id, game=index,
observation=game.observe(seat), legal=[shared_wire(a) for a in legal],
clock=clock.wire()))``. A change to the observation's fields or their order must be
made in both places (the test fails until it is).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from protocol.codec import MAX_FRAME, array_head, encode, framed, map_head, pack
from protocol.messages import TERMINATIONS, game_end_msg, game_start_msg

from ..rules import Game, Rules
from ..rules.actions import shared_wire
from ..rules.cards import CARD_TEXT, card_str, mask_str
from ..rules.game import PHASE_NAMES
from .clock import Clock

# Every table is Final: compiled, mypyc reads it from a C static (an ordinary module
# global costs a dict look-up at each use).
_CARD: Final = [pack(text) for text in CARD_TEXT]  #: card index -> its packed text
_INT: Final = [pack(i) for i in range(1024)]  #: small ints: ids, sizes, seats, bouts
_NIL: Final = pack(None)
_ARRAY: Final = [array_head(length) for length in range(64)]  #: array heads of card lists
_MAX_BODY: Final = MAX_FRAME  #: (as a Final: read at every frame)
#: The 4-byte length headers of bodies below 4096 bytes (requests and events are some
#: hundreds): int.to_bytes costs some hundreds of instructions, a lookup a few.
_HEADERS: Final = [size.to_bytes(4, "big") for size in range(4096)]
#: _BYTE_CARDS[k][b]: the packed texts of the cards of bits ``b`` in byte ``k`` of a card
#: mask (cards 8k..8k+7), lowest first, so a mask's list is its bytes' in turn (mask_str).
_BIT_COUNT: Final = [b.bit_count() for b in range(256)]
_BYTE_CARDS: Final = [[b"".join([_CARD[8 * k + i] for i in range(8) if b >> i & 1])
                       for b in range(256 if k < 6 else 16)] for k in range(7)]


def _int(value: int) -> bytes:
    """``pack(value)``. Ids, bouts and milliseconds are ints >= 0: below 1024 from a table,
    below 2**32 written here in msgpack's uint16 / uint32 form (the one pack chooses)."""
    if value >= 0:
        if value < 1024:
            return _INT[value]
        if value < 0x10000:
            return b"\xcd" + value.to_bytes(2, "big")
        if value < 0x1_0000_0000:
            return b"\xce" + value.to_bytes(4, "big")
    return pack(value)


def _key(name: str) -> bytes:
    return pack(name)


def _field(name: str, values: Sequence[object]) -> list[bytes]:
    """Key and value bytes of the field ``name`` for each of ``values``, by index."""
    return [_key(name) + pack(value) for value in values]


def _cards(mask: int) -> bytes:
    """The packed text list of the cards of ``mask`` (mask_str's order: lowest first)."""
    parts = [b""]  # for the array's head
    count = k = 0
    while mask:
        bits = mask & 255
        if bits:
            parts.append(_BYTE_CARDS[k][bits])
            count += _BIT_COUNT[bits]  # (compiled, cheaper than a call of bit_count)
        mask >>= 8
        k += 1
    parts[0] = _ARRAY[count]
    return b"".join(parts)


# Fields whose few values are packed with their key once, indexed by the game's values.
# A frame holds some forty keys and values; each part less to join saves about as much
# as packing a small int, so neighbouring fields share one part where their values are
# few, and keys with nothing to pack between them ride on the part before them.

#: The request map up to the value of ``id``: its six keys are type, id, game,
#: observation, legal, clock (request_msg's order).
_REQUEST_HEAD: Final = map_head(6) + _key("type") + pack("request") + _key("id")
_ID_HEADS: Final = [_REQUEST_HEAD + packed for packed in _INT]  #: [request id], below 1024
_TRUMP: Final = [[_key("trump") + _CARD[card] + _key("trump_suit") + pack("CDHS"[suit])
                  for suit in range(4)] for card in range(52)]  #: [trump_card][trump_suit]
#: [(trump_holder + 1) * 53 + talon size]: both fields and the table's key.
_HOLDER_TALON: Final = [holder + talon + _key("table")
                        for holder in _field("trump_holder", [None, *range(6)])
                        for talon in _field("talon", range(53))]
#: [((attacker * 6 + defender) * 8 + phase) * 2 + taking]: the four fields and bout's key
#: (phases padded to 8).
_ROLES: Final = [attacker + defender + phase + taking + _key("bout")
                 for attacker in _field("attacker", range(6))
                 for defender in _field("defender", range(6))
                 for phase in _field("phase", [*PHASE_NAMES, *[None] * (8 - len(PHASE_NAMES))])
                 for taking in _field("taking", [False, True])]
#: _SLOT[attack * 53 + cover + 1]: a table slot, [attack, cover or nil] (cover -1: nil).
_SLOT: Final = [array_head(2) + _CARD[a] + (_CARD[c] if c >= 0 else _NIL)
                for a in range(52) for c in range(-1, 52)]
_DIRECTION: Final = {1: _key("direction") + pack("clockwise"),
                     -1: _key("direction") + pack("counter_clockwise")}
_K_DISCARD: Final = _key("discard")
_K_TRANSFERS: Final = _key("transfers")
_K_ATTACK_LIMIT: Final = _key("attack_limit")
_K_SHOWN: Final = _key("shown")
_K_LEGAL: Final = _key("legal")
_LEGAL_HEAD: Final = [_K_LEGAL + head for head in _ARRAY]  #: [len(legal)], below 64
#: The clock map (``Clock.wire``) up to the value of ``remaining_ms``.
_CLOCK_HEAD: Final = _key("clock") + map_head(3) + _key("remaining_ms")
_OUT_FLAG: Final = (pack(False)[0], pack(True)[0])  #: one byte each

#: Packed wire form of each action met so far (``pack(shared_wire(action))``) by action
#: number, b"" until met: ``kind | card << 4 | slot << 10`` puts every well-formed action
#: below 2**16, and a list index is cheaper than a dict look-up (read at every frame).
_ACTION_BYTES: Final = [b""] * (1 << 16)
#: The reverse: those bytes -> the action. At most one entry per distinct well-formed
#: action (8 kinds x 52 cards x 64 slots at worst), so it does not grow without bound.
ACTIONS_BY_BYTES: Final[dict[bytes, int]] = {}


def action_bytes(action: int) -> bytes:
    """``pack(shared_wire(action))``, packed once per process (``action`` well-formed).
    Registers the reverse in ``ACTIONS_BY_BYTES``: an answer holding exactly these bytes
    names this action (``StreamPlayer.decide_frame``)."""
    if not 0 <= action < len(_ACTION_BYTES):
        return pack(shared_wire(action))  # (not well-formed: not kept)
    data = _ACTION_BYTES[action]
    if len(data) == 0:
        data = _ACTION_BYTES[action] = pack(shared_wire(action))
        ACTIONS_BY_BYTES[data] = action
    return data


_K_GAME: Final = _key("game")
_K_OBSERVATION: Final = _key("observation")
#: The observation map's head: 21 fields, 22 with ``direction`` (transfer = reflect).
_OBSERVATION_HEAD: Final = map_head(21)
_OBSERVATION_HEAD_REFLECT: Final = map_head(22)
_K_SEAT: Final = _key("seat")
_K_PLAYERS: Final = _key("players")
_K_DEALER: Final = _key("dealer")
_K_HAND: Final = _key("hand")
_K_HAND_SIZES: Final = _key("hand_sizes")
_K_OUT: Final = _key("out")
_K_KNOWN: Final = _key("known")


class _SeatsParts:
    """The parts of a request frame that depend on the number of seats alone, and the
    tables of them that ``RequestFrames.frame`` fills as it meets their values: each
    entry is a pure function of its index and the number of seats, so every game with
    that many seats shares one (nothing of a game's state is in them)."""

    def __init__(self, n: int) -> None:
        self.sizes_head = _K_HAND_SIZES + _ARRAY[n]
        self.out_head = _K_OUT + _ARRAY[n]
        self.out_parts = [b""] * (1 << n)
        self.known_head = _K_KNOWN + _ARRAY[n]
        self.limits = [b""] * 2048
        self.unknown = _ARRAY[0] * n + _K_SHOWN + _ARRAY[0]


#: _SeatsParts by number of seats (2 to 6), made when first met.
_SEATS_PARTS: Final[list[_SeatsParts | None]] = [None] * 7


def _seats_parts(n: int) -> _SeatsParts:
    """The shared ``_SeatsParts`` of ``n`` seats."""
    parts = _SEATS_PARTS[n] if 0 <= n < 7 else None
    if parts is None:
        parts = _SeatsParts(n)
        if 0 <= n < 7:
            _SEATS_PARTS[n] = parts
    return parts


#: Per trump (card * 4 + suit): ``RequestFrames._trump_talon``'s table for it, filled as
#: frames meet its entries (each a pure function of the trump and its index), shared by
#: every game with that trump. At most 52 x 4 tables of 371 entries.
_TRUMP_PARTS: Final[dict[int, list[bytes]]] = {}


def _trump_parts(trump: int) -> list[bytes]:
    """The shared ``_trump_talon`` table of ``trump`` (card * 4 + suit)."""
    parts = _TRUMP_PARTS.get(trump)
    if parts is None:
        parts = _TRUMP_PARTS[trump] = [b""] * len(_HOLDER_TALON)
    return parts


class RequestFrames:
    """The request frames of one game (see the module docstring). Holds the game and
    reads it at each ``frame`` call: valid for that game only."""

    __slots__ = ("_game", "_reflect", "_seat_head", "_sizes_head", "_out_head", "_out_parts",
                 "_known_head", "_limits", "_unknown", "_hands", "_hand_parts", "_size_masks",
                 "_sizes", "_trump", "_trump_talon", "_known", "_known_parts", "_discard",
                 "_discard_part", "_shown", "_shown_part", "_clocks", "_clock_tails",
                 "_clock_maps")

    def __init__(self, game: Game, index: int) -> None:
        self._game = game
        self._reflect = game.rules.transfer == "reflect"  # observe adds "direction" then
        n = game.players
        # Per seat: from the game's key to the hand's key, fixed for the whole game.
        after_id = (_K_GAME + _int(index) + _K_OBSERVATION
                    + (_OBSERVATION_HEAD_REFLECT if self._reflect else _OBSERVATION_HEAD))
        after_seats = _K_PLAYERS + _int(n) + _K_DEALER + _int(game.dealer) + _K_HAND
        self._seat_head = [after_id + _K_SEAT + _INT[seat] + after_seats for seat in range(n)]
        # The parts that depend on the number of seats only, shared by every game with it.
        shared = _seats_parts(n)
        self._sizes_head = shared.sizes_head
        self._out_head = shared.out_head
        #: [bit s set when seat s is out]: the out flags with their key, packed when met.
        self._out_parts = shared.out_parts
        self._known_head = shared.known_head
        #: [transfers * 64 + attack_limit (+ 1024 when no card is known or shown)]:
        #: ``_limits_part``, packed when first met.
        self._limits = shared.limits
        #: The known sets and the shown set when all are empty (most positions).
        self._unknown = shared.unknown
        # Each card set's packed list as last framed, with its mask (-1 or None: none
        # yet; hands by identity, see frame): a set changes a few times a bout, far less
        # often than it is framed.
        self._hands: list[object] = [None] * n
        self._hand_parts = [b""] * n
        self._size_masks: list[object] = [None] * n
        self._sizes = [b""] * n  #: hand sizes, packed
        #: The trump (card * 4 + suit) and [(trump_holder + 1) * 53 + talon size]: the
        #: trump's fields, its holder's and the talon's, with the table's key (shared by
        #: the games with this trump: ``_trump_parts``).
        self._trump = game.trump_card * 4 + game.trump_suit
        self._trump_talon = _trump_parts(self._trump)
        self._known, self._known_parts = [-1] * n, [b""] * n
        #: The discard pile's part runs from its key to the hand sizes' array head.
        self._discard, self._discard_part = -1, b""
        self._shown, self._shown_part = -1, b""
        #: Per seat, the clock last framed and the end of its map (increment and move
        #: time: fixed for a clock).
        self._clocks: list[Clock | None] = [None] * n
        self._clock_tails = [b""] * n
        self._clock_maps = [b""] * n  #: the whole map, without a game clock

    def frame(self, seat: int, request_id: int, legal: list[int], clock: Clock) -> bytes:
        """The frame of ``request_msg(id=request_id, game=index, observation=
        game.observe(seat), legal=[shared_wire(a) for a in legal], clock=clock.wire())``,
        byte for byte. ``legal`` must not be empty (as request_msg requires). Raises
        ``LocalProtocolError`` past the frame limit, as ``codec.framed`` does."""
        g = self._game
        # The hands as objects, compared by identity: the game's list holds the same int
        # until that hand changes, and the cache holds it too (no other object can take
        # its place). Compiled, this skips unboxing two big ints per seat.
        hands = cast("list[object]", g.hands)
        hand = hands[seat]
        if hand is not self._hands[seat]:
            self._hands[seat] = hand
            self._hand_parts[seat] = _cards(cast(int, hand))
        trump = g.trump_card * 4 + g.trump_suit
        if trump != self._trump:  # the deal, or a trump exchange
            self._trump = trump
            self._trump_talon = [b""] * len(_HOLDER_TALON)
        holder = g.trump_holder
        index = (0 if holder is None else holder + 1) * 53 + len(g.talon)
        trump_talon = self._trump_talon[index]
        if len(trump_talon) == 0:
            trump_talon = self._trump_talon[index] = (_TRUMP[g.trump_card][g.trump_suit]
                                                      + _HOLDER_TALON[index])
        attacks = g.attacks
        parts: list[bytes] = [
            _ID_HEADS[request_id] if 0 <= request_id < 1024 else _REQUEST_HEAD + _int(request_id),
            self._seat_head[seat], self._hand_parts[seat], trump_talon,
            _ARRAY[len(attacks)]]  # (at most 52 cards on the table)
        if attacks:
            covers = g.covers
            for i in range(len(attacks)):
                parts.append(_SLOT[attacks[i] * 53 + covers[i] + 1])
        discard = g.discard
        if discard != self._discard:
            self._discard = discard
            self._discard_part = _K_DISCARD + _cards(discard) + self._sizes_head
        parts.append(self._discard_part)
        size_masks, sizes = self._size_masks, self._sizes
        for s in range(len(hands)):
            h = hands[s]
            if h is not size_masks[s]:  # (mostly one hand changes between two frames)
                size_masks[s] = h
                sizes[s] = _INT[cast(int, h).bit_count()]  # (at most 52 cards)
            parts.append(sizes[s])
        outs = g.out
        out_bits = 0
        for s in range(len(outs)):
            if outs[s]:
                out_bits |= 1 << s
        data = self._out_parts[out_bits]
        if len(data) == 0:
            data = self._out_parts[out_bits] = self._out_head + bytes(
                [_OUT_FLAG[out] for out in outs])
        parts.append(data)
        parts.append(_ROLES[((g.attacker * 6 + g.defender) * 8 + g.phase) * 2 + g.taking])
        parts.append(_int(g.bout))
        known, shown = g.known, g.shown
        unknown = shown == 0
        for k in known:
            if k != 0:
                unknown = False
        transfers, limit = g.transfers, g.limit
        if 0 <= transfers < 16 and 0 <= limit < 64:
            index = transfers * 64 + limit + (1024 if unknown else 0)
            data = self._limits[index]
            if len(data) == 0:
                data = self._limits[index] = self._limits_part(transfers, limit, unknown)
        else:
            data = self._limits_part(transfers, limit, unknown)
        parts.append(data)
        if not unknown:
            known_masks, known_parts = self._known, self._known_parts
            for s in range(len(known)):
                k = known[s]
                if k != known_masks[s]:
                    known_masks[s] = k
                    known_parts[s] = _cards(k)
                parts.append(known_parts[s])
            if shown != self._shown:
                self._shown = shown
                self._shown_part = _K_SHOWN + _cards(shown)
            parts.append(self._shown_part)
        if self._reflect:
            parts.append(_DIRECTION[g.direction])
        n_legal = len(legal)
        parts.append(_LEGAL_HEAD[n_legal] if n_legal < 64 else _K_LEGAL + array_head(n_legal))
        packed_actions = _ACTION_BYTES
        for action in legal:
            data = packed_actions[action] if 0 <= action < 65536 else b""
            parts.append(data if len(data) != 0 else action_bytes(action))
        if self._clocks[seat] is not clock:
            self._clocks[seat] = clock
            self._clock_tails[seat] = (_key("increment_ms") + pack(clock.increment_ms)
                                       + _key("move_ms") + pack(clock.move_ms))
            self._clock_maps[seat] = _CLOCK_HEAD + _NIL + self._clock_tails[seat]
        remaining = clock.remaining_ms()
        if remaining is None:  # no game clock: the whole map is fixed
            parts.append(self._clock_maps[seat])
        else:
            parts += [_CLOCK_HEAD, _int(remaining), self._clock_tails[seat]]
        return frame_body(b"".join(parts))

    def _limits_part(self, transfers: int, limit: int, unknown: bool) -> bytes:
        """From the transfers' key to the known sets' array head, and if ``unknown`` on
        to the end of the shown set (every set empty)."""
        part = _K_TRANSFERS + _int(transfers) + _K_ATTACK_LIMIT + _int(limit) + self._known_head
        return part + self._unknown if unknown else part


def frame_body(body: bytes) -> bytes:
    """``codec.framed(body)``, the same bytes, without a call into interpreted code (a
    request or event frame is made for nearly every action). Raises LocalProtocolError
    past the frame limit, as ``codec.framed`` does."""
    size = len(body)
    if size < 4096:
        return _HEADERS[size] + body
    if size > _MAX_BODY:
        return framed(body)  # raises LocalProtocolError, naming the size and the limit
    return size.to_bytes(4, "big") + body


# -- game_start and game_end frames ------------------------------------------------------
# Two per seat per game: built as maps and packed they cost more than the rest of a game's
# set-up (the rules map alone is some twenty entries). The same compositional joining:
# what depends on the match only (names, rules, players) is packed once per match, what
# depends on the game (index, dealer, trump, hand, attacker) from the tables above.

#: game_start_msg's map up to the value of ``game`` (its eleven keys, in its order: type,
#: game, seat, players, names, rules, dealer, trump, trump_suit, hand, attacker).
_START_HEAD: Final = map_head(11) + _key("type") + pack("game_start") + _key("game")
#: [card]: the trump's fields, from its key to the hand's key (trump_suit is the card's suit).
_START_TRUMP: Final = [_key("trump") + _CARD[card] + _key("trump_suit") + pack(CARD_TEXT[card][1])
                       + _key("hand") for card in range(52)]
_K_ATTACKER: Final = _key("attacker")
#: game_end_msg's map up to the value of ``game`` (five keys: type, game, durak,
#: termination, reason).
_END_HEAD: Final = map_head(5) + _key("type") + pack("game_end") + _key("game")
_K_DURAK: Final = _key("durak")
#: termination -> its field, from the termination's key to the reason's key.
_TERMINATION: Final = {name: _key("termination") + pack(name) + _key("reason")
                       for name in TERMINATIONS}
#: How many (rules, names) pairs keep their packed parts: one per match in play in this
#: process (a league plays several at once); an older pair is packed again if it returns.
_START_KEPT: Final = 16


class _StartParts:
    """The parts of the game_start frames of one (rules, names) pair: per seat, from the
    seat's key to the dealer's key."""

    def __init__(self, rules: Rules, names: list[str]) -> None:
        self.rules = rules  #: compared by identity: a match's config holds one Rules
        self.names = list(names)  #: compared by value (a copy: the caller's list may change)
        n = len(names)
        middle = (_K_PLAYERS + _int(n) + _key("names") + pack(self.names)
                  + _key("rules") + pack(rules.as_dict()) + _K_DEALER)
        self.seats = [_K_SEAT + _int(seat) + middle for seat in range(n)]


#: The packed parts of the (rules, names) pairs met last, the latest first.
_STARTS: Final[list[_StartParts]] = []


def _start_parts(rules: Rules, names: list[str]) -> _StartParts:
    """The parts for ``rules`` and ``names``, packed when not kept (see _START_KEPT)."""
    for i in range(len(_STARTS)):
        parts = _STARTS[i]
        if parts.rules is rules and parts.names == names:
            if i != 0:
                del _STARTS[i]
                _STARTS.insert(0, parts)
            return parts
    parts = _StartParts(rules, names)
    _STARTS.insert(0, parts)
    del _STARTS[_START_KEPT:]
    return parts


def game_start_frame(index: int, seat: int, names: list[str], rules: Rules, dealer: int,
                     trump_card: int, hand: int, attacker: int) -> bytes:
    """The frame of ``game_start_msg(game=index, seat=seat, players=len(names),
    names=names, rules=rules.as_dict(), dealer=dealer, trump=card_str(trump_card),
    hand=mask_str(hand), attacker=attacker)``, byte for byte (``codec.encode``'s), joined
    from parts packed once per (rules, names); ``hand`` is a card mask. Raises as that
    call does: a seat outside the table and a frame over the limit LocalProtocolError, a
    trump outside the deck CardError."""
    if not 0 <= seat < len(names) or not 0 <= trump_card < 52:
        return encode(game_start_msg(
            game=index, seat=seat, players=len(names), names=names, rules=rules.as_dict(),
            dealer=dealer, trump=card_str(trump_card), hand=mask_str(hand), attacker=attacker))
    return frame_body(b"".join([
        _START_HEAD, _int(index), _start_parts(rules, names).seats[seat], _int(dealer),
        _START_TRUMP[trump_card], _cards(hand), _K_ATTACKER, _int(attacker)]))


def game_end_frame(index: int, durak: int | None, termination: str, reason: str) -> bytes:
    """The frame of ``game_end_msg(index, durak, termination, reason)``, byte for byte
    (``codec.encode``'s). Raises as that call does (an unknown termination, a frame over
    the limit: LocalProtocolError)."""
    tail = _TERMINATION.get(termination)
    if tail is None:
        return encode(game_end_msg(index, durak, termination, reason))  # raises
    return frame_body(b"".join([_END_HEAD, _int(index), _K_DURAK,
                                _NIL if durak is None else _int(durak), tail, pack(reason)]))
