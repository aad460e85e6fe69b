"""``builtin:expert``: ismcts with a larger budget and the exact endgame solver at the root.

What it must do: find the solver's move in a won endgame and win it; in a lost or drawn
endgame, play for the mistake greedy's reply makes (the swindle), never giving up a draw;
play out with greedy's moves when asked (nothing random then); take its parameters
with the search bots' grammar (and refuse bad ones as the user's error); and decide from
its seat's observation alone: a game whose hidden cards are dealt differently, with the
same observation for the seat, gets the same decision.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.bots.fastchoice import greedy_action
from referee.bots.ismcts import SEARCH_BOTS, IsmctsParamError, IsmctsStrategy, parse_params
from referee.bots.searchcore import playout
from referee.bots.solver import DRAW, LOSS, WIN, Solver, solvable
from referee.rules import Game, action_to_wire, make_rules
from referee.rules.actions import action_str
from referee.rules.cards import card_str, deck_cards, parse_card
from referee.seats.players import BUILTINS, BotSpecError, parse_bot_spec

CLASSIC = make_rules("classic")


def won_endgame() -> Game:
    """Seat 1 attacks with 6C 7C QC KC (clubs are trumps) against JC AC AD AH, the talon
    empty: only the queen of trumps wins (greedy's low 6C loses against best defence)."""
    return Game.from_position(CLASSIC, ["JC AC AD AH", "6C 7C QC KC"], trump="7C", talon="",
                              attacker=1)


def test_the_won_endgame_has_one_winning_move_and_greedy_misses_it() -> None:
    g = won_endgame()
    values = {action_str(a): v for a, v in Solver().action_values(g)}
    assert values == {"attack 6C": -1, "attack 7C": -1, "attack QC": WIN, "attack KC": -1}
    assert action_str(greedy_action(g, 1, g.legal_actions())) == "attack 6C"


@pytest.mark.parametrize("seed", range(3))
def test_the_expert_plays_the_solvers_winning_move_and_wins_against_best_defence(seed: int) -> None:
    g = won_endgame()
    # Few iterations: the move comes from the solver, not from a lucky search.
    expert = IsmctsStrategy(CLASSIC, parse_params({"iterations": "5"}, "expert"))
    defender = Solver()
    first = True
    while not g.is_over:
        legal = g.legal_actions()
        seat = g.seat_to_move()
        if seat == 1:
            wire = [action_to_wire(a) for a in legal]
            answer = expert.choose(g.observe(1), wire, random.Random(seed))
            action = legal[wire.index(answer)]
            if first:
                assert action_str(action) == "attack QC"
                first = False
        else:
            action = defender.best_action(g)[0]
        g.apply_legal(action)
    assert g.outcome is not None and g.outcome.durak == 0


def test_without_the_solver_budget_the_root_solver_is_not_asked() -> None:
    params = parse_params({"solve_nodes": "0"}, "expert")
    assert params.solve_nodes == 0
    search = IsmctsStrategy(CLASSIC, params)
    g = won_endgame()
    search.choose(g.observe(1), [action_to_wire(a) for a in g.legal_actions()], random.Random(0))
    assert search._root_solver.nodes == 0


# ------------------------------------------------------------------ greedy playouts


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_a_greedy_playout_is_the_game_greedy_plays_at_every_seat(players: int) -> None:
    for seed in range(10):
        g = _play_to_decision(seed, players, steps=seed * 3)
        expected = g.copy()
        while not expected.is_over:
            expected.apply_legal(greedy_action(expected, expected.seat_to_move(), expected.legal_actions()))
        assert expected.outcome is not None
        durak = -1 if expected.outcome.durak is None else expected.outcome.durak
        # Nothing random: every generator seed gives the same game.
        assert {playout(g.copy(), s, 0.0, greedy=True) for s in (1, 2, 99)} == {durak}


# ------------------------------------------------------------------ the swindle


def lost_endgame() -> Game:
    """Seat 0 leads from 8D 8S 6H against TH 8H TD, hearts trumps, the talon empty: lost
    against best defence whatever it leads. Led 6H, greedy covers with its cheapest
    trump 8H, and seat 0 is no longer lost (a draw at least); led 8D (greedy's own
    lead: cover TD) or 8S (the search's choice: cover 8H), it still is."""
    return Game.from_position(CLASSIC, ["8D 8S 6H", "TH 8H TD"], trump="9H", attacker=0)


def _after_greedy_replies(g: Game, action: int, seat: int) -> Game:
    """``g`` after ``action``, then the other seat's greedy moves until ``seat`` decides."""
    h = g.copy()
    h.apply_legal(action)
    while not h.is_over and h.seat_to_move() != seat:
        h.apply_legal(greedy_action(h, h.seat_to_move(), h.legal_actions()))
    return h


def test_the_lost_endgame_has_one_lead_on_which_greedy_goes_wrong() -> None:
    g = lost_endgame()
    assert Solver().value(g, 0) == LOSS
    after = {action_str(a): Solver().value(_after_greedy_replies(g, a, 0), 0)
             for a in g.legal_actions()}
    assert after == {"attack 6H": 0, "attack 8D": LOSS, "attack 8S": LOSS}


@pytest.mark.parametrize("seed", range(3))
def test_in_a_lost_endgame_the_expert_plays_for_greedys_mistake(seed: int) -> None:
    g = lost_endgame()
    wire = [action_to_wire(a) for a in g.legal_actions()]

    def lead(spec: dict[str, str]) -> str:
        bot = IsmctsStrategy(CLASSIC, parse_params(spec, "expert"))
        return action_str(g.legal_actions()[wire.index(bot.choose(g.observe(0), wire, random.Random(seed)))])

    assert lead({}) == "attack 6H"
    assert lead({"iterations": "5"}) == "attack 6H"  # the swindle's, not the search's
    assert lead({"swindle": "0"}) == "attack 8S"


def drawn_endgame() -> Game:
    """Seat 0 leads from 8C 6H 9D against TC KD JS, hearts trumps, the talon empty: a draw
    against best defence. Led 6H, it is lost; led 8C (greedy's lead), still a draw after
    greedy's reply; led 9D, greedy's reply loses the draw, and seat 0 wins."""
    return Game.from_position(CLASSIC, ["8C 6H 9D", "TC KD JS"], trump="8H", attacker=0)


def test_in_a_drawn_endgame_the_expert_keeps_the_draw_and_plays_for_the_win() -> None:
    g = drawn_endgame()
    assert Solver().value(g, 0) == DRAW
    values = {action_str(a): v for a, v in Solver().action_values(g)}
    assert values == {"attack 6H": LOSS, "attack 8C": DRAW, "attack 9D": DRAW}
    after = {action_str(a): Solver().value(_after_greedy_replies(g, a, 0), 0)
             for a in g.legal_actions()}
    assert after == {"attack 6H": LOSS, "attack 8C": DRAW, "attack 9D": WIN}
    wire = [action_to_wire(a) for a in g.legal_actions()]
    for seed in range(3):
        bot = IsmctsStrategy(CLASSIC, parse_params({}, "expert"))
        choice = g.legal_actions()[wire.index(bot.choose(g.observe(0), wire, random.Random(seed)))]
        assert action_str(choice) == "attack 9D"
        plain = IsmctsStrategy(CLASSIC, parse_params({"swindle": "0"}, "expert"))
        choice = g.legal_actions()[wire.index(plain.choose(g.observe(0), wire, random.Random(seed)))]
        assert values[action_str(choice)] == DRAW  # the solver's drawing move


def _random_lost_endgame(rng: random.Random) -> Game | None:
    """Three cards a seat, seat 0 to lead, the talon empty: a position lost for seat 0, or None."""
    cards = deck_cards(36)
    rng.shuffle(cards)
    hands = [" ".join(card_str(c) for c in cards[:3]), " ".join(card_str(c) for c in cards[3:6])]
    g = Game.from_position(CLASSIC, hands, trump=card_str(cards[6]), attacker=0)
    return g if Solver().value(g, 0) == LOSS else None


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_a_one_decision_swindle_finds_a_way_out_exactly_when_one_exists(seed: int) -> None:
    # The oracle: an action lets seat 0 out when, after it and greedy's replies, the
    # solver proves seat 0 not lost. swindle=1 looks at exactly that.
    rng = random.Random(seed)
    params = parse_params({"iterations": "5", "swindle": "1"}, "expert")
    checked = outs = 0
    while checked < 40:
        g = _random_lost_endgame(rng)
        if g is None:
            continue
        checked += 1
        legal = g.legal_actions()
        ways_out = {a for a in legal if Solver().value(_after_greedy_replies(g, a, 0), 0) != LOSS}
        bot = IsmctsStrategy(CLASSIC, params)
        choice = bot._swindle(g.copy(), legal, LOSS)
        if ways_out:
            outs += 1
            assert choice in ways_out
        else:
            assert choice is None
    assert 0 < outs < checked  # the sample holds positions of both kinds


# ------------------------------------------------------------------ parameters


def test_expert_defaults_are_ismcts_with_a_bigger_budget_the_greedy_lean_and_the_solver() -> None:
    ismcts, expert = SEARCH_BOTS["ismcts"], SEARCH_BOTS["expert"]
    assert parse_params({}, "expert") == expert
    assert expert.iterations is not None and ismcts.iterations is not None
    assert expert.iterations > ismcts.iterations
    assert expert.solve_nodes > 0 and ismcts.solve_nodes == 0
    assert expert.tree_bias > 0 and ismcts.tree_bias == 0
    assert (expert.greedy_playout, ismcts.greedy_playout) == (1, 0)
    assert expert.swindle > 0 and ismcts.swindle == 0
    assert (expert.c, expert.bias) == (ismcts.c, ismcts.bias)
    assert "expert" in BUILTINS


def test_expert_parameters_override_its_defaults() -> None:
    p = parse_params({"iterations": "200", "solve_nodes": "50", "c": "0.5"}, "expert")
    assert (p.iterations, p.solve_nodes, p.c, p.ms) == (200, 50, 0.5, None)
    timed = parse_params({"ms": "30"}, "expert")
    assert (timed.iterations, timed.ms, timed.solve_nodes) == (None, 30.0, SEARCH_BOTS["expert"].solve_nodes)
    assert parse_params({"tree_bias": "0"}, "expert").tree_bias == 0
    assert parse_params({"swindle": "0", "greedy_playout": "0"}, "expert").swindle == 0
    spec = parse_bot_spec("deep=builtin:expert:iterations=300,solve_nodes=100")
    assert (spec.name, spec.argv) == ("deep", ("expert", "iterations=300", "solve_nodes=100"))


@pytest.mark.parametrize(("items", "message"), [
    ({"depth": "3"}, "unknown expert parameter 'depth'; parameters: iterations, ms, c, bias, "
                     "solve_nodes, tree_bias, greedy_playout, swindle"),
    ({"greedy_playout": "2"}, "expert parameter greedy_playout=2: must be >= 0 and <= 1"),
    ({"swindle": "7"}, "expert parameter swindle=7: must be >= 0 and <= 6"),
    ({"solve_nodes": "-1"}, "expert parameter solve_nodes=-1: must be >= 0"),
    ({"tree_bias": "-1"}, "expert parameter tree_bias=-1: must be >= 0"),
    ({"solve_nodes": "1.5"}, "expert parameter solve_nodes='1.5' is not a number (it takes a whole number)"),
    ({"iterations": "0"}, "expert parameter iterations=0: must be > 0"),
    ({"c": "nan"}, "expert parameter c=nan: must be > 0"),
])
def test_bad_expert_parameters_are_refused_by_name(items: dict[str, str], message: str) -> None:
    with pytest.raises(IsmctsParamError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_params(items, "expert")


def test_a_bad_expert_spec_is_the_users_error_when_the_spec_is_read() -> None:
    with pytest.raises(BotSpecError, match="builtin:expert:solve_nodes=x.*not a number"):
        parse_bot_spec("builtin:expert:solve_nodes=x")
    with pytest.raises(BotSpecError, match="expected KEY=VALUE"):
        parse_bot_spec("builtin:expert:fast")


# ------------------------------------------------------------------ no cheating


def _play_to_decision(seed: int, players: int, steps: int) -> Game:
    """A classic game of ``players`` seats, greedy at every seat, after ``steps`` decisions."""
    g = Game.new(CLASSIC, players, seed=f"expert-view-{seed}")
    asked = 0
    while not g.is_over and asked < steps:
        legal = g.legal_actions()
        if len(legal) > 1:
            asked += 1
        g.apply_legal(greedy_action(g, g.seat_to_move(), legal))
    return g


def _redeal_hidden(g: Game, seat: int, rng: random.Random) -> Game:
    """A copy of ``g`` in which the cards ``seat`` cannot place (the other hands' cards
    beyond those publicly known, and the talon under the face-up trump) are dealt again
    at random into the same places: every other seat keeps its hand size and its known
    cards, the face-up trump stays at the talon's bottom."""
    h = g.copy()
    bottom = h.talon[:1]
    pool = list(h.talon[1:])
    free = [0] * h.players
    for s in range(h.players):
        if s == seat:
            continue
        known = h.known[s]
        for c in range(64):
            if h.hands[s] >> c & 1 and not known >> c & 1:
                pool.append(c)
                free[s] += 1
    rng.shuffle(pool)
    hands = list(h.hands)
    for s in range(h.players):
        if s != seat:
            hands[s] &= h.known[s]
            for _ in range(free[s]):
                hands[s] |= 1 << pool.pop()
    h.hands = hands
    h.talon = bottom + pool
    return h


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.sampled_from([2, 3, 4]), steps=st.integers(0, 40),
       redeal=st.integers(0, 1000))
def test_the_expert_decides_the_same_whatever_the_hidden_cards(seed: int, players: int, steps: int,
                                                               redeal: int) -> None:
    g = _play_to_decision(seed, players, steps)
    if g.is_over or len(g.legal_actions()) < 2:
        return
    seat = g.seat_to_move()
    other = _redeal_hidden(g, seat, random.Random(redeal))
    assert other.observe(seat) == g.observe(seat)
    wire = [action_to_wire(a) for a in g.legal_actions()]
    assert wire == [action_to_wire(a) for a in other.legal_actions()]
    params = parse_params({"iterations": "40"}, "expert")
    a = IsmctsStrategy(CLASSIC, params).choose(g.observe(seat), wire, random.Random(seed))
    b = IsmctsStrategy(CLASSIC, params).choose(other.observe(seat), wire, random.Random(seed))
    assert a == b


def test_the_redeal_changes_hidden_cards_only() -> None:
    g = _play_to_decision(3, 3, 5)
    seat = g.seat_to_move()
    others = [_redeal_hidden(g, seat, random.Random(k)) for k in range(20)]
    assert any(o.hands != g.hands or o.talon != g.talon for o in others)
    for o in others:
        assert o.hands[seat] == g.hands[seat]
        assert [h.bit_count() for h in o.hands] == [h.bit_count() for h in g.hands]
        assert o.talon[:1] == g.talon[:1] == [parse_card(g.observe(seat)["trump"])]


def test_with_only_the_face_up_trump_left_the_expert_still_solves_the_endgame() -> None:
    # Both seats see the face-up 9S: the deal is known, its draw is no chance.
    g = Game.from_position(CLASSIC, ["6C 7C QC KC TH", "JC AC AD AH 6H"], trump="9S",
                           talon="9S", attacker=1)
    assert not solvable(g) and solvable(g, face_up_talon=True)
    action, value = Solver().best_action(g)
    assert value != LOSS
    expert = IsmctsStrategy(CLASSIC, parse_params({"iterations": "5"}, "expert"))
    wire = [action_to_wire(a) for a in g.legal_actions()]
    answer = expert.choose(g.observe(1), wire, random.Random(0))
    assert expert._root_solver.nodes > 0
    assert answer == action_to_wire(action)
