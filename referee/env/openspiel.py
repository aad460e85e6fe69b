"""Durak as an OpenSpiel Python game: ``pyspiel.load_game("python_durak_ref", {...})``.

Importing this module registers the game. Parameters: ``players`` (MIN_SEATS..MAX_SEATS, default 2),
``rules`` (a preset, default ``classic``) and every table rule of ``durak-ref rules`` by
name: a number for the numeric ones (``deck``, ``max_attacks``, ``transfer_limit``,
``pickup_draw_limit``, ``action_cap``; 0 is ``none``, -1 leaves the preset's value), else
a string in its ``--set`` form ("" leaves the preset's value):
``{"deck": 52, "trump_exchange": "on"}``. (OpenSpiel writes the parameters into the
game's name with ``,`` and ``=`` and reads the numbers back as numbers, hence the two
types; a value holding a comma, ``trump_exchange=seats:0,2``, cannot be given.)

- **Chance nodes deal the deck.** The first ``deck`` moves are chance nodes, each
  drawing the next card of the deck order uniformly from the cards not yet drawn
  (chance outcome = the card's engine index, 0..51); the deck order is then dealt as
  ``Game.new(deck=...)`` deals it (dealer: the last seat). So a tree search sees every
  deal with its true probability, not one fixed shuffle.
- **Player actions** are the fixed index space of ``referee.env.encoding``
  (``num_distinct_actions`` = 2,915), legal ones in ascending order.
- **Returns**: the durak -1, every other seat +1/(n-1), a draw 0 (zero-sum).
- **Observation** tensor and string: the seat's view now (encoding's tensor as floats;
  the text of ``encoding.view_text``). **Information state** string: perfect recall,
  the seat's dealt hand and the face-up trump, then every event of the game as that
  seat saw it (``Game.public_event``: its own draws with their cards, the others' as
  counts), then its view now. The information-state tensor is the observation tensor
  followed by, for each seat counted from the observer, the cards it has laid on the
  table this game (6 planes of 52): a summary, not perfect recall (it forgets the order
  of play); algorithms that need perfect recall should key on the string.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from ..rules.actions import ATTACK, COVER, THROW_IN, TRANSFER
from ..rules.cards import CARD_TEXT
from ..rules.game import HAND_SIZE, Game
from ..rules.options import MIN_SEATS, OPTIONS, Rules, make_rules
from .durak_v0 import final_rewards
from .encoding import (
    ACTION_SIZE,
    MAX_PLAYERS,
    OBSERVATION_SIZE,
    Encoder,
    action_index,
    engine_action,
    index_name,
    view_text,
)

NAME = "python_durak_ref"
_PLAYED_SIZE = MAX_PLAYERS * 52
_PLAYED_KINDS = (ATTACK, COVER, THROW_IN, TRANSFER)

#: The table rules given to OpenSpiel as numbers (see the module docstring).
_NUMERIC = frozenset(o.name for o in OPTIONS if o.name == "deck" or o.allowed.startswith("number"))

_GAME_TYPE = pyspiel.GameType(
    short_name=NAME,
    long_name="Durak (durak-ref's engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_SEATS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"players": 2, "rules": "classic",
                             **{o.name: -1 if o.name in _NUMERIC else "" for o in OPTIONS}},
)


def rules_from_params(params: dict[str, Any]) -> tuple[Rules, int]:
    """The table rules and number of players the game's parameters name. Raises
    RulesError (a ValueError naming the bad option) for rules that do not exist."""
    overrides = {}
    for name in (o.name for o in OPTIONS):
        value = params.get(name, -1 if name in _NUMERIC else "")
        if name in _NUMERIC and value != -1:
            overrides[name] = "none" if value == 0 else str(value)
        elif name not in _NUMERIC and value != "":
            overrides[name] = str(value)
    rules = make_rules(str(params.get("rules", "classic")), overrides)
    players = int(params.get("players", 2))
    rules.check_table(players)
    return rules, players


class DurakGame(pyspiel.Game):
    """The game: its rules and table size, fixed by the parameters."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_GAME_TYPE.parameter_specification, **(params or {})}
        self.rules, self.players = rules_from_params(params)
        self.encoder = Encoder(self.rules, self.players)
        info = pyspiel.GameInfo(
            num_distinct_actions=ACTION_SIZE, max_chance_outcomes=52, num_players=self.players,
            min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
            max_game_length=self.rules.action_cap + self.rules.deck)
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> DurakState:
        return DurakState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> DurakObserver:
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return DurakObserver(self, perfect_recall, params)


