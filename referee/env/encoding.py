"""The fixed action space and the seat-view observation tensor shared by every learning env.

**Actions.** One index space covers every action of every rule variant (2,915 indices),
so a policy network has one output layer whatever the table plays:

====================  =====================================  ==========================
indices               action                                  engine form
====================  =====================================  ==========================
0 + c                 attack with card c (lead, or more of    ``attack c``
                      the lead's rank with ``lead=same_rank``)
52 + c                throw in card c                         ``throw_in c``
104 + c               transfer with card c                    ``transfer c``
156 + c               show trump c                            ``show_trump c``
208 + 52 a + c        cover the attack card a with card c     ``cover slot(a) c``
2912                  take
2913                  pass (end of throw-in, decline the
                      trump exchange, end of a same-rank lead)
2914                  exchange the low trump
====================  =====================================  ==========================

``c`` and ``a`` are engine card indices (``rank * 4 + suit``, ranks 2..A as 0..12, suits
C D H S as 0..3: ``referee.rules.cards``). A cover names the attack card, not its table
slot: each attack card lies on the table once, so the pair is unambiguous, and the
index means the same thing however many cards lie there.

**Observation.** ``OBSERVATION_SIZE`` int8 values, a function of the seat's view alone
(``Game.observe(seat)``, the observation a protocol bot's request holds; seats are
counted from the observing seat, so offset 0 is always "me"):

- 12 planes of 52 cards (0/1): own hand; uncovered attack cards; covered attack cards;
  cover cards; the discard pile; trumps shown this bout; the face-up trump card; then,
  for the next five seats in seat order, the cards publicly known to be in their hands;
- per relative seat (6 each, zero past the table): hand size; out; main attacker;
  defender; dealer; holder of the face-up trump (and one more value: nobody yet);
- the talon size, the phase (5: exchange, attack, defend, throw_in, over), taking, the
  bout's transfers so far, its attack limit, the trump suit (4), counter-clockwise play;
- the table rules (constant for a game): players (5: 2..MAX_PLAYERS), deck (3: 24, 36, 52),
  transfer mode (4: off, on, trump_show, reflect), transfer limit (0: none), max attacks
  (0: none), first-bout limit, throw-in ranks of attacks only, throw-in any time,
  same-rank leads, last-two-out defender loses, trump exchange allowed.

``OBSERVATION_FIELDS`` names every part with its offset. Left out of the view: which
cover lies on which attack card (the table is three sets) and the bout number; the text
form (``view_text``) has both.

There is one encoder, ``encode``, on engine values; ``game_observation`` feeds it from a
game (the fast path of the AEC env) and ``view_observation`` from a protocol
observation map (the Gymnasium wrapper, a trained agent playing as a protocol bot), and
a test holds the two equal at every decision of seeded games.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from ..rules.actions import (
    ATTACK,
    COVER,
    EXCHANGE,
    PASS,
    SHOW_TRUMP,
    TAKE,
    THROW_IN,
    TRANSFER,
    action_from_wire,
)
from ..rules.cards import CARD_TEXT, parse_card
from ..rules.game import PHASE_NAMES, Game
from ..rules.options import Rules

#: The seats this observation layout has room for: the layout's own fixed size (a trained
#: agent's input shape), not the rules' bound. tests/app/test_seat_bound.py fails if the
#: rules (``rules.options.MAX_SEATS``) ever seat more than it holds.
MAX_PLAYERS: Final = 6

ATTACK_BASE: Final = 0
THROW_IN_BASE: Final = 52
TRANSFER_BASE: Final = 104
SHOW_TRUMP_BASE: Final = 156
COVER_BASE: Final = 208
TAKE_INDEX: Final = COVER_BASE + 52 * 52
PASS_INDEX: Final = TAKE_INDEX + 1
EXCHANGE_INDEX: Final = TAKE_INDEX + 2
#: The number of action indices.
ACTION_SIZE: Final = EXCHANGE_INDEX + 1

#: Per engine action kind: its base index (card kinds) or its fixed index (the others).
_BASE: Final = {ATTACK: ATTACK_BASE, THROW_IN: THROW_IN_BASE, TRANSFER: TRANSFER_BASE,
                SHOW_TRUMP: SHOW_TRUMP_BASE, TAKE: TAKE_INDEX, PASS: PASS_INDEX,
                EXCHANGE: EXCHANGE_INDEX}
#: Engine action -> its index, for every action but a cover (whose index depends on the
#: table: ``action_index``).
INDEX_OF: Final = {kind | card << 4: base + card for kind, base in _BASE.items() if base < COVER_BASE
                 for card in range(52)} | {TAKE: TAKE_INDEX, PASS: PASS_INDEX, EXCHANGE: EXCHANGE_INDEX}
_ENGINE: Final = {index: action for action, index in INDEX_OF.items()}


def action_index(action: int, attacks: Sequence[int]) -> int:
    """The index of engine action ``action`` in a position whose table holds the attack
    cards ``attacks`` (by slot)."""
    if action & 15 == COVER:
        return COVER_BASE + 52 * attacks[action >> 10] + (action >> 4 & 63)
    return INDEX_OF[action]


def engine_action(index: int, attacks: Sequence[int]) -> int | None:
    """The engine action that ``index`` names in a position whose table holds ``attacks``,
    or None when it names none (out of range, or a cover of a card not on the table).
    Says nothing about legality."""
    if type(index) is not int and not isinstance(index, np.integer):
        return None
    index = int(index)
    if COVER_BASE <= index < TAKE_INDEX:
        attacked, card = divmod(index - COVER_BASE, 52)
        for slot, a in enumerate(attacks):
            if a == attacked:
                return COVER | card << 4 | slot << 10
        return None
    return _ENGINE.get(index)


def index_name(index: int) -> str:
    """The text form of an action index: ``attack 6S``, ``cover 6S with 7S``, ``take``."""
    if COVER_BASE <= index < TAKE_INDEX:
        attacked, card = divmod(index - COVER_BASE, 52)
        return f"cover {CARD_TEXT[attacked]} with {CARD_TEXT[card]}"
    for name, base in (("attack", ATTACK_BASE), ("throw_in", THROW_IN_BASE),
                       ("transfer", TRANSFER_BASE), ("show_trump", SHOW_TRUMP_BASE)):
        if base <= index < base + 52:
            return f"{name} {CARD_TEXT[index - base]}"
    return {TAKE_INDEX: "take", PASS_INDEX: "pass", EXCHANGE_INDEX: "exchange"}[index]


# ---------------------------------------------------------------- the observation layout

PLANES: Final = 12
_PLANE_BYTES: Final = PLANES * 52 // 8
#: (name, size) of each part of the observation, in order.
OBSERVATION_FIELDS: Final[tuple[tuple[str, int], ...]] = (
    ("hand", 52), ("table_uncovered", 52), ("table_covered", 52), ("table_covers", 52),
    ("discard", 52), ("shown", 52), ("trump_card", 52),
    *((f"known_seat+{r}", 52) for r in range(1, MAX_PLAYERS)),
    ("hand_sizes", 6), ("out", 6), ("attacker", 6), ("defender", 6), ("dealer", 6),
    ("trump_holder", 7), ("talon", 1), ("phase", 5), ("taking", 1), ("transfers", 1),
    ("attack_limit", 1), ("trump_suit", 4), ("counter_clockwise", 1),
    ("players", 5), ("deck", 3), ("transfer_mode", 4), ("transfer_limit", 1), ("max_attacks", 1),
    ("first_bout_limit", 1), ("throw_in_attacks_only", 1), ("throw_in_any_time", 1),
    ("lead_same_rank", 1), ("last_two_out_defender_loses", 1), ("trump_exchange", 1),
)
OFFSETS: Final = {name: sum(size for _, size in OBSERVATION_FIELDS[:i])
                  for i, (name, _) in enumerate(OBSERVATION_FIELDS)}
OBSERVATION_SIZE: Final = sum(size for _, size in OBSERVATION_FIELDS)
_SCALARS: Final = OBSERVATION_SIZE - PLANES * 52
_RULES_AT: Final = OFFSETS["players"] - PLANES * 52  #: where the rules' part starts in the scalars
#: The largest value of each element (the Box's ``high``): a count of cards is at most
#: 52, a flag 1.
OBSERVATION_HIGH: Final = np.ones(OBSERVATION_SIZE, np.int8)
for _name in ("hand_sizes", "talon", "transfers", "attack_limit", "transfer_limit", "max_attacks"):
    OBSERVATION_HIGH[OFFSETS[_name]:OFFSETS[_name] + dict(OBSERVATION_FIELDS)[_name]] = 52
_TRANSFER_MODES: Final = ("off", "on", "trump_show", "reflect")


def rules_part(rules: Rules, players: int) -> bytes:
    """The observation's constant tail for a table of ``players`` with ``rules``."""
    part = bytearray(_SCALARS - _RULES_AT)
    part[players - 2] = 1
    part[5 + (24, 36, 52).index(rules.deck)] = 1
    part[8 + _TRANSFER_MODES.index(rules.transfer)] = 1
    part[12] = min(rules.transfer_limit or 0, 52)
    part[13] = min(rules.max_attacks or 0, 52)
    part[14:21] = bytes((rules.first_bout_limit, rules.throw_in_ranks == "attacks",
                         rules.throw_in_timing == "any", rules.lead == "same_rank",
                         rules.last_two_out == "defender_loses", bool(rules.trump_exchange)))
    return bytes(part)


