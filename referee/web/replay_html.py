"""``durak-ref replay LOG --html OUT``: a match log as one self-contained HTML viewer.

The page shows a game at a table, one state per decision: seats with names, hands,
the trump and talon, the attack/cover pairs, the discard pile, whose turn it is, each
decision's time, forced moves, and the result with its forfeit evidence; controls step
through it (buttons, scrub bar, keyboard). The states are computed here by the rules
engine re-simulating the log (``referee.replay.replay``), never by the page's script, which
only draws what it is given.

Two views:

- omniscient (``seat`` None): every hand face up, every decision's time and evidence;
- one seat's (``seat`` S): built only from what seat S saw during the game
  (``Game.observe(S)`` and the public events), so the file holds no card S could not
  see, not even in its embedded data: other hands are backs with counts (plus the cards
  publicly known to be in them), other seats' times, forced flags and forfeit evidence
  are left out, a decision S did not see (another seat's declined trump exchange) is
  not a step, and the run's seed, from which every deck could be dealt again, is not
  in the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..console import jsonout
from ..errors import UserError
from ..records.matchlog import LogError, read_log
from ..replay.replay import Divergence, dealt_game, event_text, log_rules, replayed_decisions, verify_game
from ..rules.cards import card_str
from ..table import observer
from ..table.match import FORFEITS, forfeit_reason
from . import CARD_KIT, escape, json_script, page

#: At most this many games get their steps in one page (~40 KB a game for 3 seats);
#: the others are listed with their results and the ``--game N`` that renders them.
MAX_GAMES = 100


class ReplayHtmlError(UserError, ValueError):
    """The log cannot be rendered: unreadable or damaged, no such game, no such seat,
    or a game that does not follow from its deck under the rules. The message names the
    file (and line or game) and what was wrong. A user error (exit 2)."""

    hint = "give a log a durak-ref run wrote, and a game and seat it holds"


def render_replay_html(log_path: Path, *, game: int | None = None, seat: int | None = None) -> str:
    """The viewer page of the match log at ``log_path``: every game (up to MAX_GAMES),
    or only game ``game``; omniscient, or as seat ``seat`` saw it. Raises
    ReplayHtmlError."""
    try:
        contents = read_log(log_path)
    except LogError as exc:
        raise ReplayHtmlError(str(exc)) from None
    if contents.error is not None:
        raise ReplayHtmlError(f"damaged log: {contents.error} (`durak-ref replay {log_path}` "
                              f"lists the complete games before the damage)")
    return render_replay_records(contents.header, contents.games, footer=contents.footer,
                                 game=game, seat=seat, source=str(log_path))


def render_replay_records(header: dict[str, Any], games: Sequence[dict[str, Any]], *,
                          footer: dict[str, Any] | None = None, game: int | None = None,
                          seat: int | None = None, source: str = "") -> str:
    """The viewer page of already-read log records (``header`` and ``game`` records as
    ``matchlog.read_log`` gives them; ``footer`` None for a match still running or cut
    off). For pages that hold games in memory (the live arena page). ``source`` names
    where the records came from, in the page and in error messages. Raises
    ReplayHtmlError."""
    data = replay_data(header, games, footer=footer, game=game, seat=seat, source=source)
    where = f"{source}: " if source else ""
    title = f"durak-ref replay{' - ' + source if source else ''}"
    if seat is not None:
        title += f" (seat {seat}'s view)"
    body = (f'<div id="app" data-view="{"omniscient" if seat is None else "seat"}">'
            f'<noscript>{escape(where)}this replay viewer needs JavaScript.</noscript></div>\n'
            + json_script("replay-data", data))
    return page(title, body, css=(CARD_KIT[0], "replay.css"), js=(CARD_KIT[1], "replay.js"))


def replay_data(header: dict[str, Any], games: Sequence[dict[str, Any]], *,
                footer: dict[str, Any] | None = None, game: int | None = None,
                seat: int | None = None, source: str = "") -> dict[str, Any]:
    """What the page's script draws, as plain JSON-able data (see the module docstring
    for what a seat's view leaves out). Raises ReplayHtmlError."""
    where = f"{source}: " if source else ""
    # A tournament plays games at once and logs them as they finish: list them by number.
    games = sorted(games, key=lambda g: g["game"])
    if game is not None:
        chosen = [g for g in games if g["game"] == game]
        if not chosen:
            raise ReplayHtmlError(f"{where}no complete game {game} (games: "
                                  f"{', '.join(str(g['game']) for g in games) or 'none'})")
    else:
        chosen = list(games[:MAX_GAMES])
    if seat is not None:
        for g in chosen:
            if not 0 <= seat < len(g["players"]):
                raise ReplayHtmlError(f"--seat {seat}: game {g['game']} has seats "
                                      f"0..{len(g['players']) - 1}")
    try:
        rules = log_rules(header)
        for g in chosen:
            verify_game(rules, g)  # a page must not show a result the rules do not give
        rendered = {g["game"]: game_frames(header, g, seat) for g in chosen}
    except Divergence as exc:
        raise ReplayHtmlError(f"{where}the log does not follow the rules: {exc} "
                              f"(`durak-ref replay --verify` checks every game)") from None
    listed = []
    for g in games:
        shown = rendered.get(g["game"])
        # A seat's view counts the steps it shows: the log's count would include other
        # seats' unseen declines of the trump exchange.
        count = (len(g["decisions"]) if seat is None
                 else len(shown["frames"]) - 1 if shown is not None else None)
        listed.append({"game": g["game"], "players": g["players"], "termination": g["termination"],
                       "durak": g["durak"], "decisions": count, "shown": shown is not None})
    return {
        "source": source,
        "view": None if seat is None else seat,
        "match": match_summary(header, footer, seat, games),
        "games": listed,
        "replays": [rendered[g["game"]] for g in chosen],
        "more": max(0, len(games) - len(chosen)) if game is None else 0,
    }


