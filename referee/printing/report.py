"""Human-readable renderings of results (rich tables). JSON forms come from the results."""

from __future__ import annotations

import json
import math
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..rules.options import OPTIONS, PRESET_HELP, PRESETS
from ..table.failfast import forfeit_line
from ..table.seeds import seed_fields, seed_lines
from .jsonresult import emit_result, match_body


def match_table(summary: dict[str, Any]) -> Table:
    games = summary["games"]
    rules = summary.get("rules_text") or summary["preset"]
    title = f"{games} game{'s' if games != 1 else ''}, rules: {rules}"
    t = Table(title=escape(title), title_justify="left")
    t.add_column("bot")
    t.add_column("durak", justify="right")
    t.add_column("durak %", justify="right")
    t.add_column("draws", justify="right")
    t.add_column("forfeits", justify="right")
    t.add_column("decisions", justify="right")
    t.add_column("mean ms", justify="right")
    for b in summary["bots"]:
        forfeits = escape(", ".join(f"{k} {v}" for k, v in sorted(b["forfeits"].items())) or "-")
        pct = f"{100 * b['durak'] / games:.1f}" if games else "-"
        ms = "-" if b["mean_decision_ms"] is None else f"{b['mean_decision_ms']:.3f}"
        t.add_row(escape(b["name"]), str(b["durak"]), pct, str(b["draws"]), forfeits,
                  str(b["decisions"]), ms)
    return t


def print_warnings(warnings: list[str], console: Console) -> None:
    """Loud lines (see failfast.all_forfeit_warning), before any verdict they qualify."""
    for w in warnings:
        console.print(w, style="bold red", markup=False, highlight=False)


def print_match(summary: dict[str, Any], console: Console) -> None:
    print_warnings(summary.get("warnings", []), console)
    console.print(match_table(summary))
    terms = ", ".join(f"{k} {v}" for k, v in sorted(summary["terminations"].items()))
    console.print(f"draws: {summary['draws']}   bouts per game: {summary['bouts_mean']:.2f}   "
                  f"wall: {summary['wall_s']:.2f} s")
    console.print(f"decisions: {summary['decisions']} asked, {summary['actions']} actions in all"
                  + referee_cost_text(summary))
    console.print(f"terminations: {terms}", markup=False, highlight=False)
    if summary.get("elo"):
        console.print(elo_line(summary["elo"]), markup=False, highlight=False)
    for b in summary["bots"]:
        console.print(forfeit_line(b["name"], summary["games"], b["forfeits"], b.get("stderr_log")),
                      markup=False, highlight=False)
    details = summary.get("forfeit_details", [])
    for f in details[:10]:
        console.print(f"game {f['game']}: {f['bot']} forfeited ({f['kind']}): {f['reason']}",
                      markup=False, highlight=False)
        evidence = f.get("evidence") or {}
        if evidence.get("received") is not None and f["kind"] in ("illegal", "protocol"):
            console.print(f"    it sent: {json.dumps(evidence['received'])}", markup=False, highlight=False)
        if evidence.get("bytes"):
            console.print(f"    bytes: {evidence['bytes']}", markup=False, highlight=False)
        for line in (evidence.get("stderr_tail") or [])[-3:]:
            console.print(f"    stderr: {line}", markup=False, highlight=False)
    total = summary.get("forfeits_total", len(details))  # details: the first ones only
    if total > 10:
        console.print(f"... and {total - 10} more forfeits (see --json or the log)")
    if summary.get("log"):
        console.print(f"log: {summary['log']}", markup=False, highlight=False)


def show_match_result(summary: dict[str, Any], seed: str, argv: list[str], console: Console, *,
                      as_json: bool, command: str = "match", after: str | None = None) -> None:
    """The result of ``durak-ref match`` or ``play`` (``command``; ``argv``: its command line
    without the program name). ``as_json``: its --json object on stdout (jsonresult.match_body:
    the summary with its ``seed`` and ``reproduce`` command). Else on ``console``: the
    summary (print_match), the line ``after`` if any, then the seed and how to play the
    same deals again."""
    if as_json:
        emit_result(command, match_body(summary, seed_fields(seed, argv)))
        return
    print_match(summary, console)
    if after:
        console.print(after, markup=False, highlight=False)
    console.print(seed_lines(seed, argv), markup=False, highlight=False)


