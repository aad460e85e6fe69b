"""A seat's table as its player sees it, rebuilt from that seat's protocol messages alone.

The browser seat (``referee/web/seat.py``) draws the table from this, so a page holds
exactly what a bot in that seat receives: ``SeatTable`` never sees a ``Game``, only the
seat's ``game_start``, ``event``, ``request`` and ``game_end`` maps. Between the seat's
own requests it follows the public events (``spectator.PublicTable``, fed the seat's
events, which differ from a spectator's only in naming the seat's own drawn cards) and
tracks the seat's own hand; every request's observation then replaces the whole view,
so whatever the tracking missed is set right at the seat's next decision.

Also here: ``choose_answer``, how an answer typed or clicked by a person (anything at
all: an index, a map) becomes an element of the request's legal list or an error that
says why, never an exception: a bad click is asked again, never a forfeit.

Pure: no I/O, no trio.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..table.spectator import PublicTable

#: Cards each player is dealt (docs/RULES.md: a table where players x 6 > deck is refused).
HAND = 6


def seat_start(start: Mapping[str, Any]) -> dict[str, Any]:
    """The spectator ``start`` message (``spectator.start_message``) of the game a seat's
    ``game_start`` opens: only facts that seat may know (its own hand is not in it).
    Everyone holds six cards; when the deal used the whole deck, the dealer (dealt last)
    holds the shown trump (docs/RULES.md, Seats, dealer, deal, trump)."""
    n = start["players"]
    talon = int(start["rules"]["deck"]) - HAND * n
    holder = start["dealer"] if talon == 0 else None
    return {"type": "start", "game": start["game"], "names": list(start["names"]),
            "dealer": start["dealer"], "trump": start["trump"], "trump_holder": holder,
            "talon": talon, "hand_sizes": [HAND] * n,
            "known": [[start["trump"]] if seat == holder else [] for seat in range(n)],
            "attacker": start["attacker"], "defender": (start["attacker"] + 1) % n}


class SeatTable:
    """One seat's table during one game: ``follow`` each message the seat receives, in
    order; ``view()`` is what its page draws now."""

    def __init__(self, start: Mapping[str, Any]) -> None:
        self.seat: int = start["seat"]
        self.game: int = start["game"]
        self.names: list[str] = list(start["names"])
        self.rules: dict[str, Any] = dict(start["rules"])
        self.table = PublicTable(seat_start(start))
        self.hand: list[str] = list(start["hand"])
        self.request: dict[str, Any] | None = None  #: the open request (None: not our move)
        self.end: dict[str, Any] | None = None
        self.notice: str | None = None  #: the referee's last word to this seat (an error)

    def follow(self, message: Mapping[str, Any]) -> None:
        """Take one message the seat received (``event``, ``request``, ``game_end``,
        ``error``; others are ignored)."""
        kind = message.get("type")
        if kind == "event":
            self._event(message["event"])
        elif kind == "request":
            self.request = dict(message)
            self._observe(message["observation"])
        elif kind == "game_end":
            self.request = None
            self.end = {k: message[k] for k in ("durak", "termination", "reason")}
            self.table.apply({"type": "end", **self.end})
        elif kind == "error":
            self.notice = str(message.get("message"))

    def answered(self) -> None:
        """The open request has been answered: it is no longer ours to decide."""
        self.request = None
        self.notice = None

    def _event(self, ev: Mapping[str, Any]) -> None:
        before = [list(p) for p in self.table.table]
        self.table.apply({"type": "event", "game": self.game, "event": dict(ev)})
        if ev.get("seat") != self.seat and not (ev["type"] == "bout_end"
                                                 and ev["defender"] == self.seat):
            return
        kind = ev["type"]
        if kind in ("attack", "throw_in", "cover", "transfer") and ev["card"] in self.hand:
            self.hand.remove(ev["card"])
        elif kind == "draw":
            self.hand.extend(ev.get("cards") or [])
        elif kind == "exchange":
            # The seat lays the deck's lowest trump under the talon and takes the face-up one.
            if ev["card"] in self.hand:
                self.hand.remove(ev["card"])
            self.hand.append(ev["trump"])
        elif kind == "bout_end" and ev["result"] == "taken":
            self.hand.extend(c for pair in before for c in pair if c is not None)

    def _observe(self, obs: Mapping[str, Any]) -> None:
        """The request's observation is the whole truth: take every field we draw from it."""
        t = self.table
        self.hand = list(obs["hand"])
        t.trump, t.trump_holder, t.talon = obs["trump"], obs["trump_holder"], obs["talon"]
        t.table = [list(p) for p in obs["table"]]
        t.discard = len(obs["discard"])
        t.hand_sizes, t.out = list(obs["hand_sizes"]), list(obs["out"])
        t.known = [list(k) for k in obs["known"]]
        t.attacker, t.defender, t.taking, t.bout = (obs["attacker"], obs["defender"],
                                                    obs["taking"], obs["bout"])

    def view(self) -> dict[str, Any]:
        """JSON-ready: the public table (``PublicTable.view``), this seat's hand, the open
        request's legal list and clock (None when it is not this seat's move), the end."""
        data = self.table.view()
        request = self.request
        data.update(seat=self.seat, hand=list(self.hand), notice=self.notice,
                    request=None if request is None else {
                        "id": request["id"], "legal": request["legal"],
                        "clock": request.get("clock"),
                        "phase": request["observation"].get("phase")})
        return data


def choose_answer(request: Mapping[str, Any], request_id: Any, choice: Any) -> tuple[int | None, str]:
    """A person's answer to ``request`` -> (index into its legal list, "") or (None, why
    it cannot be taken). ``request_id``: the request the answer was made for (a click on
    a page that had not yet shown the newest request is refused, not misapplied);
    ``choice``: an index into the legal list or an action map equal to one of its elements.
    Any JSON value is handled (bools are not indices)."""
    if type(request_id) is not int or request_id != request["id"]:
        return None, f"that answer was for request {request_id!r}; the open request is {request['id']}"
    legal: Sequence[Mapping[str, Any]] = request["legal"]
    if type(choice) is int:
        if 0 <= choice < len(legal):
            return choice, ""
        return None, f"no move {choice} here: choose 0..{len(legal) - 1}"
    if isinstance(choice, dict):
        for i, action in enumerate(legal):
            if dict(action) == choice:
                return i, ""
        return None, "that move is not legal now; choose one of the moves offered"
    return None, "an answer is the number of a move or one of the moves offered"
