"""Property tests: seeded random playouts over every preset, table size and deck, checking
the engine's invariants after every action.

- card conservation: hands + talon + table + discard are exactly the deck, no duplicates;
- the legal list is non-empty exactly until the game ends; every legal action applies;
- a random well-formed non-legal action is refused (IllegalAction) and changes nothing;
- every game terminates; replaying the history from ``Game.new(deck=..., dealer=...)``
  reproduces the game;
- a seat's observation does not change when the cards hidden from it are permuted among
  the other hidden places (other seats' unknown cards and the talon below the face-up trump).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rules_testkit import random_rules, snapshot

from referee.rules import (
    PASS,
    PRESETS,
    TAKE,
    TRANSFER,
    Game,
    IllegalAction,
    make_rules,
)
from referee.rules.actions import KIND_NAMES, check_action
from referee.rules.cards import DECK_LOW_RANK, deck_cards, make_card
from support import scaled

TABLES = [(deck, n) for deck in (24, 36, 52) for n in range(2, 7) if n * 6 <= deck]
CONFIGS = [(preset, deck, n) for preset in PRESETS for deck, n in TABLES]
TERMINATIONS = {"normal", "draw", "stalemate", "action_cap"}


# --- invariants ------------------------------------------------------------------------------

def check_conservation(g: Game) -> None:
    every = 0
    for c in deck_cards(g.rules.deck):
        every |= 1 << c
    seen, count = 0, 0
    for h in g.hands:
        seen |= h
        count += h.bit_count()
    for c in g.talon + g.attacks + [c for c in g.covers if c >= 0]:
        seen |= 1 << c
        count += 1
    seen |= g.discard
    count += g.discard.bit_count()
    assert seen == every and count == g.rules.deck, g
    assert len(g.covers) == len(g.attacks)
    if g.talon:
        assert g.talon[0] == g.trump_card


def check_state(g: Game) -> None:
    check_conservation(g)
    acts = g.legal_actions()
    assert (len(acts) > 0) == (not g.is_over) == (g.current_seat is not None)
    assert len(set(acts)) == len(acts)
    assert (g.trump_holder is None) == bool(g.talon)
    if any(g.out):
        assert not g.talon
    for s in range(g.players):
        assert g.known[s] & ~g.hands[s] == 0
        if g.out[s]:
            assert g.hands[s] == 0
            if not g.is_over:
                assert s not in (g.attacker, g.defender) and s not in g.order
    if g.is_over:
        o = g.outcome
        assert o.termination in TERMINATIONS
        assert (o.durak is None) == (o.termination != "normal")
        return
    assert g.outcome is None
    uncovered = g.covers.count(-1)
    assert uncovered <= g.hands[g.defender].bit_count()
    assert len(g.attacks) <= g.limit
    if g.rules.max_attacks is not None:
        assert len(g.attacks) <= g.rules.max_attacks
    if g.first_bout and g.rules.first_bout_limit:
        assert len(g.attacks) <= 5
    phase = ("exchange", "attack", "defend", "throw_in")[g.phase]
    if phase == "attack":
        if g.rules.lead == "same_rank" and g.attacks:
            # a lead of several cards in progress: all of one rank, nothing covered
            assert len({c >> 2 for c in g.attacks}) == 1 and set(g.covers) == {-1}
            assert g.current_seat == g.attacker
        else:
            assert not g.attacks
            if g.talon:
                assert all(h.bit_count() >= 6 for h in g.hands)
    if phase == "throw_in":
        assert g.current_seat != g.defender
    # forced moves: exactly when pass or take is the only action
    forced = g.forced_action()
    if g.rules.ask_forced or phase in ("attack", "exchange"):
        assert forced is None
    else:
        assert forced == (acts[0] if len(acts) == 1 and acts[0] in (PASS, TAKE) else None)
    assert all(check_action(a) == a for a in acts)


def random_wellformed(rng: random.Random) -> int:
    kind = rng.randrange(len(KIND_NAMES))
    if kind >= TAKE:
        return kind
    card = rng.randrange(52)
    slot = rng.randrange(7) if kind == 1 else 0
    return kind | card << 4 | slot << 10


def check_illegal_refused(g: Game, rng: random.Random) -> None:
    legal = set(g.legal_actions())
    for _ in range(20):
        a = random_wellformed(rng)
        if a not in legal:
            break
    else:
        return
    before = snapshot(g)
    try:
        g.apply(a)
    except IllegalAction as exc:
        assert str(exc)
    else:
        raise AssertionError(f"{a} was accepted but is not in legal_actions")
    assert g.illegal_reason(a)
    assert snapshot(g) == before


def check_every_legal_action_applies(g: Game) -> None:
    for a in g.legal_actions():
        c = g.copy()
        c.apply(a)
        assert c.history[-1] == a
        check_conservation(c)


def permute_hidden(g: Game, seat: int, rng: random.Random) -> Game:
    """A copy of ``g`` with the cards hidden from ``seat`` shuffled among the places they
    can be: other seats' unknown cards (hand sizes kept) and the talon below the face-up trump."""
    c = g.copy()
    pool = []
    for t in range(g.players):
        if t != seat:
            pool += [x for x in range(52) if (g.hands[t] & ~g.known[t]) >> x & 1]
    pool += g.talon[1:]
    mask = 0
    for x in pool:
        mask |= 1 << x
    assert mask == g.hidden_from(seat), "hidden_from disagrees with the hidden places"
    rng.shuffle(pool)
    k = 0
    for t in range(g.players):
        if t != seat:
            n = (g.hands[t] & ~g.known[t]).bit_count()
            h = g.hands[t] & g.known[t]
            for x in pool[k:k + n]:
                h |= 1 << x
            c.hands[t] = h
            k += n
    if g.talon:
        c.talon = [g.talon[0]] + pool[k:]
    check_conservation(c)
    return c


