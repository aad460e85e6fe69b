"""Cross-checking the result store against the match logs (``durak-ref verify``).

How it works. Every stored game names the log record it came from: ``games.log_file``
and ``games.log_line`` (ladder and arena games name only the file and are found in it
by their game number). ``Verification`` reads the store, opens each log once,
re-simulates every logged game with the rules engine (``replay.verify_game``: the log
must follow from its deck and decisions) and derives from the record what the store
must hold: the deal seed, the bots by seat, the termination, the durak, and for each
seat its result, forfeit, decisions and time used (``results.seat_rows``, the very
function that wrote them); for tournament games also the rules and settings of the log
header, the rotation of the schedule, and times inside the log's run. Every field where
the store differs is a ``Difference``, and so is every stored game whose log, line or
record is missing or unreadable, and every logged game the store does not have (logs
found next to the ones the store names, or given by the user).

The log is the evidence because it is written as the games are played, every game in
it must replay (its forfeits possible where they happened) and every line is signed
by the referee's key (records/signing.py); the store is what people query. A bot that
changed one of them is caught here; one that rewrote both consistently must also sign
the log with the trusted key (``Trust``), which the sandbox keeps from it. Each log's
signature verdict is in the report; one that fails is a difference.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..records.matchlog import LogContents, LogError, read_log
from ..records.signing import Trust
from ..records.store import GameRow, Store, StoreError
from ..records.storedb import PgUrl
from ..replay.replay import (
    Divergence,
    log_rules,
    log_signature,
    record_signature,
    seat_kinds,
    verify_game,
)

LADDER_ID = "ladder"  # the ladder's and the arena's games (referee/league/ladder.py)
#: Log times have whole seconds and the store sums unrounded decision times, the log
#: rounded milliseconds: a seat's time may differ by this much per decision.
_TIME_SLACK_PER_DECISION = 1e-6


class VerifyInputError(UserError, ValueError):
    """The user's input cannot be verified at all: no store at that path, a file that is
    not a durak-ref store, a log given on the command line that cannot be read or is
    not a tournament, ladder or arena log. The message names the file."""

    hint = "give --db a store a durak-ref run wrote, and logs such runs wrote"


@dataclass
class Difference:
    """One thing the store and the logs disagree on.

    ``field`` is the store's column (``durak``, ``seats[1].result``, ``log_line``, ...) or
    one of ``log`` (the log cannot be read), ``record`` (no record of this game in its
    log), ``replay`` (the logged game does not follow from its deck and decisions),
    ``stored`` (a logged game the store does not have). ``where`` is ``file:line`` of
    the log record (or the file)."""

    tournament: str
    game: int | None
    field: str
    store: Any
    log: Any
    where: str
    note: str = ""

    def message(self) -> str:
        game = "" if self.game is None else f" game {self.game}"
        text = f"{self.tournament}{game}: {self.field}: store {_show(self.store)}, log {_show(self.log)}"
        return text + (f" ({self.note})" if self.note else "") + f" [{self.where}]"

    def as_dict(self) -> dict[str, Any]:
        return {"tournament": self.tournament, "game": self.game, "field": self.field,
                "store": self.store, "log": self.log, "where": self.where, "note": self.note,
                "message": self.message()}


def _show(value: Any) -> str:
    return "-" if value is None else json.dumps(value) if not isinstance(value, str) else repr(value)


@dataclass
class Report:
    store: str
    tournaments: list[str]
    games: int  #: stored games checked
    logs: list[str]  #: log files read
    differences: list[Difference] = field(default_factory=list)
    #: Each log's signature verdict: ``{"log", "ok", "state", "key", "message"}``
    #: (``replay.LogSignature``); a failing one is also a difference.
    signatures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def as_dict(self) -> dict[str, Any]:
        return {"store": self.store, "ok": self.ok, "tournaments": self.tournaments,
                "games_checked": self.games, "logs": self.logs, "signatures": self.signatures,
                "differences": [d.as_dict() for d in self.differences]}


@dataclass
class _Log:
    """One log as read: its games by line and by game number, or why it is unusable."""

    path: Path
    contents: LogContents | None
    error: str | None
    by_line: dict[int, dict[str, Any]] = field(default_factory=dict)
    by_game: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    replayed: dict[int, str | None] = field(default_factory=dict)  # line -> divergence

    @property
    def owner(self) -> str | None:
        """The tournament id whose games this log holds (``ladder`` for ladder and arena)."""
        if self.contents is None:
            return None
        return log_owner(self.contents.header)

    def replay(self, record: dict[str, Any]) -> str | None:
        """Why ``record`` does not replay (None: it does). Replayed once per record."""
        line = record["_line"]
        if line not in self.replayed:
            assert self.contents is not None
            header = self.contents.header
            try:
                verify_game(log_rules(header), record, seat_kinds(header, record))
                self.replayed[line] = None
            except (Divergence, KeyError, TypeError, ValueError, IndexError) as exc:
                self.replayed[line] = str(exc)
        return self.replayed[line]


def log_owner(header: dict[str, Any]) -> str | None:
    if header.get("tournament"):
        return str(header["tournament"])
    if header.get("ladder") or header.get("arena"):
        return LADDER_ID
    return None


def _read(path: Path) -> _Log:
    try:
        contents = read_log(path, check_signatures=True)
    except LogError as exc:
        return _Log(path, None, str(exc))
    log = _Log(path, contents, str(contents.error) if contents.error else None)
    for record in contents.games:
        log.by_line[record["_line"]] = record
        if isinstance(record.get("game"), int):
            log.by_game.setdefault(record["game"], []).append(record)
    return log


def _header_owner(path: Path) -> str | None:
    """The owner named by a log file's first line (None if it is not a readable log)."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as f:
            first = json.loads(f.readline())
    except (OSError, ValueError, EOFError):
        return None
    return log_owner(first) if isinstance(first, dict) and first.get("type") == "header" else None


