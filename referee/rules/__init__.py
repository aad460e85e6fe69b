"""The pure Durak rules engine: cards, table rules, the game state machine, views.

No I/O, no clock, no trio. Randomness only from an explicit seed.

    >>> from referee.rules import Game, make_rules, action_str
    >>> g = Game.new(make_rules("classic"), players=2, seed=1)
    >>> sorted(action_str(a) for a in g.legal_actions())[:2]
    ['attack 7C', 'attack 8D']
"""

from .actions import (
    ATTACK,
    COVER,
    EXCHANGE,
    KIND_NAMES,
    PASS,
    SHOW_TRUMP,
    TAKE,
    THROW_IN,
    TRANSFER,
    IllegalAction,
    MalformedAction,
    action_from_wire,
    action_str,
    action_to_wire,
    parse_action,
)
from .cards import CardError, card_str, parse_card
from .game import (
    ACTION_CAP,
    DRAW,
    NORMAL,
    PHASE_NAMES,
    STALEMATE,
    Game,
    Outcome,
    PositionError,
    shuffled_deck,
)
from .match import next_dealer
from .options import (
    MAX_SEATS,
    MIN_SEATS,
    OPTIONS,
    PRESETS,
    SEATS_TEXT,
    Rules,
    RulesError,
    make_rules,
    seat_count_error,
)

__all__ = [
    "ATTACK", "COVER", "EXCHANGE", "KIND_NAMES", "PASS", "SHOW_TRUMP", "TAKE", "THROW_IN",
    "TRANSFER", "IllegalAction", "MalformedAction", "action_from_wire", "action_str",
    "action_to_wire", "parse_action", "CardError", "card_str", "parse_card", "ACTION_CAP",
    "DRAW", "NORMAL", "PHASE_NAMES", "STALEMATE", "Game", "Outcome", "PositionError", "shuffled_deck",
    "next_dealer", "MAX_SEATS", "MIN_SEATS", "OPTIONS", "PRESETS", "SEATS_TEXT", "Rules", "RulesError",
    "make_rules", "seat_count_error",
]
