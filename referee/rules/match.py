"""Match-level rules: who deals the next game (deck orders: ``rules.deal``).

Game 1 of a match is dealt by the last seat (so dealing starts at seat 0); every later
game is dealt by the previous game's durak; after a draw the dealer stays.
"""

from __future__ import annotations


def first_dealer(players: int) -> int:
    return players - 1


def next_dealer(dealer: int, durak: int | None) -> int:
    """The dealer of the game after one dealt by ``dealer`` whose durak was ``durak``
    (None for a draw)."""
    return dealer if durak is None else durak

