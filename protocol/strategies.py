"""Reference bot strategies that decide from the wire view alone.

Every strategy takes exactly what a remote bot receives in a ``request``: the
observation map ``obs`` (contract "OBS") and the list ``legal`` of ACTION maps,
and returns one element of ``legal`` itself (the same dict object, not a copy).
Standard library only; nothing here touches the referee's internals.

``greedy_choose`` heuristic
---------------------------
Card value (``card_cost``): rank order ``23456789TJQKA``; a trump (suit ==
``obs["trump_suit"]``) is worth more than every non-trump.

* Only one legal action (e.g. a lone take/pass): that one.
* exchange offered: always exchange (the face-up trump is higher).
* attack (lead): the lowest non-trump; among cards of that rank prefer the rank
  held in most copies (more to throw in later), then suit order C D H S.
  Only trumps: the lowest trump.
* defend: plan the cheapest way to cover every uncovered slot (a min-cost
  assignment of distinct cards to slots, trumps costing more than any
  non-trump).
    - Transfer first: if the plan needs a trump or no full cover exists,
      ``show_trump`` if offered (it costs nothing), else the cheapest non-trump
      ``transfer``.
    - Take if some uncovered slot cannot be covered (you would take anyway,
      so keep your cards), or if ``talon > 10`` and the plan uses a trump of
      rank >= Q, or more than one trump with any of rank >= T.
    - Otherwise cover: the cheapest (card, slot) of the plan.
* throw_in: the lowest non-trump of rank below Q (below J while the defender
  is taking); never a trump while ``talon > 0``.  With ``talon == 0`` throw
  the cheapest card of any kind.  Nothing suitable: pass.
* Anything else: pass, else take, else the first legal action.

``gentle_choose`` heuristic
---------------------------
A patient, polite player: long games, few cards on the table at once, trumps kept for
when they matter.

* exchange offered: exchange. attack: the cheapest card, one at a time.
* throw_in: only heads-up (two players left) with the talon empty: the cheapest card
  that fits, trumps too; otherwise pass. transfer and show_trump: never.
* defend while the talon lasts (and up to bout 30): cover a non-trump with a non-trump
  up to K at a 2-player table, up to Q at 3 and only up to a 6 at 4 or more (at a fuller
  table a taken card is soon played on again); spend a trump only on a trump or on a
  non-trump of rank J or higher (at 3 players only on an ace); otherwise take.
* defend once the talon is empty (or after bout 30, so a game cannot cycle through
  takes for ever): cover with the cheapest card that beats, going out with the last
  card whatever it is, but keep the last trump in hand for later rather than spend it
  on a non-trump, and heads-up take a non-trump below Q rather than cover it with a
  trump; otherwise take.

Tuned so that under the reference rules (36 cards, lowest trump opens, first bout
capped at five: ``--set first_bout_limit=on``) its statistics go the reference's way
and land near its figures (docs/STATS.md has the measured table).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

#: An action in whatever form a caller plays with (a wire map, an engine int).
A = TypeVar("A")
#: A card in whatever form a caller keys its cover options by (card text, an engine int).
K = TypeVar("K")

__all__ = [
    "RANKS",
    "SUITS",
    "card_cost",
    "card_rank",
    "card_suit",
    "gentle_choose",
    "greedy_choose",
    "is_trump",
    "random_choose",
]

RANKS = "23456789TJQKA"
SUITS = "CDHS"
_RANK_INDEX = {r: i for i, r in enumerate(RANKS)}
_SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}
_TRUMP_BONUS = 100  # larger than any rank index, so every trump outranks every non-trump

_QUEEN = _RANK_INDEX["Q"]
_JACK = _RANK_INDEX["J"]
_TEN = _RANK_INDEX["T"]
_THICK_TALON = 10  # talon > this: keep high trumps rather than cover with them


# --------------------------------------------------------------------------- helpers


# The canonical card texts (what the referee sends) are looked up in tables, since a
# strategy asks for ranks, suits and costs many times per decision; any other spelling
# ("10h", "th") takes the parsing path.
_RANK_OF = {r + s: i for i, r in enumerate(RANKS) for s in SUITS}
_SUIT_OF = {r + s: s for r in RANKS for s in SUITS}


def card_rank(card: str) -> int:
    """Rank index of a card text: 0 for "2" ... 12 for "A" ("10" accepted as "T")."""
    rank = _RANK_OF.get(card)
    if rank is not None:
        return rank
    r = card[:-1].upper()
    return _RANK_INDEX["T"] if r == "10" else _RANK_INDEX[r]


def card_suit(card: str) -> str:
    """Suit letter of a card text ("C", "D", "H" or "S")."""
    return _SUIT_OF.get(card) or card[-1].upper()


def is_trump(card: str, trump_suit: str) -> bool:
    return card_suit(card) == trump_suit


def card_cost(card: str, trump_suit: str) -> int:
    """How much a card is worth keeping: the rank index, plus a bonus for trumps."""
    return card_rank(card) + (_TRUMP_BONUS if is_trump(card, trump_suit) else 0)


def _card_key(card: str, trump_suit: str) -> tuple[int, int]:
    """Total deterministic order: cost, then suit order."""
    key = _KEYS.get(trump_suit, _NO_KEYS).get(card)
    if key is not None:
        return key
    return card_cost(card, trump_suit), _SUIT_INDEX.get(card_suit(card), 9)


#: _KEYS[trump suit][card text]: ``_card_key`` of the canonical cards, precomputed.
_KEYS = {t: {c: (card_cost(c, t), _SUIT_INDEX[c[1]]) for c in _RANK_OF} for t in SUITS}
_NO_KEYS: dict[str, tuple[int, int]] = {}


# --------------------------------------------------------------------------- random


def random_choose(obs: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """Uniform choice over ``legal``, driven only by ``rng``."""
    return legal[rng.randrange(len(legal))]


# --------------------------------------------------------------------------- greedy


def greedy_choose(obs: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Deterministic heuristic choice (see the module docstring)."""
    if len(legal) == 1:
        return legal[0]
    trump = obs.get("trump_suit") or card_suit(obs.get("trump") or "?")
    talon = obs.get("talon") or 0

    by_type: dict[str, list[dict[str, Any]]] = {}
    for action in legal:
        by_type.setdefault(str(action.get("type")), []).append(action)

    if "exchange" in by_type:
        return by_type["exchange"][0]
    if "attack" in by_type:
        return _choose_lead(obs, by_type["attack"], trump)
    if "cover" in by_type or "transfer" in by_type or "show_trump" in by_type:
        choice = _choose_defence(obs, by_type, trump, talon)
        if choice is not None:
            return choice
    if "throw_in" in by_type:
        choice = _choose_throw_in(obs, by_type["throw_in"], trump, talon)
        if choice is not None:
            return choice
    for kind in ("pass", "take"):
        if kind in by_type:
            return by_type[kind][0]
    return legal[0]