def check_hidden_information(g: Game, rng: random.Random) -> None:
    for seat in range(g.players):
        p = permute_hidden(g, seat, rng)
        assert p.observe(seat) == g.observe(seat)
        if g.current_seat == seat:
            assert sorted(p.legal_actions()) == sorted(g.legal_actions())
            assert p.forced_action() == g.forced_action()


def check_replay(g: Game) -> None:
    r = Game.new(g.rules, g.players, deck=g.deck, dealer=g.dealer)
    for a in g.history:
        r.apply(a)
    assert r.outcome == g.outcome
    assert [r.observe(s) for s in range(g.players)] == [g.observe(s) for s in range(g.players)]


def playout(rules, players: int, seed: int, *, full: bool) -> Game:
    rng = random.Random(seed)
    g = Game.new(rules, players, seed=seed, dealer=rng.randrange(players))
    check_state(g)
    steps = 0
    while not g.is_over:
        if full:
            check_illegal_refused(g, rng)
            check_every_legal_action_applies(g)
            if rng.random() < 0.3:
                check_hidden_information(g, rng)
        g.apply(rng.choice(g.legal_actions()))
        steps += 1
        assert steps <= rules.action_cap
        check_state(g)
    check_illegal_refused(g, rng)
    check_replay(g)
    return g


# --- the tests ---------------------------------------------------------------------------------

# The long loops are shortened for mutation runs only (support.scaled): the seeds, and
# with them the number of occurrences a loop must see.
SEEDS_PER_CONFIG = scaled(30)

@pytest.mark.slow
@settings(max_examples=scaled(300), deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1), config=st.sampled_from(CONFIGS))
def test_random_playouts_full_checks(seed, config):
    preset, deck, players = config
    rules = random_rules(random.Random(seed), preset, deck, players)
    playout(rules, players, seed, full=True)


