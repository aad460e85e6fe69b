"""The endgame solver is exact: it agrees with plain minimax, and its moves keep what it proved.

Brute force here is minimax over the engine with no table and no pruning, so the two
share only ``legal_actions``/``apply_legal``: the table's keys, its bounds, the move
ordering and the forced-move shortcut are all checked by the agreement.
"""

from __future__ import annotations

import random

import pytest

from referee.bots.fastchoice import greedy_action
from referee.bots.solver import (
    DRAW,
    KEY_FIELDS,
    LOSS,
    UNKEYED_FIELDS,
    WIN,
    Solver,
    SolverLimit,
    solvable,
    terminal_value,
)
from referee.rules import Game, action_str, make_rules
from referee.rules.cards import card_str, deck_cards
from referee.rules.game import OVER, STATE_FIELDS

#: A short stalemate guard for the transfer games: a transfer and a take can bring the
#: same hands back, so only the guard (or the action cap) ends such a game, and plain
#: minimax walks every way round the loop until it does.
SHORT_GUARD = "pickup_draw_limit=3"
#: Every rules option that changes an endgame, each in at least one variant.
VARIANTS = {
    "classic": make_rules("classic"),
    "perevodnoy": make_rules("perevodnoy", [SHORT_GUARD]),
    "perevodnoy_trump": make_rules("perevodnoy_trump", [SHORT_GUARD]),
    "deflection": make_rules("deflection", [SHORT_GUARD]),
    "reflect": make_rules("classic", ["transfer=reflect", SHORT_GUARD]),
    "attack_ranks_two_cards": make_rules("classic", ["throw_in_ranks=attacks", "max_attacks=2"]),
    "defender_loses": make_rules("perevodnoy", ["last_two_out=defender_loses", SHORT_GUARD]),
    "stalemate_after_two_takes": make_rules("classic", ["pickup_draw_limit=2"]),
    "same_rank_lead_any_timing": make_rules("classic", ["lead=same_rank", "throw_in_timing=any"]),
    "action_cap": make_rules("classic", ["action_cap=12"]),
    "first_bout_fairness": make_rules("perevodnoy", ["first_bout_limit=on", "defender_fairness=on",
                                                     SHORT_GUARD]),
    "transfers_and_action_cap": make_rules("perevodnoy", ["action_cap=16"]),
}


def brute_force(g: Game, side: int) -> int:
    """Minimax value of ``g`` for ``side``, every line searched."""
    if g.phase == OVER:
        return terminal_value(g, side)
    values = []
    for action in g.legal_actions():
        child = g.copy()
        child.apply_legal(action)
        values.append(brute_force(child, side))
    return max(values) if g.seat_to_move() == side else min(values)


def small_endgames(rules, count: int, seed: int, max_cards: int = 3):
    """Seeded endgames with up to ``max_cards`` cards a hand: a fresh bout, then a few
    random actions into it (so defending, throw-in and taking positions come too); at
    three seats one of them is out."""
    rng = random.Random(seed)
    deck = deck_cards(rules.deck)
    made = 0
    while made < count:
        cards = rng.sample(deck, 2 * max_cards + 1)
        trump = cards.pop()
        a, b = rng.randint(1, max_cards), rng.randint(1, max_cards)
        three = rng.random() < 0.25
        hands = [" ".join(map(card_str, cards[:a])), " ".join(map(card_str, cards[a:a + b]))]
        out: tuple[int, ...] = ()
        if three:
            hands.insert(rng.randrange(3), "")
            out = (hands.index(""),)
        attacker = rng.choice([s for s in range(len(hands)) if s not in out])
        g = Game.from_position(rules, hands, trump=card_str(trump), attacker=attacker, out=out,
                               first_bout=rng.random() < 0.2)
        for _ in range(rng.randrange(4)):
            if g.is_over:
                break
            legal = g.legal_actions()
            g.apply_legal(legal[rng.randrange(len(legal))])
        if solvable(g):
            made += 1
            yield g


def test_the_key_holds_every_field_the_rules_read_and_says_why_each_other_is_left_out() -> None:
    assert not set(KEY_FIELDS) & set(UNKEYED_FIELDS)
    assert set(KEY_FIELDS) | set(UNKEYED_FIELDS) == set(STATE_FIELDS)


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_solver_agrees_with_brute_force_on_small_endgames(variant: str) -> None:
    rules = VARIANTS[variant]
    solver = Solver()  # one solver for all: its table must not leak between positions
    for g in small_endgames(rules, 300, seed=list(VARIANTS).index(variant)):
        for seat in (s for s in range(g.players) if not g.out[s]):
            assert solver.value(g, seat) == brute_force(g, seat), g
        move = g.seat_to_move()
        for action, value in solver.action_values(g):
            child = g.copy()
            child.apply_legal(action)
            assert value == brute_force(child, move), (g, action)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["classic", "perevodnoy", "defender_loses"])
