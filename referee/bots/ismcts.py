"""``builtin:ismcts``: information-set Monte Carlo tree search over the rules engine.

The bot sees exactly what a remote bot sees: the ``request``'s observation map and
legal action list, and the table rules from ``game_start``. ``IsmctsStrategy.choose``
takes nothing else (no ``Game``, no deck, no seed of the deal), so it cannot reach the
referee's hidden state; the hidden cards it needs for a simulation it invents.

Each iteration
1. *determinizes*: deals the cards this seat cannot see (``unseen_cards``: the deck
   minus its hand, the discard pile, the table, the cards publicly known to be in other
   hands and the face-up trump while it lies under the talon) at random to the other
   hands (each up to its public size) and to the talon, and sets up that position with
   ``Game.from_position``;
2. *selects* down one tree shared by every determinization (SO-ISMCTS, Cowling et al.
   2012): a node's children are actions; only the actions legal in this determinization
   compete, by UCB1 with availability counts; the first untried legal action is expanded;
3. *plays out* to the end of the game with a cheap heuristic policy (``_playout``);
4. *backs up* 1 for every seat that is not the durak, 0 for the durak, 1/2 each for a
   draw, each node crediting the seat that chose its action.

The decision is the most visited root action. Forced actions (a lone pass or take) are
applied in simulations without a tree node, as the referee applies them.

At the root the UCB value of the action ``greedy_choose`` would play gets a progressive
bias ``bias / visits``: with few iterations the search leans on the heuristic, with many
the bias fades.

Parameters, from the bot spec (``builtin:ismcts:iterations=200,ms=40,c=0.7``):
``iterations`` per decision (default 150), ``ms`` a wall-time budget per decision
(stops at whichever comes first; with ``ms`` alone only the time counts, and the play
then depends on the machine's speed), ``c`` the UCB exploration constant (default 0.7),
``bias`` the weight of the greedy hint (default 1, 0 for none).
With ``iterations`` alone a decision is a pure function of the seed, the observation
and the legal list.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from protocol.strategies import greedy_choose

from ..rules import (
    ATTACK, COVER, PASS, TAKE, THROW_IN, TRANSFER, Game, Rules, action_from_wire,
)
from ..rules.cards import card_str, deck_cards, parse_card
from ..rules.game import DEFEND_PHASE, THROW_IN_PHASE
from ..errors import UserError

DEFAULT_ITERATIONS = 150
DEFAULT_C = 0.7
DEFAULT_BIAS = 1.0
MAX_ITERATIONS = 1_000_000
MAX_MS = 600_000.0


class IsmctsParamError(UserError, ValueError):
    """A ``builtin:ismcts:...`` parameter is unknown or out of range (the user's spec)."""

    hint = "give builtin:ismcts:KEY=VALUE,... with the parameters the message lists"


@dataclass(frozen=True)
class IsmctsParams:
    """How long one decision searches. ``iterations`` None: only ``ms`` limits it."""

    iterations: int | None = DEFAULT_ITERATIONS
    ms: float | None = None
    c: float = DEFAULT_C
    bias: float = DEFAULT_BIAS


def parse_params(items: Mapping[str, str]) -> IsmctsParams:
    """Parameters from ``{"iterations": "200", "ms": "40", "c": "0.7"}``. Raises
    IsmctsParamError naming the bad key or value and the valid ones."""
    known = ("iterations", "ms", "c", "bias")
    values: dict[str, Any] = {}
    for key, text in items.items():
        if key not in known:
            raise IsmctsParamError(f"unknown ismcts parameter {key!r}; parameters: {', '.join(known)}")
        try:
            number = float(text) if key != "iterations" else int(text)
        except ValueError:
            raise IsmctsParamError(f"ismcts parameter {key}={text!r} is not a number") from None
        high = {"iterations": MAX_ITERATIONS, "ms": MAX_MS, "c": 100.0, "bias": 100.0}[key]
        low_ok = number >= 0 if key == "bias" else number > 0
        if not (math.isfinite(number) and low_ok and number <= high):
            raise IsmctsParamError(f"ismcts parameter {key}={text}: must be "
                                   f"{'>=' if key == 'bias' else '>'} 0 and <= {high:g}")
        values[key] = number
    if "ms" in values and "iterations" not in values:
        values["iterations"] = None
    return IsmctsParams(**values)


# --------------------------------------------------------------------------- determinization


def unseen_cards(obs: Mapping[str, Any], deck_size: int) -> list[int]:
    """The cards whose place the observing seat does not know, in deck order: every
    card of the deck except its own hand, the discard pile, the table, the cards
    publicly known to be in another hand, and the face-up trump while the talon holds
    it. These lie in the other hands (beyond their known cards) and in the talon."""
    seen = set(map(parse_card, obs["hand"])) | set(map(parse_card, obs["discard"]))
    for pair in obs["table"]:
        seen |= {parse_card(c) for c in pair if c is not None}
    for known in obs["known"]:
        seen |= set(map(parse_card, known))
    if obs["talon"]:
        seen.add(parse_card(obs["trump"]))
    return [c for c in deck_cards(deck_size) if c not in seen]


class Determinizer:
    """Deals determinizations of one observation quickly: the position is set up once
    (``determinize``), then each deal copies it and redistributes the unseen cards."""

    def __init__(self, rules: Rules, obs: Mapping[str, Any], rng: random.Random) -> None:
        self.template = determinize(rules, obs, rng)
        me, n = obs["seat"], obs["players"]
        self.pool = unseen_cards(obs, rules.deck)
        self.fixed = [0] * n  #: per seat, the cards it surely holds (own hand, known cards)
        self.need = [0] * n   #: per seat, how many unseen cards it holds
        for s in range(n):
            cards = obs["hand"] if s == me else obs["known"][s]
            for c in cards:
                self.fixed[s] |= 1 << parse_card(c)
            if s != me:
                self.need[s] = obs["hand_sizes"][s] - len(obs["known"][s])
        self.bottom = [parse_card(obs["trump"])] if obs["talon"] else []

    def deal(self, rng: random.Random) -> Game:
        g = self.template.copy()
        pool = self.pool[:]
        rng.shuffle(pool)
        hands = self.fixed[:]
        for s, k in enumerate(self.need):
            for _ in range(k):
                hands[s] |= 1 << pool.pop()
        g.hands = hands
        # The talon is popped from its end; index 0 is the face-up trump, drawn last.
        g.talon = self.bottom + pool
        return g


def determinize(rules: Rules, obs: Mapping[str, Any], rng: random.Random) -> Game:
    """A complete game position consistent with ``obs``: the unseen cards dealt at random
    to the other hands (each to its public size, over its publicly known cards) and to
    the talon (the face-up trump at its bottom)."""
    me, n = obs["seat"], obs["players"]
    pool = unseen_cards(obs, rules.deck)
    rng.shuffle(pool)
    hands: list[list[str]] = []
    for s in range(n):
        if s == me:
            hands.append(list(obs["hand"]))
            continue
        known = list(obs["known"][s])
        need = obs["hand_sizes"][s] - len(known)
        hands.append(known + [card_str(pool.pop()) for _ in range(need)])
    talon = [card_str(c) for c in pool] + ([obs["trump"]] if obs["talon"] else [])
    table = " ".join(f"{a}/{c or '--'}" for a, c in obs["table"])
    g = Game.from_position(
        rules, [" ".join(h) for h in hands], trump=obs["trump"], talon=" ".join(talon),
        attacker=obs["attacker"], table=table, taking=bool(obs["taking"]),
        out=tuple(s for s in range(n) if obs["out"][s]), first_bout=obs["bout"] == 1,
        dealer=obs["dealer"])
    # What from_position cannot know from a bare position, the observation says: the
    # publicly known cards, who drew the face-up trump, the bout's limit (fixed when the bout began), its transfers, and whose turn it is
    # among the attackers throwing in (those asked before this seat have passed).
    g.known = [_mask(k) for k in obs["known"]]
    g.shown = _mask(obs["shown"])
    g.trump_holder = obs["trump_holder"]
    g.limit = obs["attack_limit"]
    g.transfers = obs["transfers"]
    g.bout = obs["bout"]
    if g.phase == THROW_IN_PHASE and obs["phase"] == "throw_in" and me in g.order:
        g.asker = g.passes = g.order.index(me)
    return g


def _mask(cards: list[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_card(c)
    return m


# --------------------------------------------------------------------------- search


class _Node:
    __slots__ = ("children", "visits", "avail", "reward", "seat")

    def __init__(self, seat: int) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.avail = 0
        self.reward = 0.0
        self.seat = seat  #: the seat that chose the action leading here


def _cost(card: int, trump_suit: int) -> int:
    return (card >> 2) + (20 if card & 3 == trump_suit else 0)


def _playout(g: Game, rng: random.Random, deadline: float | None = None) -> bool:
    """Play ``g`` to its end with a cheap greedy-like policy (lowest cards first, take
    when some card cannot be covered, throw in low non-trumps), 10% random moves.
    False if ``deadline`` (``time.perf_counter``) passed first: the playout is void."""
    ts = g.trump_suit
    steps = 0
    while not g.is_over:
        steps += 1
        if deadline is not None and not steps & 15 and time.perf_counter() >= deadline:
            return False
        legal = g.legal_actions()
        forced = g.forced_action(legal)
        if forced is not None:
            g.apply_legal(forced)
            continue
        if rng.random() < 0.1:
            g.apply_legal(legal[rng.randrange(len(legal))])
            continue
        kind0 = legal[0] & 15
        if kind0 == ATTACK:
            g.apply_legal(min(legal, key=lambda a: _cost(a >> 4 & 63, ts)))
            continue
        if g.phase == DEFEND_PHASE:
            covers = [a for a in legal if a & 15 == COVER]
            slots = {a >> 10 for a in covers}
            uncovered = sum(1 for c in g.covers if c < 0)
            if covers and len(slots) == uncovered:
                best = min(covers, key=lambda a: _cost(a >> 4 & 63, ts))
                if not (g.talon and _cost(best >> 4 & 63, ts) >= 30):  # a trump Q or higher
                    g.apply_legal(best)
                    continue
            transfers = [a for a in legal if a & 15 == TRANSFER]
            g.apply_legal(transfers[0] if transfers else TAKE)
            continue
        # throw in or pass
        throws = [a for a in legal if a & 15 == THROW_IN
                  and (not g.talon or (a >> 4 & 3 != ts and a >> 6 < 10))]
        g.apply_legal(min(throws, key=lambda a: _cost(a >> 4 & 63, ts)) if throws else PASS)
    return True


def _rewards(g: Game) -> list[float]:
    durak = g.outcome.durak if g.outcome else None
    if durak is None:
        return [0.5] * g.players
    return [0.0 if s == durak else 1.0 for s in range(g.players)]


class IsmctsStrategy:
    """The search, for one seat's decisions. Holds the table rules (public) only."""

    def __init__(self, rules: Rules, params: IsmctsParams) -> None:
        # The search applies a lone pass or take at once, whether or not the referee
        # asks for it (ask_forced): a node with one child is worth no iterations.
        self.rules, self.params = replace(rules, ask_forced=False), params
        #: Of the last ``choose`` that searched: (simulated deals through the chosen move,
        #: the share of them in which this seat was not the durak); None when it did not
        #: search (one move, an exchange). What a hint says about the choice.
        self.last_search: tuple[int, float] | None = None

    def choose(self, obs: dict[str, Any], legal: list[dict[str, Any]],
               rng: random.Random) -> dict[str, Any]:
        """One element of ``legal`` (the same dict object), from ``obs`` alone."""
        self.last_search = None
        if len(legal) == 1 or obs["phase"] == "exchange":
            # The face-up trump is higher than the deck's lowest: always worth taking.
            return next((a for a in legal if a.get("type") == "exchange"), legal[0])
        actions = [action_from_wire(a) for a in legal]
        root_actions = set(actions)
        # Progressive bias toward the greedy heuristic's choice at the root: with few
        # iterations (a short budget on a busy machine) the search plays at least as
        # well as greedy; with many the bias fades (it shrinks as 1/visits).
        hint = actions[next(i for i, a in enumerate(legal) if a is greedy_choose(obs, legal))]
        root = _Node(obs["seat"])
        params, c = self.params, self.params.c
        deadline = None if params.ms is None else time.perf_counter() + params.ms / 1000
        done = 0
        dealer = Determinizer(self.rules, obs, rng)
        while True:
            if params.iterations is not None and done >= params.iterations:
                break
            if deadline is not None and done and time.perf_counter() >= deadline:
                break
            done += 1
            g = dealer.deal(rng)
            node, path = root, [root]
            first = True
            if g.current_seat != obs["seat"] or not root_actions <= set(g.legal_actions()):
                continue  # cannot happen for an observation the referee sent; stay safe
            while not g.is_over:
                legal_now = g.legal_actions()
                if first:
                    # The request's list is the truth; a determinization agrees with it.
                    legal_now = [a for a in legal_now if a in root_actions]
                    first = False
                forced = g.forced_action(legal_now)
                if forced is not None:
                    g.apply_legal(forced)
                    continue
                seat = g.seat_to_move()
                untried = [a for a in legal_now if a not in node.children]
                for a in legal_now:
                    child = node.children.get(a)
                    if child is not None:
                        child.avail += 1
                if untried:
                    a = untried[rng.randrange(len(untried))]
                    child = node.children[a] = _Node(seat)
                    child.avail = 1
                    g.apply_legal(a)
                    path.append(child)
                    break
                if node is root:
                    a = max(legal_now, key=lambda x: _ucb(node.children[x], c)
                            + (params.bias / node.children[x].visits if x == hint else 0.0))
                else:
                    a = max(legal_now, key=lambda x: _ucb(node.children[x], c))
                node = node.children[a]
                g.apply_legal(a)
                path.append(node)
            if not _playout(g, rng, deadline if done > 1 else None):
                break  # out of time: the first playout always completes
            rewards = _rewards(g)
            for n in path[1:]:
                n.visits += 1
                n.reward += rewards[n.seat]
        best = max(range(len(actions)), key=lambda i: (
            root.children[actions[i]].visits if actions[i] in root.children else -1,
            root.children[actions[i]].reward if actions[i] in root.children else 0.0))
        chosen = root.children.get(actions[best])
        if chosen is not None and chosen.visits:
            self.last_search = (chosen.visits, chosen.reward / chosen.visits)
        return legal[best]


def _ucb(node: _Node, c: float) -> float:
    return node.reward / node.visits + c * math.sqrt(math.log(node.avail) / node.visits)
