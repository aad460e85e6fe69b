"""Game statistics from logs: per-game facts and the table Durak sites publish.

``facts_from_log`` re-deals every logged game with the rules engine (the log holds
the deck order and the dealer) and returns one ``SeatFact`` per seat of each game:
the seat's opening trumps, whether it opened, its position after the dealer, the
game's bouts and the seat's result. ``summarize`` turns facts into the quoted table,
per player count: the durak rate by opening trumps (0-6), for every seat and for the
opener alone, the durak rate by position after the dealer, the draw rate and the mean
bouts per game, each with a 95% interval (Wilson's score interval for rates; the
normal interval of the mean for bouts). ``compare_reference`` sets that table beside the
published reference figures (``REFERENCE``) that docs/STATS.md discusses.

Games that ended by a forfeit (a timeout, a crash, an illegal action ...) say nothing
about the cards: they are counted apart (``forfeited``) and left out of every figure.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..records.matchlog import LogError, read_log
from ..records.storedb import PgUrl
from ..replay.replay import Divergence, log_rules
from ..rules import Game, RulesError
from ..rules.cards import CardError, card_str, iter_bits, parse_card
from ..table.match import FORFEITS

Z95 = 1.959963984540054  # the two-sided 95% quantile of the normal distribution
MAX_TRUMPS = 6


class StatsInputError(UserError, ValueError):
    """A log or store cannot be used for statistics (the message names it and where)."""

    hint = "give logs or a --tournament ID that durak-ref runs wrote"


@dataclass(frozen=True)
class SeatFact:
    """One seat of one finished game. ``result`` is durak, safe or draw; ``position``
    counts seats after the dealer (1: the first dealt to, ``players``: the dealer)."""

    source: str
    game: int
    players: int
    seat: int
    bot: str
    dealer: int
    position: int
    trump: str
    opening_trumps: int
    opener: bool
    opener_seat: int
    bouts: int
    termination: str
    result: str


FACT_FIELDS = tuple(f.name for f in fields(SeatFact))


def game_facts(source: str, rules: Any, record: dict[str, Any]) -> list[SeatFact]:
    """The facts of one logged game (a record as ``read_log`` returns it). Raises
    StatsInputError if its deck cannot be dealt under the log's rules."""
    where = f"{source}:{record.get('_line', '?')}"
    try:
        deck = [parse_card(c) for c in record["deck"]]
        n = len(record["players"])
        g = Game.new(rules, n, deck=deck, dealer=record["dealer"])
    except (CardError, RulesError, TypeError, ValueError) as exc:
        raise StatsInputError(f"{where}: game {record.get('game')}: cannot deal its deck: {exc}") from None
    ts = g.trump_suit
    trumps = [sum(1 for c in iter_bits(h) if c & 3 == ts) for h in g.hands]
    durak = record["durak"]
    bouts = record.get("bouts")
    if not isinstance(bouts, int) or isinstance(bouts, bool) or bouts < 0:
        raise StatsInputError(f"{where}: game {record['game']}: 'bouts' is {bouts!r}, not a count")
    out = []
    for seat in range(n):
        result = "draw" if durak is None else ("durak" if durak == seat else "safe")
        out.append(SeatFact(
            source=source, game=record["game"], players=n, seat=seat,
            bot=str(record["players"][seat]), dealer=g.dealer,
            position=(seat - g.dealer - 1) % n + 1, trump=card_str(g.trump_card),
            opening_trumps=trumps[seat], opener=seat == g.attacker, opener_seat=g.attacker,
            bouts=bouts, termination=record["termination"], result=result))
    return out


@dataclass
class Collected:
    """Facts of every usable game, how many forfeited games were left out, and the
    rules of the logs (``Rules.describe()``, each once, in the order met)."""

    facts: list[SeatFact]
    games: int
    forfeited: int
    sources: list[str]
    rules: list[str] = field(default_factory=list)


