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
3. *plays out* to the end of the game with a cheap heuristic policy
   (referee/bots/searchcore.py, compiled: most of the search's time is spent there), or
   with ``greedy_playout`` greedy's moves;
4. *backs up* 1 for every seat that is not the durak, 0 for the durak, 1/2 each for a
   draw, each node crediting the seat that chose its action.

The decision is the most visited root action. Forced actions (a lone pass or take) are
applied in simulations without a tree node, as the referee applies them.

At the root the UCB value of the action ``greedy_choose`` would play gets a progressive
bias ``bias / visits``: with few iterations the search leans on the heuristic, with many
the bias fades. With ``tree_bias`` > 0 every node below the root leans the same way, by
``tree_bias / visits``, toward the move greedy would play with the cards of the deal
being simulated: the shared tree would otherwise have the other seats choose without
regard to their own (determinized) hands.

Parameters, from the bot spec (``builtin:ismcts:iterations=200,ms=40,c=0.7``):
``iterations`` per decision (default 150), ``ms`` a wall-time budget per decision
(stops at whichever comes first; with ``ms`` alone only the time counts, and the play
then depends on the machine's speed), ``c`` the UCB exploration constant (default 0.7),
``bias`` the weight of the greedy hint (default 1, 0 for none), ``tree_bias`` that
of the greedy lean below the root (default 0), ``greedy_playout`` 1 for playouts of
greedy's moves (default 0: the cheap policy), ``solve_nodes`` the root solver's budget
and ``swindle`` how far it looks for a way out of a lost or drawn endgame (``_swindle``).
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

from ..errors import UserError
from ..rules import Game, Rules, action_from_wire
from ..rules.cards import card_str, deck_cards, parse_card
from ..rules.game import OVER, THROW_IN_PHASE
from .fastchoice import greedy_action
from .searchcore import Node, deal, iterate
from .solver import LOSS, WIN, Solver, SolverLimit, solvable, terminal_value

DEFAULT_ITERATIONS = 150
DEFAULT_C = 0.7
DEFAULT_BIAS = 1.0
MAX_NODES = 10_000_000
MAX_ITERATIONS = 1_000_000
#: How often (iterations) the search checks whether the remaining ones could still change
#: its choice (``_decided``).
EARLY_STOP_EVERY = 32
MAX_MS = 600_000.0
MAX_SWINDLE = 6
#: Positions the solver may search for one decision's swindle (``_swindle``), over its
#: proof's ``solve_nodes``.
SWINDLE_NODES = 4000


class IsmctsParamError(UserError, ValueError):
    """A ``builtin:ismcts:...`` or ``builtin:expert:...`` parameter is unknown or out of
    range (the user's spec)."""

    hint = "give builtin:NAME:KEY=VALUE,... with the parameters the message lists"


@dataclass(frozen=True)
class IsmctsParams:
    """How long one decision searches. ``iterations`` None: only ``ms`` limits it."""

    iterations: int | None = DEFAULT_ITERATIONS
    ms: float | None = None
    c: float = DEFAULT_C
    bias: float = DEFAULT_BIAS
    #: Positions the exact endgame solver may search at the root once the seat's own
    #: position is solvable (two seats in, the talon empty or only the face-up trump
    #: left in it; 0: never asked).
    solve_nodes: int = 0
    #: The weight of the lean toward greedy's move at every node below the root, for
    #: whichever seat moves there (0: none).
    tree_bias: float = 0.0
    #: 1: the playouts play greedy's moves (searchcore.py); 0: the cheap policy.
    greedy_playout: int = 0
    #: In a position the solver proved lost or drawn: how many of its own decisions ahead
    #: the seat looks for a line on which greedy's replies let it do better (``_swindle``;
    #: 0: none).
    swindle: int = 0


#: Each parameter: (parse as int, smallest allowed value, whether that smallest is allowed, largest).
_PARAM_RANGES: dict[str, tuple[bool, float, bool, float]] = {
    "iterations": (True, 0, False, MAX_ITERATIONS), "ms": (False, 0, False, MAX_MS),
    "c": (False, 0, False, 100.0), "bias": (False, 0, True, 100.0),
    "solve_nodes": (True, 0, True, MAX_NODES), "tree_bias": (False, 0, True, 100.0),
    "greedy_playout": (True, 0, True, 1), "swindle": (True, 0, True, MAX_SWINDLE),
}


#: The search built-ins and their default parameters. ``expert`` is ismcts with a larger
#: budget (about 38 ms of CPU per decision on this project's 2-core machine; the search
#: costs about 1/6 of the time it did before its inner loop was compiled), the greedy
#: lean in the whole tree, greedy's moves in the playouts, and the exact endgame solver
#: at the root with the swindle in lost and drawn endgames (docs/STRENGTH.md has what
#: each was measured to give).
SEARCH_BOTS: dict[str, IsmctsParams] = {
    "ismcts": IsmctsParams(),
    "expert": IsmctsParams(iterations=1600, solve_nodes=3000, tree_bias=1.0,
                           greedy_playout=1, swindle=3),
}


def parse_params(items: Mapping[str, str], bot: str = "ismcts") -> IsmctsParams:
    """Parameters of built-in ``bot`` (a key of SEARCH_BOTS) from ``{"iterations": "200",
    "ms": "40", "c": "0.7"}``, over that bot's defaults. Raises IsmctsParamError naming
    the bad key or value and the valid ones."""
    values: dict[str, Any] = {}
    for key, text in items.items():
        if key not in _PARAM_RANGES:
            raise IsmctsParamError(f"unknown {bot} parameter {key!r}; parameters: "
                                   f"{', '.join(_PARAM_RANGES)}")
        integer, low, low_ok, high = _PARAM_RANGES[key]
        try:
            number = int(text) if integer else float(text)
        except ValueError:
            raise IsmctsParamError(f"{bot} parameter {key}={text!r} is not a number"
                                   + (" (it takes a whole number)" if integer else "")) from None
        if not (math.isfinite(number) and (number >= low if low_ok else number > low)
                and number <= high):
            raise IsmctsParamError(f"{bot} parameter {key}={text}: must be "
                                   f"{'>=' if low_ok else '>'} {low:g} and <= {high:g}")
        values[key] = number
    if "ms" in values and "iterations" not in values:
        values["iterations"] = None
    return replace(SEARCH_BOTS[bot], **values)


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
        """One determinization, drawn with ``rng``."""
        # The talon is popped from its end; index 0 is the face-up trump, drawn last.
        return deal(self.template, self.pool, self.fixed, self.need, self.bottom,
                    rng.getrandbits(31))


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
        #: The exact endgame solver (``solve_nodes``): what it proved stays in its table
        #: for the rest of the game (one strategy per game).
        self._root_solver = Solver(max_nodes=params.solve_nodes)

    def choose(self, obs: dict[str, Any], legal: list[dict[str, Any]],
               rng: random.Random) -> dict[str, Any]:
        """One element of ``legal`` (the same dict object), from ``obs`` alone."""
        self.last_search = None
        if len(legal) == 1 or obs["phase"] == "exchange":
            # The face-up trump is higher than the deck's lowest: always worth taking.
            return next((a for a in legal if a.get("type") == "exchange"), legal[0])
        actions = [action_from_wire(a) for a in legal]
        dealer = Determinizer(self.rules, obs, rng)
        solved = self._solve_root(dealer, actions)
        if solved is not None:
            return legal[actions.index(solved)]
        root_actions = set(actions)
        # Progressive bias toward the greedy heuristic's choice at the root: with few
        # iterations (a short budget on a busy machine) the search plays at least as
        # well as greedy; with many the bias fades (it shrinks as 1/visits).
        hint = actions[next(i for i, a in enumerate(legal) if a is greedy_choose(obs, legal))]
        root = Node(obs["seat"])
        params = self.params
        deadline = None if params.ms is None else time.perf_counter() + params.ms / 1000
        done = 0
        seat = obs["seat"]
        while True:
            if params.iterations is not None and done >= params.iterations:
                break
            if deadline is not None and done and time.perf_counter() >= deadline:
                break
            if params.iterations is not None and not done % EARLY_STOP_EVERY and done and \
                    _decided(root, params.iterations - done):
                break
            done += 1
            g = dealer.deal(rng)
            if g.current_seat != seat or not root_actions <= set(g.legal_actions()):
                continue  # cannot happen for an observation the referee sent; stay safe
            # (the first playout always completes, whatever the time)
            if not iterate(root, g, actions, hint, params.bias, params.c, rng.getrandbits(31),
                           deadline if deadline is not None and done > 1 else 0.0,
                           params.tree_bias, bool(params.greedy_playout)):
                break  # out of time
        best = max(range(len(actions)), key=lambda i: (
            root.children[actions[i]].visits if actions[i] in root.children else -1,
            root.children[actions[i]].reward if actions[i] in root.children else 0.0))
        chosen = root.children.get(actions[best])
        if chosen is not None and chosen.visits:
            self.last_search = (chosen.visits, chosen.reward / chosen.visits)
        return legal[best]

    def _solve_root(self, dealer: Determinizer, actions: list[int]) -> int | None:
        """The solver's action when this seat's position is solvable and the solver, within
        ``solve_nodes``, proves that it wins; in a position it proves drawn or lost, the
        swindle's action (``_swindle``) when there is one, else in a drawn one the
        solver's drawing action; None otherwise (the search decides). With two seats in
        and the talon empty (or holding only the face-up trump, which both seats see),
        the unseen cards are all in the other hand, so the one deal is the position
        itself."""
        if not self.params.solve_nodes or len(dealer.template.talon) > 1:
            return None
        g = dealer.deal(random.Random(0))
        if not solvable(g, face_up_talon=True):
            return None
        try:
            action, value = self._root_solver.best_action(g)
        except SolverLimit:
            return None
        if value != WIN and self.params.swindle:
            swindle = self._swindle(g, actions, value)
            if swindle is not None:
                return swindle
        if value == LOSS:
            return None
        return action if action in actions else None

    def _swindle(self, g: Game, actions: list[int], value: int) -> int | None:
        """In ``g``, a position the solver proved worth ``value`` (a loss or a draw) for
        the seat to move: the action of ``actions`` on whose line a greedy opponent lets
        this seat do better, else None.

        Against perfect play no action does better than ``value``, so nothing is risked
        by playing for a mistake (in a drawn position, among the actions that keep the
        draw); the mistake looked for is the one a sensible player makes, modelled by
        greedy's move. An action's worth is where its line reaches: the opponent
        replying as ``greedy_action`` would, this seat choosing its best at each of its
        next decisions (up to ``swindle`` of them, this one included), until the solver
        proves the position won (1) or, from a lost one, drawn (1/2) for this seat; 0 if
        it never does, and -1 where this seat's own move gives up the draw.
        The depths are tried in turn and the deepest one finished within
        ``SWINDLE_NODES`` solver positions decides: its best action if worth more than
        0. None when none is, or the budget ran out on the first depth: the search (in a
        lost position) or the solver's proved move (in a drawn one) is played then. The
        table the proofs leave is the root solver's, kept for the rest of the game."""
        solver = self._root_solver
        me = g.seat_to_move()
        end = solver.nodes + SWINDLE_NODES

        def worth(pos: Game, decisions: int) -> float:
            # ``pos`` is played on; ``decisions``: this seat's decisions still looked at.
            # Lone actions and the opponent's (greedy) replies are played until the value
            # moves off ``value`` or this seat has a choice to make.
            while True:
                if pos.phase == OVER:
                    reached = terminal_value(pos, me)
                else:
                    legal = pos.legal_actions()
                    if len(legal) == 1:
                        pos.apply_legal(legal[0])
                        continue
                    reached = solver.value(pos, me, max_nodes=max(1, end - solver.nodes))
                if reached != value:
                    return -1.0 if reached < value else (1.0 if reached == WIN else 0.5)
                if pos.phase == OVER:
                    return 0.0
                seat = pos.seat_to_move()
                if seat == me:
                    break
                pos.apply_legal(greedy_action(pos, seat, legal))
            if not decisions:
                return 0.0
            best = -1.0
            for action in legal:
                best = max(best, worth(_after(pos, action), decisions - 1))
                if best == 1.0:
                    break
            return best

        choice = None
        try:
            for depth in range(self.params.swindle):
                worths = [worth(_after(g, a), depth) for a in actions]
                best = max(range(len(actions)), key=worths.__getitem__)
                if worths[best] > 0.0:
                    choice = actions[best]
        except SolverLimit:
            pass  # the deepest finished depth decides
        return choice


def _after(g: Game, action: int) -> Game:
    """A copy of ``g`` with ``action`` applied."""
    child = g.copy()
    child.apply_legal(action)
    return child


def _decided(root: Node, remaining: int) -> bool:
    """Whether ``remaining`` more iterations cannot change the choice (the most visited
    root action): its visits exceed the runner-up's by more than ``remaining``. Stopping
    then saves the time and plays the same move."""
    first = second = 0
    for child in root.children.values():
        v = child.visits
        if v > first:
            first, second = v, first
        elif v > second:
            second = v
    return first - second > remaining


class SearchSeat:
    """One seat's search bot (``ismcts``, ``expert``) over a whole match: a fresh
    ``IsmctsStrategy`` per game, and each decision's generator keyed by (``key``, the
    game's index, the request id) alone. The one way a built-in search decides, in the
    referee's process (``seats/players.py`` ``BuiltinPlayer``) and in a confined process
    (``seats/confined.py``, ``durak-ref bot``): the same key gives the same choices."""

    def __init__(self, params: IsmctsParams) -> None:
        self.params = params
        self.search: IsmctsStrategy | None = None
        self._game: object = None

    def choose(self, key: str, rules: Rules, game: object, index: int, request_id: int,
               obs: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
        """The choice for request ``request_id`` of game ``index`` (``game``: anything
        that is the same object for the whole game and another for the next one;
        ``key``: the seat's, ``"SEED:SEAT NAME"``)."""
        if self.search is None or game is not self._game:  # the table's rules, once per game
            self.search, self._game = IsmctsStrategy(rules, self.params), game
        # Seeded per decision: the choice is a function of (key, game, request id,
        # observation, legal list) alone.
        return self.search.choose(obs, legal, random.Random(f"{key}:{index}:{request_id}"))
