"""The hand-written observation the example-bot tests send must be one the engine could
send: same keys, same value types, and for the position it describes the same values."""

from __future__ import annotations

from referee.rules import Game, make_rules
from referee.rules.cards import card_str, deck_cards
from support import ATTACK_OBSERVATION, HAND


def test_the_scripted_observation_matches_the_engine() -> None:
    other = "7S 8S TS JS KS AH"
    held = set(HAND) | set(other.split()) | {"TH"}
    talon = [card_str(c) for c in deck_cards(36) if card_str(c) not in held] + ["TH"]  # TH last
    game = Game.from_position(make_rules(), [" ".join(HAND), other], trump="TH",
                              talon=" ".join(talon), attacker=0, first_bout=True)
    real = game.observe(0)
    assert real.keys() == ATTACK_OBSERVATION.keys()
    assert {k: type(v) for k, v in real.items()} == {k: type(v) for k, v in ATTACK_OBSERVATION.items()
                                                     if v is not None} | {"trump_holder": type(None)}
    differ = {k for k in real if real[k] != ATTACK_OBSERVATION[k]}
    assert differ <= {"dealer", "discard"}, differ  # dealer and discard are not fixed by the position
