"""A small linear softmax policy over hand-made features of each legal action.

The policy sees only what ``referee.env`` gives any learner: the seat's observation tensor
and the action indices of its mask. ``features(obs, legal)`` turns them into one row of
``FEATURES`` numbers per legal action; the policy's preference for an action is the dot
product of its row with the weights ``theta``, and it plays the softmax of those
preferences (or, to play its best, their arg max). train.py learns ``theta``; play.py
plays it as a protocol bot. Both call this one function, so the trained agent sees in
the referee exactly what it saw while training.
"""

from __future__ import annotations

import random

import numpy as np

from referee.env.encoding import COVER_BASE, OFFSETS, TAKE_INDEX

FEATURE_NAMES = (
    "attack", "throw_in", "transfer", "show_trump", "cover", "take", "pass", "exchange",
    "rank", "trump", "trump_rank", "cover_gap", "cover_with_trump", "same_rank_in_hand",
    "take_with_talon", "trump_with_talon", "take_hand_size", "pass_with_talon", "throw_in_with_talon",
    "rank_with_talon",
)
FEATURES = len(FEATURE_NAMES)
_HAND, _SUIT, _TALON, _SIZES = OFFSETS["hand"], OFFSETS["trump_suit"], OFFSETS["talon"], OFFSETS["hand_sizes"]


def features(obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """One row of FEATURES per index of ``legal`` (the mask's nonzero indices)."""
    legal = np.asarray(legal)
    is_cover = (legal >= COVER_BASE) & (legal < TAKE_INDEX)
    card = np.where(legal < COVER_BASE, legal % 52, np.where(is_cover, (legal - COVER_BASE) % 52, 0))
    attacked = np.where(is_cover, (legal - COVER_BASE) // 52, 0)
    kind = np.where(legal < COVER_BASE, legal // 52, np.where(is_cover, 4, legal - TAKE_INDEX + 5))
    has_card = kind <= 4
    trump_suit = int(np.argmax(obs[_SUIT:_SUIT + 4]))
    rank = (card >> 2) / 12.0 * has_card
    trump = ((card & 3) == trump_suit) & has_card
    hand = obs[_HAND:_HAND + 52].reshape(13, 4).sum(axis=1)
    talon = obs[_TALON] / 36.0
    my_hand = obs[_SIZES] / 12.0
    take = kind == 5
    rows = np.zeros((len(legal), FEATURES))
    rows[np.arange(len(legal)), kind] = 1.0
    rows[:, 8] = rank
    rows[:, 9] = trump
    rows[:, 10] = rank * trump
    rows[:, 11] = np.where(is_cover, ((card >> 2) - (attacked >> 2)) / 12.0, 0.0) * ((card & 3) == (attacked & 3))
    rows[:, 12] = is_cover & trump & ((attacked & 3) != trump_suit)
    rows[:, 13] = np.where(has_card, hand[card >> 2] / 4.0, 0.0)
    rows[:, 14] = take * talon
    rows[:, 15] = trump * talon
    rows[:, 16] = take * my_hand
    rows[:, 17] = (kind == 6) * talon
    rows[:, 18] = (kind == 1) * talon
    rows[:, 19] = rank * talon
    return rows


def probabilities(theta: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The softmax policy over the rows' actions."""
    prefs = rows @ theta
    prefs -= prefs.max()
    p = np.exp(prefs)
    return p / p.sum()


def best(theta: np.ndarray, rows: np.ndarray, rng: random.Random) -> int:
    """The row the policy prefers most, ties broken at random."""
    prefs = rows @ theta
    top = np.flatnonzero(prefs >= prefs.max() - 1e-12)
    return int(top[rng.randrange(len(top))])
