"""How a seat loses a game by its own fault: the ``Forfeit`` the decision loop raises,
and the texts that say why.

A bot's failure is a game result: a timeout, a crash, a protocol error, an illegal
action or a lost connection ends the game as that seat's forfeit. The loop
(``framelane``) raises a ``Forfeit``; ``match.play_game`` tells the seat why (when the
forfeit carries a message for it) and records the game with the evidence.
"""

from __future__ import annotations

from typing import Any

from protocol import messages as msg

from ..rules import Game
from ..rules.actions import action_str
from ..seats.players import BotFailure

#: Terminations where a seat forfeited (it is the durak).
FORFEITS = ("timeout", "crash", "protocol", "illegal", "disconnect")

#: Which seats (a log header's bot ``kind``) can forfeit each way, from what each seat
#: raises: a built-in runs in the referee, so only its clock fails it (``late``; a wrong
#: answer of its own is our bug, never a forfeit); only a program bot has a process that
#: dies (``crash``, seats/process.py); only a connection or a person leaves
#: (``disconnect``: seats/tcp.py, human/terminal.py, web/seat.py); a stream bot or a
#: learner (``human``) can send what is not an action (``protocol``) or an illegal one.
#: The replay's verification (replay/replay.py ``check_forfeit``) holds logs to this.
FORFEIT_SEATS = {
    "timeout": ("builtin", "command", "tcp", "human"),
    "crash": ("command",),
    "protocol": ("command", "tcp", "human"),
    "illegal": ("command", "tcp", "human"),
    "disconnect": ("tcp", "human"),
}
#: Forfeits of an answer (``settle``, ``Player.finish``): only the seat being asked
#: incurs them, at the point where the record ends. One exception: a bot that stopped
#: reading its input as a game ended (``Player.flush``, ``tell``) keeps that
#: ``timeout`` failure and forfeits when the next game's start is handed to it, before
#: any decision. The other kinds are noticed whenever the referee next hands the seat a
#: message (every seat hears every event): any seat, at any point of the game.
ASKED_FORFEITS = ("timeout", "illegal")


class Forfeit(Exception):
    """A seat lost the game by its own fault (bad message, illegal action, ...).
    ``tell``: the fatal ``error`` message the seat is told before the game ends (None:
    nothing to tell, the seat's own failure already said it or it is gone)."""

    def __init__(self, seat: int, kind: str, reason: str, evidence: dict[str, Any],
                 tell: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.seat, self.kind, self.reason, self.evidence = seat, kind, reason, evidence
        self.tell = tell


def failed(seat: int, failure: BotFailure, request_id: int | None = None) -> Forfeit:
    """The forfeit of ``seat`` for its bot's ``failure`` (during request ``request_id``,
    named in the reason, when given). The seat told itself, if it was to be told."""
    reason = failure.reason if request_id is None else f"{failure.reason} (request {request_id})"
    return Forfeit(seat, failure.kind, reason, failure.evidence)


def late(seat: int, request_id: int, used: float, budget: float | None, answer: object,
         wall: float | None = None, cpu: bool = False) -> Forfeit:
    """The forfeit of a seat that answered request ``request_id`` over its time budget
    (``answer``: what it answered, as evidence). Under the cpu clock ``wall`` is the
    decision's wall time, and ``cpu`` says that ``used`` is its CPU time (else the wall
    time passed the backstop, ``budget``)."""
    if wall is None:
        reason = f"answered request {request_id} after {used:.3f} s, over its budget of {budget:.3f} s"
    elif cpu:
        reason = (f"answered request {request_id} after {used:.3f} s of CPU ({wall:.3f} s wall), "
                  f"over its CPU budget of {budget:.3f} s")
    else:
        reason = (f"answered request {request_id} after {used:.3f} s of wall time, past the "
                  f"cpu clock's wall backstop of {budget:.3f} s")
    evidence: dict[str, Any] = {"used_s": round(used, 4), "budget_s": budget, "received": answer}
    if wall is not None:
        evidence.update(clock="cpu" if cpu else "wall backstop", wall_s=round(wall, 4))
    return Forfeit(seat, "timeout", reason, evidence, msg.error_msg("timeout", reason, True))


def illegal_message(game: Game, action: int, request_id: int) -> str:
    """The ``error`` message (code ``illegal``) for a well-formed action that is not legal."""
    return (f"illegal action {action_str(action)} for request {request_id}: "
            f"{game.illegal_reason(action) or 'not legal now'}")


def forfeit_reason(name: str, kind: str, detail: str | None = None) -> str:
    """The ``reason`` of a game lost by forfeit. ``detail`` (what the bot did wrong, which
    may name a card it holds) goes only to the log and to the forfeiting seat; the other
    seats get the reason without it."""
    return f"{name} forfeited ({kind})" + (f": {detail}" if detail is not None else "")
