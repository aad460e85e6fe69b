"""Every seat's clock of one game as the whole table may see it: what a person's page
shows beside each name (the browser seat, ``referee/web/seat.py``).

The clocks are the referee's own (``table/clock.py``): every public spectator message
carries each seat's public clock after the decision (``Clock.public_remaining_ms``:
charged exactly as the referee charged it, less what hidden decisions did to it, so a
declined trump exchange shows on no clock). This module charges nothing: it keeps the
latest public clocks and, for the table's people, whose public move is open, since
when, and whether it is paused (the person's page is away), so a page can tick the
open move's clock down between messages.

Pure: time is a parameter (seconds, as trio's clock reads them); no I/O, no trio.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def is_public_request(request: Mapping[str, Any]) -> bool:
    """Whether the other seats know this seat is on move: always but at a trump exchange
    offer (made only to the holder of the deck's lowest trump)."""
    return request["observation"].get("phase") != "exchange"


class TableClocks:
    """The clocks of a game of ``players`` seats as its table sees them, with at most
    ``move_s`` per decision (None: no limit); ``base_s``: the game clock's start (None:
    no game clock), shown until the first public message. ``on_change()`` is called
    whenever the clocks shown change (the people's pages are sent them again)."""

    def __init__(self, players: int, base_s: float | None, move_s: float | None) -> None:
        start = None if base_s is None else int(1000 * base_s)
        self.remaining_ms: list[int | None] = [start] * players
        self.move_s = move_s
        self.on_change: Callable[[], None] | None = None
        self._running: int | None = None  #: the person whose public move is open
        self._started = 0.0
        self._paused_at: float | None = None
        self._paused_s = 0.0

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def follow(self, message: Mapping[str, Any]) -> None:
        """A spectator message of the game (``referee/table/spectator.py``): its clocks
        are shown; the end stops every clock."""
        if message.get("type") == "end":
            self._running = None
            self._changed()
        clocks = message.get("clocks")
        if clocks is not None and clocks != self.remaining_ms:
            self.remaining_ms = list(clocks)
            self._changed()

    def asked(self, seat: int, now: float) -> None:
        """Person ``seat``'s public move is on their page from ``now``: their clock runs."""
        self._running, self._started, self._paused_at, self._paused_s = seat, now, None, 0.0
        self._changed()

    def paused(self, now: float) -> None:
        """The person on move left (no page of theirs is open): their clock stops."""
        if self._running is not None and self._paused_at is None:
            self._paused_at = now
            self._changed()

    def resumed(self, now: float) -> None:
        """The person on move is back: their clock runs again."""
        if self._paused_at is not None:
            self._paused_s += now - self._paused_at
            self._paused_at = None
            self._changed()

    def answered(self) -> None:
        """The person on move answered: no clock runs until the next move is asked (the
        referee's charge comes with the decision's public message, if it has one)."""
        self._running, self._paused_at = None, None
        self._changed()

    def _ran(self, now: float) -> float:
        """Seconds the open public move has run by ``now``, less its pauses."""
        paused = self._paused_s + (0.0 if self._paused_at is None else now - self._paused_at)
        return max(0.0, now - self._started - paused)

    def view(self, now: float) -> list[dict[str, Any]]:
        """JSON-ready, by seat: ``remaining_ms`` (the game clock at ``now``: the last
        public clock, less the open move's run so far; None without one), ``move_ms``
        (what is left of the move's own limit, for the seat on move only), ``running``
        (this seat's move is open and its clock runs), ``paused``."""
        ran_ms = int(1000 * self._ran(now)) if self._running is not None else 0
        seats = []
        for seat, left in enumerate(self.remaining_ms):
            on_move = seat == self._running
            seats.append({"remaining_ms": None if left is None
                          else max(0, left - ran_ms) if on_move else left,
                          "move_ms": None if not on_move or self.move_s is None
                          else max(0, int(1000 * self.move_s) - ran_ms),
                          "running": on_move and self._paused_at is None,
                          "paused": on_move and self._paused_at is not None})
        return seats