def _choose_lead(obs: dict[str, Any], attacks: list[dict[str, Any]], trump: str) -> dict[str, Any]:
    copies: dict[int, int] = {}
    for card in obs.get("hand") or [a["card"] for a in attacks]:
        rank = card_rank(card)
        copies[rank] = copies.get(rank, 0) + 1

    def key(action: dict[str, Any]) -> tuple[int, int, int]:
        card = action["card"]
        cost, suit = _card_key(card, trump)
        return cost, -copies.get(card_rank(card), 0), suit

    return min(attacks, key=key)


def cheapest_assignment(options: dict[K, list[A]], costs: dict[K, int],
                        slot_of: Callable[[A], int], slots: list[int]) -> list[tuple[int, A]] | None:
    """Cheapest assignment of distinct cards to every slot in ``slots``: ``options`` maps
    each card (in the order to try them) to its cover actions that fit one of ``slots``
    (in legal order), ``costs`` each card to its cost, ``slot_of`` an action to its slot.

    Returns ``[(cost, cover_action), ...]`` or None when no full cover exists. Exact
    min-cost matching by DP over the (at most six) uncovered slots; ties keep the first
    plan found, so the choice depends only on the orders given. Shared by this module's
    wire-form strategy and the referee's built-ins on engine actions (one algorithm, one
    tie-break)."""
    bit = {slot: 1 << i for i, slot in enumerate(slots)}
    # mask of covered slots -> (total cost, plan)
    best: dict[int, tuple[int, tuple[tuple[int, A], ...]]] = {0: (0, ())}
    for card, actions in options.items():
        cost = costs[card]
        step = dict(best)
        for mask, (total, plan) in best.items():
            for action in actions:
                b = bit[slot_of(action)]
                if mask & b:
                    continue
                new_mask, new_total = mask | b, total + cost
                if new_mask not in step or new_total < step[new_mask][0]:
                    step[new_mask] = (new_total, plan + ((cost, action),))
        best = step
    full = (1 << len(slots)) - 1
    return list(best[full][1]) if full in best else None