#: The numpy calls of every observation, bound once (each ``np.`` lookup costs).
_empty, _unpackbits, _frombuffer = np.empty, np.unpackbits, np.frombuffer
_INT8, _UINT8 = np.int8, np.uint8
#: Each byte value with its 8 bits in reverse order (``bytes.translate`` table).
_REVERSED: Final = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


class Encoder:
    """The observation encoder of one table (its number of seats and rules)."""

    def __init__(self, rules: Rules, players: int) -> None:
        self.players = players
        #: The scalars' part as it starts for every observation: zeros, then the rules.
        self._blank = bytes(_RULES_AT) + rules_part(rules, players)
        #: Per observing seat: the seats in relative order (itself first), and per seat
        #: the bit offset of its known cards' plane (none for itself).
        self._order = [[(seat + r) % players for r in range(players)] for seat in range(players)]
        self._known_at = [[364 + 52 * ((s - seat) % players - 1) for s in range(players)]
                          for seat in range(players)]

    def encode(self, pos: Game | ViewPosition, seat: int, sizes: Sequence[int]) -> np.ndarray:
        """The observation tensor (int8, ``OBSERVATION_SIZE``) of ``seat`` in ``pos``: a
        game, or a protocol observation read back (``ViewPosition``). Reads only what
        the seat may see: its own hand, the public fields, ``sizes`` (every hand's size)."""
        planes = (pos.hands[seat] | pos.discard << 208 | pos.shown << 260
                  | 1 << (312 + pos.trump_card))
        for a, c in zip(pos.attacks, pos.covers, strict=True):
            if c >= 0:
                planes |= 1 << (104 + a) | 1 << (156 + c)
            else:
                planes |= 1 << (52 + a)
        known_at = self._known_at[seat]
        for s, k in enumerate(pos.known):
            if k and s != seat:
                planes |= k << known_at[s]
        n = self.players
        # The offsets below are OFFSETS' (less the 624 plane values), written out: each
        # is a constant here (tests/env/test_encoding.py reads every part back by name).
        scalars = bytearray(self._blank)
        out = pos.out
        for r, s in enumerate(self._order[seat]):
            scalars[r] = sizes[s]
            if out[s]:
                scalars[6 + r] = 1
        attacker, defender, dealer, holder = pos.attacker, pos.defender, pos.dealer, pos.trump_holder
        scalars[12 + attacker - seat + (n if attacker < seat else 0)] = 1
        scalars[18 + defender - seat + (n if defender < seat else 0)] = 1
        scalars[24 + dealer - seat + (n if dealer < seat else 0)] = 1
        scalars[30 + (6 if holder is None else holder - seat + (n if holder < seat else 0))] = 1
        scalars[37] = len(pos.talon)
        scalars[38 + pos.phase] = 1
        scalars[43] = pos.taking
        transfers, limit = pos.transfers, pos.limit
        scalars[44] = transfers if transfers < 52 else 52
        scalars[45] = limit if limit < 52 else 52
        scalars[46 + (pos.trump_card & 3)] = 1
        scalars[50] = pos.direction < 0
        obs = _empty(OBSERVATION_SIZE, _INT8)
        # Card c is bit c of the planes: unpacked little-endian. unpackbits' default order
        # is big-endian within a byte, so each byte is bit-reversed first (cheaper than
        # passing bitorder="little").
        obs[:624] = _unpackbits(_frombuffer(planes.to_bytes(78, "little").translate(_REVERSED), _UINT8))
        obs[624:] = _frombuffer(scalars, _INT8)
        return obs

    def game_observation(self, game: Game, seat: int) -> np.ndarray:
        """``seat``'s observation tensor in ``game`` (what ``game.observe(seat)`` holds)."""
        return self.encode(game, seat, [h.bit_count() for h in game.hands])

    def view_observation(self, view: Mapping[str, Any]) -> np.ndarray:
        """The observation tensor of a protocol observation map (a request's
        ``observation``, ``Game.observe``): equal to ``game_observation`` of the position
        it describes."""
        return self.encode(ViewPosition(view), view["seat"], view["hand_sizes"])


