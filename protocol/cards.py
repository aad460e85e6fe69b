"""Card text as the wire protocol writes it: rank letter + suit letter (``6S``, ``TH``).

Only the text form lives here, for validating messages. The rules engine has its own card
model (``referee.rules``); the protocol layer must not import it, and it only needs to
know whether a string names one of the 52 cards.
"""

from __future__ import annotations

RANKS = "23456789TJQKA"
"""Ranks from low to high."""

SUITS = "CDHS"
"""Suits: clubs, diamonds, hearts, spades."""

ALL_CARDS: frozenset[str] = frozenset(rank + suit for rank in RANKS for suit in SUITS)
"""The 52 card texts in canonical form."""


def parse_card_text(text: str) -> str:
    """The canonical text of the card ``text`` names: ``"10h"`` -> ``"TH"``, ``"qd"`` ->
    ``"QD"``, ``"6S"`` -> ``"6S"``.

    Accepts upper or lower case and ``10`` for ``T``; nothing else (no spaces, no other
    spellings). Raises ``ValueError`` ("expected a card like '6S', got 'X9'") otherwise;
    the message layer turns that into a protocol error naming the field.
    """
    # isascii(): str.upper() maps some non-ASCII letters to ASCII ("ſ" -> "S").
    if type(text) is str and text.isascii():
        if text in ALL_CARDS:  # the common case: already canonical
            return text
        upper = text.upper()
        if upper.startswith("10"):
            upper = "T" + upper[2:]
        if upper in ALL_CARDS:
            return upper
    raise ValueError(f"expected a card like '6S', got {text!r}")


def is_card_text(text: object) -> bool:
    """True if ``text`` is a card in canonical form (what the referee sends)."""
    return type(text) is str and text in ALL_CARDS


def suit_of(card: str) -> str:
    """The suit letter of a canonical card text."""
    return card[1]


def rank_index(card: str) -> int:
    """0 for a 2 up to 12 for an ace: the rank order of a canonical card text."""
    return RANKS.index(card[0])