class Verification:
    """A check of a store against its logs: ``total`` games, then ``run()``.

    ``db``: the store (a file, which must exist, or a server's URL); ``logs``: log files to check as well (their games
    must be in the store; only their tournaments are checked); ``tournament``: check only
    that one. Raises VerifyInputError for unusable input."""

    def __init__(self, db: Path | PgUrl, logs: Sequence[Path] = (), tournament: str | None = None,
                 trust: Trust = Trust(None, "no trusted key given")) -> None:
        if isinstance(db, Path):
            if not db.exists():
                raise VerifyInputError(f"{db}: no such store; give the --db a tournament or ladder wrote")
            if not db.is_file() or db.stat().st_size == 0:
                raise VerifyInputError(f"{db}: not a durak-ref store (not a database file)")
        self.db = db
        self.trust = trust  #: the key every log must be signed with
        #: Where logs named by a relative path are looked for besides the working directory
        #: (a server's store: only the working directory).
        self.home = db.parent if isinstance(db, Path) else Path(".")
        self.logs: dict[Path, _Log] = {}
        given: set[str] = set()
        for path in logs:
            log = _read(path)
            if log.contents is None:
                raise VerifyInputError(log.error or f"{path}: unreadable")
            if log.owner is None:
                raise VerifyInputError(f"{path}: a match log; matches are not stored (check it "
                                       f"with durak-ref replay {path} --verify)")
            self.logs[_key(path)] = log
            given.add(log.owner)
        try:
            with Store(db) as store:
                store.check_integrity()
                known = {tid: kind for tid, _, kind, _ in store.tournaments()}
                if tournament is not None:
                    store.tournament(tournament)  # StoreError naming the known ones
                    wanted = {tournament}
                elif given:
                    wanted = given
                else:
                    wanted = set(known)
                self.settings = {tid: store.tournament(tid)[1] for tid in wanted if tid in known}
                self.kinds = {tid: known.get(tid, "?") for tid in wanted}
                self.games = [g for g in store.games() if g.tournament_id in wanted]
                self.ladder = store.ladder() if LADDER_ID in self.settings else []
                self.history = {bot: store.history(bot) for bot, _, _ in self.ladder}
        except StoreError as exc:
            raise VerifyInputError(str(exc)) from None
        self.wanted = wanted
        # Checking the whole store: a log beside it of a tournament the store does not know
        # at all (deleted, games and all) is reported too.
        self.orphans_wanted = tournament is None and not given
        self.known = set(known)
        self.records: dict[tuple[str, int], dict[str, Any]] = {}  # the log record of a stored game
        self.scan = not logs  # look for unlisted logs next to the store's logs
        self.total = len(self.games)

    def run(self, advance: Callable[[], None] = lambda: None) -> Report:
        """Check every game; ``advance()`` is called after each stored game."""
        diffs: list[Difference] = []
        claimed: dict[tuple[Path, int], tuple[str, int]] = {}
        stored = {(g.tournament_id, g.game_index) for g in self.games}
        headers_checked: set[tuple[str, Path]] = set()
        for g in self.games:
            diffs.extend(self._check_game(g, claimed, headers_checked))
            advance()
        if LADDER_ID in self.settings:
            diffs.extend(self._check_ladder())
        if self.scan:
            for d in sorted({log.path.parent for log in self.logs.values()} | {self.home}):
                for path in sorted(d.glob("*.jsonl")) + sorted(d.glob("*.jsonl.gz")):
                    if _key(path) not in self.logs and self._wants(_header_owner(path)):
                        self.logs[_key(path)] = _read(path)
        claimed_in: dict[Path, set[tuple[str, int]]] = {}
        for (path, _), game_id in claimed.items():
            claimed_in.setdefault(path, set()).add(game_id)
        for key, log in sorted(self.logs.items()):
            if log.contents is None or not self._wants(log.owner):
                continue
            tid = log.owner
            assert tid is not None
            unknown = "" if tid in self.known else f"; the store has no tournament {tid!r}"
            for line, record in sorted(log.by_line.items()):
                game = record.get("game")
                if (key, line) in claimed:
                    continue
                if (tid, game) in stored:
                    # Logged twice: fine across runs (logged, then killed before it was
                    # stored, played again on --resume); never twice in one run's log.
                    if (tid, game) in claimed_in.get(key, set()):
                        diffs.append(Difference(tid, game, "record", None, f"game {game}",
                                                f"{log.path}:{line}",
                                                "a second record of a stored game in its log"))
                    continue
                diffs.append(Difference(tid, game if isinstance(game, int) else None, "stored",
                                        None, f"game {game}", f"{log.path}:{line}",
                                        "logged but not in the store" + unknown))
            if log.error and not any(d.field == "log" and d.where.startswith(str(log.path))
                                     for d in diffs):
                diffs.append(Difference(tid, None, "log", None, None, str(log.path),
                                        f"damaged: {log.error}"))
        signatures = []
        for _, log in sorted(self.logs.items()):
            if log.contents is None or not self._wants(log.owner):
                continue
            c = log.contents
            verdict = log_signature(c.signing_key, c.signed, c.signature_problems, self.trust)
            signatures.append(dict(verdict.as_dict(), log=str(log.path)))
            if not verdict.ok:
                diffs.append(Difference(str(log.owner), None, "signature", None, verdict.state,
                                        str(log.path), verdict.message))
        return Report(str(self.db), sorted(self.wanted), len(self.games),
                      sorted(str(log.path) for log in self.logs.values()), diffs, signatures)

    def _wants(self, owner: str | None) -> bool:
        """Whether the games of a log of ``owner`` must be in the store."""
        return owner is not None and (owner in self.wanted
                                      or (self.orphans_wanted and owner not in self.known))

    def _load(self, g: GameRow) -> _Log | None:
        if g.log_file is None:
            return None
        path = Path(g.log_file)
        if not path.exists() and not path.is_absolute():
            beside = self.home / path.name  # verify run from another directory
            path = beside if beside.exists() else path
        key = _key(path)
        if key not in self.logs:
            self.logs[key] = _read(path)
        return self.logs[key]

    def _check_game(self, g: GameRow, claimed: dict[tuple[Path, int], tuple[str, int]],
                    headers_checked: set[tuple[str, Path]]) -> Iterator[Difference]:
        tid, idx = g.tournament_id, g.game_index

        def diff(name: str, store: Any, logged: Any, where: str, note: str = "") -> Difference:
            return Difference(tid, idx, name, store, logged, where, note)

        log = self._load(g)
        if log is None:
            yield diff("log_file", None, None, "-", "stored without a log: cannot be checked")
            return
        if log.contents is None:
            yield diff("log", g.log_file, None, str(log.path), log.error or "unreadable")
            return
        if log.owner != tid:
            yield diff("log_file", g.log_file, log.owner, str(log.path),
                       "the log holds another tournament's games")
            return
        record = log.by_line.get(g.log_line) if g.log_line is not None else None
        if record is None or record.get("game") != idx:
            found = log.by_game.get(idx, [])
            if found:
                record = found[-1]
                if g.log_line is not None:
                    yield diff("log_line", g.log_line, record["_line"], f"{log.path}:{record['_line']}",
                               f"line {g.log_line} is not game {idx}'s record")
            else:
                where = f"{log.path}:{g.log_line}" if g.log_line is not None else str(log.path)
                note = (f"the log is unreadable there: {log.error}" if log.error
                        else f"no record of game {idx} in the log")
                yield diff("record", g.log_line, None, where, note)
                return
        claimed[(_key(log.path), record["_line"])] = (tid, idx)
        self.records[(tid, idx)] = record
        where = f"{log.path}:{record['_line']}"
        assert log.contents is not None
        header = log.contents.header
        if (tid, log.path) not in headers_checked:
            headers_checked.add((tid, log.path))
            yield from self._check_header(tid, header, str(log.path))
        divergence = log.replay(record)
        if divergence is not None:
            yield diff("replay", None, divergence, where, "the logged game does not replay")
        forged = record_signature(record)
        if forged is not None:
            yield diff("signature", None, forged, where, "the log record is not as the referee wrote it")
        yield from _compare(g, record, header, log.contents.footer, where, diff)
        if self.kinds.get(tid) == "tournament":
            yield from _check_schedule(g, header, where, diff)

    def _check_ladder(self) -> Iterator[Difference]:
        """Every ladder rating update follows from its game's logged result (formula (2)
        of referee/scoring/ratings.py), and each bot's rating and game count from its updates."""
        from ..scoring.ratings import RatedGame, ladder_update
        from ..table.match import record_from_dict

        settings = self.settings[LADDER_ID]
        k, start = float(settings.get("k", 32)), float(settings.get("start", 1500))
        updates: dict[int, dict[str, tuple[float, float]]] = {}
        for bot, hist in self.history.items():
            for tid, index, before, after, _ in hist:
                if tid == LADDER_ID:
                    updates.setdefault(index, {})[bot] = (before, after)
        for g in self.games:
            if g.tournament_id != LADDER_ID:
                continue
            where = f"{g.log_file}:{self.records.get((LADDER_ID, g.game_index), {}).get('_line', '?')}"
            table = g.players
            upd = updates.get(g.game_index, {})
            missing = [b for b in table if b not in upd]
            if missing:
                yield Difference(LADDER_ID, g.game_index, "ladder_history", sorted(upd), table,
                                 where, f"no rating update for {', '.join(missing)}")
                continue
            record = self.records.get((LADDER_ID, g.game_index))
            if record is None:
                continue  # already reported: the game has no log record
            try:
                r = record_from_dict(record)
            except (KeyError, TypeError, ValueError, IndexError):
                continue  # already reported by _compare
            rated = (RatedGame(tuple(r.players), durak=r.players[r.durak]) if r.durak is not None
                     else RatedGame(tuple(r.players), last_two=tuple(r.players[s] for s in r.drawn_seats)))
            expected = ladder_update({b: upd[b][0] for b in table}, rated, k=k, start=start)
            for b in table:
                if abs(upd[b][1] - expected[b]) > 1e-6:
                    yield Difference(LADDER_ID, g.game_index, f"ladder_history[{b}].rating_after",
                                     upd[b][1], expected[b], where,
                                     f"the update from {upd[b][0]} that the logged result gives")
        for bot, rating, games in self.ladder:
            mine = [h for h in self.history.get(bot, []) if h[0] == LADDER_ID]
            if games != len(mine):
                yield Difference(LADDER_ID, None, f"ladder[{bot}].games", games, len(mine), "-",
                                 "the number of its rating updates")
            # The last update is the one no later update starts from (times have whole
            # seconds, and arena games of one bot may overlap: the order is the chain's).
            befores = {h[2] for h in mine}
            last = sorted({h[3] for h in mine if h[3] not in befores}) if mine else [start]
            if not any(abs(rating - x) <= 1e-6 for x in last):
                yield Difference(LADDER_ID, None, f"ladder[{bot}].rating", rating,
                                 last[0] if len(last) == 1 else last, "-",
                                 "the rating after its last update")

    def _check_header(self, tid: str, header: dict[str, Any], where: str) -> Iterator[Difference]:
        stored = self.settings.get(tid)
        logged = header.get("settings")
        if stored is None or logged is None:
            return
        # A resumed run may change only the concurrency (durak-ref tournament --resume).
        a = {k: v for k, v in stored.items() if k != "concurrency"}
        b = {k: v for k, v in logged.items() if k != "concurrency"}
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                yield Difference(tid, None, f"settings.{k}", a.get(k), b.get(k), where,
                                 "the tournament's settings differ from the log header's")


