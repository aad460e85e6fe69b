"""The ``gentle`` bot plays games of the published reference's length.

The reference (docs/STATS.md): 36 cards, the lowest trump opens, the first
bout capped at five (``first_bout_limit=on``), mean bouts 30, 36 and 42 for 2, 3 and 4
players. gentle is deterministic and the deals are seeded, so this is exact, not luck.
"""

from __future__ import annotations

import pytest

from protocol.strategies import gentle_choose
from referee.rules import Game, action_to_wire, make_rules

REFERENCE_BOUTS = {2: 30, 3: 36, 4: 42}


def play(players: int, seed: str) -> Game:
    """One game of gentle in every seat under the reference rules, played to the end."""
    g = Game.new(make_rules("classic", ["first_bout_limit=on"]), players, seed=seed)
    while not g.is_over:
        legal = g.legal_actions()
        action = g.forced_action(legal)
        if action is None:
            wire = [action_to_wire(a) for a in legal]
            choice = gentle_choose(g.observe(g.seat_to_move()), wire)
            assert any(choice is a for a in wire), "gentle must answer with an element of legal"
            action = legal[wire.index(choice)]
        g.apply_legal(action)
    return g


def mean_bouts(players: int, games: int) -> float:
    return sum(play(players, f"gentle-{players}-{i}").bout for i in range(games)) / games


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4])
def test_mean_bouts_within_30_percent_of_the_reference(players: int) -> None:
    assert abs(mean_bouts(players, 60) / REFERENCE_BOUTS[players] - 1) <= 0.30


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_same_deal_plays_the_same_game(players: int) -> None:
    # gentle has no randomness: a seeded deal fixes every move, so logs replay exactly.
    for i in range(5):
        first, again = play(players, f"same-{i}"), play(players, f"same-{i}")
        assert first.history == again.history and first.outcome == again.outcome
        assert first.outcome.termination in ("normal", "draw")
