"""Cards as small integers and card sets as integer bitmasks.

A card is an ``int`` in ``0..51``: ``rank * 4 + suit``, with ranks ``2..A`` as
``0..12`` and suits ``C D H S`` as ``0..3``. A set of cards (a hand, the discard
pile) is an ``int`` bitmask with bit ``card`` set. Bitmasks make the hot path of
the engine (legal moves, covers, throw-in ranks) a few integer operations and
allocate nothing.

The text form is rank letter + suit letter: ``6S``, ``TH``, ``QD``, ``AC``.
``10H`` is accepted as input and never produced.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

RANKS: Final = "23456789TJQKA"
SUITS: Final = "CDHS"

#: Lowest rank index of each deck size (6 for 36 cards, 9 for 24, 2 for 52).
DECK_LOW_RANK: Final = {24: RANKS.index("9"), 36: RANKS.index("6"), 52: RANKS.index("2")}


class CardError(ValueError):
    """A card's text form could not be parsed. Not raised for illegal plays."""


def make_card(rank: int, suit: int) -> int:
    return rank * 4 + suit


def rank_of(card: int) -> int:
    return card >> 2


def suit_of(card: int) -> int:
    return card & 3


def card_str(card: int) -> str:
    """Text form of a card index, e.g. ``card_str(18) == '6H'``."""
    if not 0 <= card < 52:
        raise CardError(f"card index {card!r} is out of range 0..51")
    return RANKS[card >> 2] + SUITS[card & 3]


def parse_card(text: object) -> int:
    """Parse ``'6S'``, ``'th'`` or ``'10H'`` into a card index.

    Raises CardError naming the text and the expected form.
    """
    if not isinstance(text, str):
        raise CardError(f"expected a card like '6S', got {text!r}")
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise CardError(f"expected a card like '6S' (rank {RANKS}, suit {SUITS}), got {text!r}")
    return make_card(RANKS.index(t[0]), SUITS.index(t[1]))


def deck_cards(size: int) -> list[int]:
    """The cards of a deck of ``size`` (24, 36 or 52), in index order."""
    low = DECK_LOW_RANK[size]
    return list(range(low * 4, 52))


def iter_bits(mask: int) -> Iterator[int]:
    """Card indices of a bitmask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


#: CARD_TEXT[card]: the text form, precomputed (views are built on every decision).
CARD_TEXT: Final = [RANKS[c >> 2] + SUITS[c & 3] for c in range(52)]


#: _BYTE_TEXT[k][b]: the text forms of the cards of bits ``b`` in byte ``k`` of a card mask
#: (cards 8k..8k+7), lowest first. The last byte holds cards 48..51 only.
_BYTE_TEXT: Final = [tuple(tuple(CARD_TEXT[8 * k + i] for i in range(8) if b >> i & 1)
                    for b in range(256 if k < 6 else 16)) for k in range(7)]


def mask_str(mask: int) -> list[str]:
    """Text forms of the cards in a bitmask, sorted by rank then suit."""
    out: list[str] = []
    table = _BYTE_TEXT
    k = 0
    while mask:
        b = mask & 255
        if b:
            out.extend(table[k][b])
        mask >>= 8
        k += 1
    return out


#: SUIT_MASK[s]: every card of suit s.
SUIT_MASK: Final = [sum(1 << make_card(r, s) for r in range(13)) for s in range(4)]
#: RANK_MASK[r]: the four cards of rank r.
RANK_MASK: Final = [sum(1 << make_card(r, s) for s in range(4)) for r in range(13)]


def _beaters(card: int, trump: int) -> int:
    r, s = rank_of(card), suit_of(card)
    higher_same_suit = sum(1 << make_card(x, s) for x in range(r + 1, 13))
    return higher_same_suit if s == trump else higher_same_suit | SUIT_MASK[trump]


#: BEATERS[trump][card]: bitmask of every card that beats ``card`` under ``trump``.
BEATERS: Final = [[_beaters(c, t) for c in range(52)] for t in range(4)]


def beats(card: int, other: int, trump: int) -> bool:
    """True if ``card`` beats ``other``: same suit and higher, or trump over non-trump."""
    return bool(BEATERS[trump][other] >> card & 1)
