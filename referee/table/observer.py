"""The one observer: what a view of a game may see, for every view kind.

A view is an int: a seat number (0 to 5) sees what a bot in that seat is sent; ``SPECTATOR``
sees what a person watching the table sees (no hand, no private event field);
``OMNISCIENT`` sees everything (a replay's full view). Everything here is a map form of
what the engine records, cut by one rule (``sees_private``: a view sees the hidden
information about a seat, its hand, what it drew, whether its move was forced, how long
it took, the detail of its forfeit, only if it is that seat or omniscient) and the private
marks of the protocol's declarations (``protocol.messages.EVENTS``: a draw's cards, a
declined exchange, the mark of a forced move). The bot protocol's frames
(``requests.EventFrames``, ``RequestFrames``) apply the same rule to the same marks;
the spectator stream (``spectator``), the replays (``referee/replay``, ``referee/web``)
and the live page read their views here.

Pure: no I/O, no trio.
"""

from __future__ import annotations

from typing import Any, Final

from protocol.messages import EVENTS, OBSERVATION

from ..rules import Game
from ..rules.cards import mask_str
from .requests import OMNISCIENT, sees_private

SPECTATOR: Final = -1
"""The view of a person watching the table: no seat (``Game.public_event`` then shows only
what the whole table sees)."""

#: The observation's fields that are about the viewing seat itself (absent from the views
#: of no seat).
_SEAT_FIELDS: Final = ("seat", "hand")
assert all(name in OBSERVATION.by_name for name in _SEAT_FIELDS)


def view_of(seat: int | None) -> int:
    """The view of ``seat``; None (no seat chosen: a replay's full view) is OMNISCIENT."""
    return OMNISCIENT if seat is None else seat


def logged_seat(value: object) -> int:
    """A seat number read from a log (a forfeit's ``seat``), as a view: that seat, or
    SPECTATOR (no seat) when it is not one (a damaged log)."""
    return value if type(value) is int else SPECTATOR


def event(game: Game, recorded: tuple[Any, ...], view: int, forced: bool = False) -> dict[str, Any] | None:
    """One recorded event (from ``game.events``) as ``view`` sees it, in wire form, or None
    when it does not see it at all (another seat's declined exchange). ``forced``: the
    event is a move the rules forced (marked ``forced`` for its own seat only)."""
    seat: int = recorded[1]
    wire = game.public_event(recorded, seat)  # as the event's own seat sees it: all of it
    assert wire is not None, "a seat sees every event about itself"
    record = EVENTS.get(wire["type"])
    if forced and record is not None and "forced" in record.by_name:
        wire["forced"] = True
    if sees_private(view, seat) or record is None:
        return wire
    if record.private:
        return None
    return {k: v for k, v in wire.items() if k not in record.by_name or not record.by_name[k].private}


def observation(game: Game, view: int) -> dict[str, Any]:
    """What ``view`` sees of the position, in the protocol's observation form: a seat's
    is ``game.observe(seat)``; a spectator's the same without the seat's own fields
    (``seat``, ``hand``); the omniscient view's adds ``hands``, every hand."""
    if view >= 0:
        return game.observe(view)
    seen = {k: v for k, v in game.observe(0).items() if k not in _SEAT_FIELDS}
    if view == OMNISCIENT:
        seen["hands"] = [mask_str(h) for h in game.hands]
    return seen


def hands(game: Game, view: int) -> list[list[str] | None]:
    """Each seat's hand as ``view`` sees it: the cards, or None where it sees only the
    count (``observation``'s ``hand_sizes``)."""
    return [mask_str(h) if sees_private(view, s) else None for s, h in enumerate(game.hands)]


def sees_decision(game: Game, view: int) -> bool:
    """Whether ``view`` sees the decision just applied at all (its first recorded event:
    another seat's declined exchange is no event to the others)."""
    assert game.events, "the game records events, and a decision was just applied"
    return event(game, game.events[0], view) is not None


__all__ = ["OMNISCIENT", "SPECTATOR", "event", "hands", "observation", "sees_decision",
           "logged_seat", "sees_private", "view_of"]