def elo_line(elo: dict[str, Any]) -> str:
    """cutechess's line for a two-bot match: ``Elo difference: 6.7 +/- 19.5, LOS: 75.0 %``,
    of the first bot over the second, with its W/L/D (``match.head_to_head``). Where the
    95% interval is unbounded no ``+/- inf`` is printed: the line says which way it is
    unbounded and gives the finite end (``ratings.elo_bound95``)."""
    from ..scoring.ratings import elo_bound95

    wdl = f"(W/L/D {elo['wins']}/{elo['losses']}/{elo['draws']})"
    head = f"Elo difference ({elo['a']} over {elo['b']}):"
    los = f"LOS: {100 * elo['los']:.1f} %"
    diff, err = elo["elo"], elo["error95"]
    if diff is not None and math.isfinite(diff) and err is not None and math.isfinite(err):
        return f"{head} {diff:+.1f} +/- {err:.1f}, {los}  {wdl}"
    low, high = elo_bound95(elo["wins"], elo["losses"], elo["draws"])
    bound = f"> {low:+.0f}" if math.isfinite(low) else f"< {high:+.0f}"
    if diff is None or not math.isfinite(diff):
        return (f"{head} not finite: every game went one way; {bound} at 95% "
                f"(more games narrow it)  {wdl}")
    return f"{head} {diff:+.1f}, 95% interval unbounded: {bound} at 95%, {los}  {wdl}"


def referee_cost_text(summary: dict[str, Any]) -> str:
    """"; referee per decision: X µs CPU, Y µs wall" from a summary's referee_* keys
    (empty when nothing was asked)."""
    cpu, wall = summary.get("referee_cpu_us_per_decision"), summary.get("referee_wall_us_per_decision")
    if cpu is None or wall is None:
        return ""
    return f"; referee per decision: {cpu:.0f} µs CPU, {wall:.0f} µs wall (not charged to any bot)"


def rules_table() -> Table:
    t = Table(title="Table rules (set with --set name=value)", title_justify="left")
    t.add_column("option")
    t.add_column("default")
    t.add_column("allowed")
    t.add_column("meaning")
    for o in OPTIONS:
        t.add_row(o.name, o.format(o.default), o.allowed, o.help)
    return t


def presets_table() -> Table:
    t = Table(title="Presets (choose with --rules NAME)", title_justify="left")
    t.add_column("preset")
    t.add_column("sets")
    t.add_column("meaning")
    for name, values in PRESETS.items():
        sets = " ".join(f"{k}={v}" for k, v in values.items()) or "(all defaults)"
        t.add_row(name, sets, PRESET_HELP[name])
    return t