def match_summary(header: dict[str, Any], footer: dict[str, Any] | None,
                  seat: int | None, games: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The match at a glance: bots, rules, time control, started/ended, and per bot its
    games, duraks, draws and forfeits (from the footer; None while it has none). The
    seed only in the omniscient view: with it every deck can be dealt again.

    Fields the schema checks leave open are reduced to the types the page draws (text,
    numbers, maps of counts): a log written by anyone cannot break the page's script."""
    summary = (footer or {}).get("summary") or {}
    if footer is not None and not _maps(summary.get("bots")):
        # A tournament's footer counts games only: its per-bot results are its records'.
        summary = dict(summary, bots=results_of_games(games))
    tc = header.get("time_control")
    out: dict[str, Any] = {
        "preset": _text(header.get("preset")),
        "rules": header.get("rules"),
        "time_control": (dict({k: _num(tc.get(k)) for k in ("base_s", "increment_s", "move_s")},
                              clock="cpu" if tc.get("clock") == "cpu" else "wall")
                         if isinstance(tc, dict) else {}),
        "started": _text(header.get("started")),
        "ended": _text((footer or {}).get("ended")),
        "interrupted": None if footer is None else bool(footer.get("interrupted")),
        "bots": [{"name": _text(b.get("name")), "spec": _text(b.get("spec") or b.get("command"))} for b in _maps(header.get("bots"))],
        "results": [{"name": _text(b.get("name")),
                     **{k: _num(b.get(k)) for k in ("games", "durak", "draws")},
                     "forfeits": {str(k): v for k, v in (b.get("forfeits") or {}).items() if _num(v) is not None}
                     if isinstance(b.get("forfeits"), dict) else {},
                     "forfeited_all": b.get("forfeited_all") is True}
                    for b in _maps(summary.get("bots"))] or None,
        "warnings": [_text(w) for w in summary.get("warnings") or []] if isinstance(summary.get("warnings"), list) else [],
    }
    if seat is None:
        out["seed"] = _text(header.get("seed"))
    return out


def results_of_games(games: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per bot, in order of first appearance: games played, times the durak, draws and
    forfeits by kind, counted from complete game records (as a match footer has them)."""
    bots: dict[str, dict[str, Any]] = {}
    for g in games:
        players = g.get("players") or []
        for name in players:
            bots.setdefault(name, {"name": name, "games": 0, "durak": 0, "draws": 0, "forfeits": {}})
            bots[name]["games"] += 1
        durak = g.get("durak")
        if durak is None:
            for name in players:
                bots[name]["draws"] += 1
        elif isinstance(durak, int) and 0 <= durak < len(players):
            bots[players[durak]]["durak"] += 1
        forfeit = g.get("forfeit")
        if isinstance(forfeit, dict) and isinstance(forfeit.get("seat"), int) and 0 <= forfeit["seat"] < len(players):
            kinds = bots[players[forfeit["seat"]]]["forfeits"]
            kinds[str(forfeit.get("kind"))] = kinds.get(str(forfeit.get("kind")), 0) + 1
    return list(bots.values())


def _maps(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    """Text as it is; None as None; anything else as its JSON text."""
    if value is None or isinstance(value, str):
        return value
    return jsonout.dumps(value)


def _num(value: Any) -> float | int | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if ok else None


def game_frames(header: dict[str, Any], record: dict[str, Any], seat: int | None = None) -> dict[str, Any]:
    """One game as the page's steps: frame 0 is the deal, then one frame per decision
    (per decision ``seat`` saw, in a seat's view), each the state after it. Raises
    Divergence when the log does not follow the rules."""
    rules = log_rules(header)
    names = list(record["players"])
    view = observer.view_of(seat)
    game = dealt_game(rules, record, events=True)
    assert game.events is not None
    decisions = record["decisions"]
    # The face-up trump of the deal, taken now: an exchange later in the game puts the
    # exchanged card face up, and that card sits in a hand until then.
    dealt_trump = card_str(game.trump_card)
    frames = [_frame(game, view, None, [])]
    for i, s, _action, forced in replayed_decisions(game, record):
        if not observer.sees_decision(game, view):
            # Not seen by this seat (another's declined exchange): at a real table
            # nothing happened, so it is no step of this view.
            game.events.clear()
            continue
        entry = decisions[i]
        ms = entry[3] if len(entry) > 3 and isinstance(entry[3], (int, float)) else None
        mine = observer.sees_private(view, s)
        step = {"n": i, "seat": s, "action": entry[1],
                # Whether another seat's move was forced, or how long it took, is not
                # something its opponents see (as in the text replay).
                "forced": forced if mine else None, "ms": ms if mine else None}
        lines = []
        for ev in game.events:
            if ev[0] in ("bout_end", "draw", "out"):
                wire = observer.event(game, ev, view)
                assert wire is not None
                lines.append(event_text(wire, names.__getitem__))
        game.events.clear()
        frames.append(_frame(game, view, step, lines))
    if seat is not None:
        # Whose turn, as the table sees it: the seat of the next step shown. (The
        # engine's current seat could be one about to decline an exchange unseen.)
        for a, b in pairwise(frames):
            a["turn"] = b["step"]["seat"]
        frames[-1]["turn"] = None
    return {
        "game": record["game"],
        "players": names,
        "dealer": record["dealer"],
        "trump": dealt_trump,
        "frames": frames,
        "result": _result(record, view, game.is_over),
    }


def _frame(game: Any, view: int, step: dict[str, Any] | None, events: list[str]) -> dict[str, Any]:
    """The state after ``step``, as ``view`` sees it (``observer.observation``: a seat's
    from its own observation alone)."""
    obs = observer.observation(game, view)
    return {
        "step": step,
        "events": events,
        "hands": observer.hands(game, view),
        "sizes": obs["hand_sizes"],
        "known": obs["known"],
        "out": obs["out"],
        "table": obs["table"],
        "talon": obs["talon"],
        "trump": obs["trump"],
        "trump_holder": obs["trump_holder"],
        "discard": len(obs["discard"]),
        "attacker": obs["attacker"],
        "defender": obs["defender"],
        "bout": obs["bout"],
        "phase": obs["phase"],
        "taking": obs["taking"],
        "turn": game.current_seat,
    }


def _result(record: dict[str, Any], view: int, finished: bool) -> dict[str, Any]:
    """The game's end: termination, durak, reason; a forfeit's kind and evidence (in a
    seat's view only the forfeiting seat sees the detail: it may name a card)."""
    names = record["players"]
    term = record["termination"]
    reason = _text(record.get("reason", ""))
    forfeit = record.get("forfeit") if term in FORFEITS else None
    out: dict[str, Any] = {"termination": term, "durak": record["durak"],
                           "last_out": record.get("last_out", []), "reason": reason,
                           "forfeit": None}
    if forfeit:
        fseat = forfeit.get("seat")
        visible = observer.sees_private(view, observer.logged_seat(fseat))
        if not visible and isinstance(fseat, int) and 0 <= fseat < len(names):
            out["reason"] = forfeit_reason(names[fseat], term)
        out["forfeit"] = {"seat": fseat, "kind": term,
                          "evidence": forfeit.get("evidence") if visible else None}
    return out


