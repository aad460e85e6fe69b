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
import importlib
import struct
from collections.abc import Callable, Iterator
from typing import Any, Final, cast

from ..errors import UserError
from .cards import deck_cards

#: A seed is 1 to this many visible ASCII characters.
SEED_MAX_LEN = 128

#: How a log header describes the deals (the key ``deal``); the game record's ``seed``
#: is the deal id.
DEAL_TEXT = ("deck = rules.deal.deal_deck(header seed, game seed (the deal id), deck size): "
             "HMAC-SHA256 keyed by the run seed, Fisher-Yates (docs/RULES.md, Deck order); "
             "the deck order is recorded per game")


class SeedError(UserError, ValueError):
    """A seed given by the user (``--seed``, a config file) is not usable: the message
    says what a seed may be."""

    hint = "give 1 to 128 visible ASCII characters, or leave the seed out for a secret one"


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
    inner, outer = _keyed(deal_key(seed, game_id))
    block = 0
    while True:
        yield from _WORDS.unpack(_block(inner, outer, block))
        block += 1


def deal_key(seed: str, game_id: str) -> bytes:
    """Step 1 of the module docstring: ``HMAC-SHA256(UTF-8(seed), UTF-8(game_id))``."""
    keyed = _SEED_STATES.get(seed)
    if keyed is None:
        if len(_SEED_STATES) >= SEED_STATES_KEPT:
            _SEED_STATES.clear()
        keyed = _SEED_STATES[seed] = _keyed(seed.encode("utf-8"))
    inner = keyed[0].copy()
    inner.update(game_id.encode("utf-8"))
    outer = keyed[1].copy()
    outer.update(inner.digest())
    return cast(bytes, outer.digest())


# HMAC-SHA256 (RFC 2104: H((K ^ opad) || H((K ^ ipad) || message)), K the key zero-padded
# to SHA-256's 64-byte block, or first hashed when longer) spelled out on _SHA256: the
# same bytes as hmac.new(key, message, sha256) (a spec compares them), with the two keyed
# hash states made once per key (the seed's once per run) and copied per message. A
# 36-card deal is then some twelve SHA-256 compressions; through OpenSSL (hmac.digest,
# hashlib's objects) the calls around them cost more than the compressions.

def _sha256() -> Callable[[bytes], Any]:
    """CPython's own SHA-256 constructor (``_sha2`` from 3.12, ``_sha256`` before): a hash
    object is a small struct copied with memcpy, where OpenSSL's (hashlib's default)
    goes through EVP's provider dispatch for every object made, copied and finished.
    hashlib's when the interpreter was built without it. The digests are the same."""
    for name in ("_sha2", "_sha256"):
        try:
            return cast(Callable[[bytes], Any], importlib.import_module(name).sha256)
        except (ImportError, AttributeError):
            pass
    return hashlib.sha256


_SHA256: Final = _sha256()
#: RFC 2104's pads as byte translations (each key byte xor 0x36, xor 0x5c).
_IPAD: Final = bytes([b ^ 0x36 for b in range(256)])
_OPAD: Final = bytes([b ^ 0x5C for b in range(256)])
#: The block counters C(j) of step 2 for the first blocks (a 52-card deal needs 7 or so).
_COUNTERS: Final = [j.to_bytes(4, "big") for j in range(16)]


#: The keyed states (``_keyed``) of the run seeds met last: every deal of a run is keyed
#: by its seed, so they are made once per run, not per deal. Only ever copied (never
#: updated), so a deal cannot change another. Emptied when SEED_STATES_KEPT are held.
_SEED_STATES: Final[dict[str, tuple[Any, Any]]] = {}
SEED_STATES_KEPT: Final = 16


def _keyed(key: bytes) -> tuple[Any, Any]:
    """The inner and outer SHA-256 states of HMAC keyed by ``key``, each after its padded
    key block: HMAC(key, m) is the outer state fed the inner state's digest after ``m``."""
    if len(key) > 64:
        key = _SHA256(key).digest()
    padded = key.ljust(64, b"\0")
    return _SHA256(padded.translate(_IPAD)), _SHA256(padded.translate(_OPAD))


def _block(inner: Any, outer: Any, block: int) -> bytes:
    """``HMAC(key, C(block))`` from the states ``_keyed(key)`` (left as they were)."""
    mac = inner.copy()
    mac.update(_COUNTERS[block] if block < 16 else block.to_bytes(4, "big"))
    done = outer.copy()
    done.update(mac.digest())
    return cast(bytes, done.digest())


#: A SHA-256 digest as eight unsigned 32-bit big-endian words.
_WORDS: Final = struct.Struct(">8I")


def deal_deck(seed: str, game_id: str, size: int) -> list[int]:
    """The deck order of deal ``game_id`` under run seed ``seed``, for a deck of ``size``
    (24, 36 or 52) cards: a permutation of ``deck_cards(size)``. Deterministic; see the
    module docstring for the algorithm. Raises KeyError for an unknown deck size."""
    deck = deck_cards(size)
    inner, outer = _keyed(deal_key(seed, game_id))
    # deal_words' stream, read a block (eight words) at a time without a generator.
    words: tuple[int, ...] = ()
    at = block = 0
    for i in range(len(deck) - 1, 0, -1):
        limit = _BELOW[i + 1]
        while True:
            if at == len(words):
                words = _WORDS.unpack(_block(inner, outer, block))
                block += 1
                at = 0
            w = words[at]
            at += 1
            if w < limit:
                break
        j = w % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


#: Per bound b (1..52): the words below this limit are taken, ``2**32 - (2**32 mod b)``
#: (step 3 of the module docstring: no modulo bias).
_BELOW: Final = [0] + [(1 << 32) - (1 << 32) % bound for bound in range(1, 53)]