def collect_logs(paths: Sequence[Path], lines: dict[Path, set[int]] | None = None) -> Collected:
    """Facts from match, tournament, SPRT, ladder or arena logs. With ``lines`` only the
    records on those lines of each log are used (the games a store names). Raises
    StatsInputError for an unreadable or damaged log (naming file and line)."""
    facts: list[SeatFact] = []
    described: list[str] = []
    games = forfeited = 0
    for path in paths:
        try:
            contents = read_log(path)
        except LogError as exc:
            raise StatsInputError(str(exc)) from None
        if contents.error is not None:
            raise StatsInputError(f"damaged log: {contents.error}")
        try:
            rules = log_rules(contents.header)
        except Divergence as exc:
            raise StatsInputError(f"{path}: {exc}") from None
        if rules.describe() not in described:
            described.append(rules.describe())
        wanted = None if lines is None else lines.get(path, set())
        for record in contents.games:
            if wanted is not None and record["_line"] not in wanted:
                continue
            if record["termination"] in FORFEITS:
                forfeited += 1
                continue
            games += 1
            facts.extend(game_facts(str(path), rules, record))
    return Collected(facts, games, forfeited, [str(p) for p in paths], described)


def collect_tournament(db: Path | PgUrl, tid: str) -> Collected:
    """Facts of one stored tournament (or SPRT run), read from the log records its
    games name. Raises StatsInputError if the store, the tournament or a log is unusable."""
    from ..records.store import StoreError, open_store

    if isinstance(db, Path) and not db.exists():
        raise StatsInputError(f"no store at {db}; give --db PATH, or LOG files")
    try:
        with open_store(db, check=True) as store:
            store.tournament(tid)
            rows = store.games(tid)
    except StoreError as exc:
        raise StatsInputError(str(exc)) from None
    lines: dict[Path, set[int]] = {}
    unlogged = 0
    for row in rows:
        if row.log_file is None or row.log_line is None:
            unlogged += 1
            continue
        lines.setdefault(Path(row.log_file), set()).add(row.log_line)
    if unlogged:
        raise StatsInputError(f"{db}: {unlogged} game(s) of {tid} name no log line; statistics "
                              f"need the logged deck of every game")
    collected = collect_logs(sorted(lines), lines)
    found = collected.games + collected.forfeited
    if found != len(rows):
        raise StatsInputError(f"{db}: {tid} stores {len(rows)} games but their logs hold {found} "
                              f"of them (run `durak-ref verify --db {db} --tournament {tid}`)")
    return collected


# --------------------------------------------------------------------------- figures


def wilson(hits: int, n: int) -> dict[str, Any]:
    """A rate with its 95% Wilson score interval: ``{"n", "hits", "rate", "low", "high"}``
    (rate and bounds None when ``n`` is 0)."""
    if n == 0:
        return {"n": 0, "hits": 0, "rate": None, "low": None, "high": None}
    p = hits / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return {"n": n, "hits": hits, "rate": p, "low": max(0.0, centre - half),
            "high": min(1.0, centre + half)}


def mean_interval(values: Sequence[float]) -> dict[str, Any]:
    """A mean with its 95% normal interval: ``{"n", "mean", "low", "high"}`` (bounds
    None below two values)."""
    n = len(values)
    if n == 0:
        return {"n": 0, "mean": None, "low": None, "high": None}
    m = sum(values) / n
    if n < 2:
        return {"n": n, "mean": m, "low": None, "high": None}
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return {"n": n, "mean": m, "low": m - half, "high": m + half}


def summarize(facts: Iterable[SeatFact]) -> list[dict[str, Any]]:
    """The statistics table, one entry per player count (ascending)."""
    by_players: dict[int, list[SeatFact]] = {}
    for f in facts:
        by_players.setdefault(f.players, []).append(f)
    out = []
    for n in sorted(by_players):
        rows = by_players[n]
        openers = [f for f in rows if f.opener]  # one per game
        out.append({
            "players": n,
            "games": len(openers),
            "draw_rate": wilson(sum(f.result == "draw" for f in openers), len(openers)),
            "bouts": mean_interval([f.bouts for f in openers]),
            "durak_by_trumps": _by_trumps(rows),
            "opener_durak": wilson(sum(f.result == "durak" for f in openers), len(openers)),
            "opener_durak_by_trumps": _by_trumps(openers),
            "durak_by_position": [
                {"position": p, **_durak_rate([f for f in rows if f.position == p])}
                for p in range(1, n + 1)],
        })
    return out