def standings_table(data: dict[str, Any]) -> Table:
    t = Table(title=escape(f"tournament {data['tournament']}: {data['games']} games"), title_justify="left")
    for col, just in (("rank", "right"), ("bot", "left"), ("games", "right"), ("durak %", "right"),
                      ("rating ± 95%", "right"), ("LOS next", "right"), ("forfeits", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for b in data["table"]:
        rating = "-" if b["rating"] is None else f"{b['rating']:+.1f} ± {b['error95']:.1f}"
        los = "-" if b["los_next"] is None else f"{100 * b['los_next']:.1f}%"
        forfeits = escape(", ".join(f"{k} {v}" for k, v in sorted(b["forfeits"].items())) or "-")
        rate = "-" if b["durak_rate"] is None else f"{100 * b['durak_rate']:.1f}"
        t.add_row(str(b["rank"]), escape(b["bot"]), str(b["games"]), rate, rating, los, forfeits)
    return t


def ratings_table(data: dict[str, Any]) -> Table:
    t = Table(title=f"ratings from {data['games']} games (maximum likelihood, sum zero)",
              title_justify="left")
    for col, just in (("rank", "right"), ("bot", "left"), ("games", "right"),
                      ("rating ± 95%", "right"), ("LOS next", "right")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for b in data["table"]:
        los = "-" if b["los_next"] is None else f"{100 * b['los_next']:.1f}%"
        t.add_row(str(b["rank"]), escape(b["bot"]), str(b["games"]), f"{b['rating']:+.1f} ± {b['error95']:.1f}", los)
    return t


def tournament_forfeits(data: dict[str, Any], console: Console) -> None:
    """Under the standings: each bot's forfeits by kind and this run's stderr logs."""
    logs = data.get("stderr_logs") or {}
    for b in data["table"]:
        console.print(forfeit_line(b["bot"], b["games"], b["forfeits"], stderr_where(logs.get(b["bot"]))),
                      markup=False, highlight=False)


def crosstable_table(ct: dict[str, Any]) -> Table:
    """The crosstable of ``tourreport.crosstable``: W-L-D at two-player tables, else games
    together and the row bot's share of the pair's durak results."""
    title = ("crosstable: row bot's wins-losses-draws against the column bot" if ct["two_player"] else
             "crosstable: games together, row bot's share of the pair's durak results (lower is better)")
    t = Table(title=title, title_justify="left")
    t.add_column("")
    for b in ct["bots"]:
        t.add_column(escape(b), justify="right")
    for a in ct["bots"]:
        cells = []
        for b in ct["bots"]:
            c = ct["cells"].get(a, {}).get(b)
            if a == b or c is None:
                cells.append("-" if a != b else "")
            elif ct["two_player"]:
                cells.append(f"{c['wins']}-{c['losses']}-{c['draws']}")
            else:
                share = "-" if c["durak_share"] is None else f"{100 * c['durak_share']:.1f}%"
                cells.append(f"{c['games']} g, {share}")
        t.add_row(escape(a), *cells)
    return t


def print_report(data: dict[str, Any], console: Console) -> None:
    """``durak-ref report`` as text (``tourreport.report_data``); the plots are in --html."""
    st = data["standings"]
    if not data["games"]:
        console.print(f"{data['kind']} {data['tournament']}: no games stored yet ({data['status']})",
                      markup=False, highlight=False)
        return
    print_warnings(st.get("warnings", []), console)
    console.print(standings_table(st))
    if st.get("rating_error"):
        console.print(f"ratings: {st['rating_error']}", markup=False, highlight=False)
    console.print(crosstable_table(data["crosstable"]))
    tournament_forfeits(st, console)
    history = data["history"]
    console.print(f"rating history ({history['source']}):", markup=False, highlight=False)
    for bot, points in sorted(history["series"].items()):
        if points:
            console.print(f"  {bot}: {points[0][1]:.0f} after game {points[0][0]:.0f} -> "
                          f"{points[-1][1]:.0f} after game {points[-1][0]:.0f}",
                          markup=False, highlight=False)


def _pct(r: dict[str, Any]) -> str:
    """A rate with its interval, e.g. ``45.2% [41.0, 49.5]``; ``-`` without data."""
    if r["rate"] is None:
        return "-"
    return f"{100 * r['rate']:.1f}% [{100 * r['low']:.1f}, {100 * r['high']:.1f}]"


def stats_tables(table: list[dict[str, Any]]) -> list[Any]:
    """The ``durak-ref stats`` table (``referee.league.stats.summarize``) as printable lines
    and rich tables, one block per player count."""
    out: list[Any] = []
    for block in table:
        n = block["players"]
        b = block["bouts"]
        bouts = "-" if b["mean"] is None else (
            f"{b['mean']:.1f}" + ("" if b["low"] is None else f" [{b['low']:.1f}, {b['high']:.1f}]"))
        out.append(f"{n} players: {block['games']} games   draws {_pct(block['draw_rate'])}   "
                   f"bouts per game {bouts}   opener is the durak {_pct(block['opener_durak'])}")
        t = Table(title=f"{n} players: durak rate by trumps in the opening hand (95% intervals)",
                  title_justify="left")
        for col in ("trumps", "seats", "durak", "openers", "opener durak"):
            t.add_column(col, justify="right")
        for every, opener in zip(block["durak_by_trumps"], block["opener_durak_by_trumps"], strict=True):
            t.add_row(str(every["trumps"]), str(every["n"]), _pct(every), str(opener["n"]),
                      _pct(opener))
        out.append(t)
        p = Table(title=f"{n} players: durak rate by position after the dealer "
                        f"(1: first dealt to; {n}: the dealer)", title_justify="left")
        for col in ("position", "games", "durak"):
            p.add_column(col, justify="right")
        for row in block["durak_by_position"]:
            p.add_row(str(row["position"]), str(row["n"]), _pct(row))
        out.append(p)
    return out


#: How ``reference_tables`` names each statistic of ``compare_reference``'s rows.
_STATISTIC_NAMES = {"bouts": "bouts per game", "draw_rate": "draws",
                    "opener_durak": "opener is the durak"}


def _statistic_name(statistic: str) -> str:
    if statistic.startswith("trumps:"):
        return f"durak, {statistic[7:]} trumps"
    return _STATISTIC_NAMES[statistic]


def _figure_text(statistic: str, figure: dict[str, Any] | float | None) -> str:
    """A figure of the comparison: bouts as a number, rates as a percentage, with the
    interval when it has one; ``-`` for none."""
    value, low, high = ((figure["value"], figure["low"], figure["high"])
                        if isinstance(figure, dict) else (figure, None, None))
    if value is None:
        return "-"
    scale, unit, digits = ((1, "", 1) if statistic == "bouts" else
                           (100, "%", 2 if statistic == "draw_rate" else 1))
    text = f"{scale * value:.{digits}f}{unit}"
    if low is None or high is None:
        return text
    return text + f" [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"


def _yes_no(flag: bool | None) -> str:
    return "-" if flag is None else "yes" if flag else "NO"


def reference_tables(comparison: dict[str, Any], rules: list[str]) -> list[Any]:
    """``referee.league.stats.compare_reference``'s result as a line naming the reference
    (and a warning when the logs were played under other rules) and two rich tables: the
    figures side by side, and the direction of each effect."""
    out: list[Any] = [f"Beside the {comparison['source']}:"]
    other = [r for r in rules if r != comparison["rules"]]
    if other:
        out.append(f"warning: the reference's rules are {comparison['rules']}; these logs were "
                   f"played under {', '.join(other)}, so the comparison is not like for like")
    t = Table(title="the reference's figures and ours (95% intervals; durak rates by opening "
                    "trumps)", title_justify="left")
    for col, justify in (("statistic", "left"), ("players", "right"), ("reference", "right"),
                         ("ours", "right"), ("difference", "right"), ("within", "right")):
        t.add_column(col, justify=justify)  # type: ignore[arg-type]
    for row in comparison["rows"]:
        statistic, diff = row["statistic"], row["difference"]
        if diff is None:
            diff_text = "-"
        elif statistic == "draw_rate":  # judged in points: no ratio
            diff_text = f"{100 * diff:+.2f} points"
        else:
            size = f"{diff:+.1f}" if statistic == "bouts" else f"{100 * diff:+.1f} points"
            diff_text = f"{size} ({diff / row['reference']:+.0%})"
        t.add_row(_statistic_name(statistic), str(row["players"]),
                  _figure_text(statistic, row["reference"]), _figure_text(statistic, row["ours"]),
                  diff_text, f"{_yes_no(row['within'])} ({row['tolerance']})")
    out.append(t)
    e = Table(title="the direction of each effect the reference shows", title_justify="left")
    for col in ("effect", "reference", "ours", "same way"):
        e.add_column(col)
    for row in comparison["effects"]:
        e.add_row(row["effect"], row["reference"], row["ours"], _yes_no(row["holds"]))
    out.append(e)
    return out


def stderr_where(files: list[str] | None) -> str | None:
    """Where a bot's stderr went, for a summary line: its log, the first of several
    (``(+N more)``: one per process it ran in), or None (not logged)."""
    if not files:
        return None
    return files[0] if len(files) == 1 else f"{files[0]} (+{len(files) - 1} more)"
