"""Durak as a PettingZoo AEC environment: ``referee.env.durak_v0.env(players=2, rules="classic")``.

Agents are ``player_0`` .. ``player_{n-1}``, the seats in play order. The agent to act
is the engine's seat to move; a seat that has gone out waits (it acts no more) and is
terminated with everyone else when the game ends.

- Action space: ``Discrete(ACTION_SIZE)``, the fixed index space of
  ``referee.env.encoding`` (every action of every rule variant).
- Observation space: ``Dict(observation=Box(int8, OBSERVATION_SIZE), action_mask=Box(int8,
  ACTION_SIZE))``; ``observation`` is the seat's view only (encoding's module docstring
  lists every part), ``action_mask`` marks its legal actions now (all zeros when it is
  not to move).
- Rewards, at the end of the game only: the durak -1, every other seat +1/(n-1), so they
  sum to 0; a draw (``last_two_out=draw``, stalemate, the action cap) gives 0 to all.
- An index that is not legal now (masked out) is that agent's forfeit, as the referee
  treats an illegal answer: it is the durak, the game ends, and ``infos[agent]`` says
  ``{"illegal": index}``.
- Seeding: ``reset(seed=S)`` deals the deal with id ``env:0`` under run seed ``S``
  (``referee.rules.deal.deal_deck``: the referee's keyed deals, as a match deals
  ``match:0``, ``match:1``, ... under its ``--seed``); each later ``reset()`` without a
  seed deals ``env:1``, ``env:2``, ... Without any seed a random run seed is drawn. The
  dealer is the last seat every game.
- ``render()`` (``render_mode="ansi"`` returns it, ``"human"`` prints it): the view of
  the agent to act, as text.
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..rules.deal import check_seed, deal_deck, deal_id
from ..rules.game import Game
from ..rules.options import Rules, make_rules
from .encoding import (
    ACTION_SIZE,
    INDEX_OF,
    OBSERVATION_HIGH,
    OBSERVATION_SIZE,
    Encoder,
    action_index,
    engine_action,
    view_text,
)


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's usual guards: actions checked in range, calls
    in order (``raw_env`` without them, for speed)."""
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def table_rules(rules: Rules | str) -> Rules:
    """``rules`` as Rules: a Rules, or a preset name (``durak-ref rules`` lists them)."""
    return make_rules(rules) if isinstance(rules, str) else rules


RENDER_MODES = ["ansi", "human"]


def check_render_mode(mode: str | None) -> None:
    """Raise ValueError unless ``mode`` is one of RENDER_MODES or None."""
    if mode is not None and mode not in RENDER_MODES:
        raise ValueError(f"render_mode {mode!r}: expected one of {', '.join(RENDER_MODES)} or None")


def rendered(view: dict[str, Any] | None, mode: str | None) -> str | None:
    """``render()`` of a seat's protocol ``view`` (None: nothing to show): its text for
    mode "ansi", printed for "human" (then None), None without a render mode."""
    if mode is None or view is None:
        return None
    text = view_text(view)
    if mode == "human":
        print(text)
        return None
    return text


def seat_reward(durak: int | None, seat: int, players: int) -> float:
    """The reward of ``seat`` for a finished game: -1 the durak, 1/(players-1) any other
    seat, 0 everyone after a draw (``durak`` None). The rewards of a table sum to 0."""
    if durak is None:
        return 0.0
    return -1.0 if seat == durak else 1.0 / (players - 1)


def final_rewards(game: Game) -> list[float]:
    """Each seat's ``seat_reward`` for the finished ``game``."""
    outcome = game.outcome
    assert outcome is not None
    return [seat_reward(outcome.durak, s, game.players) for s in range(game.players)]


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's name for the unwrapped class)
    """Durak for MIN_SEATS to MAX_SEATS agents (rules.options) under any table rules; see the module docstring."""

    metadata = {"name": "durak_v0", "render_modes": RENDER_MODES, "is_parallelizable": False}

    def __init__(self, players: int = 2, rules: Rules | str = "classic", seed: int | str | None = None,
                 render_mode: str | None = None) -> None:
        super().__init__()
        self.rules = table_rules(rules)
        self.rules.check_table(players)
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.players = players
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        self._encoder = Encoder(self.rules, players)
        obs_space = spaces.Dict({
            "observation": spaces.Box(0, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.int8),
            "action_mask": spaces.Box(0, 1, (ACTION_SIZE,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(ACTION_SIZE) for a in self.possible_agents}
        self._run_seed = None if seed is None else check_seed(seed)
        self._deal = 0
        self.game: Game | None = None
        self._legal: list[int] = []
        self._indices: list[int] = []

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | str | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._run_seed, self._deal = check_seed(seed), 0
        elif self._run_seed is None:
            self._run_seed = secrets.token_hex(16)
        deck = deal_deck(self._run_seed, deal_id("env", self._deal), self.rules.deck)
        self._deal += 1
        self.game = Game.new(self.rules, self.players, deck=deck)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._to_move()

    def _to_move(self) -> None:
        """The seat to move becomes the selected agent, with its legal actions."""
        game = self.game
        assert game is not None
        seat = game.seat_to_move()
        self.agent_selection = self.possible_agents[seat]
        self._legal = legal = game.legal_actions()
        attacks = game.attacks
        index = INDEX_OF.get  # action_index, inlined for every action but a cover
        self._indices = [index(a) or action_index(a, attacks) for a in legal]

    def legal_indices(self) -> list[int]:
        """The action indices legal for the selected agent now (empty once the game is over)."""
        return list(self._indices)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self.game
        assert game is not None, "reset() first"
        seat = self._seat[agent]
        mask = np.zeros(ACTION_SIZE, np.int8)
        if agent == self.agent_selection:
            for i in self._indices:  # (none once the game is over)
                mask[i] = 1  # (a few items: cheaper than indexing with a list)
        return {"observation": self._encoder.encode(game, seat, [h.bit_count() for h in game.hands]),
                "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None
        self._cumulative_rewards[agent] = 0.0
        engine = engine_action(action, game.attacks)
        if engine is None or engine not in self._legal:
            seat = self._seat[agent]
            self._end([seat_reward(seat, s, self.players) for s in range(self.players)])
            self.infos[agent] = {"illegal": action}
        else:
            game.apply_legal(engine)
            if game.is_over:
                self._end(final_rewards(game))
            else:
                self._to_move()

    # Rewards come only at the end: _end adds them up (AECEnv._accumulate_rewards), and
    # every step before it leaves every cumulative reward at 0.

    def _end(self, rewards: list[float]) -> None:
        self._indices, self._legal = [], []
        for a, r in zip(self.agents, rewards, strict=True):
            self.rewards[a] = r
            self.terminations[a] = True
        self._accumulate_rewards()

    def render(self) -> str | None:
        game = self.game
        return rendered(None if game is None else game.observe(self._seat[self.agent_selection]),
                        self.render_mode)

    def close(self) -> None:
        pass
