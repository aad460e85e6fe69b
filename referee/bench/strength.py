"""``bench strength``: how strong the built-in bots are, on one rating scale.

Every table of ``players`` bots drawn from the ladder (every combination) plays the same
duplicate deals: each deal once per seat rotation, so every bot holds every hand of it
(``play_match`` in duplicate mode; deal ``d`` is ``match:d`` under the run's seed, the
same decks at every table). The ratings are the project's maximum-likelihood fit
(referee/scoring/ratings.py, the fit of ``tournament`` and ``ratings``) of every game,
anchored at ``greedy`` = 0 when greedy plays (else at the first bot), each with the 95%
half-width of its difference to the anchor.

The games are played on the cpu clock by default (``--clock cpu``: each decision charged
the CPU its bot spent, table/clock.py), so a host loaded by other work changes neither the
ratings nor the time forfeits; each row counts its bot's forfeits by kind.

Time per decision, per bot: the CPU of its decisions where it can be told apart from the
rest of the run: another built-in's own thread CPU (``BuiltinPlayer.decide_cpu_s``), or,
where it sits opposite a program bot and so runs confined (referee/seats/confined.py),
its processes' CPU from their handshake to their close (``ConfinedBuiltin.decide_cpu_s``);
for ``random`` and ``greedy``, which decide from the engine's state in microseconds,
their charged clock time (it stands for their CPU: they choose in
``BuiltinPlayer.attempt``); for a program bot, the CPU of its reaped processes (less the
confined built-ins') over the tables where it was the only program bot. Wall time per
decision (what the referee charged) is given too.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import trio

from ..errors import UserError
from ..scoring.ratings import Z95, RatedGame, RatingError, fit_ratings
from ..seats.confined import ConfinedBuiltin
from ..seats.players import BotFailure, BotSpec, BuiltinPlayer, parse_bot_spec
from ..table.failfast import first_start_error
from ..table.match import GameRecord, MatchConfig, play_match
from ..table.runner import SeatOptions, make_players
from .bench import children_cpu

#: The built-in ladder at fixed budgets, weakest first: (name, spec).
LADDER: tuple[tuple[str, str], ...] = (
    ("random", "builtin:random"),
    ("gentle", "builtin:gentle"),
    ("greedy", "builtin:greedy"),
    ("ismcts30", "builtin:ismcts:iterations=30"),
    ("ismcts150", "builtin:ismcts:iterations=150"),
    ("ismcts600", "builtin:ismcts:iterations=600"),
    ("expert", "builtin:expert"),
)
ANCHOR = "greedy"
#: The built-ins that decide from the engine's state in microseconds (they choose in ``BuiltinPlayer.attempt``).
FAST = ("random", "greedy")


class StrengthError(UserError, ValueError):
    """Unusable input to ``bench strength`` (the user's): a bad bot, too few bots."""

    hint = "name each --bot NAME=CMD with a name of its own, and give --only ladder names"


@dataclass
class BotTally:
    """One bot's counts over the run."""

    name: str
    spec: str
    games: int = 0
    durak: int = 0
    decisions: int = 0  #: decisions it was asked for (forced ones excluded)
    wall_s: float = 0.0  #: their time as the referee charged it
    cpu_s: float | None = 0.0  #: their CPU (None: cannot be told apart; module docstring)
    cpu_decisions: int = 0
    fast: bool = False  #: decides from the engine's state (in ``attempt``): clock time is CPU
    forfeits: dict[str, int] = field(default_factory=dict)  #: kind -> games it forfeited

    def row(self) -> dict[str, Any]:
        """Its standing row (referee/printing/jsonresult.py's keys), without the rating."""
        return {"name": self.name, "games": self.games, "durak": self.durak,
                "durak_rate": round(self.durak / self.games, 4) if self.games else None,
                "forfeits": dict(self.forfeits), "decisions": self.decisions,
                "mean_decision_ms": (round(1000 * self.wall_s / self.decisions, 3)
                                     if self.decisions else None),
                "cpu_ms_per_decision": (round(1000 * self.cpu_s / self.cpu_decisions, 3)
                                        if self.cpu_s is not None and self.cpu_decisions else None)}


@dataclass
class StrengthRun:
    """What ``bench_strength`` collects (``result`` turns it into the report)."""

    bots: dict[str, BotTally]
    games: list[RatedGame] = field(default_factory=list)


def ladder_specs(extra: Sequence[str] = (), only: Sequence[str] | None = None) -> list[BotSpec]:
    """The ladder's bots (``only``: those names of it, in ladder order) and ``extra``
    (``NAME=CMD`` specs, ``--bot``). Raises StrengthError naming a bad one."""
    from ..seats.players import BotSpecError

    names = [n for n, _ in LADDER]
    if only is not None:
        unknown = [n for n in only if n not in names]
        if unknown:
            raise StrengthError(f"--only: {', '.join(unknown)} not in the ladder; its bots: "
                                f"{', '.join(names)}")
    specs = [parse_bot_spec(f"{n}={s}") for n, s in LADDER if only is None or n in only]
    for text in extra:
        try:
            spec = parse_bot_spec(text)
        except BotSpecError as exc:
            raise StrengthError(f"--bot {text!r}: {exc}") from None
        if not spec.named:
            raise StrengthError(f"--bot {text!r}: name it, NAME=CMD, so that its rating has a name")
        if spec.name in {s.name for s in specs}:
            raise StrengthError(f"--bot {text!r}: the name {spec.name!r} is taken; choose another")
        specs.append(spec)
    return specs


def bench_strength(specs: Sequence[BotSpec], config: MatchConfig, players: int = 2,
                   options: SeatOptions = SeatOptions(),
                   on_game: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Play ``config.games`` games (rounded up to whole deals of ``players`` rotations) at
    every table of ``players`` of ``specs``, and rate them (module docstring).
    ``on_game(text)`` after each game. Raises StrengthError for fewer bots than seats,
    BotStartError (BotFirstStartError) when a program bot cannot start."""
    if len(specs) < players:
        raise StrengthError(f"{players} players per table need at least {players} bots; "
                            f"got {len(specs)}")
    config.rules.check_table(players)
    deals = math.ceil(config.games / players)
    config = replace(config, games=deals * players, duplicate=True)
    run = StrengthRun({s.name: BotTally(s.name, _spec_text(s), fast=s.kind == "builtin" and s.argv[0] in FAST)
                       for s in specs})
    started = time.perf_counter()
    for table in itertools.combinations(specs, players):
        trio.run(_play_table, table, config, options, run, on_game)
    result = _result(run, config, players)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def _spec_text(spec: BotSpec) -> str:
    """The bot's spec without its ``NAME=``: ``builtin:ismcts:iterations=30``."""
    head, sep, rest = spec.text.partition("=")
    return rest if sep and head == spec.name else spec.text


def table_count(bots: int, players: int) -> int:
    """How many tables ``bench_strength`` plays: every combination."""
    return math.comb(bots, players)


async def _play_table(table: Sequence[BotSpec], config: MatchConfig, options: SeatOptions,
                      run: StrengthRun, on_game: Callable[[str], None] | None) -> None:
    """Play one table's games, counting them into ``run``."""
    seats = make_players(table, config, stderr_stem=None, options=options)
    confined = [p for p in seats if isinstance(p, ConfinedBuiltin)]
    programs = [p for p in seats if not isinstance(p, (BuiltinPlayer, ConfinedBuiltin))]
    children0 = children_cpu()
    asked = {p.name: 0 for p in seats}  #: unforced decisions per bot at this table

    def record(game: GameRecord, _: Any) -> None:
        names = game.players
        for d in game.decisions:
            if not d.forced:
                tally = run.bots[names[d.seat]]
                tally.decisions += 1
                asked[names[d.seat]] += 1
                tally.wall_s += d.seconds
                if tally.fast and tally.cpu_s is not None:
                    tally.cpu_s += d.seconds
                    tally.cpu_decisions += 1
        for seat, name in enumerate(names):
            run.bots[name].games += 1
            run.bots[name].durak += seat == game.durak
        if game.forfeit is not None:
            forfeits = run.bots[names[game.forfeit["seat"]]].forfeits
            forfeits[game.termination] = forfeits.get(game.termination, 0) + 1
        run.games.append(RatedGame(tuple(names), names[game.durak]) if game.durak is not None
                         else RatedGame(tuple(names), None, tuple(names[s] for s in game.drawn_seats)))
        if on_game is not None:
            on_game(" v ".join(p.name for p in seats))

    async with trio.open_nursery() as nursery:
        try:
            for p in seats:
                try:
                    await p.start(nursery)
                except BotFailure as exc:
                    raise await first_start_error(p, exc) from None
            await play_match(seats, config, on_game=record)
        finally:
            for p in seats:
                await p.close()
            nursery.cancel_scope.cancel()
    for p in seats:
        tally = run.bots[p.name]
        if isinstance(p, BuiltinPlayer) and p.decided:
            assert tally.cpu_s is not None
            tally.cpu_s += p.decide_cpu_s
            tally.cpu_decisions += p.decided
    for c in confined:  # its processes' CPU from their handshake to their close
        tally = run.bots[c.name]
        if tally.cpu_s is not None:
            tally.cpu_s += c.decide_cpu_s
            tally.cpu_decisions += asked[c.name]
    if len(programs) == 1:
        # The bot's processes are reaped (closed): their CPU is in children_cpu now, with
        # the confined built-ins' (read from /proc before they closed).
        tally = run.bots[programs[0].name]
        if tally.cpu_s is not None:
            tally.cpu_s += children_cpu() - children0 - sum(c.process_cpu_s for c in confined)
            tally.cpu_decisions = tally.decisions
    else:
        for p in programs:
            run.bots[p.name].cpu_s = None  # shared with another program bot: not told apart


def _result(run: StrengthRun, config: MatchConfig, players: int) -> dict[str, Any]:
    """The report: ranked standing rows with ratings anchored (module docstring), and each
    bot's spec by name."""
    names = list(run.bots)
    anchor = ANCHOR if ANCHOR in names else names[0]
    error = None
    try:
        fit = fit_ratings(run.games, anchor=anchor)
    except RatingError as exc:
        fit, error = None, str(exc)
    rows = []
    for name in names:
        row = run.bots[name].row()
        if fit is not None:
            row["elo"] = round(fit.ratings[name], 1)
            row["elo_error95"] = 0.0 if name == anchor else round(Z95 * fit.diff_stderr(name, anchor), 1)
        else:
            row["elo"] = row["elo_error95"] = None
        rows.append(row)
    rows.sort(key=lambda r: -(r["elo"] if r["elo"] is not None else -r["durak_rate"]))
    standings = [{"rank": i + 1, **{k: row[k] for k in STANDING_ORDER}} for i, row in enumerate(rows)]
    return {"anchor": anchor, "players": players, "games_per_table": config.games,
            "deals_per_table": config.games // players, "tables": table_count(len(names), players),
            "games": len(run.games), "rules": config.rules.preset, "seed": config.seed,
            "time_control": config.tc.as_dict(),
            "standings": standings, "specs": {n: run.bots[n].spec for n in names},
            "rating_error": error}


#: A standing row's keys in the order of referee/printing/jsonresult.py's STANDING_KEYS.
STANDING_ORDER = ("name", "games", "durak", "durak_rate", "forfeits", "elo", "elo_error95", "decisions",
                  "mean_decision_ms", "cpu_ms_per_decision")
