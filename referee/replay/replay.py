"""Replay and verification of match logs with the rules engine.

``verify_game`` re-simulates one logged game from its deck order and recorded
decisions and checks every step: the seat that acted was the seat to act, each action
was legal, the forced flag matches what the rules force, and the recorded result is
what the rules give, or a forfeit that was possible where the record ends
(``check_forfeit``). ``verify_log`` does so for every game of a log and checks the
signatures (records/signing.py) against a trusted key. ``game_steps`` yields the same
replay as printable lines, omniscient or as one seat saw it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..bots.solver import VALUE_NAMES, Solver, SolverLimit, solvable, terminal_value
from ..records.signing import Trust
from ..rules import Game, Rules
from ..rules.actions import MalformedAction, action_from_wire, action_str, parse_action
from ..rules.cards import CardError, card_str, parse_card
from ..rules.options import RulesError, rules_from_dict
from ..seats.players import BotSpecError, parse_bot_spec
from ..table import observer
from ..table.adjudicator import ADJUDICATED
from ..table.clock import CLOCKS
from ..table.forfeit import ASKED_FORFEITS, FORFEIT_SEATS
from ..table.match import FORFEITS, forfeit_reason


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


def seat_kinds(header: dict[str, Any], record: dict[str, Any]) -> list[str | None]:
    """What kind of bot sat in each seat of ``record`` (``builtin``, ``command``,
    ``tcp``, ``human``), as its log header says: a match header's ``kind``, or the
    ``command`` of a tournament's or the ladder's bot of that name. None where the
    header does not say (an arena log, a name given twice with different kinds)."""
    kinds: dict[str, set[str | None]] = {}
    for bot in header.get("bots") or []:
        kind = bot.get("kind")
        if kind is None and isinstance(bot.get("command"), str):
            try:
                kind = parse_bot_spec(bot["command"]).kind
            except BotSpecError:
                kind = None
        kinds.setdefault(str(bot.get("name")), set()).add(kind if isinstance(kind, str) else None)
    out = []
    for name in record["players"]:
        known = kinds.get(name, {None})
        out.append(next(iter(known)) if len(known) == 1 else None)
    return out


_FORFEIT_WORDS = {"timeout": "run out of time", "crash": "crash", "protocol": "break the protocol",
                  "illegal": "play an illegal action", "disconnect": "disconnect"}


def check_forfeit(game: Game, record: dict[str, Any], kinds: Sequence[str | None] = ()) -> None:
    """Check that the forfeit ``record`` ends with was possible where it ends (``game``:
    the position after its decisions): the forfeit names the durak's seat, its kind is
    the termination and its decision count the record's; the game was not over; the
    seat is of a kind that can fail that way (``forfeit.FORFEIT_SEATS``; ``kinds``: by
    seat, None where unknown); a timeout or an illegal action comes from the seat being
    asked there (``forfeit.ASKED_FORFEITS``: a timeout before the first decision may
    come from any seat), and an illegal action's evidence is an action that was illegal
    there. Raises Divergence naming the game, the point and why it was impossible."""
    g, term, durak = record["game"], record["termination"], record["durak"]
    forfeit = record.get("forfeit") or {}
    seat, n = forfeit.get("seat"), len(record["decisions"])
    at = f"game {g}, after decision {n}" if n else f"game {g}, before its first decision"
    if seat != durak:
        raise Divergence(f"game {g}: forfeit by seat {seat} but durak {durak}")
    if forfeit.get("kind", term) != term:
        raise Divergence(f"game {g}: the forfeit's kind is {forfeit.get('kind')!r} but the "
                         f"termination {term!r}")
    if forfeit.get("decision", n) != n:
        raise Divergence(f"game {g}: the forfeit is recorded at decision {forfeit.get('decision')} "
                         f"but the record ends after {n} decisions")
    assert isinstance(seat, int)  # (logcheck: durak is a seat or None; seat == durak)
    if forfeit.get("bot", record["players"][seat]) != record["players"][seat]:
        raise Divergence(f"game {g}: the forfeit names bot {forfeit.get('bot')!r} but seat {seat} "
                         f"is {record['players'][seat]!r}")
    if game.is_over:
        raise Divergence(f"game {g}: recorded as a forfeit ({term}) but the game was already over")
    kind = kinds[seat] if seat < len(kinds) else None
    if kind is not None and kind not in FORFEIT_SEATS[term]:
        raise Divergence(f"{at}: seat {seat} ({record['players'][seat]}) is recorded as forfeiting "
                         f"by {term}, which is impossible: it is a {kind} bot, and only "
                         f"{', '.join(FORFEIT_SEATS[term])} bots can {_FORFEIT_WORDS[term]}")
    if term in ASKED_FORFEITS and not (term == "timeout" and n == 0):
        why = None
        if game.forced_action() is not None:
            why = (f"nobody was being asked there: seat {game.current_seat}'s only action is "
                   f"applied unasked (ask_forced off)")
        elif seat != game.current_seat:
            why = (f"it was seat {game.current_seat}'s turn, so seat {seat} was not being asked "
                   f"and could not {_FORFEIT_WORDS[term]}")
        if why is not None:
            raise Divergence(f"{at}: seat {seat} is recorded as forfeiting by {term}, which is "
                             f"impossible: {why}")
    if term == "illegal":
        received = (forfeit.get("evidence") or {}).get("received")
        try:
            action = action_from_wire(received)
        except MalformedAction:
            raise Divergence(f"game {g}: the illegal action's evidence {received!r} is not an action") from None
        if game.illegal_reason(action) is None:
            raise Divergence(f"game {g}: {action_str(action)} by seat {seat} is "
                             f"recorded as illegal, but it was legal")


def verify_game(rules: Rules, record: dict[str, Any], kinds: Sequence[str | None] = ()) -> Game:
    """Re-simulate ``record`` and check it (``kinds``: each seat's bot kind, when the
    log header says: ``seat_kinds``). Returns the final game; raises Divergence."""
    game = dealt_game(rules, record)
    for _ in replayed_decisions(game, record):
        pass
    g = record["game"]
    term, durak = record["termination"], record["durak"]
    if term in FORFEITS:
        check_forfeit(game, record, kinds)
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
    """Verify every game; one entry per game (``ok`` False with the first divergence, or
    with why its signature fails when the games were read with their signatures
    checked: ``record_signature``). Raises Divergence for a header that cannot be used
    (its rules, its clock)."""
    rules = log_rules(header)
    log_clock(header)
    out = []
    for record in games:
        problems = [p for p in (record_signature(record),) if p is not None]
        try:
            verify_game(rules, record, seat_kinds(header, record))
        except Divergence as exc:
            problems.append(str(exc))
        if problems:
            out.append(Verified(record.get("game", -1), False, "; ".join(problems)))
        else:
            out.append(Verified(record["game"], True, f"{record['termination']}, durak {record['durak']}"))
    return out


def record_signature(record: dict[str, Any]) -> str | None:
    """Why a game record read with its signature checked (``read_log(...,
    check_signatures=True)``) fails it: ``game N: signature does not match: ...``;
    None when it holds, or was not checked (an unsigned log)."""
    problem = record.get("_signature")
    return None if problem is None else f"game {record['game']}: {problem}"


@dataclass
class LogSignature:
    """A log's signature verdict against a ``Trust``: ``ok`` False fails the check;
    ``state`` is ``signed`` (by the trusted key), ``untrusted`` (whole, but no key to
    trust was known), ``foreign`` (another key), ``broken`` (the header or footer
    fails) or ``unsigned``; ``message`` says it in a sentence."""

    ok: bool
    state: str
    key: str | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "state": self.state, "key": self.key, "message": self.message}


def log_signature(signing_key: str | None, signed: bool, problems: Sequence[str], trust: Trust) -> LogSignature:
    """The verdict on a log's signatures (``matchlog.LogContents``' ``signing_key``,
    ``signed`` and ``signature_problems``, read with ``check_signatures``) under
    ``trust``. A log's own key proves nothing (a forger names theirs): only a key the
    checker trusts does."""
    if problems:
        return LogSignature(False, "broken", signing_key, "; ".join(problems))
    if not signed:
        return LogSignature(not trust.require, "unsigned", None,
                            "unsigned (a durak-ref-log/1 log, written before durak-ref signed its "
                            "logs): its games replay, but nothing shows who wrote them or that "
                            "they were not changed" + (" (--require-signature)" if trust.require else ""))
    if trust.key is None:
        return LogSignature(not trust.require, "untrusted", signing_key,
                            f"signed by {signing_key} and whole, but there is no trusted key to check "
                            f"that key against ({trust.source}): anyone can sign with a key of their "
                            f"own; give --trust KEY")
    if signing_key != trust.key:
        return LogSignature(False, "foreign", signing_key,
                            f"signed by {signing_key}, not by the trusted key {trust.key} "
                            f"({trust.source}): re-signed by someone else, or written by another "
                            f"referee (give --trust with that referee's key if you trust it)")
    return LogSignature(True, "signed", signing_key, f"signed by the trusted key {trust.key}")


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
