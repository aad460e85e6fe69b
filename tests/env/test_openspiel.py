"""The OpenSpiel game (referee/env/openspiel.py): OpenSpiel's own random-simulation test
for every preset and table size, chance nodes for the deal, the engine's legal actions."""

from __future__ import annotations

import random

import pyspiel
import pytest

import referee.env.openspiel  # noqa: F401 (registers the game)
from referee.env.encoding import OBSERVATION_SIZE, action_index
from referee.rules import PRESETS, make_rules

VARIANTS = [(preset, players) for preset in PRESETS for players in range(2, 7)]


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), VARIANTS)
def test_openspiel_random_sim_test_passes(preset: str, players: int) -> None:
    game = pyspiel.load_game("python_durak_ref", {"players": players, "rules": preset})
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize(("params", "overrides"), [
    ({"deck": 24}, ["deck=24"]), ({"deck": 52, "trump_exchange": "on"}, ["deck=52", "trump_exchange=on"]),
    ({"transfer": "reflect", "transfer_limit": 0}, ["transfer=reflect"]),
    ({"lead": "same_rank", "throw_in_timing": "any", "max_attacks": 4},
     ["lead=same_rank", "throw_in_timing=any", "max_attacks=4"])])
def test_openspiel_random_sim_test_passes_under_other_options(params: dict, overrides: list[str]) -> None:
    game = pyspiel.load_game("python_durak_ref", {"players": 3, "rules": "perevodnoy", **params})
    assert game.rules == make_rules("perevodnoy", overrides)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_the_deal_is_a_chance_node_per_card() -> None:
    game = pyspiel.load_game("python_durak_ref", {"players": 2})
    state = game.new_initial_state()
    outcomes = state.chance_outcomes()
    assert state.is_chance_node() and len(outcomes) == 36
    assert {p for _, p in outcomes} == {1 / 36}
    state.apply_action(outcomes[5][0])
    assert len(state.chance_outcomes()) == 35
    for _ in range(35):
        state.apply_action(state.chance_outcomes()[0][0])
    assert not state.is_chance_node() and state.current_player() in (0, 1)


def test_legal_actions_are_the_engines_and_returns_sum_to_zero() -> None:
    game = pyspiel.load_game("python_durak_ref", {"players": 3, "rules": "perevodnoy"})
    rng = random.Random(4)
    for _ in range(5):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
                continue
            engine = state.engine
            expected = sorted(action_index(a, engine.attacks) for a in engine.legal_actions())
            assert state.legal_actions() == expected
            assert len(state.observation_tensor()) == OBSERVATION_SIZE
            state.apply_action(rng.choice(expected))
        assert abs(sum(state.returns())) < 1e-9


def test_the_information_state_string_has_the_seats_history_only() -> None:
    game = pyspiel.load_game("python_durak_ref", {"players": 2})
    state = game.new_initial_state()
    rng = random.Random(1)
    while state.is_chance_node():
        state.apply_action(rng.choice(state.chance_outcomes())[0])
    for _ in range(12):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    engine = state.engine
    for seat in (0, 1):
        text = state.information_state_string(seat)
        hidden = engine.hidden_from(seat)
        from referee.rules.cards import CARD_TEXT
        for card in range(52):
            if hidden >> card & 1:
                assert CARD_TEXT[card] not in text.split("\n")[0]
        assert text.startswith(f"seat {seat} dealt ")


def test_unknown_rules_are_refused_naming_the_option() -> None:
    with pytest.raises(ValueError, match="bad value 'sideways' for rules option transfer"):
        pyspiel.load_game("python_durak_ref", {"transfer": "sideways"})
