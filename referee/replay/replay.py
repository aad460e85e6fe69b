"""Replay and verification of match logs with the rules engine.

``verify_game`` re-simulates one logged game from its deck order and recorded
decisions and checks every step: the seat that acted was the seat to act, each action
was legal, the forced flag matches what the rules force, and the recorded result is
what the rules (or the recorded forfeit) give. ``game_steps`` yields the same replay
as printable lines, omniscient or as one seat saw it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..bots.solver import VALUE_NAMES, Solver, SolverLimit, solvable, terminal_value
from ..table import observer
from ..table.adjudicator import ADJUDICATED
from ..table.clock import CLOCKS
from ..table.match import FORFEITS, forfeit_reason
from ..rules import Game, Rules
from ..rules.actions import MalformedAction, action_from_wire, action_str, parse_action
from ..rules.cards import CardError, card_str, parse_card
from ..rules.options import RulesError, rules_from_dict


class Divergence(ValueError):
    """A logged game does not follow from its deck and decisions under the rules."""


@dataclass
class Verified:
    game: int
    ok: bool
    message: str


def log_rules(header: dict[str, Any]) -> Rules:
    try:
        return rules_from_dict(header["rules"], header.get("preset", "classic"))
    except (RulesError, KeyError, TypeError) as exc:
        raise Divergence(f"the header's rules cannot be used: {exc}") from None


def log_clock(header: dict[str, Any]) -> str:
    """The clock that ruled the log's games (table/clock.py ``CLOCKS``): its header's
    ``time_control.clock``, ``wall`` in a log written before there was a choice. Under
    ``cpu`` the decisions' milliseconds are CPU time. Raises Divergence for another value."""
    tc = header.get("time_control")
    clock = tc.get("clock", "wall") if isinstance(tc, dict) else "wall"
    if clock not in CLOCKS:
        raise Divergence(f"the header's time_control clock {clock!r} is none of {', '.join(CLOCKS)}")
    return str(clock)


def dealt_game(rules: Rules, record: dict[str, Any], events: bool = False) -> Game:
    """The logged game's start: its recorded deck dealt under ``rules`` (``Divergence`` if
    the record cannot be dealt from)."""
    try:
        deck = [parse_card(c) for c in record["deck"]]
        return Game.new(rules, len(record["players"]), deck=deck, dealer=record["dealer"],
                        record_events=events)
    except (CardError, RulesError, TypeError, ValueError) as exc:
        raise Divergence(f"game {record.get('game')}: cannot deal from the recorded deck: {exc}") from None


def replayed_decisions(game: Game, record: dict[str, Any]) -> Iterator[tuple[int, int, int, bool]]:
    """Apply each recorded decision after checking it; yields (number, seat, action, forced)."""
    g = record["game"]
    for i, entry in enumerate(record["decisions"]):
        try:
            seat, text, forced = entry[0], entry[1], bool(entry[2])
            action = parse_action(text)
        except (MalformedAction, TypeError, IndexError, KeyError) as exc:
            raise Divergence(f"game {g}, decision {i}: unreadable entry {entry!r}: {exc}") from None
        if game.is_over:
            raise Divergence(f"game {g}, decision {i}: {text} recorded after the game was over")
        if seat != game.current_seat:
            raise Divergence(f"game {g}, decision {i}: seat {seat} acted ({text}) but it was "
                             f"seat {game.current_seat}'s turn")
        reason = game.illegal_reason(action)
        if reason is not None:
            raise Divergence(f"game {g}, decision {i}: seat {seat} played {text}, which is "
                             f"illegal: {reason}")
        really_forced = game.forced_action() == action
        if forced != really_forced:
            raise Divergence(f"game {g}, decision {i}: {text} is logged as "
                             f"{'forced' if forced else 'asked'} but the rules "
                             f"{'force' if really_forced else 'do not force'} it")
        game.apply_legal(action)
        yield i, seat, action, forced


