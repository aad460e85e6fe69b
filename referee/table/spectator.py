"""What a spectator of a game in play may see, and the table it rebuilds from that.

A spectator sits at no seat. While a game runs it learns exactly what a person watching
a real table learns: the names, the face-up trump, how many cards each hand and the
talon hold, every card laid on the table, who took, how many cards were discarded, who
went out, every exchange of the trump. It never learns a card in a hand (except those
everyone saw being picked up or shown) or the talon order.

So the spectator stream is built from the engine's public events, as the observer shows
them to the view ``SPECTATOR`` (``observer.event``: a draw comes without its cards, a
declined exchange does not come at all), plus a start message made of the
public facts of the deal (counts, the trump, the roles) and the end message every seat
gets. ``PublicTable`` rebuilds the table from these messages alone; it never sees a
``Game``. Pure: no I/O, no trio (``referee/table/match.py`` imports it).

Messages (JSON-ready maps, each with ``game``, the game's index in its run):

- ``{"type": "start", "game", "names", "dealer", "trump", "trump_holder", "talon",
  "hand_sizes", "known", "attacker", "defender"}``
- ``{"type": "event", "game", "event": <public event, protocol/SPEC.md>, "clocks"}``:
  ``clocks``, by seat, the game clock's milliseconds left after the decision (None
  without a game clock) as the referee charged them, less what hidden decisions did
  (``table/clock.py`` ``Clock.public_remaining_ms``, attached by ``framelane.deliver``)
- ``{"type": "end", "game", "durak", "termination", "reason"}`` (the reason without a
  forfeiting bot's detail, which may name a card it holds)
"""

from __future__ import annotations

from typing import Any

from ..rules import Game
from ..rules.cards import card_str
from . import observer
from .observer import SPECTATOR


def start_message(game: Game, index: int, names: list[str]) -> dict[str, Any]:
    """The public facts of a freshly dealt game: nothing a spectator could not count or
    see on the table (the only card named is the face-up trump)."""
    holder = game.trump_holder
    return {"type": "start", "game": index, "names": list(names), "dealer": game.dealer,
            "trump": card_str(game.trump_card), "trump_holder": holder,
            "talon": len(game.talon), "hand_sizes": [h.bit_count() for h in game.hands],
            # Whole deck dealt: the dealer's last card was shown to set the trump.
            "known": [[card_str(game.trump_card)] if seat == holder else []
                      for seat in range(game.players)],
            "attacker": game.attacker, "defender": game.defender}


def public_message(game: Game, index: int, event: tuple[Any, ...]) -> dict[str, Any] | None:
    """One recorded engine event as a spectator sees it, or None when it does not."""
    wire = observer.event(game, event, SPECTATOR)
    return None if wire is None else {"type": "event", "game": index, "event": wire}


def end_message(index: int, public_end: dict[str, Any]) -> dict[str, Any]:
    """The end of game ``index`` from the ``game_end`` message the non-forfeiting seats get."""
    return {"type": "end", "game": index, "durak": public_end["durak"],
            "termination": public_end["termination"], "reason": public_end["reason"]}


