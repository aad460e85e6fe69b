"""A Gymnasium single-agent env: one learner's seat at a referee table, any bots at the others.

``DurakGymEnv(opponents=["builtin:greedy", "python3 mybot.py"], seat=0, rules="classic")``
seats the learner at ``seat`` and an opponent of each spec (the specs ``durak-ref match``
takes: ``builtin:NAME``, or a command line started as a program bot, sandboxed as
``match`` does) at the others, in order. The games are played by the referee itself:
its match loop (``referee.table.match.play_game``) runs in a trio thread, and the
learner's seat is a player whose decision is handed across to ``step``. So the learner
meets exactly what a protocol bot meets: the same requests, clocks, forfeits, and
program opponents that speak the real protocol.

- Observation: ``{"observation", "action_mask"}`` as in the AEC env (``durak_v0``), made
  from the request's observation map and legal list (``encoding.Encoder.view_observation``).
- Action: an index of ``encoding``'s fixed space. A masked-out index is handed to the
  referee like any bot's answer: it is judged illegal (or, naming no action at all, a
  protocol error), the learner's forfeit, and the episode ends with reward -1.
- Reward at the end: -1 the learner was the durak, +1/(n-1) it was not, 0 a draw.
  ``info`` at the end holds ``termination``, ``durak``, ``reason`` and ``players`` (the
  seats' names) of the referee's game record.
- Seeding: ``reset(seed=S)`` starts a new run keyed by ``S`` (the opponents are started
  again, so a built-in ``random`` draws from ``S`` too) and deals deal ``env:0`` of
  ``S``, the deck ``durak_v0``'s ``reset(seed=S)`` deals; each ``reset()`` after it deals
  ``env:1``, ``env:2``, ... A ``reset`` during a game resigns it (the learner's forfeit,
  ``disconnect``). ``close()`` closes the opponents.
- ``move_time``: seconds per decision, for every seat: the learner's time between
  receiving an observation and calling ``step`` counts.
"""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import trio
from gymnasium import spaces

from ..rules.actions import action_to_wire
from ..rules.deal import check_seed, deal_id
from ..rules.options import Rules
from ..seats.players import Ask, BotFailure, BotSpec, Player, parse_bot_spec
from ..table.clock import TimeControl
from ..table.match import MatchConfig, play_game
from ..table.runner import SeatOptions, make_players
from .durak_v0 import RENDER_MODES, check_render_mode, rendered, seat_reward, table_rules
from .encoding import (
    ACTION_SIZE,
    OBSERVATION_HIGH,
    OBSERVATION_SIZE,
    Encoder,
    engine_action,
    legal_mask,
    view_cards,
    wire_indices,
)

#: What the learner's seat sends across for a reset in the middle of a game.
_RESIGN = object()


class _LearnerSeat(Player):
    """The learner's player at the referee's table: ``finish`` hands the request to the
    env's thread and waits for its answer. Its spec is of kind "human", the seat the
    referee does not start (``runner.make_players``), as a person's at ``durak-ref play``."""

    def __init__(self, to_env: queue.Queue[tuple[str, Any]]) -> None:
        # Not ``in_process``: the learner's answer is judged as a bot's (an illegal one is
        # its forfeit), where the referee's own in-process bots' wrong answers are our bugs.
        super().__init__("learner", BotSpec("human", "learner", text="learner"), wants_events=False)
        self.info = {"name": "learner", "version": "env", "author": "referee.env"}
        self._to_env = to_env
        self.answers_in, self.answers = trio.open_memory_channel[Any](1)

    async def finish(self, ask: Ask) -> dict[str, Any]:
        self._to_env.put(("request", ask.message()))
        answer = await self.answers.receive()
        if answer is _RESIGN:
            raise BotFailure("disconnect", "the learner reset the environment during the game")
        if isinstance(answer, BotFailure):
            raise answer
        return answer


