"""Every seat's clock of one game as the whole table may see it: what a person's page
shows beside each name (the browser seat, ``referee/web/seat.py``).

A clock is public at a real table, but not every decision is: a declined trump exchange
is told to nobody but the seat that declined (protocol/SPEC.md, Events), so a clock that
ran, or gained its increment, during that decision would tell everyone who holds the
deck's lowest trump. So these clocks count public decisions only, from facts every seat
has: the time control, the public events and when they happened, and, for a person's
seat, when its public move was asked, paused and answered (a person's page is served by
this referee, so that is known exactly). A bot's move is charged the time since the
table's previous step (built-ins answer in microseconds; a TCP bot's thinking shows
when its move arrives). A seat's own page shows the referee's exact clock for its own
move (the request's ``clock``); for a seat that declined an exchange this public clock
differs from it by that decision's time and increment.

Pure: time is a parameter (seconds, as trio's clock reads them); no I/O, no trio.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: Public events that are a seat's decision (the rest follow from one: a bout's end,
#: draws, a seat going out).
DECISIONS = frozenset(("attack", "cover", "throw_in", "transfer", "show_trump", "take",
                       "pass", "exchange"))


def is_public_request(request: Mapping[str, Any]) -> bool:
    """Whether the other seats know this seat is on move: always but at a trump exchange
    offer (made only to the holder of the deck's lowest trump)."""
    return request["observation"].get("phase") != "exchange"


def is_public_answer(request: Mapping[str, Any], action: Mapping[str, Any]) -> bool:
    """Whether the other seats learn of this answer: all do but a declined trump exchange
    (a ``pass`` to the offer)."""
    return is_public_request(request) or action.get("type") != "pass"


class PublicClocks:
    """The clocks of a game of ``players`` seats under a time control of ``base_s`` (None:
    no game clock) + ``increment_s`` per decision, at most ``move_s`` per decision (None:
    no limit); ``people``: the seats whose moves are reported with ``asked`` and
    ``answered``; ``now``: the game's start. ``on_change()`` is called whenever a person's
    move starts, pauses, resumes or ends (the others' pages are sent the clocks again)."""

    def __init__(self, players: int, base_s: float | None, increment_s: float,
                 move_s: float | None, people: set[int], now: float) -> None:
        self.remaining: list[float | None] = [base_s] * players
        self.increment_s, self.move_s = increment_s, move_s
        self.people = set(people)
        self.on_change: Callable[[], None] | None = None
        self._since = now  #: the table's previous step: a bot's move is charged from it
        self._running: int | None = None  #: the person whose public move is open
        self._started = 0.0
        self._paused_at: float | None = None
        self._paused_s = 0.0

    def _charge(self, seat: int, used: float) -> None:
        left = self.remaining[seat]
        if left is not None:
            self.remaining[seat] = left - used + self.increment_s

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def follow(self, message: Mapping[str, Any], now: float) -> None:
        """A spectator message of the game (``referee/table/spectator.py``) seen at ``now``:
        a bot's decision is charged to its seat; the end stops every clock."""
        if message.get("type") == "end":
            self._running = None
        elif message.get("type") == "event":
            ev = message["event"]
            if ev["type"] in DECISIONS and ev.get("seat") not in self.people:
                self._charge(ev["seat"], max(0.0, now - self._since))
        self._since = now

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

    def answered(self, seat: int, used_s: float, public: bool, now: float) -> None:
        """Person ``seat`` answered at ``now``, charged ``used_s`` by the referee; a
        ``public`` answer is charged here too (``is_public_answer``), a hidden one is not."""
        if public:
            self._charge(seat, used_s)
        self._running, self._paused_at, self._since = None, None, now
        self._changed()

    def _used(self, now: float) -> float:
        paused = self._paused_s + (0.0 if self._paused_at is None else now - self._paused_at)
        return max(0.0, now - self._started - paused)

    def view(self, now: float) -> list[dict[str, Any]]:
        """JSON-ready, by seat: ``remaining_ms`` (the game clock at ``now``, None without
        one), ``move_ms`` (what is left of the move's own limit, for the seat on move
        only), ``running`` (this seat's move is open and its clock runs), ``paused``."""
        used = self._used(now) if self._running is not None else 0.0
        seats = []
        for seat, left in enumerate(self.remaining):
            on_move = seat == self._running
            if left is not None and on_move:
                left -= used
            seats.append({"remaining_ms": None if left is None else max(0, int(1000 * left)),
                          "move_ms": None if not on_move or self.move_s is None
                          else max(0, int(1000 * (self.move_s - used))),
                          "running": on_move and self._paused_at is None,
                          "paused": on_move and self._paused_at is not None})
        return seats
