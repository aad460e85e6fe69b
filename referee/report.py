"""Human-readable renderings of results (rich tables). JSON forms come from the results."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .failfast import forfeit_line
from .rules.options import OPTIONS, PRESET_HELP, PRESETS


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
    for i, b in enumerate(data["table"]):
        los = "-" if b["los_next"] is None else f"{100 * b['los_next']:.1f}%"
        t.add_row(str(i + 1), escape(b["bot"]), str(b["games"]), f"{b['rating']:+.1f} ± {b['error95']:.1f}", los)
    return t


def tournament_forfeits(data: dict[str, Any], console: Console) -> None:
    """Under the standings: each bot's forfeits by kind and this run's stderr logs."""
    logs = data.get("stderr_logs") or {}
    for b in data["table"]:
        console.print(forfeit_line(b["bot"], b["games"], b["forfeits"], stderr_where(logs.get(b["bot"]))),
                      markup=False, highlight=False)


def stderr_where(files: list[str] | None) -> str | None:
    """Where a bot's stderr went, for a summary line: its log, the first of several
    (``(+N more)``: one per process it ran in), or None (not logged)."""
    if not files:
        return None
    return files[0] if len(files) == 1 else f"{files[0]} (+{len(files) - 1} more)"