def _cover_plan(
    covers: list[dict[str, Any]], slots: list[int], trump: str
) -> list[tuple[int, dict[str, Any]]] | None:
    """Cheapest assignment of distinct cards to every slot in ``slots`` (see
    cheapest_assignment), over wire-form cover actions."""
    wanted = set(slots)
    options: dict[str, list[dict[str, Any]]] = {}  # card -> cover actions, in legal order
    for action in covers:
        if action.get("slot") in wanted:
            options.setdefault(action["card"], []).append(action)
    costs = {card: card_cost(card, trump) for card in options}
    return cheapest_assignment(options, costs, lambda action: action["slot"], slots)


def _choose_defence(
    obs: dict[str, Any], by_type: dict[str, list[dict[str, Any]]], trump: str, talon: int
) -> dict[str, Any] | None:
    covers = by_type.get("cover", [])
    table = obs.get("table")
    if table is not None:
        slots = [i for i, pair in enumerate(table) if len(pair) < 2 or pair[1] is None]
    else:
        slots = sorted({a["slot"] for a in covers})
    plan = _cover_plan(covers, slots, trump) if slots else None

    trumps_used = [card_rank(a["card"]) for cost, a in plan or () if cost >= _TRUMP_BONUS]

    # Perevodnoy: pass the bout on instead of spending a trump (or taking).
    if plan is None or trumps_used:
        if "show_trump" in by_type:
            return by_type["show_trump"][0]
        plain = [a for a in by_type.get("transfer", []) if not is_trump(a["card"], trump)]
        if plain:
            return min(plain, key=lambda a: _card_key(a["card"], trump))

    take = by_type.get("take")
    if plan is None:
        if take:
            return take[0]
        return min(covers, key=lambda a: (*_card_key(a["card"], trump), a["slot"])) if covers else None

    if take and talon > _THICK_TALON and trumps_used:
        if max(trumps_used) >= _QUEEN or (len(trumps_used) > 1 and max(trumps_used) >= _TEN):
            return take[0]

    if not plan:  # nothing uncovered (should not happen in the defend phase)
        return None
    return min(plan, key=lambda ca: (ca[0], _SUIT_INDEX.get(card_suit(ca[1]["card"]), 9), ca[1]["slot"]))[1]


def _choose_throw_in(obs: dict[str, Any], throws: list[dict[str, Any]], trump: str,
                     talon: int) -> dict[str, Any] | None:
    if talon == 0:
        candidates = throws
    else:
        limit = _JACK if obs.get("taking") else _QUEEN
        candidates = [
            a for a in throws if not is_trump(a["card"], trump) and card_rank(a["card"]) < limit
        ]
    if not candidates:
        return None
    return min(candidates, key=lambda a: _card_key(a["card"], trump))