def _durak_rate(rows: list[SeatFact]) -> dict[str, Any]:
    return wilson(sum(f.result == "durak" for f in rows), len(rows))


def _by_trumps(rows: list[SeatFact]) -> list[dict[str, Any]]:
    return [{"trumps": k, **_durak_rate([f for f in rows if f.opening_trumps == k])}
            for k in range(MAX_TRUMPS + 1)]


# --------------------------------------------------------------------------- reference

#: The published reference: statistics of about 6,900 games between simple "gentle" bots
#: on 36 cards, the lowest trump opening and the first bout capped at five cards (our
#: ``classic`` rules with ``first_bout_limit=on``). Each row: the statistic (a key of
#: ``summarize``'s table: ``bouts``, ``draw_rate``, ``opener_durak``, or ``trumps:K``
#: for the durak rate of hands with K opening trumps), the player count, the figure. The
#: reference gives no intervals and no figure where this table has none.
REFERENCE_SOURCE = ("published reference: about 6,900 games of gentle bots, 36 cards, lowest "
                    "trump opens, first bout at most five cards")
REFERENCE_RULES = "classic first_bout_limit=on"
REFERENCE: tuple[tuple[str, int, float], ...] = (
    ("bouts", 2, 30.0), ("bouts", 3, 36.0), ("bouts", 4, 42.0),
    ("trumps:0", 2, 0.55), ("trumps:3", 2, 0.45),
    ("trumps:0", 3, 0.37), ("trumps:3", 3, 0.26),
    ("trumps:0", 4, 0.31), ("trumps:3", 4, 0.18),
    ("opener_durak", 2, 0.477),
    ("draw_rate", 2, 0.02), ("draw_rate", 4, 0.01),
)
#: How close a figure must come to count as matching: within 30% of the reference's
#: figure, draws within one percentage point (a rate near zero has no useful ratio).
RELATIVE_TOLERANCE = 0.30
DRAW_TOLERANCE = 0.01


def _figure(block: dict[str, Any], statistic: str) -> dict[str, Any]:
    """One statistic of a ``summarize`` block as ``{"value", "low", "high", "n"}``."""
    if statistic == "bouts":
        b = block["bouts"]
        return {"value": b["mean"], "low": b["low"], "high": b["high"], "n": b["n"]}
    if statistic.startswith("trumps:"):
        rate = block["durak_by_trumps"][int(statistic[7:])]
    else:
        rate = block[statistic]
    return {"value": rate["rate"], "low": rate["low"], "high": rate["high"], "n": rate["n"]}