def test_best_action_keeps_the_value_and_the_line_ends_in_it(variant: str) -> None:
    rules = VARIANTS[variant]
    for g in small_endgames(rules, 100, seed=7, max_cards=4):
        solver = Solver()
        seat = g.seat_to_move()
        action, value = solver.best_action(g)
        assert value == solver.value(g)
        child = g.copy()
        child.apply_legal(action)
        assert brute_force(child, seat) == value
        end = g.copy()
        for a in solver.line(g):
            end.apply_legal(a)
        assert end.is_over and terminal_value(end, seat) == value


def test_explicit_positions_have_their_exact_values() -> None:
    classic = make_rules("classic")
    # A lone trump ace cannot be covered: seat 1 takes it and is left holding cards.
    g = Game.from_position(classic, ["AS", "6H"], trump="7S", attacker=0)
    assert Solver().value(g, 0) == WIN and Solver().value(g, 1) == LOSS
    # 6H covered by 7H: both go out in the same bout, a draw (or the defender's loss).
    g = Game.from_position(classic, ["6H", "7H"], trump="7S", attacker=0)
    assert Solver().value(g, 0) == DRAW
    loses = make_rules("classic", ["last_two_out=defender_loses"])
    g = Game.from_position(loses, ["6H", "7H"], trump="7S", attacker=0)
    assert Solver().value(g, 0) == WIN
    # Perevodnoy: leading 6H lets seat 1 pass it on with 6D, and seat 0 cannot beat 6H
    # with 7C; a lead of 7C instead is taken, and seat 0 goes out first.
    g = Game.from_position(make_rules("perevodnoy"), ["6H 7C 7D", "6D"], trump="AS", attacker=0)
    values = {action_str(a): v for a, v in Solver().action_values(g)}
    assert values["attack 6H"] == LOSS and values["attack 7C"] == WIN
    assert Solver().value(g) == WIN


def test_positions_before_the_endgame_are_refused() -> None:
    g = Game.new(make_rules("classic"), 2, seed=1)
    assert not solvable(g)
    with pytest.raises(ValueError, match="empty talon"):
        Solver().value(g)
    g = Game.from_position(make_rules("classic"), ["6H", "7H", "8H"], trump="7S", attacker=0)
    assert not solvable(g)  # three seats in: the two others' hands are not known apart


def test_a_talon_of_the_face_up_trump_alone_is_solvable_when_asked() -> None:
    # Both seats see the face-up trump: its draw is no chance. Two cards are one too many.
    one = Game.from_position(make_rules("classic"), ["6H 7C", "8H 9C"], trump="7S", talon="7S",
                             attacker=0)
    assert not solvable(one) and solvable(one, face_up_talon=True)
    assert Solver().value(one) in (WIN, DRAW, LOSS)
    two = Game.from_position(make_rules("classic"), ["6H 7C", "8H 9C"], trump="7S",
                             talon="6S 7S", attacker=0)
    assert not solvable(two, face_up_talon=True)


def test_a_spent_budget_raises_and_what_was_proved_stays_true() -> None:
    g = endgame_of_seed(2)
    small = Solver(max_nodes=50)
    with pytest.raises(SolverLimit, match="node budget of 50"):
        small.value(g)
    small.max_nodes = None
    assert small.value(g) == Solver().value(g)


def endgame_of_seed(seed: int, rules=None) -> Game:
    """The first solvable position of a greedy-vs-greedy game dealt from ``seed``."""
    g = Game.new(rules or make_rules("classic"), 2, seed=seed)
    while not solvable(g):
        assert not g.is_over
        g.apply_legal(greedy_action(g, g.seat_to_move(), g.legal_actions()))
    return g


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["classic", "perevodnoy"])
def test_the_solvers_moves_never_lose_a_won_endgame_whatever_the_other_seat_plays(variant: str) -> None:
    rules = VARIANTS[variant]
    rng = random.Random(3)
    checked = 0
    games = list(small_endgames(rules, 40, seed=11, max_cards=5))
    if variant == "classic":  # (whole games' endgames; the transfer game's take too long here)
        games += [endgame_of_seed(seed, rules) for seed in (1, 3, 4, 5, 7)]
    for start in games:
        solver = Solver()
        for seat in (s for s in range(start.players) if not start.out[s]):
            value = solver.value(start, seat)
            for _ in range(5):
                g = start.copy()
                while not g.is_over:
                    legal = g.legal_actions()
                    if g.seat_to_move() == seat:
                        g.apply_legal(solver.best_action(g)[0])
                    else:
                        g.apply_legal(legal[rng.randrange(len(legal))])
                assert terminal_value(g, seat) >= value, start
                checked += 1
    assert checked >= 400