class ViewPosition:
    """A protocol observation map read back into the engine's field names and forms
    (cards as ints, card sets as bitmasks), for ``Encoder.encode``. Holds what the view
    holds: ``hands`` has the observing seat's hand, 0 for every other seat; ``talon``
    is a list of the talon's size (its cards are not in the view: each is -1)."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        seat = view["seat"]
        self.hands = [0] * view["players"]
        self.hands[seat] = _mask(view["hand"])
        self.attacks, self.covers = view_cards(view)
        self.discard, self.shown = _mask(view["discard"]), _mask(view["shown"])
        self.trump_card = parse_card(view["trump"])
        self.known = [_mask(k) for k in view["known"]]
        self.out = view["out"]
        self.attacker, self.defender, self.dealer = view["attacker"], view["defender"], view["dealer"]
        self.trump_holder = view["trump_holder"]
        self.talon = [-1] * view["talon"]
        self.phase = PHASE_NAMES.index(view["phase"])
        self.taking, self.transfers, self.limit = view["taking"], view["transfers"], view["attack_limit"]
        self.direction = -1 if view.get("direction") == "counter_clockwise" else 1


def _mask(cards: Sequence[str]) -> int:
    m = 0
    for text in cards:
        m |= 1 << parse_card(text)
    return m


def view_cards(view: Mapping[str, Any]) -> tuple[list[int], list[int]]:
    """The table of a protocol observation as engine cards: (attacks, covers), a cover
    -1 while its attack card is uncovered."""
    attacks = [parse_card(a) for a, _ in view["table"]]
    covers = [-1 if c is None else parse_card(c) for _, c in view["table"]]
    return attacks, covers


def wire_indices(legal: Sequence[Mapping[str, Any]], attacks: Sequence[int]) -> list[int]:
    """The action indices of a request's legal list (protocol maps), in its order."""
    return [action_index(action_from_wire(a), attacks) for a in legal]


