"""The table rules: one table of options, presets built on it, ``key=value`` overrides.

This table is the single source of truth for every house rule: ``durak-ref rules``,
the CLI help, the match log header and docs/RULES.md all read from ``OPTIONS``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..errors import UserError
from .cards import DECK_LOW_RANK, RANKS

#: The fewest and the most players at a table: the one place this bound is written. The
#: engine, logs, the store, ratings, tournaments and every CLI option and help text that
#: bounds a table read it (tests/app/test_seat_bound.py holds them to it).
#: (Final with a literal: mypyc folds them into the compiled frame builder's indices.)
MIN_SEATS: Final = 2
MAX_SEATS: Final = 6
#: The bound in words, for messages and help texts: "2 to 6".
SEATS_TEXT = f"{MIN_SEATS} to {MAX_SEATS}"


def seat_count_error(players: int) -> str | None:
    """Why ``players`` cannot sit at any table ("a table has 2 to 6 players, not 7"), or
    None when the count is within MIN_SEATS..MAX_SEATS."""
    if MIN_SEATS <= players <= MAX_SEATS:
        return None
    return f"a table has {SEATS_TEXT} players, not {players}"


class RulesError(UserError, ValueError):
    """The user asked for rules that do not exist: an unknown preset or option, a bad
    value, or an impossible table. The message lists what is valid. Not a bot's fault."""

    hint = "`durak-ref rules` lists every option, its values and the presets"


NONE_WORDS = ("none", "off", "no", "unlimited")
_TRUE = ("on", "true", "yes", "1")
_FALSE = ("off", "false", "no", "0")


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        t = text.strip().lower()
        if t not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return t

    return parse


def _boolean(text: str) -> bool:
    t = text.strip().lower()
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    raise ValueError("expected on or off")


def _deck(text: str) -> int:
    t = text.strip()
    if t not in ("24", "36", "52"):
        raise ValueError("expected 24, 36 or 52")
    return int(t)


def _count_or_none(minimum: int) -> Callable[[str], int | None]:
    def parse(text: str) -> int | None:
        t = text.strip().lower()
        if t in NONE_WORDS:
            return None
        if not t.isdigit() or int(t) < minimum:
            raise ValueError(f"expected a whole number >= {minimum}, or none")
        return int(t)

    return parse


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        t = text.strip()
        if not t.isdigit() or int(t) < minimum:
            raise ValueError(f"expected a whole number >= {minimum}")
        return int(t)

    return parse


def _first_attacker(text: str) -> str:
    t = text.strip().lower()
    if t in ("lowest_trump", "dealer_next", "two_of_clubs"):
        return t
    if t.startswith("seat:") and t[5:].isdigit() and int(t[5:]) <= 5:
        return t
    raise ValueError("expected lowest_trump, dealer_next, two_of_clubs or seat:N (N = 0..5)")


def _exchange_seats(text: str) -> bool | tuple[int, ...]:
    t = text.strip().lower()
    if t in _TRUE or t == "everyone":
        return True
    if t in _FALSE or t == "nobody":
        return False
    if t.startswith("seats:"):
        parts = [p.strip() for p in t[6:].split(",")]
        if all(p.isdigit() and int(p) <= 5 for p in parts):
            return tuple(sorted({int(p) for p in parts}))
    raise ValueError("expected on (everyone may exchange), off (nobody), or seats:N,M,... "
                     "(the listed seats, 0..5)")


def _exchange_rank(text: str) -> str:
    t = text.strip().upper()
    if t == "LOWEST":
        return "lowest"
    if t == "10":
        t = "T"
    if len(t) == 1 and t in RANKS:
        return t
    raise ValueError(f"expected lowest, or one rank of {' '.join(RANKS)} (10 for T)")


#: What a table rule can be set to: a number, a name, on/off, seats (trump_exchange), none.
OptionValue = int | str | bool | tuple[int, ...] | None


@dataclass(frozen=True)
class Option:
    """One table rule: its name, default, the values it allows, and what it means."""

    name: str
    default: OptionValue
    allowed: str
    help: str
    parse: Callable[[str], OptionValue]
    #: Left out of ``Rules.as_dict`` (log headers, game_start) while at its default. Options
    #: added after logs and bots existed are quiet, so a table that does not use them
    #: writes and sends exactly the bytes it did before.
    quiet: bool = False

    def format(self, value: object) -> str:
        """The value as a user would type it in ``--set name=value``."""
        if value is None:
            return "none"
        if isinstance(value, bool):
            return "on" if value else "off"
        if isinstance(value, (tuple, list)):  # trump_exchange seats (a list once in a log)
            return "seats:" + ",".join(map(str, value))
        return str(value)


