"""The built-in ``greedy`` and ``random`` bots deciding from the engine's state directly.

A built-in bot plays inside the referee's process. Given the request a remote bot gets
(observation and legal list as maps) it would answer with one of the legal maps; that
costs more than the engine's own work per decision. These
functions make the same choice from the game itself and its legal list of int actions:

- ``random_action``: ``protocol.strategies.random_choose`` draws
  ``legal[rng.randrange(len(legal))]``; the wire list keeps the engine's order, so the
  same draw picks the same action.
- ``greedy_action``: ``protocol.strategies.greedy_choose`` (its module docstring states
  the heuristic) transcribed onto card ints: a card's rank index and suit letter order
  are the engine's ``card >> 2`` and ``card & 3``; the observation's ``trump_suit``,
  ``talon``, ``hand``, ``table``, ``taking`` and ``phase`` are the game's fields they
  are built from. Every tie is broken in the same order as there (legal order, then dictionary
  insertion order in the cover plan), so the choice is the same action, not merely an
  equally good one. tests/referee/test_fast_builtins.py plays seeded games both ways
  under every preset and compares every decision.

The caller passes only the seat to move, and reads only what that seat may see (its own
hand, the table, the trump, the talon's size): the fast path knows nothing the slow path
would not show the bot.
"""

from __future__ import annotations

import random

from protocol.strategies import cheapest_assignment

from ..rules.actions import COVER, EXCHANGE, PASS, SHOW_TRUMP, TAKE, TRANSFER
from ..rules.game import ATTACK_PHASE, EXCHANGE_PHASE, THROW_IN_PHASE, Game

#: protocol.strategies' constants, on engine ranks (0 is "2" ... 12 is "A").
_TRUMP_BONUS = 100
_QUEEN, _JACK, _TEN = 10, 9, 8
_THICK_TALON = 10


def random_action(legal: list[int], rng: random.Random) -> int:
    """``random_choose`` on int actions: the same draw, the same action."""
    return legal[rng.randrange(len(legal))]


def greedy_action(game: Game, seat: int, legal: list[int]) -> int:
    """``greedy_choose`` for ``seat`` (the seat to move) on int actions: the action it
    would pick from this position's request.

    greedy_choose looks at the kinds in the legal list in a fixed order (exchange, attack,
    a defence, throw-in, pass, take); the engine's phase (public: it is in every request)
    says which kinds a list of more than one action holds, in the engine's order: an
    exchange offer is exchange then pass; a lead, attacks (then pass, after the first card
    of a same-rank lead); a throw-in, throw-ins then pass; a defence, covers, transfers,
    shown trumps, then take."""
    if len(legal) == 1:
        return legal[0]
    trump = game.trump_suit
    phase = game.phase
    if phase == ATTACK_PHASE:
        return _lead(legal[:-1] if legal[-1] == PASS else legal, trump)
    if phase == THROW_IN_PHASE:
        choice = _throw_in(legal[:-1], trump, len(game.talon), game.taking)
        return PASS if choice is None else choice
    if phase == EXCHANGE_PHASE:
        return EXCHANGE
    kinds = 0  # bit k: some legal action is of kind k (greedy_choose's by_type keys)
    for action in legal:
        kinds |= 1 << (action & 15)
    choice = _defence(game, legal, kinds, trump)
    return TAKE if choice is None else choice


def _of_kind(legal: list[int], kind: int) -> list[int]:
    """The actions of ``kind`` in ``legal``, in legal order."""
    return [a for a in legal if a & 15 == kind]


def _cost(card: int, trump: int) -> int:
    """``card_cost``: the rank index, plus a bonus for trumps."""
    return (card >> 2) + (_TRUMP_BONUS if card & 3 == trump else 0)


def _key(card: int, trump: int) -> tuple[int, int]:
    """``_card_key``: cost, then suit order (C D H S is the engine's suit order)."""
    return _cost(card, trump), card & 3


#: Per trump suit, indexed by an action without a slot (``kind | card << 4``): its card's
#: ``_key`` packed in one int, ``cost << 2 | suit`` (the same order; no two cards tie).
_KEYS = [[_cost(action >> 4 & 63, trump) << 2 | action >> 4 & 3 for action in range(52 << 4)]
         for trump in range(4)]


def _lead(attacks: list[int], trump: int) -> int:
    """``_choose_lead``: the attack with the least (cost, -copies of its rank in hand,
    suit). Cards of one cost are of one rank, hence have as many copies in hand, so the
    copies never decide: the least ``_key`` (unique per card) is the choice."""
    return min(attacks, key=_KEYS[trump].__getitem__)


def _cover_plan(covers: list[int], slots: list[int], trump: int) -> list[tuple[int, int]] | None:
    """protocol.strategies._cover_plan on engine actions: the same cheapest_assignment,
    fed in the same orders, so the same plan of (cost, cover action) pairs."""
    if len(slots) == 1:
        # One slot (the usual case): the DP keeps the first cover of least cost, and two
        # covers of one slot never cost the same (same suit: other ranks; trumps: other
        # ranks; a trump and a plain card: the trump bonus).
        slot, keys = slots[0], _KEYS[trump]
        cheapest, least = None, 1 << 30
        for action in covers:
            if action >> 10 == slot:
                cost = keys[action & 1023] >> 2  # (the action without its slot)
                if cost < least:
                    cheapest, least = action, cost
        return None if cheapest is None else [(least, cheapest)]
    wanted = set(slots)
    options: dict[int, list[int]] = {}  # card -> cover actions, in legal order
    for action in covers:
        if action >> 10 in wanted:
            options.setdefault(action >> 4 & 63, []).append(action)
    costs = {card: _cost(card, trump) for card in options}
    return cheapest_assignment(options, costs, _slot_of, slots)


def _slot_of(action: int) -> int:
    return action >> 10


def _defence(game: Game, legal: list[int], kinds: int, trump: int) -> int | None:
    covers = _of_kind(legal, COVER)
    slots = [slot for slot, c in enumerate(game.covers) if c < 0]
    plan = _cover_plan(covers, slots, trump) if slots else None
    trumps_used = [(a >> 4 & 63) >> 2 for cost, a in plan or () if cost >= _TRUMP_BONUS]

    if plan is None or trumps_used:
        if kinds >> SHOW_TRUMP & 1:
            return _of_kind(legal, SHOW_TRUMP)[0]
        plain = [a for a in legal if a & 15 == TRANSFER and a >> 4 & 3 != trump]
        if plain:
            return min(plain, key=_KEYS[trump].__getitem__)

    take = kinds >> TAKE & 1
    if plan is None:
        if take:
            return TAKE
        return min(covers, key=lambda a: (*_key(a >> 4 & 63, trump), a >> 10)) if covers else None

    if take and len(game.talon) > _THICK_TALON and trumps_used:
        if max(trumps_used) >= _QUEEN or (len(trumps_used) > 1 and max(trumps_used) >= _TEN):
            return TAKE

    if not plan:
        return None
    if len(plan) == 1:
        return plan[0][1]
    return min(plan, key=lambda ca: (ca[0], ca[1] >> 4 & 3, ca[1] >> 10))[1]


def _throw_in(throws: list[int], trump: int, talon: int, taking: bool) -> int | None:
    if talon == 0:
        candidates = throws
    else:
        limit = _JACK if taking else _QUEEN
        candidates = [a for a in throws if a >> 4 & 3 != trump and a >> 6 & 15 < limit]
    if not candidates:
        return None
    return min(candidates, key=_KEYS[trump].__getitem__)