class DurakGymEnv(gymnasium.Env):
    """The learner at ``seat`` against ``opponents``; see the module docstring."""

    metadata = {"render_modes": RENDER_MODES}

    def __init__(self, opponents: Sequence[str] = ("builtin:random",), seat: int = 0,
                 rules: Rules | str = "classic", move_time: float = 60.0, sandbox: str = "auto",
                 render_mode: str | None = None) -> None:
        self.rules = table_rules(rules)
        self.players = len(opponents) + 1
        self.rules.check_table(self.players)
        if not 0 <= seat < self.players:
            raise ValueError(f"seat {seat} does not exist at a {self.players}-player table")
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.seat = seat
        specs = [parse_bot_spec(o) for o in opponents]  # BotSpecError names a bad spec
        self._specs = specs[:seat] + [BotSpec("human", "learner", text="learner")] + specs[seat:]
        self._tc = TimeControl.parse(move=move_time)  # TimeControlError names a bad one
        self._options = SeatOptions(sandbox=sandbox)
        self._encoder = Encoder(self.rules, self.players)
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(0, OBSERVATION_HIGH, (OBSERVATION_SIZE,), np.int8),
            "action_mask": spaces.Box(0, 1, (ACTION_SIZE,), np.int8),
        })
        self.action_space = spaces.Discrete(ACTION_SIZE)
        self._thread: threading.Thread | None = None
        self._run_seed = ""
        self._deal = 0
        self._request: dict[str, Any] | None = None

    # ------------------------------------------------------------ the referee's thread

    def _start_run(self, seed: str) -> None:
        """A trio thread with the opponents started, keyed by ``seed``, ready for games."""
        self._close_run()
        self._run_seed, self._deal = seed, 0
        self._to_env: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._learner = _LearnerSeat(self._to_env)
        self._config = MatchConfig(self.rules, games=1, seed=seed, tc=self._tc)
        self._commands_in, self._commands = trio.open_memory_channel[Any](1)
        self._thread = threading.Thread(target=trio.run, args=(self._serve,), daemon=True,
                                        name="durak-env-referee")
        self._thread.start()
        kind, value = self._to_env.get()
        if kind == "error":
            self._thread.join()
            self._thread = None
            raise value

    async def _serve(self) -> None:
        """The referee's side: start the players, then play a game per command."""
        self._token = trio.lowlevel.current_trio_token()
        try:
            players = make_players(self._specs, self._config, stderr_stem=None,
                                   options=self._options, human=self._learner)
        except Exception as exc:
            self._to_env.put(("error", exc))
            return
        async with trio.open_nursery() as nursery:
            try:
                for p in players:
                    await p.start(nursery)
                self._to_env.put(("ready", None))
                while (deal := await self._commands.receive()) is not None:
                    for p in players:
                        await p.prepare_game(self._config.max_restarts)
                    record = await play_game(players, self._config, index=deal,
                                             seed=deal_id("env", deal), dealer=self.players - 1)
                    self._to_env.put(("over", record))
            except Exception as exc:
                self._to_env.put(("error", exc))
            finally:
                for p in players:
                    await p.close()
                nursery.cancel_scope.cancel()

    def _send(self, channel: Any, value: Any) -> None:
        trio.from_thread.run_sync(channel.send_nowait, value, trio_token=self._token)

    def _close_run(self) -> None:
        if self._thread is None:
            return
        if self._request is not None:
            self._send(self._learner.answers_in, _RESIGN)
            self._next()
        self._send(self._commands_in, None)
        self._thread.join()
        self._thread = None

    def _next(self) -> tuple[str, Any]:
        """The referee's next word to the learner: a request, or the game's record."""
        kind, value = self._to_env.get()
        if kind == "error":
            self._thread = None
            raise value
        self._request = value if kind == "request" else None
        return kind, value

    # ------------------------------------------------------------ Gymnasium

    def _observation(self) -> dict[str, np.ndarray]:
        request = self._request
        assert request is not None
        view = request["observation"]
        indices = wire_indices(request["legal"], view_cards(view)[0])
        return {"observation": self._encoder.view_observation(view), "action_mask": legal_mask(indices)}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._start_run(check_seed(seed))
        elif self._thread is None:
            self._start_run(secrets.token_hex(16))
        elif self._request is not None:  # a game in progress: resign it
            self._send(self._learner.answers_in, _RESIGN)
            self._next()
        while True:  # a game may end before the learner is asked anything (a forfeit)
            self._send(self._commands_in, self._deal)
            self._deal += 1
            kind, _ = self._next()
            if kind == "request":
                return self._observation(), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        request = self._request
        if request is None:
            raise RuntimeError("step() without a game in progress: call reset() first")
        attacks = view_cards(request["observation"])[0]
        engine = engine_action(action, attacks)
        answer: Any
        if engine is None:
            answer = BotFailure("protocol", f"action index {action!r} names no action in this position")
        else:
            answer = action_to_wire(engine)
        self._send(self._learner.answers_in, answer)
        kind, value = self._next()
        if kind == "request":
            return self._observation(), 0.0, False, False, {}
        reward = seat_reward(value.durak, self.seat, self.players)
        info = {"termination": value.termination, "durak": value.durak, "reason": value.reason,
                "players": value.players}
        empty = {"observation": np.zeros(OBSERVATION_SIZE, np.int8),
                 "action_mask": np.zeros(ACTION_SIZE, np.int8)}
        return empty, reward, True, False, info

    def render(self) -> str | None:
        return rendered(None if self._request is None else self._request["observation"], self.render_mode)

    def close(self) -> None:
        self._close_run()
