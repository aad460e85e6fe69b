"""The inner loop of the search bots (``builtin:ismcts``, ``builtin:expert``), compiled.

One search iteration (referee/bots/ismcts.py says what the search is) deals a
determinization, descends the shared tree, plays the game out and backs up the result.
It runs thousands of times per decision and is nearly all of a search's time, so it
lives in this module of the hot path (referee/native/hotpath.py), with its own small
random generator (a linear congruential one: a few integer operations per draw, seeded
by the search's ``random.Random``, so a seeded search stays reproducible).

Two playout policies (the search's ``greedy_playout`` picks). With it, every seat plays
the move ``greedy_action`` (the built-in ``greedy``) would play with the cards of the deal
being simulated, and nothing is random: a playout is a function of its deal. Without it,
the cheap policy, for the seat to move:

- a lone action is played;
- one move in ten is a uniform random legal action (the playouts must not all agree);
- attack: the cheapest card (rank, trumps counted 20 ranks higher);
- defence: cover every attack, cheapest cover first, when each can be covered and the
  cheapest is below a trump queen while the talon lasts; else transfer if it can, else
  take;
- throw-in: the cheapest card that is not a trump nor a ten or higher while the talon
  lasts (any card once it is empty), else pass.

The greedy playouts cost about a fifth more CPU per iteration; the expert plays with
them, ``builtin:ismcts`` keeps the cheap policy (docs/STRENGTH.md has what each gave).

(Valuing a playout's endgame with the exact solver, referee/bots/solver.py, was tried
and dropped: a few hundred solver positions cost as much as about a hundred playouts,
and a 150-iteration search with 300 of them per playout ran many times slower.)
"""

from __future__ import annotations

import math
import time

from ..rules.actions import ATTACK, COVER, PASS, TAKE, THROW_IN, TRANSFER
from ..rules.game import DEFEND_PHASE, OVER, Game
from .fastchoice import greedy_action

#: The generator: state' = (A * state + C) mod 2**31; a draw is the state's top 15 bits.
_LCG_A = 1103515245
_LCG_C = 12345
_LCG_MASK = 0x7FFFFFFF


def _next(state: int) -> int:
    """The generator's next state."""
    return (_LCG_A * state + _LCG_C) & _LCG_MASK


class Node:
    """A node of the shared tree: reached by an action chosen by ``seat``."""

    def __init__(self, seat: int) -> None:
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.avail = 0  #: iterations in which its action was legal (availability count)
        self.reward = 0.0
        self.seat = seat

    def ucb(self, c: float) -> float:
        """UCB1 with the availability count in place of the parent's visits."""
        return self.reward / self.visits + c * math.sqrt(math.log(self.avail) / self.visits)


