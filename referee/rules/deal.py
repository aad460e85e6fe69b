"""Keyed deals: every deck order derived from a secret run seed and a public deal id.

A run (match, tournament, sprt, ladder run) has one seed, by default 128 random bits
that only the referee knows until the run ends. Each deal has a public, canonical id
(``deal_id``: ``"match:3"``, ``"tournament:17"``, ``"sprt:4"``, ``"ladder:120"``), and
its deck order is a keyed function of the two. Knowing the formula, the id, or every
earlier deck tells nothing about the next deck without the seed; knowing the seed, anyone
can re-derive every deck. The exact algorithm (docs/RULES.md, "Deck order", says the same
for other implementations):

1. ``deal_key = HMAC-SHA256(key = UTF-8(seed), message = UTF-8(deal_id))`` (32 bytes);
2. a byte stream ``HMAC-SHA256(deal_key, C(0)) || HMAC-SHA256(deal_key, C(1)) || ...``
   where ``C(j)`` is the block counter ``j`` as 4 bytes big-endian, read as unsigned
   32-bit big-endian words ``w``;
3. the deck's cards in card-index order (``cards.deck_cards``: ``6C 6D 6H 6S 7C ... AS``
   for 36 cards) are shuffled by Fisher-Yates from the top: for ``i = size-1`` down to
   ``1``, with ``b = i + 1``, take the next word ``w`` that is below
   ``2**32 - (2**32 mod b)`` (rejection: no modulo bias), ``j = w mod b``, swap cards
   ``i`` and ``j``.

The result lists the cards in the order they leave the deck (``Game.new(deck=...)``).
Pure: no I/O, no clock, no global random state; the same on every run and Python version.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Iterator

from .cards import deck_cards

#: A seed is 1 to this many visible ASCII characters.
SEED_MAX_LEN = 128

#: How a log header describes the deals (the key ``deal``); the game record's ``seed``
#: is the deal id.
DEAL_TEXT = ("deck = rules.deal.deal_deck(header seed, game seed (the deal id), deck size): "
             "HMAC-SHA256 keyed by the run seed, Fisher-Yates (docs/RULES.md, Deck order); "
             "the deck order is recorded per game")


class SeedError(ValueError):
    """A seed given by the user (``--seed``, a config file) is not usable: the message
    says what a seed may be."""


def check_seed(value: object) -> str:
    """The seed as the text the deals are keyed with: an int in decimal, a string as
    given. ``value`` may be anything (it comes from users and config files). Raises
    SeedError unless it is 1 to SEED_MAX_LEN visible ASCII characters (no spaces), so it
    can be written on any command line and file unchanged."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise SeedError(f"seed {value!r}: expected a string or an integer")
    text = str(value)
    if not text:
        raise SeedError("the seed is empty; give 1 to 128 visible characters, or leave it out "
                        "for a secret random seed")
    if len(text) > SEED_MAX_LEN:
        raise SeedError(f"seed of {len(text)} characters: at most {SEED_MAX_LEN}")
    bad = sorted({c for c in text if not "!" <= c <= "~"})
    if bad:
        raise SeedError(f"seed {text!r}: only visible ASCII characters, no spaces "
                        f"(not {', '.join(repr(c) for c in bad)})")
    return text


def deal_id(context: str, deal: int) -> str:
    """The canonical public id of deal number ``deal`` of a run of kind ``context``
    (``match``, ``tournament``, ``sprt``, ``ladder``, ...): ``"<context>:<deal>"``.
    Seat rotations of one duplicate deal share its id, hence its deck."""
    return f"{context}:{deal}"


def deal_words(seed: str, game_id: str) -> Iterator[int]:
    """The endless stream of 32-bit words keyed by ``seed`` for deal ``game_id`` (steps
    1 and 2 of the module docstring)."""
    key = hmac.digest(seed.encode("utf-8"), game_id.encode("utf-8"), "sha256")  # (one-shot, in C)
    # HMAC-SHA256(key, block) spelled out (RFC 2104: H((K ^ opad) || H((K ^ ipad) || block)),
    # the 32-byte key zero-padded to SHA-256's 64-byte block), with the two keyed hash
    # states made once per deal and copied per block: the same bytes as
    # hmac.new(key, block, sha256), without the hmac module's Python-level work per block.
    padded = int.from_bytes(key.ljust(64, b"\0"), "big")
    inner = hashlib.sha256((padded ^ _IPAD).to_bytes(64, "big"))
    outer = hashlib.sha256((padded ^ _OPAD).to_bytes(64, "big"))
    block = 0
    while True:
        mac = inner.copy()
        mac.update(block.to_bytes(4, "big"))
        done = outer.copy()
        done.update(mac.digest())
        yield from _WORDS.unpack(done.digest())
        block += 1


#: RFC 2104's pads for a 64-byte hash block, as ints to xor with the padded key.
_IPAD = int.from_bytes(b"\x36" * 64, "big")
_OPAD = int.from_bytes(b"\x5c" * 64, "big")


#: A SHA-256 digest as eight unsigned 32-bit big-endian words.
_WORDS = struct.Struct(">8I")


def deal_deck(seed: str, game_id: str, size: int) -> list[int]:
    """The deck order of deal ``game_id`` under run seed ``seed``, for a deck of ``size``
    (24, 36 or 52) cards: a permutation of ``deck_cards(size)``. Deterministic; see the
    module docstring for the algorithm. Raises KeyError for an unknown deck size."""
    deck = deck_cards(size)
    word = deal_words(seed, game_id).__next__
    for i in range(len(deck) - 1, 0, -1):
        limit = _BELOW[i + 1]
        w = word()
        while w >= limit:
            w = word()
        j = w % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


#: Per bound b (1..52): the words below this limit are taken, ``2**32 - (2**32 mod b)``
#: (step 3 of the module docstring: no modulo bias).
_BELOW = [0] + [(1 << 32) - (1 << 32) % bound for bound in range(1, 53)]