def compare_reference(table: list[dict[str, Any]]) -> dict[str, Any]:
    """``summarize``'s table beside ``REFERENCE``.

    ``rows``: per reference figure, ``statistic``, ``players``, ``reference``, ``ours``
    (``{"value", "low", "high", "n"}``, value None without games), ``difference`` (ours
    minus the reference), ``tolerance`` (``"30%"`` or ``"1 point"``) and ``within``
    (None without games). ``effects``: the direction of each effect the reference shows,
    ``effect``, ``reference`` and ``ours`` (what it says, in words) and ``holds`` (None
    without the games to tell): fewer opening trumps lose more often (per player count),
    the 2-player opener is the durak less than half the time, 2-player draws outnumber
    4-player ones, and games grow longer with more players."""
    blocks = {b["players"]: b for b in table}
    rows = []
    for statistic, players, published in REFERENCE:
        block = blocks.get(players)
        ours = (_figure(block, statistic) if block else
                {"value": None, "low": None, "high": None, "n": 0})
        got = ours["value"]
        draw = statistic == "draw_rate"
        within = None if got is None else (
            abs(got - published) <= DRAW_TOLERANCE if draw
            else abs(got / published - 1) <= RELATIVE_TOLERANCE)
        rows.append({"statistic": statistic, "players": players, "reference": published, "ours": ours,
                     "difference": None if got is None else got - published,
                     "tolerance": "1 point" if draw else f"{RELATIVE_TOLERANCE:.0%}",
                     "within": within})

    def value(statistic: str, players: int) -> float | None:
        block = blocks.get(players)
        return _figure(block, statistic)["value"] if block else None

    def effect(name: str, says: str, a: float | None, b: float | None, shown: str) -> dict[str, Any]:
        """The effect holds when ``a < b``; ``shown`` formats our ``a`` and ``b``."""
        holds = None if a is None or b is None else a < b
        return {"effect": name, "reference": says,
                "ours": "-" if holds is None else shown.format(a=a, b=b), "holds": holds}

    ref = value_of_reference
    effects = []
    for players in sorted({p for _, p, _ in REFERENCE}):
        effects.append(effect(
            f"{players} players: 3 opening trumps lose less often than 0",
            f"{ref('trumps:3', players):.0%} vs {ref('trumps:0', players):.0%}",
            value("trumps:3", players), value("trumps:0", players), "{a:.1%} vs {b:.1%}"))
    effects.append(effect("2 players: the opener loses under half the time",
                          f"{ref('opener_durak', 2):.1%}", value("opener_durak", 2),
                          0.5 if 2 in blocks else None, "{a:.1%}"))
    effects.append(effect("draws: rarer with 4 players than with 2",
                          f"{ref('draw_rate', 4):.0%} vs {ref('draw_rate', 2):.0%}",
                          value("draw_rate", 4), value("draw_rate", 2), "{a:.2%} vs {b:.2%}"))
    for fewer, more in ((2, 3), (3, 4)):
        effects.append(effect(
            f"bouts: more with {more} players than with {fewer}",
            f"{ref('bouts', more):.0f} vs {ref('bouts', fewer):.0f}",
            value("bouts", fewer), value("bouts", more), "{b:.1f} vs {a:.1f}"))
    return {"source": REFERENCE_SOURCE, "rules": REFERENCE_RULES, "rows": rows, "effects": effects}


def value_of_reference(statistic: str, players: int) -> float:
    """The reference's figure of ``statistic`` at ``players`` (KeyError if it has none)."""
    for s, p, v in REFERENCE:
        if s == statistic and p == players:
            return v
    raise KeyError((statistic, players))


# --------------------------------------------------------------------------- export


def export_text(facts: Sequence[SeatFact], form: str) -> str:
    """The facts as CSV (a header row, then one row per seat of each game) or JSON
    Lines (one object per seat of each game, strict JSON)."""
    if form == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(FACT_FIELDS)
        for f in facts:
            w.writerow([_csv_cell(getattr(f, k)) for k in FACT_FIELDS])
        return buf.getvalue()
    from ..console.jsonout import dumps
    return "".join(dumps(asdict(f)) + "\n" for f in facts)


def _csv_cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        # A bot may name itself "=HYPERLINK(...)": a spreadsheet must show it as text.
        return "'" + value
    return value


def export_form(path: Path, form: str | None) -> str:
    """``csv`` or ``jsonl``: ``form`` if given, else from the file's extension. Raises
    StatsInputError if neither says."""
    if form is not None:
        if form not in ("csv", "jsonl"):
            raise StatsInputError(f"--format {form!r}: expected csv or jsonl")
        return form
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    raise StatsInputError(f"--export {path}: cannot tell the format from the extension; "
                          f"name it .csv or .jsonl, or give --format csv|jsonl")


def write_export(path: Path, facts: Sequence[SeatFact], form: str) -> None:
    """Write ``export_text`` to ``path`` (created private to the user, as logs are).
    Raises StatsInputError naming the file if it cannot be written."""
    from ..records.private import private_open
    try:
        with private_open(path) as f:
            f.write(export_text(facts, form))
    except OSError as exc:
        raise StatsInputError(f"--export {path}: cannot write: {exc.strerror or exc}") from None