def verify_game(rules: Rules, record: dict[str, Any]) -> Game:
    """Re-simulate ``record`` and check it. Returns the final game; raises Divergence."""
    game = dealt_game(rules, record)
    for _ in replayed_decisions(game, record):
        pass
    g = record["game"]
    term, durak = record["termination"], record["durak"]
    if term in FORFEITS:
        forfeit = record.get("forfeit") or {}
        if forfeit.get("seat") != durak:
            raise Divergence(f"game {g}: forfeit by seat {forfeit.get('seat')} but durak {durak}")
        if game.is_over:
            raise Divergence(f"game {g}: recorded as a forfeit ({term}) but the game was already over")
        if term == "illegal":
            received = (forfeit.get("evidence") or {}).get("received")
            try:
                action = action_from_wire(received)
            except MalformedAction:
                raise Divergence(f"game {g}: the illegal action's evidence {received!r} is not an action") from None
            if forfeit.get("seat") != game.current_seat or game.illegal_reason(action) is None:
                raise Divergence(f"game {g}: {action_str(action)} by seat {forfeit.get('seat')} is "
                                 f"recorded as illegal, but it was legal")
        return game
    if term == ADJUDICATED:
        verify_adjudication(game, record)
        return game
    if not game.is_over:
        raise Divergence(f"game {g}: the decisions end before the game does (termination {term})")
    o = game.outcome
    assert o is not None
    if (o.termination, o.durak) != (term, durak):
        raise Divergence(f"game {g}: the log says {term}, durak {durak}; the rules give "
                         f"{o.termination}, durak {o.durak}")
    if list(o.last_out) != list(record.get("last_out", [])):
        raise Divergence(f"game {g}: last_out {record.get('last_out')} but the rules give {list(o.last_out)}")
    return game


#: Positions a re-proof of an adjudicated game may search (about a minute of the solver's
#: time): a proof the referee found within its budget takes far fewer; a log that names
#: a position beyond it fails verification rather than hold ``--verify`` up for hours.
VERIFY_NODES = 5_000_000


def verify_adjudication(game: Game, record: dict[str, Any], max_nodes: int = VERIFY_NODES) -> None:
    """Check an ``adjudicated`` record against ``game``, the position after its recorded
    decisions: it is a solved endgame (``solvable``), the logged line is legal and ends
    with the logged durak and ``last_out``, and the solver, searching afresh, proves that
    same value. Raises Divergence saying which check failed."""
    g = record["game"]
    durak, last_out = record["durak"], list(record.get("last_out", []))
    if not solvable(game):
        raise Divergence(f"game {g}: adjudicated, but the position after the last decision is not "
                         f"an endgame the solver decides (the talon must be empty and two seats "
                         f"hold cards)")
    proof = record.get("adjudication")
    line = proof.get("line") if isinstance(proof, dict) else None
    if not isinstance(line, list):
        raise Divergence(f"game {g}: adjudicated, but the record has no adjudication line")
    end = game.copy()
    for i, text in enumerate(line):
        try:
            action = parse_action(text)
        except (MalformedAction, TypeError) as exc:
            raise Divergence(f"game {g}, adjudication line step {i}: {text!r} is not an action: {exc}") from None
        reason = None if not end.is_over else "the game is already over"
        reason = reason or end.illegal_reason(action)
        if reason is not None:
            raise Divergence(f"game {g}, adjudication line step {i}: {text} is illegal: {reason}")
        end.apply_legal(action)
    if not end.is_over:
        raise Divergence(f"game {g}: the adjudication line ends before the game does")
    o = end.outcome
    assert o is not None
    if (o.durak, list(o.last_out)) != (durak, last_out):
        raise Divergence(f"game {g}: the log says durak {durak}, last_out {last_out}; its "
                         f"adjudication line ends with durak {o.durak}, last_out {list(o.last_out)}")
    side = min(s for s in range(game.players) if not game.out[s])
    try:
        proved = Solver(max_nodes=max_nodes).value(game, side)
    except SolverLimit:
        raise Divergence(f"game {g}: the adjudicated position could not be re-proved within "
                         f"{max_nodes} positions; its result is unchecked") from None
    claimed = terminal_value(end, side)
    if proved != claimed:
        raise Divergence(f"game {g}: adjudicated as a {VALUE_NAMES[claimed]} for seat {side}, but "
                         f"perfect play from that position gives seat {side} a {VALUE_NAMES[proved]}")


