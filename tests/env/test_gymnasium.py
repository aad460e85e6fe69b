"""The Gymnasium single-agent env (referee/env/single_agent.py): Gymnasium's own checker,
built-in and program opponents at the referee's own table, forfeits, seeding."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from referee.env.durak_v0 import raw_env
from referee.env.encoding import EXCHANGE_INDEX, Encoder
from referee.env.single_agent import DurakGymEnv
from referee.rules import PRESETS, make_rules
from referee.seats.players import BotSpecError
from support import ROOT

RANDOM_BOT = f"{sys.executable} {ROOT / 'examples' / 'python' / 'random_bot.py'}"


def play(env: DurakGymEnv, obs: dict, pick=lambda legal: int(legal[0])) -> tuple[float, dict, int]:
    steps = 0
    while True:
        legal = np.flatnonzero(obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(pick(legal))
        steps += 1
        assert not truncated
        if terminated:
            return reward, info, steps


@pytest.mark.parametrize("rules", PRESETS)
@pytest.mark.parametrize("players", range(2, 7))
def test_gymnasium_check_env_passes(rules: str, players: int) -> None:
    opponents = ["builtin:random", "builtin:greedy", "builtin:gentle"] * 2
    env = DurakGymEnv(opponents=opponents[:players - 1], seat=players // 2, rules=rules)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.process
def test_the_learner_plays_a_program_bot_over_the_protocol() -> None:
    """The example random bot runs as a real process; the learner meets it through the
    referee's own match loop, every game to its end."""
    env = DurakGymEnv(opponents=[RANDOM_BOT, "builtin:greedy"], seat=1, sandbox="none")
    try:
        obs, _ = env.reset(seed=21)
        results = []
        for game in range(3):
            if game:
                obs, _ = env.reset()
            reward, info, steps = play(env, obs)
            assert steps > 0 and info["termination"] in ("normal", "draw", "stalemate")
            assert info["players"] == ["random_bot", "learner", "greedy"]  # the program, named by its script
            assert reward == (0.0 if info["durak"] is None else -1.0 if info["durak"] == 1 else 0.5)
            results.append(info["termination"])
        assert len(results) == 3
    finally:
        env.close()


def test_the_learners_observation_is_the_aec_envs_for_the_same_deal() -> None:
    """reset(seed=S) deals what durak_v0's reset(seed=S) deals; the first observation of
    the seat that opens is the same tensor."""
    env = DurakGymEnv(opponents=["builtin:greedy"], seat=0)
    aec = raw_env(players=2)
    try:
        for seed in range(6):
            obs, _ = env.reset(seed=seed)
            aec.reset(seed=seed)
            if aec.game.seat_to_move() == 0:
                assert np.array_equal(obs["observation"], aec.observe("player_0")["observation"])
                assert np.array_equal(obs["action_mask"], aec.observe("player_0")["action_mask"])
    finally:
        env.close()


def test_the_same_seed_plays_the_same_episode() -> None:
    env = DurakGymEnv(opponents=["builtin:random", "builtin:random"], seat=2)
    try:
        runs = []
        for _ in range(2):
            obs, _ = env.reset(seed=11)
            seen = [obs["observation"].copy()]
            while True:
                obs, reward, done, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
                seen.append(obs["observation"].copy())
                if done:
                    break
            runs.append((seen, reward, info))
        assert all(np.array_equal(a, b) for a, b in zip(runs[0][0], runs[1][0], strict=True))
        assert runs[0][1:] == runs[1][1:]
    finally:
        env.close()


def test_a_masked_out_index_is_judged_by_the_referee_as_illegal() -> None:
    env = DurakGymEnv(opponents=["builtin:random"])
    try:
        obs, _ = env.reset(seed=3)
        assert obs["action_mask"][EXCHANGE_INDEX] == 0
        _, reward, done, _, info = env.step(EXCHANGE_INDEX)
        assert (reward, done, info["termination"], info["durak"]) == (-1.0, True, "illegal", 0)
        assert "learner forfeited (illegal)" in info["reason"]
        obs, _ = env.reset()
        _, reward, done, _, info = env.step(10**6)  # names no action at all
        assert (reward, done, info["termination"]) == (-1.0, True, "protocol")
    finally:
        env.close()


def test_a_reset_during_a_game_resigns_it_and_deals_the_next() -> None:
    env = DurakGymEnv(opponents=["builtin:greedy"])
    try:
        env.reset(seed=5)
        env.reset()
        reward, info, _ = play(env, env.reset()[0])
        assert info["termination"] in ("normal", "draw", "stalemate")
        assert env._deal == 3
    finally:
        env.close()


def test_an_unusable_opponent_spec_is_refused_at_once() -> None:
    with pytest.raises(BotSpecError):
        DurakGymEnv(opponents=["builtin:nosuchbot"])
    with pytest.raises(ValueError, match="seat 3 does not exist"):
        DurakGymEnv(opponents=["builtin:random"], seat=3)


def test_a_program_that_cannot_start_is_an_error_at_reset() -> None:
    env = DurakGymEnv(opponents=["/nonexistent/bot --fast"], sandbox="none")
    with pytest.raises(Exception, match="nonexistent"):
        env.reset(seed=1)
    env.close()


def test_the_observation_is_made_from_the_protocol_request() -> None:
    env = DurakGymEnv(opponents=["builtin:random"], rules="perevodnoy")
    try:
        obs, _ = env.reset(seed=9)
        request = env._request
        enc = Encoder(make_rules("perevodnoy"), 2)
        assert np.array_equal(obs["observation"], enc.view_observation(request["observation"]))
    finally:
        env.close()


HOSTILE = ROOT / "tests" / "referee" / "bots" / "hostile_bot.py"


@pytest.mark.process
@pytest.mark.parametrize(("mode", "termination"), [("die_mid 2", "crash"), ("illegal", "illegal"),
                                                   ("bad_msgpack", "protocol"), ("mute_mid 1", "timeout")])
def test_an_opponent_that_breaks_the_rules_forfeits_to_the_learner(mode: str, termination: str) -> None:
    """The referee judges the program opponent as in a match: its failure is its forfeit,
    the learner's win, and the next game starts it again."""
    name, *arg = mode.split()
    env = DurakGymEnv(opponents=[" ".join([sys.executable, str(HOSTILE), name, "-", *arg])],
                      sandbox="none", move_time=3.0)  # (the learner answers in microseconds)
    try:
        for game in range(2):
            obs, _ = env.reset(seed=4) if game == 0 else env.reset()
            reward, info, _ = play(env, obs)
            assert (info["termination"], info["durak"], reward) == (termination, 1, 1.0)
    finally:
        env.close()


def test_render_shows_the_learners_view() -> None:
    env = DurakGymEnv(opponents=["builtin:random"], render_mode="ansi")
    try:
        assert env.render() is None  # no game yet
        env.reset(seed=2)
        text = env.render()
        assert text.splitlines()[0].startswith("bout 1, phase ") and "seat 0 (me)" in text
    finally:
        env.close()
