"""The synchronous decision path of a game between program bots that take request frames.

A decision of a bot over a pipe that answers at once needs no coroutine: the request
frame is joined from packed parts (``requests.RequestFrames``), written, and the answer
read, by ``StreamPlayer.decide_frame_now``, without waiting in trio. ``play_frames``
plays a game's decisions so, one after the other, for as long as every one of them
finishes that way; the first one that does not (a slow bot, a write that would block,
an answer that must be decoded and judged, the periodic yield to trio, a failure) is
left open, and ``play_game`` awaits ``_Table.ask``, which finishes it exactly as it
finishes any request. Every verdict (deadlines, early and second answers, protocol
errors, illegal actions, timeouts) stays with that awaited path: this one takes only
a canonical, legal answer to the open request that came within its budget.

This module imports no trio (a test enforces that: it is written to be compiled by
mypyc, and correct and tested as plain Python too). Bot data is typed ``object``: a
compiled function checks the types of its arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..rules.game import OVER, Game
from .requests import ACTIONS_BY_BYTES


@dataclass(slots=True)
class Decision:
    """One action of a game: who, what, whether it was forced, the seconds charged."""

    seat: int
    action: int
    forced: bool
    seconds: float


def ask_fast(table: Any, game: Game, seat: int, legal: list[int]) -> tuple[int, float] | None:
    """Ask ``seat`` of ``table`` (a ``match._Table``; the seat's player takes frames) in
    one synchronous step: when its bot answers at once (``decide_frame_now``) with a
    canonical legal action within its budget, charge the clock, apply the action and
    return (action, seconds charged). Otherwise return None with the request, if it was
    sent, left open in ``table.open_request`` for ``table.ask`` (which the caller
    awaits next) to finish exactly as it finishes any request."""
    ids: list[int] = table.request_ids
    request_id = ids[seat] + 1
    ids[seat] = request_id
    clock = table.clocks[seat]
    budget: float | None = clock.budget()
    frame: bytes = table.requests.frame(seat, request_id, legal, clock.wire())
    player = table.players[seat]
    answer: object = player.decide_frame_now(frame, request_id, budget, ACTIONS_BY_BYTES)
    if type(answer) is int and answer in legal:  # a known action's bytes (ACTIONS_BY_BYTES)
        timing: tuple[float, float] = player.timing
        used = timing[1] - timing[0]
        if used < 0.0:
            used = 0.0
        # Charged only when in time: a late answer is left to ``ask``, which charges
        # and judges it as it judges every answer.
        if budget is None or used <= budget:
            clock.charge(used)
            game.apply_legal(answer)
            return answer, used
    table.open_request = (seat, request_id, frame, budget, answer)
    return None


def play_frames(table: Any, game: Game, decisions: list[Decision]) -> tuple[int, list[int]] | None:
    """Play ``game`` on ``table`` (every seat's player takes frames, and events go out
    queued: ``_Table.frames_now``) for as long as each decision finishes synchronously
    (``ask_fast``): forced actions applied unasked, each action appended to
    ``decisions`` and its events queued to the bots (``table.broadcast_now``), as
    ``play_game``'s loop does. Returns None once the game is over, or (seat, legal
    list) of the decision ``ask_fast`` left open, for ``table.ask`` to finish."""
    broadcast_now = table.broadcast_now
    append = decisions.append
    while game.phase != OVER:
        legal = game.legal_actions()
        seat = game.seat_to_move()
        # (forced_action says no to any choice; asked only when there is none)
        action = game.forced_action(legal) if len(legal) == 1 else None
        if action is not None:
            game.apply_legal(action)
            append(Decision(seat, action, True, 0.0))
            if game.events:
                broadcast_now(game, True)
            continue
        done = ask_fast(table, game, seat, legal)
        if done is None:
            return seat, legal
        append(Decision(seat, done[0], False, done[1]))
        if game.events:
            broadcast_now(game, False)
    return None
