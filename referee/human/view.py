"""What a person at a seat sees in the terminal, and how their typing becomes an action.

Pure functions of protocol messages (the seat's ``game_start``, ``event``, ``request`` and
``game_end`` maps): the person sees exactly what a bot in that seat would receive, never
more. ``referee/human/terminal.py`` does the terminal I/O.

Cards are written as the protocol writes them (``6S``, ``TH``: rank, then suit letter C D
H S), so what the screen shows can be typed back; a trump is marked ``*``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from protocol.cards import RANKS, SUITS, parse_card_text

SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
#: The words a person may type for the actions without a card.
BARE_ACTIONS = ("take", "pass", "exchange")


def sort_hand(cards: Sequence[str], trump_suit: str) -> list[str]:
    """A hand in the order a player holds it: suit by suit (C D H S), trumps last,
    low to high within a suit."""
    def key(card: str) -> tuple[int, int, int]:
        return (card[1] == trump_suit, SUITS.index(card[1]), RANKS.index(card[0]))
    return sorted(cards, key=key)


def card_text(card: str, trump_suit: str) -> str:
    """``9H*`` for a trump, ``9C`` otherwise."""
    return card + ("*" if card[1] == trump_suit else "")


def action_text(action: Mapping[str, Any], trump_suit: str) -> str:
    """An action map as the person reads (and may type) it: ``attack 6S``, ``cover 0 7H*``."""
    kind = action["type"]
    if kind == "cover":
        return f"cover {action['slot']} {card_text(action['card'], trump_suit)}"
    if "card" in action:
        return f"{kind} {card_text(action['card'], trump_suit)}"
    return kind


def printable(text: str) -> str:
    """``text`` with every control character (an escape sequence that could redraw or
    retitle the person's terminal) shown as ``?``. Names are printable by protocol; this
    holds whatever a seat is called."""
    return "".join(c if c.isprintable() else "?" for c in text)


def _seat(seat: int, names: Sequence[str], me: int) -> str:
    return "you" if seat == me else f"{printable(names[seat])} (seat {seat})"


def start_lines(start: Mapping[str, Any]) -> list[str]:
    """The lines shown when a game begins (from the seat's ``game_start``)."""
    names, me = start["names"], start["seat"]
    trump = start["trump"]
    seats = ", ".join(f"{i}={'you' if i == me else printable(n)}" for i, n in enumerate(names))
    return [f"=== game {start['game']}: {seats}; dealer seat {start['dealer']} ===",
            f"trump: {card_text(trump, trump[1])} ({SUIT_NAMES[trump[1]]}); "
            f"{_seat(start['attacker'], names, me)} attack{'' if start['attacker'] == me else 's'} first"]


def event_line(event: Mapping[str, Any], names: Sequence[str], me: int, trump_suit: str) -> str | None:
    """One public event (the ``event`` map of an ``event`` message) as one line, or None
    for events not worth a line."""
    kind = event["type"]
    if kind == "bout_end":
        who = _seat(event["defender"], names, me)
        return f"--- bout over: {who} {'took the cards' if event['result'] == 'taken' else 'beat off the attack'}"
    if kind == "draw":
        who = _seat(event["seat"], names, me)
        cards = event.get("cards")
        shown = f": {' '.join(card_text(c, trump_suit) for c in cards)}" if cards else ""
        return f"    {who} draw{'' if event['seat'] == me else 's'} {event['count']}{shown}"
    if kind == "out":
        return f"    {_seat(event['seat'], names, me)} {'are' if event['seat'] == me else 'is'} out of the game"
    if kind == "decline":
        return "    you keep your cards (no trump exchange)"
    who = _seat(event["seat"], names, me)
    if kind == "exchange":
        return (f"    {who} exchange{'' if event['seat'] == me else 's'} {card_text(event['card'], trump_suit)}"
                f" for the trump {card_text(event['trump'], trump_suit)}")
    forced = " (your only move: played for you)" if event.get("forced") else ""
    return f"  {who}: {action_text(event, trump_suit)}{forced}"


def table_lines(obs: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """The table as the seat sees it: every seat's card count and role, publicly known
    cards, the cards in play, the trump, the talon count, the discard pile's cards and the
    seat's own hand sorted with trumps marked."""
    me, trump_suit = obs["seat"], obs["trump_suit"]
    lines = [f"--- bout {obs['bout']}: trump {card_text(obs['trump'], trump_suit)}, "
             f"talon {obs['talon']}, discard {len(obs['discard'])} ---"]
    for s in range(obs["players"]):
        role = ("attacker" if s == obs["attacker"] else "defender" if s == obs["defender"] else "")
        if s == obs["defender"] and obs.get("taking"):
            role = "defender, taking"
        state = "out" if obs["out"][s] else f"{obs['hand_sizes'][s]} cards"
        known = [c for c in obs["known"][s]] if s != me else []
        extra = f"; known: {' '.join(card_text(c, trump_suit) for c in known)}" if known else ""
        label = "you" if s == me else printable(names[s])
        lines.append(f"  seat {s} {label:<12} {state:<9} {role}{extra}".rstrip())
    pairs = [f"[{i}] {card_text(a, trump_suit)}/{card_text(c, trump_suit) if c else '--'}"
             for i, (a, c) in enumerate(obs["table"])]
    lines.append("  on the table: " + ("  ".join(pairs) if pairs else "(nothing)"))
    lines.append(discard_line(obs["discard"], trump_suit))
    hand = sort_hand(obs["hand"], trump_suit)
    lines.append("  your hand: " + (" ".join(card_text(c, trump_suit) for c in hand) or "(empty)"))
    return lines


def discard_line(discard: Sequence[str], trump_suit: str) -> str:
    """The discard pile, card by card: every card in it was face up on the table when it
    went there, so a person at a real table knows them all (the seat's observation lists
    them). Sorted as a hand is, so a suit's missing cards are easy to see."""
    cards = " ".join(card_text(c, trump_suit) for c in sort_hand(discard, trump_suit))
    return f"  discard pile ({len(discard)}): {cards or '(empty)'}"


def clock_line(clock: Mapping[str, Any] | None) -> str | None:
    """"clock: 41.2 s left (+0.5 per move), at most 10 s for this move", or None without
    any limit worth showing."""
    if not clock:
        return None
    parts = []
    if clock.get("remaining_ms") is not None:
        inc = clock.get("increment_ms")
        parts.append(f"{clock['remaining_ms'] / 1000:.1f} s left"
                     + (f" (+{inc / 1000:g} per move)" if inc else ""))
    if clock.get("move_ms") is not None and clock["move_ms"] < 3600_000:
        parts.append(f"at most {clock['move_ms'] / 1000:g} s for this move")
    return "clock: " + ", ".join(parts) if parts else None


_KIND_ORDER = ("exchange", "attack", "throw_in", "transfer", "show_trump", "cover", "take", "pass")


ActionMap = TypeVar("ActionMap", bound=Mapping[str, Any])


def menu_order(legal: Sequence[ActionMap], trump_suit: str) -> list[ActionMap]:
    """The legal actions in the order the menu shows them: by kind, cover by slot, cards
    in hand order (``sort_hand``: trumps last); take and pass at the end."""
    def key(action: Mapping[str, Any]) -> tuple[int, int, bool, int, int]:
        card = action.get("card")
        kind = _KIND_ORDER.index(action["type"]) if action["type"] in _KIND_ORDER else len(_KIND_ORDER)
        if card is None:
            return (kind, 0, False, 0, 0)
        return (kind, action.get("slot", 0), card[1] == trump_suit, SUITS.index(card[1]), RANKS.index(card[0]))
    return sorted(legal, key=key)


def menu_lines(legal: Sequence[Mapping[str, Any]], trump_suit: str, phase: str = "") -> list[str]:
    """The legal actions, numbered from 1. In the trump-exchange ``phase`` the two choices
    say what they do."""
    notes = {"exchange": " (swap the deck's lowest trump, which you hold, for the face-up trump)",
             "pass": " (keep your cards)"} if phase == "exchange" else {}
    return [f"  {i + 1}) {action_text(a, trump_suit)}{notes.get(a['type'], '')}"
            for i, a in enumerate(legal)]


@dataclass(frozen=True)
class Choice:
    """What a typed line meant: ``index`` into the legal list, or ``error`` (a message
    for the person; they are asked again)."""

    index: int | None = None
    error: str | None = None


HELP = ("type a number from the list, a card (like 6s, 10h, qd; to cover a chosen slot: "
        "'cover 1 7s'), or take / pass / exchange")

#: The words that are not moves: what each does, as the help shows it.
COMMANDS = {"help": "show this help", "discard": "show the discard pile's cards",
            "quit": "leave the table (this game is lost; Ctrl-D does the same)"}
#: What the prompt says, so nobody has to guess how to get help or leave.
PROMPT_HINT = "(number, card or word; help, discard, quit)"


def command_of(text: str) -> str | None:
    """The command (a key of ``COMMANDS``) a typed line asks for, or None for a move.
    ``?`` is help, ``q`` and ``exit`` quit."""
    word = text.strip().lower()
    word = {"?": "help", "h": "help", "q": "quit", "exit": "quit"}.get(word, word)
    return word if word in COMMANDS else None


def help_lines() -> list[str]:
    """The help a person gets for ``help``: how to move, then the commands."""
    return [f"  {HELP}", *(f"  {name:<8} {what}" for name, what in COMMANDS.items())]


def parse_choice(text: str, legal: Sequence[Mapping[str, Any]]) -> Choice:
    """Read the person's line against the legal list. Accepts the action's number, the
    action's text (``cover 0 7S``, ``take``; a trailing ``*`` is ignored), or a bare card
    when exactly one legal action plays it. Never raises: anything else is an ``error``."""
    words = text.replace("*", " ").lower().split()
    if not words:
        return Choice(error=f"nothing typed; {HELP}")
    if len(words) == 1 and words[0].isdecimal():
        n = _number(words[0])
        if n is not None and 1 <= n <= len(legal):
            return Choice(index=n - 1)
        return Choice(error=f"{_short(words[0])}: there is no action {_short(words[0])}; "
                      f"choose 1 to {len(legal)}")
    kinds = {a["type"] for a in legal}
    if len(words) == 1 and words[0] in BARE_ACTIONS + ("show_trump", "attack", "cover", "throw_in", "transfer"):
        word = words[0]
        found = [i for i, a in enumerate(legal) if a["type"] == word]
        if word in BARE_ACTIONS and found:
            return Choice(index=found[0])
        if word not in kinds:
            return Choice(error=f"'{word}' is not possible now; possible: "
                          f"{', '.join(sorted(kinds))}")
        return Choice(error=f"'{word}' needs a card, e.g. '{action_text(legal[found[0]], '')}'")
    kind = None
    if words[0] in ("attack", "cover", "throw_in", "transfer", "show_trump", "show", "throw"):
        kind = {"show": "show_trump", "throw": "throw_in"}.get(words[0], words[0])
        words = words[1:]
    slot = None
    if kind == "cover" and len(words) == 2 and words[0].isdecimal():
        number = _number(words[0])
        slot, words = (-1 if number is None else number), words[1:]  # -1: no such slot
    if len(words) != 1:
        return Choice(error=f"{_short(text.strip())!r}: not understood; {HELP}")
    try:
        card = parse_card_text(words[0])
    except ValueError:
        return Choice(error=f"{_short(words[0])!r} is not a card; {HELP}")
    found = [i for i, a in enumerate(legal) if a.get("card") == card
             and (kind is None or a["type"] == kind) and (slot is None or a.get("slot") == slot)]
    if len(found) == 1:
        return Choice(index=found[0])
    if not found:
        what = f"{kind} {card}" if kind else card
        if slot is not None:
            what = f"cover {slot} {card}"
        return Choice(error=f"{what} is not a legal move now; choose from the list")
    options = ", ".join(f"{i + 1}) {action_text(legal[i], '')}" for i in found)
    return Choice(error=f"{card} can be played more than one way: {options}; type the number")


def _number(word: str) -> int | None:
    """A typed decimal number; None for one too long to be a move or a slot."""
    return int(word) if len(word) <= 6 else None


def _short(text: str, limit: int = 20) -> str:
    """Typed text quoted back, cut so a pasted page does not flood the screen."""
    return text if len(text) <= limit else text[:limit] + "..."


def end_lines(end: Mapping[str, Any], names: Sequence[str], me: int) -> list[str]:
    """The result of a game as the seat is told it."""
    durak = end["durak"]
    if durak is None:
        verdict = "a draw: nobody is the durak"
    elif durak == me:
        verdict = "you are the durak"
    else:
        verdict = f"{names[durak]} (seat {durak}) is the durak"
    return [f"=== game {end['game']} over: {printable(verdict)} ({end['termination']}: "
            f"{printable(end['reason'])}) ==="]


def person_result_lines(summary: Mapping[str, Any], me: str) -> list[str]:
    """The end of ``play`` for the person: how many games were played, who was the durak
    how often (the loser is the durak), the draws, and the score over the games: a game
    the person was not the durak of is a point, a draw half of one. ``summary`` is the
    match summary (``MatchResult.summary``), ``me`` the person's seat name."""
    games = summary["games"]
    if games == 0:
        return ["no game was finished"]
    def times(n: int) -> str:
        return f"{n} time{'s' if n != 1 else ''}"
    lines = [f"=== {games} game{'s' if games != 1 else ''} played ==="]
    mine = 0
    for bot in summary["bots"]:
        who = "you were" if bot["name"] == me else f"{printable(bot['name'])} was"
        lines.append(f"  {who} the durak {times(bot['durak'])}")
        if bot["name"] == me:
            mine = bot["durak"]
    draws = summary["draws"]
    if draws:
        lines.append(f"  {times(draws)} nobody was the durak (a draw)")
    points = games - mine - draws + draws / 2
    lines.append(f"your score: {points:g} of {games} (a game you did not lose is 1, a draw 1/2)")
    return lines
