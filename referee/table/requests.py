"""The frames the referee sends a program bot, joined from packed parts of each message's
declaration: requests, events, and each game's ``game_start`` and ``game_end``.

A ``request`` (``protocol.messages.REQUEST``) holds the seat's observation (``Game.observe``),
the legal list and the clock. Built as a map and packed, it costs the referee more than
any other step of a decision: some twenty fields, five card lists as text, and msgpack
walking all of it, for every decision. msgpack is compositional (``protocol.codec.pack``),
so ``RequestFrames`` joins the frame from bytes packed before instead: every key and map
head from the message's declaration (``protocol.fields.Record``) once per process, each
game's and seat's fixed fields once per game, each card list when its set changes (a
hand, the discard pile, a known set stay the same for several decisions), the clock
map's fixed end once per clock, each card's and each action's packed text once per
process. What changes at every decision (ids, sizes, roles, the table, the remaining
time) is packed from small tables, and neighbouring fields with few values share one
table entry: the cost of a frame is mostly the number of parts it joins.

The declaration is the one source of the fields, their order and their count: the order
in which these joiners write the fields is checked against it at import
(``_check_layout``), so a field added, moved or dropped there fails at once, naming what
to change here, instead of silently sending other bytes. The contract, which
tests/referee/test_request_frames.py, test_event_frames.py and test_game_frames.py check
over seeded games under every rules preset: each frame is exactly ``codec.encode`` of
the message its constructor builds, e.g. ``RequestFrames(game, index).frame(seat,
request_id, legal, clock) == encode(request_msg(id=request_id, game=index,
observation=game.observe(seat), legal=[shared_wire(a) for a in legal],
clock=clock.wire()))``.

What a seat may see of an event is decided by one rule, ``sees_private`` (the observer's,
``referee/table/observer.py``), applied to the fields the declaration marks private.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, cast
from weakref import ref

from protocol.codec import MAX_FRAME, array_head, encode, framed, pack
from protocol.errors import LocalProtocolError
from protocol.fields import Record
from protocol.messages import (
    CLOCK,
    EVENT,
    EVENTS,
    GAME_END,
    GAME_START,
    OBSERVATION,
    REQUEST,
    TERMINATIONS,
    game_end_msg,
    game_start_msg,
)

from ..rules import Game, Rules
from ..rules.actions import shared_wire
from ..rules.cards import CARD_TEXT, card_str, mask_str
from ..rules.game import PHASE_NAMES
from ..rules.options import MAX_SEATS
from .clock import Clock

OMNISCIENT: Final = -2
"""The view that sees everything (a replay's omniscient view): no seat."""


def sees_private(view: int, seat: int) -> bool:
    """Whether ``view`` (a seat number, or ``observer.SPECTATOR`` / ``OMNISCIENT``) sees the
    private part of a record about ``seat`` (``protocol.fields.Field.private``): the
    cards that seat drew, its declined exchange, that its move was forced. The seat
    itself does, and the omniscient view; nobody else."""
    return view == seat or view == OMNISCIENT


def _check_layout(record: Record, written: Sequence[str]) -> None:
    """Refuse, at import, a joiner whose field order is not ``record``'s declared order."""
    declared = [f.name for f in record.fields]
    if list(written) != declared:
        raise LocalProtocolError(
            f"{record.type or 'a map'}: referee/table/requests.py joins the fields {list(written)} "
            f"but protocol/messages.py declares {declared}; join the declared fields here")


# Every table is Final: compiled, mypyc reads it from a C static (an ordinary module
# global costs a dict look-up at each use).
_CARD: Final = [pack(text) for text in CARD_TEXT]  #: card index -> its packed text
_INT: Final = [pack(i) for i in range(1024)]  #: small ints: ids, sizes, seats, bouts
_NIL: Final = pack(None)
_TRUE: Final = pack(True)
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


# -- actions ---------------------------------------------------------------------------

#: Packed wire form of each action met so far (``pack(shared_wire(action))``) by action
#: number, b"" until met: ``kind | card << 4 | slot << 10`` puts every well-formed action
#: below 2**16, and a list index is cheaper than a dict look-up (read at every frame).
#: Each entry is a pure function of its index (no game's state), filled when first met:
#: packing all 3,539 well-formed actions at import would cost every command 11 ms.
_ACTION_BYTES: Final = [b""] * (1 << 16)
#: The reverse: those bytes -> the action. At most one entry per distinct well-formed
#: action (8 kinds x 52 cards x 64 slots at worst), so it does not grow without bound.
ACTIONS_BY_BYTES: Final[dict[bytes, int]] = {}


def action_bytes(action: int) -> bytes:
    """``pack(shared_wire(action))``, packed once per process (``action`` well-formed).
    Registers the reverse in ``ACTIONS_BY_BYTES``: an answer holding exactly these bytes
    names this action (every ``Ask``'s ``answers``)."""
    if not 0 <= action < len(_ACTION_BYTES):
        return pack(shared_wire(action))  # (not well-formed: not kept)
    data = _ACTION_BYTES[action]
    if len(data) == 0:
        data = _ACTION_BYTES[action] = pack(shared_wire(action))
        ACTIONS_BY_BYTES[data] = action
    return data


# -- request frames ----------------------------------------------------------------------

_check_layout(REQUEST, ("id", "game", "observation", "legal", "clock"))
_check_layout(OBSERVATION, (
    "seat", "players", "dealer", "hand", "trump", "trump_suit", "trump_holder", "talon",
    "table", "discard", "hand_sizes", "out", "attacker", "defender", "phase", "taking", "bout",
    "transfers", "attack_limit", "known", "shown", "direction"))
_check_layout(CLOCK, ("remaining_ms", "increment_ms", "move_ms"))
_OBS = OBSERVATION.key  # (each key below is checked against the declaration)


def _field(name: str, values: Sequence[object]) -> list[bytes]:
    """The observation's key and value bytes of the field ``name`` for each of ``values``."""
    return [_OBS(name) + pack(value) for value in values]


# Fields whose few values are packed with their key once, indexed by the game's values.
# A frame holds some forty keys and values; each part less to join saves about as much
# as packing a small int, so neighbouring fields share one part where their values are
# few, and keys with nothing to pack between them ride on the part before them.

_REQUEST_HEAD: Final = REQUEST.head() + REQUEST.key("id")  #: up to the value of ``id``
_ID_HEADS: Final = [_REQUEST_HEAD + packed for packed in _INT]  #: [request id], below 1024
_TRUMP: Final = [[_OBS("trump") + _CARD[card] + _OBS("trump_suit") + pack("CDHS"[suit])
                  for suit in range(4)] for card in range(52)]  #: [trump_card][trump_suit]
#: [(trump_holder + 1) * 53 + talon size]: both fields and the table's key.
_HOLDER_TALON: Final = [holder + talon + _OBS("table")
                        for holder in _field("trump_holder", [None, *range(MAX_SEATS)])
                        for talon in _field("talon", range(53))]
#: [((attacker * MAX_SEATS + defender) * 8 + phase) * 2 + taking]: the four fields and bout's key
#: (phases padded to 8).
_ROLES: Final = [attacker + defender + phase + taking + _OBS("bout")
                 for attacker in _field("attacker", range(MAX_SEATS))
                 for defender in _field("defender", range(MAX_SEATS))
                 for phase in _field("phase", [*PHASE_NAMES, *[None] * (8 - len(PHASE_NAMES))])
                 for taking in _field("taking", [False, True])]
#: _SLOT[attack * 53 + cover + 1]: a table slot, [attack, cover or nil] (cover -1: nil).
_SLOT: Final = [array_head(2) + _CARD[a] + (_CARD[c] if c >= 0 else _NIL)
                for a in range(52) for c in range(-1, 52)]
_DIRECTION: Final = {1: _field("direction", ["clockwise"])[0],
                     -1: _field("direction", ["counter_clockwise"])[0]}
_K_DISCARD: Final = _OBS("discard")
_K_SHOWN: Final = _OBS("shown")
_K_LEGAL: Final = REQUEST.key("legal")
_LEGAL_HEAD: Final = [_K_LEGAL + head for head in _ARRAY]  #: [len(legal)], below 64
#: The clock map (``Clock.wire``) up to the value of ``remaining_ms``.
_CLOCK_HEAD: Final = REQUEST.key("clock") + CLOCK.head() + CLOCK.key("remaining_ms")
_OUT_FLAG: Final = (pack(False)[0], pack(True)[0])  #: one byte each
#: From the game's key to the observation's first key (fixed but for the game's index).
_K_GAME: Final = REQUEST.key("game")
_K_OBSERVATION: Final = REQUEST.key("observation")
#: The observation map's head without ``direction`` and with it (transfer = reflect).
_OBSERVATION_HEAD: Final = OBSERVATION.head()
_OBSERVATION_HEAD_REFLECT: Final = OBSERVATION.head(["direction"])


class RequestFrames:
    """The request frames of one game (see the module docstring). Holds the game and
    reads it at each ``frame`` call: valid for that game only. Every table it fills as
    it meets values is its own: nothing is kept past the game."""

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
        after_seats = (_OBS("players") + _int(n) + _OBS("dealer") + _int(game.dealer)
                       + _OBS("hand"))
        self._seat_head = [after_id + _OBS("seat") + _INT[seat] + after_seats for seat in range(n)]
        self._sizes_head = _OBS("hand_sizes") + _ARRAY[n]
        self._out_head = _OBS("out") + _ARRAY[n]
        #: [bit s set when seat s is out]: the out flags with their key, packed when met.
        self._out_parts = [b""] * (1 << n)
        self._known_head = _OBS("known") + _ARRAY[n]
        #: [transfers * 64 + attack_limit (+ 1024 when no card is known or shown)]:
        #: ``_limits_part``, packed when first met.
        self._limits = [b""] * 2048
        #: The known sets and the shown set when all are empty (most positions).
        self._unknown = _ARRAY[0] * n + _K_SHOWN + _ARRAY[0]
        # Each card set's packed list as last framed, with its mask (-1 or None: none
        # yet; hands by identity, see frame): a set changes a few times a bout, far less
        # often than it is framed.
        self._hands: list[object] = [None] * n
        self._hand_parts = [b""] * n
        self._size_masks: list[object] = [None] * n
        self._sizes = [b""] * n  #: hand sizes, packed
        #: The trump (card * 4 + suit) and [(trump_holder + 1) * 53 + talon size]: the
        #: trump's fields, its holder's and the talon's, with the table's key.
        self._trump = -1
        self._trump_talon: list[bytes] = []
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
        parts: list[bytes] = [
            _ID_HEADS[request_id] if 0 <= request_id < 1024 else _REQUEST_HEAD + _int(request_id),
            self._seat_head[seat], self._hand_parts[seat], self._trump_part(g)]
        attacks = g.attacks
        parts.append(_ARRAY[len(attacks)])  # (at most 52 cards on the table)
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
        parts.append(self._out_part(g.out))
        parts.append(_ROLES[((g.attacker * MAX_SEATS + g.defender) * 8 + g.phase) * 2 + g.taking])
        parts.append(_int(g.bout))
        self._add_known(parts, g)
        if self._reflect:
            parts.append(_DIRECTION[g.direction])
        n_legal = len(legal)
        parts.append(_LEGAL_HEAD[n_legal] if n_legal < 64 else _K_LEGAL + array_head(n_legal))
        packed_actions = _ACTION_BYTES
        for action in legal:
            data = packed_actions[action] if 0 <= action < 65536 else b""
            parts.append(data if len(data) != 0 else action_bytes(action))
        self._add_clock(parts, seat, clock)
        return frame_body(b"".join(parts))

    def _trump_part(self, g: Game) -> bytes:
        """From the trump's key to the table's key: the trump, its holder, the talon."""
        trump = g.trump_card * 4 + g.trump_suit
        if trump != self._trump:  # the deal, or a trump exchange
            self._trump = trump
            self._trump_talon = [b""] * len(_HOLDER_TALON)
        holder = g.trump_holder
        index = (0 if holder is None else holder + 1) * 53 + len(g.talon)
        part = self._trump_talon[index]
        if len(part) == 0:
            part = self._trump_talon[index] = (_TRUMP[g.trump_card][g.trump_suit]
                                               + _HOLDER_TALON[index])
        return part

    def _out_part(self, outs: list[bool]) -> bytes:
        """The out flags with their key."""
        out_bits = 0
        for s in range(len(outs)):
            if outs[s]:
                out_bits |= 1 << s
        data = self._out_parts[out_bits]
        if len(data) == 0:
            data = self._out_parts[out_bits] = self._out_head + bytes(
                [_OUT_FLAG[out] for out in outs])
        return data

    def _add_known(self, parts: list[bytes], g: Game) -> None:
        """Append from the transfers' key to the end of the shown set."""
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

    def _limits_part(self, transfers: int, limit: int, unknown: bool) -> bytes:
        """From the transfers' key to the known sets' array head, and if ``unknown`` on
        to the end of the shown set (every set empty)."""
        part = (_OBS("transfers") + _int(transfers) + _OBS("attack_limit") + _int(limit)
                + self._known_head)
        return part + self._unknown if unknown else part

    def _add_clock(self, parts: list[bytes], seat: int, clock: Clock) -> None:
        """Append the clock map with its key."""
        if self._clocks[seat] is not clock:
            self._clocks[seat] = clock
            self._clock_tails[seat] = (CLOCK.key("increment_ms") + pack(clock.increment_ms)
                                       + CLOCK.key("move_ms") + pack(clock.move_ms))
            self._clock_maps[seat] = _CLOCK_HEAD + _NIL + self._clock_tails[seat]
        remaining = clock.remaining_ms()
        if remaining is None:  # no game clock: the whole map is fixed
            parts.append(self._clock_maps[seat])
        else:
            parts += [_CLOCK_HEAD, _int(remaining), self._clock_tails[seat]]


# -- event frames --------------------------------------------------------------------------

_check_layout(EVENT, ("game", "event"))
for _kind, _layout in (("attack", ("seat", "card", "forced")), ("throw_in", ("seat", "card", "forced")),
                       ("transfer", ("seat", "card", "forced")),
                       ("show_trump", ("seat", "card", "forced")),
                       ("cover", ("seat", "slot", "card", "forced")),
                       ("take", ("seat", "forced")), ("pass", ("seat", "forced")),
                       ("decline", ("seat", "forced")),
                       ("exchange", ("seat", "card", "trump", "forced")),
                       ("bout_end", ("result", "defender")), ("draw", ("seat", "count", "cards")),
                       ("out", ("seat",))):
    _check_layout(EVENTS[_kind], _layout)
if set(EVENTS) != {"attack", "throw_in", "transfer", "show_trump", "cover", "take", "pass",
                   "decline", "exchange", "bout_end", "draw", "out"}:
    raise LocalProtocolError("protocol/messages.py declares events referee/table/requests.py "
                             "does not join; join them here")

#: ``event_head``'s map (type, game, event) up to the game's value, and the key after it.
_EVENT_HEAD: Final = EVENT.head() + EVENT.key("game")
_K_EVENT: Final = EVENT.key("event")
_KINDS: Final = tuple(EVENTS)  #: event type -> a number, to index the tables below
_KIND: Final = {name: k for k, name in enumerate(_KINDS)}
#: Whether the whole event is private (a decline), by kind number.
_PRIVATE_EVENT: Final = [EVENTS[name].private for name in _KINDS]
_FORCED_TAIL: Final = EVENTS["take"].key("forced") + _TRUE


def _after_seat(name: str, present: list[str]) -> list[bytes]:
    """Per seat: event ``name``'s head (holding the optional fields ``present``) and its
    seat field, and the key of the field after the seat, if one is required."""
    record = EVENTS[name]
    head = record.head([f for f in present if f in record.by_name])
    nxt = [f.name for f in record.fields[1:] if not f.optional]
    then = record.key(nxt[0]) if nxt else b""
    return [head + record.key("seat") + _INT[seat] + then for seat in range(MAX_SEATS)]


#: [kind * 2 + forced][seat]: the event's head, seat and the next key (``_after_seat``);
#: bout_end has no seat (its table is _BOUT_END), and draw and out are never forced.
_SEAT_HEADS: Final = [_after_seat(name, ["forced"] if forced else [])
                      if name != "bout_end" else [] for name in _KINDS for forced in (False, True)]
#: draw: [seat] with ``cards`` (the drawer's copy) or without, to the ``count`` key.
_DRAW_HEADS: Final = [_after_seat("draw", ["cards"]), _after_seat("draw", [])]
_K_SLOT_CARD: Final = (EVENTS["cover"].key("slot"), EVENTS["cover"].key("card"))
_K_TRUMP: Final = EVENTS["exchange"].key("trump")
_K_CARDS: Final = EVENTS["draw"].key("cards")
#: bout_end: [taken][defender] (result "beaten" or "taken").
_BOUT_END: Final = [[EVENTS["bout_end"].head() + EVENTS["bout_end"].run(
    {"result": result, "defender": defender}) for defender in range(MAX_SEATS)]
    for result in ("beaten", "taken")]


def event_body(event: tuple[Any, ...], private: bool, forced: bool) -> bytes:
    """The packed map of recorded ``event`` (``Game.events``) as a view sees it:
    ``private``, whether it sees the event's private fields (``sees_private``); ``forced``,
    whether the event is a move the rules forced. The bytes of ``pack(observer.event(...))``.
    Empty when the view does not see the event at all (another seat's decline)."""
    name: str = event[0]
    kind = _KIND[name]
    if _PRIVATE_EVENT[kind] and not private:
        return b""
    seat: int = event[1]  # bout_end's defender
    if name == "bout_end":
        return _BOUT_END[1 if event[2] == "taken" else 0][seat]
    if name == "draw":
        cards: list[int] = event[2]
        count = len(cards)
        if not private:
            return _DRAW_HEADS[1][seat] + _int(count)
        return (_DRAW_HEADS[0][seat] + _int(count) + _K_CARDS + _ARRAY[count]
                + b"".join([_CARD[c] for c in cards]))
    if name == "out":
        return _SEAT_HEADS[kind * 2][seat]
    marked = forced and private
    head = _SEAT_HEADS[kind * 2 + (1 if marked else 0)][seat]
    action: int = event[2]
    card = _CARD[action >> 4 & 63]
    if name == "cover":
        body = head + _INT[action >> 10] + _K_SLOT_CARD[1] + card
    elif name == "exchange":
        body = head + _CARD[event[3]] + _K_TRUMP + _CARD[event[4]]
    elif name == "take" or name == "pass" or name == "decline":
        body = head
    else:
        body = head + card
    return body + _FORCED_TAIL if marked else body


class EventFrames:
    """The event frames of one game for the seats that want events (``listeners``): the
    bytes of ``encode(event_msg(game=index, event=observer.event(game, event, seat,
    forced)))``, joined from packed parts (``event_body``). An event with nothing private
    in it reads the same for every seat and is framed once for the table; a draw, a
    decline and a forced move are framed once for the seat it is about and once for the
    others (``sees_private``)."""

    def __init__(self, rules: Rules, index: int, listeners: list[int]) -> None:
        self.index = index
        self.listeners = listeners
        #: ``messages.event_head(index)``, joined from packed parts (a spec compares the two).
        self.head = _EVENT_HEAD + _int(index) + _K_EVENT

    def frames(self, game: Game, forced: bool) -> list[tuple[int, bytes]]:
        """(seat, frame) for each event recorded since the last broadcast (``game.events``)
        and each listener that sees it, in order. ``forced``: the first event is the
        forced action just applied."""
        out: list[tuple[int, bytes]] = []
        listeners = self.listeners
        events = game.events
        if not listeners or not events:
            return out
        head = self.head
        first = True
        for ev in events:
            marked = forced and first
            first = False
            seat: int = ev[1]
            name: str = ev[0]
            if name == "bout_end" or (not marked and name != "draw" and name != "decline"):
                frame = frame_body(head + event_body(ev, False, False))
                for listener in listeners:
                    out.append((listener, frame))
                continue
            others = b""
            for listener in listeners:
                if sees_private(listener, seat):
                    out.append((listener, frame_body(head + event_body(ev, True, marked))))
                    continue
                if len(others) == 0:
                    body = event_body(ev, False, marked)
                    if len(body) == 0:
                        continue  # not seen by the others at all
                    others = frame_body(head + body)
                out.append((listener, others))
        return out


# -- game_start and game_end frames ------------------------------------------------------
# Two per seat per game: built as maps and packed they cost more than the rest of a game's
# set-up (the rules map alone is some twenty entries). The same joining: the rules packed
# once per Rules object (kept with it: a match's config holds one), the rest from the
# tables above.

_check_layout(GAME_START, ("game", "seat", "players", "names", "rules", "dealer", "trump",
                           "trump_suit", "hand", "attacker"))
_check_layout(GAME_END, ("game", "durak", "termination", "reason"))
_START_HEAD: Final = GAME_START.head() + GAME_START.key("game")  #: up to the game's value
#: [card]: the trump's fields, from its key to the hand's key (trump_suit is the card's suit).
_START_TRUMP: Final = [GAME_START.run({"trump": CARD_TEXT[card], "trump_suit": CARD_TEXT[card][1]},
                                      then="hand") for card in range(52)]
_K_START_SEAT: Final = GAME_START.key("seat")
_K_PLAYERS: Final = GAME_START.key("players")
_K_NAMES: Final = GAME_START.key("names")
_K_RULES: Final = GAME_START.key("rules")
_K_DEALER: Final = GAME_START.key("dealer")
_K_ATTACKER: Final = GAME_START.key("attacker")
_END_HEAD: Final = GAME_END.head() + GAME_END.key("game")  #: up to the game's value
_K_DURAK: Final = GAME_END.key("durak")
#: termination -> its field, from the termination's key to the reason's key.
_TERMINATION: Final = {name: GAME_END.run({"termination": name}, then="reason")
                       for name in TERMINATIONS}
#: Each Rules object's packed ``as_dict`` (some 14 us to pack) by the object's id, with a
#: weak reference to it: kept as long as that object lives (a match's config holds one),
#: so a match packs its rules once, not twice a game. (By id: hashing a Rules hashes
#: every option, about as costly as the rest of the frame.)
_PACKED_RULES: Final[dict[int, tuple[ref[Rules], bytes]]] = {}


def _packed_rules(rules: Rules) -> bytes:
    kept = _PACKED_RULES.get(id(rules))
    if kept is not None and kept[0]() is rules:
        return kept[1]
    key = id(rules)
    packed = pack(rules.as_dict())
    _PACKED_RULES[key] = (ref(rules, lambda _: _PACKED_RULES.pop(key, None)), packed)
    return packed


def game_start_frame(index: int, seat: int, names: list[str], rules: Rules, dealer: int,
                     trump_card: int, hand: int, attacker: int) -> bytes:
    """The frame of ``game_start_msg(game=index, seat=seat, players=len(names),
    names=names, rules=rules.as_dict(), dealer=dealer, trump=card_str(trump_card),
    hand=mask_str(hand), attacker=attacker)``, byte for byte (``codec.encode``'s);
    ``hand`` is a card mask. Raises as that call does: a seat outside the table and a
    frame over the limit LocalProtocolError, a trump outside the deck CardError."""
    if not 0 <= seat < len(names) or not 0 <= trump_card < 52:
        return encode(game_start_msg(
            game=index, seat=seat, players=len(names), names=names, rules=rules.as_dict(),
            dealer=dealer, trump=card_str(trump_card), hand=mask_str(hand), attacker=attacker))
    return frame_body(b"".join([
        _START_HEAD, _int(index), _K_START_SEAT, _int(seat), _K_PLAYERS, _int(len(names)),
        _K_NAMES, pack(names), _K_RULES, _packed_rules(rules), _K_DEALER, _int(dealer),
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


__all__ = ["ACTIONS_BY_BYTES", "OMNISCIENT", "EventFrames", "RequestFrames", "action_bytes",
           "event_body", "frame_body", "game_end_frame", "game_start_frame", "sees_private"]