def deal(template: Game, pool: list[int], fixed: list[int], need: list[int],
         bottom: list[int], seed: int) -> Game:
    """A copy of ``template`` with ``pool`` (the unseen cards) shuffled by a generator
    seeded with ``seed``, ``need[s]`` of them added to each seat's ``fixed`` hand mask,
    the rest under ``bottom`` as the talon (popped from its end)."""
    g = template.copy()
    cards = pool[:]
    state = seed & _LCG_MASK
    for i in range(len(cards) - 1, 0, -1):
        state = _next(state)
        j = (state >> 8) % (i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    hands = fixed[:]
    for s in range(len(need)):
        for _ in range(need[s]):
            hands[s] |= 1 << cards.pop()
    g.hands = hands
    g.talon = bottom + cards
    return g


def iterate(root: Node, g: Game, root_actions: list[int], hint: int, bias: float, c: float,
            seed: int, deadline: float, tree_bias: float, greedy_playout: bool) -> bool:
    """One iteration on the determinization ``g`` (played on), whose seat to move is the
    root's: descend from ``root`` over the actions legal in ``g`` (at the root only those
    of ``root_actions``, the request's list) by UCB1 (``hint``'s value raised by
    ``bias / visits`` at the root; below it, with ``tree_bias`` > 0, the value of the
    move ``greedy_action`` would play in ``g`` raised by ``tree_bias / visits``), expand
    a random untried action, play out (``playout``, greedy's moves with
    ``greedy_playout``) and back up. False, with nothing backed up, when the playout passed
    ``deadline`` (``playout``)."""
    node = root
    path: list[Node] = []
    state = seed & _LCG_MASK
    first = True
    while g.phase != OVER:
        legal = g.legal_actions()
        if first:
            # The request's list is the truth; a determinization agrees with it.
            legal = [a for a in legal if a in root_actions]
            first = False
        if len(legal) == 1 and (legal[0] == PASS or legal[0] == TAKE):
            g.apply_legal(legal[0])  # forced: no node (the referee would not ask)
            continue
        seat = g.seat_to_move()
        children = node.children
        untried: list[int] = []
        for a in legal:
            child = children.get(a)
            if child is None:
                untried.append(a)
            else:
                child.avail += 1
        if untried:
            state = _next(state)
            a = untried[(state >> 8) % len(untried)]
            child = Node(seat)
            child.avail = 1
            children[a] = child
            g.apply_legal(a)
            path.append(child)
            break
        best, best_value = legal[0], -1e300
        # One tree serves every determinization, so a node's UCB values mix the deals of
        # the mover's own hidden cards: alone they would have another seat choose as if
        # it did not know its hand. Greedy's move is computed from this deal's hand: the
        # lean makes each seat play, early on, what a seat holding these cards would.
        if node is root:
            lean, weight = hint, bias
        elif tree_bias > 0.0:
            lean, weight = greedy_action(g, seat, legal), tree_bias
        else:
            lean, weight = -1, 0.0
        for a in legal:
            child = children[a]
            value = child.ucb(c)
            if a == lean:
                value += weight / child.visits
            if value > best_value:
                best, best_value = a, value
        node = children[best]
        g.apply_legal(best)
        path.append(node)
    state = _next(state)
    durak = playout(g, state, deadline, greedy_playout)
    if durak == -2:
        return False
    for n in path:
        if durak == -1:
            n.reward += 0.5
        elif n.seat != durak:
            n.reward += 1.0
        n.visits += 1
    return True


def _cost(card: int, trump_suit: int) -> int:
    """What a card is worth keeping: its rank, and 20 more for a trump."""
    return (card >> 2) + (20 if card & 3 == trump_suit else 0)


def playout(g: Game, seed: int, deadline: float, greedy: bool = False) -> int:
    """Play ``g`` (played on) to its end by the cheap policy above, drawing from a
    generator seeded by ``seed``; with ``greedy``, by greedy's moves (``seed`` unused).
    Returns the durak's seat, -1 for a draw, or -2 when ``deadline``
    (``time.perf_counter``; 0: none) passed first: the playout is void."""
    ts = g.trump_suit
    state = seed & _LCG_MASK
    steps = 0
    while g.phase != OVER:
        steps += 1
        if deadline > 0.0 and steps & 15 == 0 and time.perf_counter() >= deadline:
            return -2
        legal = g.legal_actions()
        if len(legal) == 1:
            g.apply_legal(legal[0])
            continue
        if greedy:
            g.apply_legal(greedy_action(g, g.seat_to_move(), legal))
            continue
        state = _next(state)
        draw = state >> 16
        if draw % 10 == 0:
            g.apply_legal(legal[(draw // 10) % len(legal)])
            continue
        kind0 = legal[0] & 15
        if kind0 == ATTACK:
            g.apply_legal(_cheapest(legal, ts, -1))
            continue
        if g.phase == DEFEND_PHASE:
            g.apply_legal(_defence(g, legal, ts))
            continue
        # throw in or pass
        best, best_cost = PASS, 1 << 30
        for a in legal:
            if a & 15 == THROW_IN:
                card = a >> 4 & 63
                if g.talon and (card & 3 == ts or card >> 2 >= 10):
                    continue
                cost = _cost(card, ts)
                if cost < best_cost:
                    best, best_cost = a, cost
        g.apply_legal(best)
    outcome = g.outcome
    if outcome is None or outcome.durak is None:
        return -1
    return outcome.durak


def _cheapest(legal: list[int], ts: int, kind: int) -> int:
    """The action of ``legal`` (of kind ``kind``; -1: any) whose card costs least; the
    first such. The caller knows there is one."""
    best, best_cost = -1, 1 << 30
    for a in legal:
        if kind >= 0 and a & 15 != kind:
            continue
        cost = _cost(a >> 4 & 63, ts)
        if cost < best_cost:
            best, best_cost = a, cost
    return best


def _defence(g: Game, legal: list[int], ts: int) -> int:
    """The policy's defence: see the module docstring."""
    slots = 0
    best, best_cost = -1, 1 << 30
    transfer = -1
    for a in legal:
        kind = a & 15
        if kind == COVER:
            slots |= 1 << (a >> 10)
            cost = _cost(a >> 4 & 63, ts)
            if cost < best_cost:
                best, best_cost = a, cost
        elif kind == TRANSFER and transfer < 0:
            transfer = a
    uncovered = 0
    for c in g.covers:
        if c < 0:
            uncovered += 1
    if best >= 0 and slots.bit_count() == uncovered and not (g.talon and best_cost >= 30):
        return best  # below a trump queen (rank 10 + 20) while the talon lasts
    return transfer if transfer >= 0 else TAKE
