"""The AEC env (referee/env/durak_v0.py) against PettingZoo's own tests, and its contract:
rewards, forfeits, seeding, render."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from referee.env import durak_v0
from referee.env.encoding import ACTION_SIZE, EXCHANGE_INDEX, TAKE_INDEX
from referee.rules import PRESETS, Game, make_rules
from referee.rules.deal import deal_deck

# PettingZoo's api_test warns that a Dict observation is not a Box and not an array: its
# classic card games (chess, leduc) hold an action mask beside the observation the same way.
DICT_OBSERVATION = [
    "ignore:Observation space for each agent probably should be:UserWarning",
    "ignore:Observation is not a NumPy array:UserWarning",
]
VARIANTS = [(preset, players) for preset in PRESETS for players in range(2, 7)]
#: Option variants beyond the presets: other decks, reflections, same-rank leads,
#: throw-ins at any time, the trump exchange.
OVERRIDES = [("classic", 3, ["deck=24"]), ("classic", 6, ["deck=52", "first_attacker=two_of_clubs"]),
             ("perevodnoy", 3, ["transfer=reflect"]), ("classic", 2, ["lead=same_rank"]),
             ("classic", 4, ["throw_in_timing=any"]), ("classic", 2, ["trump_exchange=on"])]


@pytest.mark.slow
@pytest.mark.filterwarnings(*DICT_OBSERVATION)
@pytest.mark.parametrize(("preset", "players"), VARIANTS)
def test_pettingzoo_api_and_seed_tests_pass(preset: str, players: int) -> None:
    api_test(durak_v0.env(players=players, rules=preset), num_cycles=300)
    seed_test(lambda: durak_v0.env(players=players, rules=preset), num_cycles=300)


@pytest.mark.filterwarnings(*DICT_OBSERVATION)
@pytest.mark.parametrize(("preset", "players", "overrides"), OVERRIDES)
def test_pettingzoo_api_test_passes_under_other_options(preset: str, players: int, overrides: list[str]) -> None:
    api_test(durak_v0.env(players=players, rules=make_rules(preset, overrides)), num_cycles=300)


def play_to_end(env, pick) -> None:
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent]:
            env.step(None)
        else:
            env.step(pick(env, agent))


def first_legal(env, agent: str) -> int:
    return int(np.flatnonzero(env.observe(agent)["action_mask"])[0])


def test_the_durak_gets_minus_one_and_the_others_share_plus_one() -> None:
    env = durak_v0.raw_env(players=3)
    env.reset(seed=7)
    game = env.game
    totals: dict[str, float] = {}
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent]:
            totals[agent] = env._cumulative_rewards[agent]
            env.step(None)
        else:
            env.step(first_legal(env, agent))
    durak = game.outcome.durak
    if durak is None:
        assert totals == {f"player_{s}": 0.0 for s in range(3)}
    else:
        assert totals == {f"player_{s}": (-1.0 if s == durak else 0.5) for s in range(3)}


def test_a_masked_out_index_is_the_agents_forfeit() -> None:
    """A cheating or buggy learner cannot play an illegal card: it loses the game."""
    env = durak_v0.raw_env(players=2)
    env.reset(seed=1)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    assert mask[EXCHANGE_INDEX] == 0  # no exchange offered at the opening lead here
    env.step(EXCHANGE_INDEX)
    other = [a for a in env.agents if a != agent][0]
    assert env.terminations == {agent: True, other: True}
    assert env.rewards == {agent: -1.0, other: 1.0}
    assert env.infos[agent] == {"illegal": EXCHANGE_INDEX}
    assert not env.observe(agent)["action_mask"].any()


@pytest.mark.parametrize("bad", [ACTION_SIZE + 5, -3])
def test_the_guarded_env_refuses_an_index_out_of_the_space(bad: int) -> None:
    env = durak_v0.env(players=2)
    env.reset(seed=1)
    with pytest.raises(AssertionError):
        env.step(bad)


def test_reset_with_a_seed_deals_the_keyed_deals_env_0_env_1() -> None:
    env = durak_v0.raw_env(players=4, rules="perevodnoy")
    env.reset(seed="lab-1")
    assert env.game.deck == deal_deck("lab-1", "env:0", 36)
    assert env.game.dealer == 3
    env.reset()
    assert env.game.deck == deal_deck("lab-1", "env:1", 36)
    env.reset(seed="lab-1")
    assert env.game.deck == deal_deck("lab-1", "env:0", 36)
    same = Game.new(make_rules("perevodnoy"), 4, deck=deal_deck("lab-1", "env:0", 36))
    assert env.game.hands == same.hands


def test_render_shows_the_view_of_the_agent_to_act_only() -> None:
    env = durak_v0.raw_env(players=2, render_mode="ansi")
    env.reset(seed=3)
    seat = env.game.seat_to_move()
    text = env.render()
    assert f"seat {seat} (me)" in text and "hand: " + " ".join(env.game.observe(seat)["hand"]) in text
    other = " ".join(env.game.observe(1 - seat)["hand"])
    assert other not in text


def test_a_take_ends_the_bout_as_in_the_engine() -> None:
    env = durak_v0.raw_env(players=2)
    env.reset(seed=2)
    env.step(first_legal(env, env.agent_selection))  # a lead
    defender = env.agent_selection
    assert env.observe(defender)["action_mask"][TAKE_INDEX] == 1
    env.step(TAKE_INDEX)
    assert env.game.taking


def test_bad_tables_are_refused_with_the_rules_message() -> None:
    with pytest.raises(ValueError, match="2 to 6 players"):
        durak_v0.raw_env(players=7)
    with pytest.raises(ValueError, match="deck=52"):
        durak_v0.raw_env(players=6, rules=make_rules("classic", ["deck=24"]))