class PublicTable:
    """A game as a spectator follows it, rebuilt from spectator messages only.

    ``apply`` each message in order; ``view()`` is the table now. Roles follow the rules
    (docs/RULES.md): a transfer makes its seat the main attacker; after a bout the
    defender attacks next unless they took or went out, then the next seat in does."""

    def __init__(self, start: dict[str, Any]) -> None:
        self.game: int = start["game"]
        self.names: list[str] = list(start["names"])
        n = len(self.names)
        self.trump: str = start["trump"]
        self.trump_holder: int | None = start["trump_holder"]
        self.talon: int = start["talon"]
        self.hand_sizes: list[int] = list(start["hand_sizes"])
        self.known: list[list[str]] = [list(k) for k in start["known"]]
        self.attacker: int = start["attacker"]
        self.defender: int = start["defender"]
        self.table: list[list[str | None]] = []
        self.discard = 0
        self.out = [False] * n
        self.taking = False
        self.bout = 1
        self.end: dict[str, Any] | None = None
        self.last: list[str] = []  #: the latest events, as short text, newest last
        self._after_bout: tuple[int, bool] | None = None  #: (defender, taken) of a bout just ended

    def _next_in(self, seat: int) -> int:
        n = len(self.names)
        s = (seat + 1) % n
        while self.out[s] and s != seat:
            s = (s + 1) % n
        return s

    def _roles(self, attacker: int) -> None:
        self.attacker = attacker
        self.defender = self._next_in(attacker)

    def _lay(self, seat: int, card: str) -> None:
        self.table.append([card, None])
        self._leaves(seat, card)

    def _leaves(self, seat: int, card: str) -> None:
        self.hand_sizes[seat] -= 1
        if card in self.known[seat]:
            self.known[seat].remove(card)

    def apply(self, message: dict[str, Any]) -> None:
        """Follow one spectator message (``start`` messages are for the constructor)."""
        if message["type"] == "end":
            self.end = {k: message[k] for k in ("durak", "termination", "reason")}
            return
        ev = message["event"]
        kind, seat = ev["type"], ev.get("seat")
        if kind not in ("draw", "out") and self._after_bout is not None:
            self._after_bout = None  # the next bout has begun
        if kind == "attack" or kind == "throw_in":
            if kind == "attack":
                self._roles(seat)
            self._lay(seat, ev["card"])
        elif kind == "cover":
            self.table[ev["slot"]][1] = ev["card"]
            self._leaves(seat, ev["card"])
        elif kind == "transfer":
            self._lay(seat, ev["card"])
            self._roles(seat)
        elif kind == "show_trump":
            if ev["card"] not in self.known[seat]:
                self.known[seat].append(ev["card"])
            self._roles(seat)
        elif kind == "take":
            self.taking = True
        elif kind == "exchange":
            # The seat puts the deck's lowest trump under the talon and takes the face-up one.
            self.known[seat].append(ev["trump"])
            self.trump = ev["card"]
        elif kind == "bout_end":
            laid = [c for pair in self.table for c in pair if c is not None]
            defender = ev["defender"]
            if ev["result"] == "taken":
                self.hand_sizes[defender] += len(laid)
                self.known[defender].extend(laid)
            else:
                self.discard += len(laid)
            self.table, self.taking = [], False
            self.bout += 1
            self._after_bout = (defender, ev["result"] == "taken")
        elif kind == "draw":
            self.hand_sizes[seat] += ev["count"]
            self.talon -= ev["count"]
            if self.talon == 0:  # the face-up trump is drawn last, in everyone's sight
                self.trump_holder = seat
                if self.trump not in self.known[seat]:
                    self.known[seat].append(self.trump)
        elif kind == "out":
            self.out[seat] = True
        if self._after_bout is not None:
            defender, taken = self._after_bout
            self._roles(self._next_in(defender) if taken or self.out[defender] else defender)
        self.last = (self.last + [event_text(ev, self.names)])[-8:]

    def view(self) -> dict[str, Any]:
        """The table now, JSON-ready: what a spectator's page draws."""
        return {"game": self.game, "names": self.names, "trump": self.trump,
                "trump_holder": self.trump_holder, "talon": self.talon,
                "hand_sizes": list(self.hand_sizes), "known": [sorted(k) for k in self.known],
                "attacker": self.attacker, "defender": self.defender,
                "table": [list(p) for p in self.table], "discard": self.discard,
                "out": list(self.out), "taking": self.taking, "bout": self.bout,
                "last": list(self.last), "end": self.end}


def event_text(ev: dict[str, Any], names: list[str]) -> str:
    """One public event as a short line for people ("alice attacks 7C")."""
    kind = ev["type"]
    who = names[ev["seat"]] if isinstance(ev.get("seat"), int) else ""
    if kind == "bout_end":
        return f"{names[ev['defender']]} {'took' if ev['result'] == 'taken' else 'beat off'} the bout"
    if kind == "draw":
        return f"{who} draws {ev['count']}"
    if kind == "out":
        return f"{who} is out"
    if kind == "exchange":
        return f"{who} exchanges {ev['card']} for the trump {ev['trump']}"
    card = f" {ev['card']}" if "card" in ev else ""
    verb = {"attack": "attacks", "cover": "covers", "throw_in": "throws in", "transfer": "transfers",
            "show_trump": "shows the trump", "take": "takes", "pass": "passes"}.get(kind, kind)
    return f"{who} {verb}{card}"


__all__ = ["SPECTATOR", "PublicTable", "end_message", "event_text", "public_message",
           "start_message"]