def verify_log(header: dict[str, Any], games: list[dict[str, Any]]) -> list[Verified]:
    """Verify every game; one entry per game (``ok`` False with the first divergence).
    Raises Divergence for a header that cannot be used (its rules, its clock)."""
    rules = log_rules(header)
    log_clock(header)
    out = []
    for record in games:
        try:
            verify_game(rules, record)
            out.append(Verified(record["game"], True, f"{record['termination']}, durak {record['durak']}"))
        except Divergence as exc:
            out.append(Verified(record.get("game", -1), False, str(exc)))
    return out


def game_steps(header: dict[str, Any], record: dict[str, Any], seat: int | None = None) -> Iterator[str]:
    """The game as printable lines: omniscient (``seat`` None) or as ``seat`` saw it.

    The seat view prints only what the seat's observation holds: its own hand, the
    table, public events, hand sizes and the cards publicly known per seat."""
    rules = log_rules(header)
    unit = " CPU" if log_clock(header) == "cpu" else ""
    names = record["players"]
    view = observer.view_of(seat)
    game = dealt_game(rules, record, events=True)
    yield (f"game {record['game']}: {', '.join(f'{i}={n}' for i, n in enumerate(names))}; "
           f"dealer {record['dealer']}; trump {card_str(game.trump_card)}")
    yield from _state_lines(game, view)
    last_bout = game.bout
    assert game.events is not None
    for i, s, action, forced in replayed_decisions(game, record):
        ms = record["decisions"][i][3] if len(record["decisions"][i]) > 3 else None
        note = " (forced)" if forced else (f" ({ms:.1f} ms{unit})" if isinstance(ms, (int, float)) else "")
        if observer.sees_decision(game, view):  # not another's decline
            # Whether another seat's move was forced (or how long it took) is not
            # something that seat's opponents see.
            mine = observer.sees_private(view, s)
            yield f"  {i:4d}  seat {s} {names[s]}: {action_str(action)}{note if mine else ''}"
        for ev in game.events:
            if ev[0] in ("bout_end", "draw", "out"):
                wire = observer.event(game, ev, view)
                assert wire is not None
                yield "        " + event_text(wire, _seat_text)
        game.events.clear()
        if game.bout != last_bout or game.is_over:
            last_bout = game.bout
            yield from _state_lines(game, view)
    proof = record.get("adjudication")
    if record["termination"] == ADJUDICATED and isinstance(proof, dict):
        yield f"  adjudicated; the solver's line: {', '.join(map(str, proof.get('line', [])))}"
    reason = record.get("reason", "")
    forfeit = record.get("forfeit")
    if forfeit and not observer.sees_private(view, observer.logged_seat(forfeit.get("seat"))):
        reason = forfeit_reason(names[forfeit["seat"]], record["termination"])
    yield f"result: {record['termination']}, durak {record['durak']}: {reason}"


def event_text(ev: dict[str, Any], who: Callable[[int], str]) -> str:
    """One line for a logged ``bout_end``, ``draw`` or ``out`` event; ``who`` names a
    seat (the text replay says "seat 2", the HTML viewer the bot's name)."""
    if ev["type"] == "bout_end":
        return f"bout {ev['result']} (defender {who(ev['defender'])})"
    if ev["type"] == "draw":
        cards = f": {' '.join(ev['cards'])}" if "cards" in ev else ""
        return f"{who(ev['seat'])} draws {ev['count']}{cards}"
    return f"{who(ev['seat'])} is out"


def _seat_text(seat: int) -> str:
    return f"seat {seat}"


def _state_lines(game: Game, view: int) -> Iterator[str]:
    if game.is_over:
        return
    yield (f"bout {game.bout}: seat {game.attacker} attacks seat {game.defender}; "
           f"talon {len(game.talon)}")
    hands = observer.hands(game, view)
    obs = observer.observation(game, view)
    for s in range(game.players):
        if game.out[s]:
            continue
        hand = hands[s]
        if hand is not None:
            yield f"    seat {s}: {' '.join(hand)}"
        else:
            known = obs["known"][s]
            yield (f"    seat {s}: {obs['hand_sizes'][s]} cards"
                   + (f", known: {' '.join(known)}" if known else ""))