OPTIONS: tuple[Option, ...] = (
    Option("deck", 36, "24, 36, 52", "Deck size: 24 (9..A), 36 (6..A) or 52 (2..A) cards.", _deck),
    Option("first_attacker", "lowest_trump", "lowest_trump, dealer_next, two_of_clubs, seat:N",
           "Who opens the first bout: holder of the lowest trump (else dealer's next seat), "
           "the dealer's next seat, the holder of 2C, else 2D, 2H, 2S (52 cards only; else "
           "dealer's next seat), or seat N every game.", _first_attacker),
    Option("trump_exchange", False, "on, off, seats:N,M,...",
           "Before the first attack, the holder of the deck's lowest trump (or of the "
           "exchange_rank trump) may swap it for the face-up trump: on for every seat, off for "
           "nobody, or only the listed seats.",
           _exchange_seats),
    Option("throw_in_ranks", "all", "all, attacks",
           "Ranks that may be thrown in: any rank on the table, or attack cards' ranks only.",
           _choice("all", "attacks")),
    Option("max_attacks", 6, "number >= 1, none",
           "Most attack cards in one bout (none: only the defender's hand limits it).",
           _count_or_none(1)),
    Option("first_bout_limit", False, "on, off",
           "At most five attack cards in the first bout of the game.", _boolean),
    Option("ask_forced", True, "on, off",
           "Ask a seat even when its only legal action is pass or take, as every other "
           "decision (off, for speed: the referee applies it and logs it as forced; the "
           "other seats can then tell a forced move from a chosen one by how soon it "
           "follows the move before).", _boolean),
    Option("last_two_out", "draw", "draw, defender_loses",
           "When the last players go out in the same bout: a draw, or that bout's defender "
           "is the durak.", _choice("draw", "defender_loses")),
    Option("pickup_draw_limit", 40, "number >= 1, none",
           "With the talon empty, this many takes in a row with nobody going out end the game "
           "as a draw (stalemate).", _count_or_none(1)),
    Option("action_cap", 5000, "number >= 10",
           "Hard cap on actions in one game; reaching it ends the game as a draw "
           "(termination action_cap).", _count(10)),
    Option("transfer", "off", "off, on, trump_show, reflect",
           "off: podkidnoy (throw-in only). on: perevodnoy, the defender may pass the bout on "
           "with a card of the attacked rank. trump_show: also by showing that rank's trump. "
           "reflect: the card sends the bout back to the main attacker, who defends, and the "
           "direction of play reverses.",
           _choice("off", "on", "trump_show", "reflect")),
    Option("transfer_limit", None, "number >= 1, none",
           "Transfers allowed per bout (none: no limit; deflection tables use 1).",
           _count_or_none(1)),
    Option("draw_others", "clockwise", "clockwise, counter_clockwise",
           "After a bout the main attacker draws first, then the other attackers in this "
           "direction (relative to the direction of play), the defender last.",
           _choice("clockwise", "counter_clockwise"), quiet=True),
    Option("defender_fairness", False, "on, off",
           "A defender who beats off the attack and goes out in the same bout: off, the "
           "player on their left attacks next; on, that player defends and the same main "
           "attacker attacks again.", _boolean, quiet=True),
    Option("lead", "one", "one, same_rank",
           "The bout's lead: one card, or several cards of one rank (laid one attack at a "
           "time, ended by pass) within the bout's limit.", _choice("one", "same_rank"),
           quiet=True),
    Option("throw_in_timing", "covered", "covered, any",
           "When attackers may add cards: once every card is covered (or the defender takes), "
           "or any time, asked after every card laid, before the defender answers.",
           _choice("covered", "any"), quiet=True),
    Option("throw_in_order", "clockwise", "clockwise, counter_clockwise",
           "The order the attackers are asked to throw in: the main attacker first, then the "
           "others in this direction from the main attacker (relative to the direction of "
           "play), the defender never.", _choice("clockwise", "counter_clockwise"), quiet=True),
    Option("exchange_rank", "lowest", "lowest, a rank 2..A",
           "The trump that trump_exchange swaps for the face-up trump: the deck's lowest rank "
           "(the 6 in 36 cards, the 9 in 24, the 2 in 52) or the named rank (e.g. 6), which "
           "the deck must hold.", _exchange_rank, quiet=True),
)

OPTIONS_BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}