@pytest.mark.slow
def test_many_playouts_every_preset_table_and_deck():
    """A plain loop: every preset x every table that fits, with default and random options."""
    seen = {}
    for preset, deck, players in CONFIGS:
        for seed in range(SEEDS_PER_CONFIG):
            if seed % 2:
                rules = random_rules(random.Random(seed), preset, deck, players)
            else:
                rules = make_rules(preset, {"deck": str(deck)})
            g = playout(rules, players, seed * 1000 + players, full=False)
            seen[g.outcome.termination] = seen.get(g.outcome.termination, 0) + 1
    assert sum(seen.values()) == SEEDS_PER_CONFIG * len(CONFIGS)
    if SEEDS_PER_CONFIG == 30:  # the full loop; a shortened one misses the rare draw
        # the loop reaches every kind of ending
        assert {"normal", "draw", "stalemate", "action_cap"} <= set(seen)


@pytest.mark.slow
def test_transfer_and_show_actions_occur_in_random_play():
    kinds = set()
    for seed in range(scaled(200)):
        rules = make_rules("perevodnoy_trump")
        g = playout(rules, 2 + seed % 5, seed, full=False)
        kinds |= {a & 15 for a in g.history}
    assert kinds == set(range(7))  # everything but exchange (off in this preset)


@pytest.mark.slow
def test_reflections_occur_in_random_play_and_reverse_the_direction():
    reversed_seen = 0
    for seed in range(scaled(100)):
        rules = make_rules("classic", ["transfer=reflect"])
        rng = random.Random(seed)
        g = Game.new(rules, 3 + seed % 4, seed=seed)
        while not g.is_over:
            action = rng.choice(g.legal_actions())
            if action & 15 == TRANSFER:  # a reflection
                attacker, direction = g.attacker, g.direction
                g.apply(action)
                assert g.direction == -direction and g.defender == attacker
                reversed_seen += 1
            else:
                g.apply(action)
            check_state(g)
            assert g.observe(0)["direction"] == ("clockwise" if g.direction > 0 else "counter_clockwise")
        check_replay(g)
    assert reversed_seen > scaled(20)


@pytest.mark.slow
def test_several_card_leads_and_early_throw_ins_occur_in_random_play():
    """lead=same_rank leads of two or more cards, and throw-ins while a card is uncovered."""
    multi_leads = early = 0
    for seed in range(scaled(150)):
        rules = make_rules("perevodnoy", ["lead=same_rank", "throw_in_timing=any"])
        rng = random.Random(seed)
        g = Game.new(rules, 2 + seed % 5, seed=seed)
        while not g.is_over:
            action = rng.choice(g.legal_actions())
            if g.phase == 1 and g.attacks and action & 15 == 0:
                multi_leads += 1
            if action & 15 == 2 and -1 in g.covers and not g.taking:
                early += 1
            g.apply(action)
            check_state(g)
        check_replay(g)
    assert multi_leads > scaled(20) and early > scaled(20)


@pytest.mark.slow
def test_exchange_occurs_in_random_play():
    n = 0
    for seed in range(scaled(100)):
        g = Game.new(make_rules("classic", ["trump_exchange=on"]), 3, seed=seed)
        if g.observe(0)["phase"] == "exchange":
            n += 1
            low = make_card(DECK_LOW_RANK[36], g.trump_suit)
            assert g.hands[g.current_seat] >> low & 1
            playout(g.rules, 3, seed, full=True)
    assert n > scaled(10)


@pytest.mark.slow
def test_quick_playouts_terminate_conserve_cards_and_replay():
    """Many more games, checked only at the end (speed)."""
    for seed in range(scaled(2500)):
        preset, deck, players = CONFIGS[seed % len(CONFIGS)]
        rules = random_rules(random.Random(-seed), preset, deck, players)
        rng = random.Random(seed)
        g = Game.new(rules, players, seed=f"quick:{seed}", dealer=rng.randrange(players))
        while not g.is_over:
            g.apply_legal(rng.choice(g.legal_actions()))
        assert len(g.history) <= rules.action_cap
        check_state(g)
        if seed % 3 == 0:
            check_replay(g)