# --------------------------------------------------------------------------- gentle

#: While the talon lasts: the highest non-trump gentle covers a non-trump with, by the
#: players at the table (more players: it takes more) ...
_GENTLE_COVER_MAX = {2: _RANK_INDEX["K"], 3: _QUEEN}
_GENTLE_COVER_MAX_FULL = _RANK_INDEX["6"]  # ... 4 players or more
#: ... and the lowest non-trump it spends a trump on.
_GENTLE_TRUMP_FOR = {2: _JACK, 3: _RANK_INDEX["A"]}
_GENTLE_TRUMP_FOR_FULL = _JACK
_GENTLE_HEADS_UP_TRUMP_FOR = _QUEEN  # talon gone, two left: take anything lower
_GENTLE_LATE_BOUT = 30  # from this bout on, play as if the talon were empty


def gentle_choose(obs: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """Deterministic "gentle" play, the kind of bot casual Durak sites pit people
    against (see the module docstring for the rules it follows)."""
    if len(legal) == 1:
        return legal[0]
    trump = obs.get("trump_suit") or card_suit(obs.get("trump") or "?")
    talon = obs.get("talon") or 0
    players = obs.get("players") or 2
    out = obs.get("out") or []
    still_in = sum(1 for gone in out if not gone) if out else players

    by_type: dict[str, list[dict[str, Any]]] = {}
    for action in legal:
        by_type.setdefault(str(action.get("type")), []).append(action)

    def cheapest(actions: list[dict[str, Any]]) -> dict[str, Any]:
        return min(actions, key=lambda a: (*_card_key(a["card"], trump), a.get("slot", 0)))

    if "exchange" in by_type:
        return by_type["exchange"][0]
    if "attack" in by_type:
        return cheapest(by_type["attack"])
    if "throw_in" in by_type and talon == 0 and still_in == 2:
        # Heads-up at the end every card counts: load the defender with what fits.
        return cheapest(by_type["throw_in"])
    if "cover" in by_type:
        table = obs.get("table") or []
        late = talon == 0 or (obs.get("bout") or 0) > _GENTLE_LATE_BOUT
        allowed = [a for a in by_type["cover"]
                   if _gentle_covers(a["card"], _attack_card(table, a.get("slot")), trump=trump,
                                     hand=obs.get("hand") or [], late=late, players=players,
                                     heads_up=still_in == 2)]
        if allowed:
            return cheapest(allowed)
    for kind in ("pass", "take"):
        if kind in by_type:
            return by_type[kind][0]
    return legal[0]


def _attack_card(table: list[list[str | None]], slot: object) -> str | None:
    """The attack card in ``slot`` of the observed table (None if there is none)."""
    if isinstance(slot, int) and 0 <= slot < len(table) and table[slot]:
        return table[slot][0]
    return None


def _gentle_covers(card: str, attack: str | None, *, trump: str, hand: list[str], late: bool,
                   players: int, heads_up: bool) -> bool:
    """Whether gentle is willing to cover ``attack`` with ``card`` (the rules of the
    module docstring; an unknown attack card counts as a low non-trump)."""
    spends_trump = is_trump(card, trump) and not (attack and is_trump(attack, trump))
    attack_rank = card_rank(attack) if attack else -1
    if late:
        if not spends_trump or len(hand) == 1:
            return True
        if sum(1 for c in hand if is_trump(c, trump)) <= 1:
            return False  # the last trump stays in reserve
        return not heads_up or attack_rank >= _GENTLE_HEADS_UP_TRUMP_FOR
    if spends_trump:
        return attack_rank >= _GENTLE_TRUMP_FOR.get(players, _GENTLE_TRUMP_FOR_FULL)
    return is_trump(card, trump) or card_rank(card) <= _GENTLE_COVER_MAX.get(players, _GENTLE_COVER_MAX_FULL)
