"""Schema checks for match-log records: types, ranges, seat indices, cards, decisions.

A log is input from outside (copied, edited, truncated, or written by anyone): every
record ``matchlog.read_log`` hands on has passed these checks, so the replay, verify
and report code may index it without guarding each field. A failed check raises
``LogError`` naming the file, the line and the field; it is the file's fault, never a
bug. Fields a record may lack (older logs, other writers) are checked only when present.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..rules.actions import MalformedAction, parse_action
from ..rules.cards import CardError, parse_card
from ..rules.options import MAX_SEATS, MIN_SEATS, SEATS_TEXT


class LogError(UserError, ValueError):
    """A log file cannot be read (missing, not JSON Lines, a bad or truncated record) or
    cannot be written. The message names the file, and the line where there is one."""

    hint = "give a log a durak-ref run wrote; to write one, give a writable directory with space left"




class _Bad(Exception):
    """One field is wrong: the message says which and why."""


def _where(path: Path, lineno: int, kind: str) -> str:
    return f"{path}:{lineno}: damaged {kind} record"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def _need(ok: bool, field: str, value: Any, want: str) -> None:
    if not ok:
        text = repr(value)
        if len(text) > 60:
            text = text[:57] + "..."
        raise _Bad(f"{field} is {text}, expected {want}")


def _seat(field: str, value: Any, seats: int) -> None:
    _need(_is_int(value) and 0 <= value < seats, field, value, f"a seat index 0..{seats - 1}")


def check_header(path: Path, lineno: int, record: dict[str, Any]) -> None:
    """Raise LogError if the header's fields that readers use have the wrong type."""
    try:
        if "rules" in record:
            _need(isinstance(record["rules"], dict), "rules", record["rules"], "a map of rule options")
        for key in ("preset", "seed", "started"):
            if key in record and record[key] is not None:
                _need(isinstance(record[key], (str, int)) and not isinstance(record[key], bool),
                      key, record[key], "text")
        if "bots" in record:
            bots = record["bots"]
            _need(isinstance(bots, list) and all(isinstance(b, dict) for b in bots),
                  "bots", bots, "a list of maps")
        if record.get("settings") is not None:
            _need(isinstance(record["settings"], dict), "settings", record["settings"], "a map")
    except _Bad as exc:
        raise LogError(f"{_where(path, lineno, 'header')}: {exc}") from None


def check_game(path: Path, lineno: int, record: dict[str, Any]) -> None:
    """Raise LogError unless ``record`` is a well-formed game record (see module doc)."""
    try:
        _check_game(record)
    except _Bad as exc:
        game = record.get("game")
        label = f"game {game}" if _is_int(game) else "game"
        raise LogError(f"{_where(path, lineno, label)}: {exc}") from None


def _check_game(r: dict[str, Any]) -> None:
    _need(_is_int(r["game"]) and r["game"] >= 0, "game", r["game"], "a game number >= 0")
    _need(isinstance(r["seed"], (str, int)) and not isinstance(r["seed"], bool), "seed", r["seed"],
          "text or an integer")
    players = r["players"]
    _need(isinstance(players, list) and MIN_SEATS <= len(players) <= MAX_SEATS
          and all(isinstance(p, str) for p in players),
          "players", players, f"a list of {SEATS_TEXT} names")
    n = len(players)
    _seat("dealer", r["dealer"], n)
    deck = r["deck"]
    _need(isinstance(deck, list) and all(isinstance(c, str) for c in deck), "deck", deck,
          "a list of cards")
    for i, c in enumerate(deck):
        try:
            parse_card(c)
        except CardError:
            raise _Bad(f"deck[{i}] is {c!r}, not a card") from None
    _need(len(set(deck)) == len(deck), "deck", "(repeats a card)", "every card once")
    decisions = r["decisions"]
    _need(isinstance(decisions, list), "decisions", decisions, "a list")
    for i, d in enumerate(decisions):
        _need(isinstance(d, list) and len(d) >= 3, f"decisions[{i}]", d,
              "[seat, action, forced, seconds]")
        _seat(f"decisions[{i}] seat", d[0], n)
        _need(isinstance(d[1], str), f"decisions[{i}] action", d[1], "action text")
        try:
            parse_action(d[1])
        except MalformedAction:
            raise _Bad(f"decisions[{i}] action {d[1]!r} is not an action") from None
        _need(isinstance(d[2], bool), f"decisions[{i}] forced", d[2], "true or false")
        if len(d) > 3:
            _need(d[3] is None or _is_num(d[3]), f"decisions[{i}] seconds", d[3], "a number")
    _need(isinstance(r["termination"], str), "termination", r["termination"], "text")
    if r["durak"] is not None:
        _seat("durak", r["durak"], n)
    if "last_out" in r:
        last = r["last_out"]
        _need(isinstance(last, list), "last_out", last, "a list of seats")
        for i, s in enumerate(last):
            _seat(f"last_out[{i}]", s, n)
    forfeit = r.get("forfeit")
    if forfeit is not None:
        _need(isinstance(forfeit, dict), "forfeit", forfeit, "a map or null")
        if "seat" in forfeit:
            _seat("forfeit seat", forfeit["seat"], n)
        for key in ("evidence",):
            if forfeit.get(key) is not None:
                _need(isinstance(forfeit[key], dict), f"forfeit {key}", forfeit[key], "a map")
        for key in ("kind", "reason", "bot"):
            if forfeit.get(key) is not None:
                _need(isinstance(forfeit[key], str), f"forfeit {key}", forfeit[key], "text")
    if "retries" in r:
        _need(isinstance(r["retries"], list), "retries", r["retries"], "a list")
    if r.get("adjudication") is not None:
        proof = r["adjudication"]
        _need(isinstance(proof, dict) and isinstance(proof.get("line"), list), "adjudication",
              proof, 'a map with a "line" of action texts')
        for i, text in enumerate(proof["line"]):
            _need(isinstance(text, str), f"adjudication line[{i}]", text, "action text")
    for key in ("bouts",):
        if key in r:
            _need(_is_int(r[key]) and r[key] >= 0, key, r[key], "a count >= 0")
    for key in ("wall_ms",):
        if key in r and r[key] is not None:
            _need(_is_num(r[key]) and r[key] >= 0, key, r[key], "milliseconds >= 0")
    if "reason" in r and r["reason"] is not None:
        _need(isinstance(r["reason"], str), "reason", r["reason"], "text")


def check_footer(path: Path, lineno: int, record: dict[str, Any]) -> None:
    """Raise LogError if the footer's fields that readers use have the wrong type."""
    try:
        if "summary" in record and record["summary"] is not None:
            _need(isinstance(record["summary"], dict), "summary", record["summary"], "a map")
        if "interrupted" in record:
            _need(isinstance(record["interrupted"], bool), "interrupted", record["interrupted"],
                  "true or false")
        if "ended" in record and record["ended"] is not None:
            _need(isinstance(record["ended"], str), "ended", record["ended"], "a time as text")
    except _Bad as exc:
        raise LogError(f"{_where(path, lineno, 'footer')}: {exc}") from None