def legal_mask(indices: Sequence[int]) -> np.ndarray:
    """The action mask (int8, ``ACTION_SIZE``): 1 at each index of ``indices``."""
    mask = np.zeros(ACTION_SIZE, np.int8)
    mask[indices] = 1
    return mask


def view_text(view: Mapping[str, Any]) -> str:
    """A seat's view as a few lines of text (``render()``, OpenSpiel's observation string)."""
    seat, n = view["seat"], view["players"]
    roles = []
    for s in range(n):
        role = ("out" if view["out"][s] else "attacker" if s == view["attacker"]
                else "defender" if s == view["defender"] else "")
        known = " ".join(view["known"][s])
        roles.append(f"  seat {s}{' (me)' if s == seat else ''}: {view['hand_sizes'][s]} cards"
                     f"{' ' + role if role else ''}{'; known ' + known if known else ''}")
    table = " ".join(f"{a}/{c or '--'}" for a, c in view["table"]) or "(empty)"
    return "\n".join([
        f"bout {view['bout']}, phase {view['phase']}{' (taking)' if view['taking'] else ''}; "
        f"trump {view['trump']}, talon {view['talon']}, discard {len(view['discard'])}",
        *roles,
        f"  table: {table}",
        f"  hand: {' '.join(view['hand'])}",
    ])
