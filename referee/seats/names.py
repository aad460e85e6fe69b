"""Names that look alike: the one test of whether a new name may stand beside the names
already used (a person's display name in the lobby, ``register NAME``, a bot's hello
name).

Two names clash when a reader cannot tell them apart by eye. The measure is Unicode's
(UTS #39, "Unicode Security Mechanisms", section 4): the confusable *skeleton* of a
string is its NFD form with each character replaced by its prototype from Unicode's
confusables.txt, put in NFD again, and two strings are confusable when their skeletons
are equal (``grееdy`` with Cyrillic е and ``greedy``; ``a1pha`` and ``alpha``;
``modern`` and ``rnodern``). The skeleton is ICU's (``SpoofChecker.getSkeleton``
through PyICU as the ``pyicu-wheels`` package builds it, with its own ICU 77.1, Unicode
16, inside: the same data on every machine), not a table of ours.

The skeleton is taken of the name's NFKC form: confusables.txt leaves most compatibility
forms to NFKC (fullwidth ``ｒ`` is not in it), so without it ``ｇｒｅｅｄｙ`` would pass.
Names are also compared without regard to case, and that is a second key rather than
a fold before the skeleton: folding first would lose the confusables that differ in
case (capital ``I`` is confusable with small ``l``, ``paypaI`` with ``paypal``; folded,
``I`` becomes ``i``, which is not). So a name has two keys, the skeleton of its NFKC
form, and the case fold of the skeleton of its case fold (folded again after, because
some prototypes are capitals: ``0`` is confusable with ``O``, so ``s0lver`` clashes
with ``solver`` only once ``O`` is folded), and two names clash when they share a key:
``Greedy`` clashes with ``greedy`` and ``s0lver`` with ``solver`` (by the second key),
``aIpha`` with ``alpha`` (by the first). An identical name clashes too; callers that
let a name's owner use it again say so before they ask.

No skeleton is stored: each is computed when names are compared (and cached for the
process), so a newer ICU with more confusables refuses more from then on and changes
nothing already recorded (``icu.ICU_VERSION`` says which one decides).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

import icu

_SPOOF = icu.SpoofChecker()


def skeleton(text: str) -> str:
    """The UTS #39 confusable skeleton of ``text``: NFD, each character mapped to its
    prototype (confusables.txt), NFD again. Equal skeletons: confusable strings."""
    # ICU ignores the type argument since ICU 58: there is one (MA) table.
    return str(_SPOOF.getSkeleton(0, text))


def case_fold(text: str) -> str:
    """``text`` without regard to case: NFKC, case folded, NFKC again (the fold can leave
    a decomposed form, U+0390 becomes three code points)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


@lru_cache(maxsize=1 << 16)
def name_keys(name: str) -> frozenset[str]:
    """The keys ``name`` is compared by: the skeleton of its NFKC form, and its skeleton
    without regard to case (of the case fold, folded again)."""
    return frozenset((skeleton(unicodedata.normalize("NFKC", name)),
                      case_fold(skeleton(case_fold(name)))))


class NameIndex:
    """Names by their keys: which of them a name is or looks like, found in time that does
    not grow with how many there are (a server's store of every person's name)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._order: dict[str, int] = {}
        self._by_key: dict[str, list[str]] = {}
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        if name not in self._order:
            self._order[name] = len(self._order)
            for key in name_keys(name):
                self._by_key.setdefault(key, []).append(name)

    def find(self, name: str, *, other_than: str | None = None) -> str | None:
        """The first name added that ``name`` is or looks like (a shared key), leaving
        ``other_than`` out, or None."""
        found = {n for key in name_keys(name) for n in self._by_key.get(key, ()) if n != other_than}
        return min(found, key=self._order.__getitem__, default=None)


def look_alike(name: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` that ``name`` is, or looks like (a shared key), or None."""
    return NameIndex(others).find(name)


def starts_like(name: str, prefixes: Iterable[str]) -> str | None:
    """The first of ``prefixes`` that ``name`` starts with or seems to (``tсp:`` with a
    Cyrillic с for ``tcp:``), or None."""
    keys = name_keys(name)
    for prefix in prefixes:
        if any(key.startswith(mark) for key in keys for mark in name_keys(prefix)):
            return prefix
    return None