def _key(path: Path) -> Path:
    return path.resolve()


def _compare(g: GameRow, record: dict[str, Any], header: dict[str, Any],
             footer: dict[str, Any] | None, where: str,
             diff: Callable[..., Difference]) -> Iterator[Difference]:
    """The store's game row against the log record it came from."""
    from ..table.match import record_from_dict
    from .results import seat_rows

    players = record.get("players") or []
    durak = record.get("durak")
    logged_durak = players[durak] if isinstance(durak, int) and 0 <= durak < len(players) else None
    for name, store_value, log_value in (
            ("deal_seed", g.deal_seed, record.get("seed")),
            ("termination", g.termination, record.get("termination")),
            ("durak", g.durak, logged_durak),
            ("rules", g.rules, header.get("rules"))):
        if store_value != log_value:
            yield diff(name, store_value, log_value, where)
    seats = sorted(g.seats, key=lambda s: s.seat)
    if [s.seat for s in seats] != list(range(len(players))):
        yield diff("seats", [s.seat for s in seats], list(range(len(players))), where,
                   "the store's seats are not the log's")
    try:
        expected = {s.seat: s for s in seat_rows(record_from_dict(record))}
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        yield diff("record", None, None, where, f"the record cannot be read: {exc}")
        return
    for s in seats:
        e = expected.get(s.seat)
        if e is None:
            continue
        for name in ("bot", "result", "forfeit", "decisions"):
            if getattr(s, name) != getattr(e, name):
                yield diff(f"seats[{s.seat}].{name}", getattr(s, name), getattr(e, name), where)
        if abs(s.time_used - e.time_used) > _TIME_SLACK_PER_DECISION * (e.decisions + 1):
            yield diff(f"seats[{s.seat}].time_used", s.time_used, e.time_used, where)
    yield from _check_times(g, header, footer, where, diff)