class _Held:
    """The engine's game inside a state: OpenSpiel clones a Python state by deep-copying
    its attributes, and a game is copied by its own ``copy`` (its events list too)."""

    __slots__ = ("game",)

    def __init__(self, game: Game | None) -> None:
        self.game = game

    def __deepcopy__(self, memo: dict[int, Any]) -> _Held:
        if self.game is None:
            return _Held(None)
        other = self.game.copy()
        if self.game.events is not None:
            other.events = list(self.game.events)
        return _Held(other)


class DurakState(pyspiel.State):
    """A game in progress: the deck order drawn so far, then the engine's game."""

    def __init__(self, game: DurakGame) -> None:
        super().__init__(game)
        self._rules, self._players = game.rules, game.players
        self.deck: list[int] = []
        self._held = _Held(None)

    @property
    def engine(self) -> Game | None:
        """The engine's game once the deck is dealt (None during the deal)."""
        return self._held.game

    def current_player(self) -> int:
        if self.engine is None:
            return int(pyspiel.PlayerId.CHANCE)
        if self.engine.is_over:
            return int(pyspiel.PlayerId.TERMINAL)
        return self.engine.seat_to_move()

    def _legal_actions(self, player: int) -> list[int]:
        engine = self.engine
        assert engine is not None and player == engine.seat_to_move()
        return sorted(action_index(a, engine.attacks) for a in engine.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        drawn = set(self.deck)
        left = [c for c in range(52 - self._rules.deck, 52) if c not in drawn]
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action: int) -> None:
        if self.engine is None:
            self.deck.append(action)
            if len(self.deck) == self._rules.deck:
                self._held = _Held(Game.new(self._rules, self._players, deck=self.deck, record_events=True))
            return
        engine_move = engine_action(action, self.engine.attacks)
        assert engine_move is not None, f"action {action} names no action here"
        self.engine.apply(engine_move)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {CARD_TEXT[action]}"
        return index_name(action)

    def is_terminal(self) -> bool:
        return self.engine is not None and self.engine.is_over

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self._players
        assert self.engine is not None
        return final_rewards(self.engine)

    def __str__(self) -> str:
        if self.engine is None:
            return f"dealing: {' '.join(CARD_TEXT[c] for c in self.deck)}"
        return repr(self.engine)


class DurakObserver:
    """OpenSpiel's PyObserver: the seat's view (``perfect_recall`` False) or its
    information state (True); see the module docstring."""

    def __init__(self, game: DurakGame, perfect_recall: bool, params: Any) -> None:
        if params:
            raise ValueError(f"the durak observer takes no parameters, got {params}")
        self.perfect_recall = perfect_recall
        self.encoder, self.players = game.encoder, game.players
        size = OBSERVATION_SIZE + (_PLAYED_SIZE if perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[:OBSERVATION_SIZE]}
        if perfect_recall:
            self.dict["played"] = self.tensor[OBSERVATION_SIZE:].reshape(MAX_PLAYERS, 52)

    def set_from(self, state: DurakState, player: int) -> None:
        engine = state.engine
        if engine is None:
            self.tensor.fill(0)
            return
        self.tensor[:OBSERVATION_SIZE] = self.encoder.game_observation(engine, player)
        if self.perfect_recall:
            played = self.dict["played"]
            played.fill(0)
            for event in engine.events or ():
                if len(event) > 2 and isinstance(event[2], int) and event[2] & 15 in _PLAYED_KINDS \
                        and event[0] != "decline":
                    played[(event[1] - player) % self.players, event[2] >> 4 & 63] = 1

    def string_from(self, state: DurakState, player: int) -> str:
        engine = state.engine
        if engine is None:
            return f"seat {player}: dealing, {len(state.deck)} cards drawn"
        view = view_text(engine.observe(player))
        if not self.perfect_recall:
            return view
        n, dealt = self.players, self.players * HAND_SIZE
        hand = sorted(c for i, c in enumerate(engine.deck[:dealt]) if (i + engine.dealer + 1 - player) % n == 0)
        turned = engine.deck[dealt] if dealt < len(engine.deck) else engine.deck[-1]
        lines = [f"seat {player} dealt {' '.join(CARD_TEXT[c] for c in hand)}, trump {CARD_TEXT[turned]}"]
        for event in engine.events or ():
            seen = engine.public_event(event, player)
            if seen is not None:
                lines.append(" ".join(f"{k}={v}" for k, v in seen.items()))
        return "\n".join([*lines, view])


pyspiel.register_game(_GAME_TYPE, DurakGame)
