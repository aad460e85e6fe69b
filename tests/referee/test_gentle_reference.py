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


def mean_bouts(players: int, games: int) -> float:
    rules = make_rules("classic", ["first_bout_limit=on"])
    total = 0
    for i in range(games):
        g = Game.new(rules, players, seed=f"gentle-{players}-{i}")
        while not g.is_over:
            legal = g.legal_actions()
            action = g.forced_action(legal)
            if action is None:
                wire = [action_to_wire(a) for a in legal]
                choice = gentle_choose(g.observe(g.seat_to_move()), wire)
                action = legal[wire.index(choice)]
            g.apply_legal(action)
        total += g.bout
    return total / games


@pytest.mark.parametrize("players", [2, 3, 4])
def test_mean_bouts_within_30_percent_of_the_reference(players: int) -> None:
    assert abs(mean_bouts(players, 60) / REFERENCE_BOUTS[players] - 1) <= 0.30
