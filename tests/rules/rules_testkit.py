"""Helpers for the rules tests: readable legal-move sets, explicit deck orders, snapshots."""

from __future__ import annotations

import random
from typing import Any

from referee.rules import Game, action_str, make_rules, parse_action, parse_card
from referee.rules.cards import deck_cards
from referee.rules.game import STATE_FIELDS


def legal(g: Game) -> set[str]:
    """The current seat's legal actions in text form."""
    acts = g.legal_actions()
    out = {action_str(a) for a in acts}
    assert len(out) == len(acts), f"duplicate legal actions: {acts}"
    return out


def play(g: Game, *texts: str) -> Game:
    """Apply actions given in text form, each checked by ``apply``."""
    for t in texts:
        g.apply(parse_action(t))
    return g


def hand(g: Game, seat: int) -> set[str]:
    return set(g.observe(seat)["hand"])


def cards(text: str) -> set[str]:
    return set(text.split())


def table(g: Game) -> str:
    """The table in from_position's notation, e.g. ``"6S/7S 6H/--"``."""
    return " ".join(f"{a}/{c or '--'}" for a, c in g.observe(0)["table"])


def deck_for(size: int, hands: list[str], face_up: str | None = None, talon: str = "",
             dealer: int | None = None) -> list[int]:
    """An explicit deck order that deals ``hands`` (six cards each) with ``dealer``
    (default: the last seat), turns ``face_up``, and puts ``talon`` (from the top) next;
    the remaining cards follow in index order, at the bottom of the talon."""
    n = len(hands)
    dealer = n - 1 if dealer is None else dealer
    per_seat = [[parse_card(c) for c in h.split()] for h in hands]
    assert all(len(h) == 6 for h in per_seat)
    deck: list[int] = []
    for i in range(6 * n):
        seat = (dealer + 1 + i) % n
        deck.append(per_seat[seat][i // n])
    if face_up is not None:
        deck.append(parse_card(face_up))
    deck += [parse_card(c) for c in talon.split()]
    deck += [c for c in deck_cards(size) if c not in deck]
    assert sorted(deck) == deck_cards(size)
    return deck


def snapshot(g: Game) -> dict[str, Any]:
    """Every field of the game (lists copied), to check that nothing changed."""
    return {name: (list(v) if isinstance(v, list) else v)
            for name in STATE_FIELDS for v in [getattr(g, name)]}


def views(g: Game) -> list[dict[str, Any]]:
    return [g.observe(s) for s in range(g.players)]


def random_rules(rng: random.Random, preset: str, deck: int, players: int):
    """The preset on the deck, with a random handful of other options changed."""
    choices = {
        "trump_exchange": ["on", "off", f"seats:{rng.randrange(players)}"],
        "draw_others": ["clockwise", "counter_clockwise"],
        "throw_in_order": ["clockwise", "counter_clockwise"],
        "exchange_rank": ["lowest", "T"] + (["6"] if deck >= 36 else []),
        "defender_fairness": ["on", "off"],
        "lead": ["one", "same_rank"],
        "throw_in_timing": ["covered", "any"],
        "throw_in_ranks": ["all", "attacks"],
        "max_attacks": ["6", "none", "3", "1"],
        "first_bout_limit": ["on", "off"],
        "ask_forced": ["on", "off"],
        "last_two_out": ["draw", "defender_loses"],
        "pickup_draw_limit": ["40", "2", "none"],
        "action_cap": ["5000", "60"],
        "first_attacker": ["lowest_trump", "dealer_next", f"seat:{rng.randrange(players)}"]
                          + (["two_of_clubs"] if deck == 52 else []),
    }
    if preset != "classic":
        choices["transfer_limit"] = ["none", "1", "2"]
    if preset == "perevodnoy":
        choices["transfer"] = ["on", "reflect"]
    overrides = {"deck": str(deck)}
    for name in rng.sample(sorted(choices), rng.randrange(len(choices) + 1)):
        overrides[name] = rng.choice(choices[name])
    return make_rules(preset, overrides)