@dataclass(frozen=True)
class Rules:
    """A complete, validated set of table rules. Build with ``make_rules``."""

    deck: int = 36
    first_attacker: str = "lowest_trump"
    trump_exchange: bool | tuple[int, ...] = False  #: True, False, or the seats that may
    throw_in_ranks: str = "all"
    max_attacks: int | None = 6
    first_bout_limit: bool = False
    ask_forced: bool = True
    last_two_out: str = "draw"
    pickup_draw_limit: int | None = 40
    action_cap: int = 5000
    transfer: str = "off"
    transfer_limit: int | None = None
    draw_others: str = "clockwise"
    defender_fairness: bool = False
    lead: str = "one"
    throw_in_timing: str = "covered"
    throw_in_order: str = "clockwise"
    exchange_rank: str = "lowest"
    preset: str = "classic"

    def as_dict(self) -> dict[str, Any]:
        """Every option's value by name (the form written to logs and sent to bots),
        except quiet options at their default (``rules_from_dict`` restores them)."""
        return {o.name: v for o in OPTIONS for v in (getattr(self, o.name),)
                if not (o.quiet and v == o.default)}

    def describe(self) -> str:
        """One line: the preset and every option that differs from it."""
        base = PRESETS[self.preset]
        diffs = [f"{o.name}={o.format(getattr(self, o.name))}" for o in OPTIONS
                 if getattr(self, o.name) != base.get(o.name, o.default)]
        return self.preset + (" " + " ".join(diffs) if diffs else "")

    def exchange_rank_index(self) -> int:
        """The rank index (0 for 2 ... 12 for A) of the trump ``trump_exchange`` swaps."""
        er = self.exchange_rank
        return DECK_LOW_RANK[self.deck] if er == "lowest" else RANKS.index(er)

    def may_exchange(self, seat: int) -> bool:
        """Whether ``seat``, holding the deck's lowest trump, is offered the trump exchange."""
        te = self.trump_exchange
        return te is True or (isinstance(te, tuple) and seat in te)

    def check_table(self, players: int) -> None:
        """Raise RulesError if ``players`` cannot sit at a table with these rules."""
        problem = seat_count_error(players)
        if problem:
            raise RulesError(problem)
        if players * 6 > self.deck:
            raise RulesError(
                f"{players} players need {players * 6} cards for the deal; the deck has "
                f"{self.deck} (use --set deck=52, or fewer players)")
        if self.first_attacker.startswith("seat:") and int(self.first_attacker[5:]) >= players:
            raise RulesError(
                f"first_attacker={self.first_attacker} names a seat that does not exist at a "
                f"{players}-player table (seats are 0..{players - 1})")
        if isinstance(self.trump_exchange, tuple) and max(self.trump_exchange) >= players:
            raise RulesError(
                f"trump_exchange={OPTIONS_BY_NAME['trump_exchange'].format(self.trump_exchange)} "
                f"names a seat that does not exist at a {players}-player table (seats are "
                f"0..{players - 1})")


#: Presets: name -> option values that differ from the option defaults.
PRESETS: dict[str, dict[str, Any]] = {
    "classic": {},
    "perevodnoy": {"transfer": "on"},
    "perevodnoy_trump": {"transfer": "trump_show"},
    "deflection": {"transfer": "on", "transfer_limit": 1},
}
PRESET_HELP = {
    "classic": "podkidnoy: throw-in Durak with every option at its default",
    "perevodnoy": "the transfer game: the defender may pass the bout on",
    "perevodnoy_trump": "perevodnoy, and a trump of the attacked rank may be shown to pass on",
    "deflection": "perevodnoy with one transfer per bout",
}


def make_rules(preset: str = "classic", overrides: Mapping[str, str] | Iterable[str] = ()) -> Rules:
    """Rules from a preset name plus overrides, given as ``{"name": "value"}`` or as
    ``["name=value", ...]`` strings (the CLI's ``--set``). Raises RulesError naming
    the bad preset, option or value and listing the valid ones."""
    if preset not in PRESETS:
        raise RulesError(f"unknown rules preset {preset!r}; presets: {', '.join(PRESETS)}")
    values: dict[str, Any] = {o.name: o.default for o in OPTIONS}
    values.update(PRESETS[preset])
    pairs = overrides.items() if isinstance(overrides, Mapping) else map(_split, overrides)
    for name, text in pairs:
        name = name.strip()
        option = OPTIONS_BY_NAME.get(name)
        if option is None:
            raise RulesError(f"unknown rules option {name!r}; options: {', '.join(OPTIONS_BY_NAME)}")
        try:
            values[name] = option.parse(str(text))
        except ValueError as exc:
            raise RulesError(f"bad value {text!r} for rules option {name}: {exc}") from None
    rules = Rules(preset=preset, **values)
    _check_combination(rules)
    return rules


def _check_combination(rules: Rules) -> None:
    """Raise RulesError for options that cannot go together."""
    if rules.first_attacker == "two_of_clubs" and rules.deck != 52:
        raise RulesError(f"first_attacker=two_of_clubs needs the 52-card deck (deck={rules.deck} "
                         "has no twos); add --set deck=52")
    if rules.exchange_rank != "lowest" and rules.exchange_rank_index() < DECK_LOW_RANK[rules.deck]:
        low = RANKS[DECK_LOW_RANK[rules.deck]]
        raise RulesError(f"exchange_rank={rules.exchange_rank}: the {rules.deck}-card deck has no "
                         f"rank {rules.exchange_rank} (its ranks are {low}..A); name one of those, "
                         "or --set deck=52")


def rules_from_dict(data: Mapping[str, Any], preset: str = "classic") -> Rules:
    """Rules from the ``as_dict`` form (as stored in a log header). Unknown keys are an error.
    A quiet option that is absent has its default (``as_dict`` leaves it out), whatever
    the preset says."""
    full = {o.name: o.default for o in OPTIONS if o.quiet}
    full.update(data)
    return make_rules(preset, {k: OPTIONS_BY_NAME[k].format(v) if k in OPTIONS_BY_NAME else str(v)
                               for k, v in full.items()})


def _split(item: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep:
        raise RulesError(f"expected name=value, got {item!r}; options: {', '.join(OPTIONS_BY_NAME)}")
    return name, value