def _check_times(g: GameRow, header: dict[str, Any], footer: dict[str, Any] | None, where: str,
                 diff: Callable[..., Difference]) -> Iterator[Difference]:
    """A game starts after its log does, ends after it starts and before the log ends."""
    def parse(text: Any) -> _dt.datetime | None:
        """An ISO time with its zone (as durak-ref writes them); None for anything else."""
        try:
            t = _dt.datetime.fromisoformat(text) if isinstance(text, str) else None
        except ValueError:
            return None
        return t if t is not None and t.tzinfo is not None else None

    started, ended = parse(g.started), parse(g.ended)
    if started is None:
        yield diff("started", g.started, None, where, "not an ISO time with its zone")
    if ended is None:
        yield diff("ended", g.ended, None, where, "not an ISO time with its zone")
    if started is None or ended is None:
        return
    log_start = parse(header.get("started"))
    log_end = parse(footer.get("ended")) if footer else None
    if ended < started:
        yield diff("ended", g.ended, None, where, f"before the game started ({g.started})")
    if log_start is not None and started < log_start:
        yield diff("started", g.started, header.get("started"), where, "before the log was started")
    if log_end is not None and ended > log_end:
        assert footer is not None
        yield diff("ended", g.ended, footer.get("ended"), where, "after the log was finished")


def _check_schedule(g: GameRow, header: dict[str, Any], where: str,
                    diff: Callable[..., Difference]) -> Iterator[Difference]:
    """A tournament game's rotation and table are fixed by the settings (the schedule)."""
    from .tournament import TournamentSettings, schedule

    try:
        games = schedule(TournamentSettings.from_dict(header["settings"]))
    except (KeyError, TypeError, ValueError) as exc:
        yield diff("settings", None, None, where, f"the log header's settings are unusable: {exc}")
        return
    if not 0 <= g.game_index < len(games):
        yield diff("game_index", g.game_index, None, where,
                   f"the schedule has games 0..{len(games) - 1}")
        return
    sg = games[g.game_index]
    if g.rotation != sg.rotation:
        yield diff("rotation", g.rotation, sg.rotation, where, "the schedule's rotation")
    table = [s.bot for s in sorted(g.seats, key=lambda s: s.seat)]
    if table != list(sg.table):
        yield diff("players", table, list(sg.table), where, "the schedule's table")
