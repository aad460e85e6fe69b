"""``durak-ref report --html OUT``: a run's report as one self-contained page.

Built from ``tourreport.report_data`` only: standings, ratings with 95% bars (inline
SVG), the crosstable, the rating history over games (inline SVG lines), forfeits by bot
and kind. No JavaScript (the data is also embedded as a JSON element, inert); every
name from outside is escaped (``web.escape``).
"""

from __future__ import annotations

import math
from typing import Any

from . import escape, json_script, page

#: Line colours of the history plot, one per bot (cycled).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22")


def render_report_html(data: dict[str, Any]) -> str:
    """The whole page for ``data`` (``tourreport.report_data``)."""
    st = data["standings"]
    tables = ", ".join(str(n) for n in data["players_per_table"]) or "-"
    parts = [
        f"<h1>Report: {escape(data['kind'])} {escape(data['tournament'])}</h1>",
        f'<p class="meta">{data["games"]} games, {escape(data["status"])}; players per table: '
        f"{escape(tables)}</p>",
        *(f'<p class="warn">{escape(w)}</p>' for w in st.get("warnings", [])),
        "<h2>Standings</h2>", _standings(st),
        "<h2>Ratings with 95% intervals</h2>", _chart_box(_ratings_svg(st)),
        "<h2>Crosstable</h2>", _crosstable(data["crosstable"]),
        "<h2>Rating history</h2>", _chart_box(_history_svg(data["history"], data["crosstable"]["bots"])),
        "<h2>Forfeits by bot and kind</h2>", _forfeits(data["forfeits"]),
        json_script("report-data", data),
    ]
    return page(f"durak-ref report {data['tournament']}", "\n".join(parts), css=("report.css",))


def _chart_box(svg: str) -> str:
    """A chart in a box of its own that scrolls sideways on a narrow screen: shrunk to
    the width of a phone its labels would be too small to read (report.css)."""
    return f'<div class="scroll chart">{svg}</div>'


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _standings(st: dict[str, Any]) -> str:
    head = ("<tr><th>rank</th><th class=bot>bot</th><th>games</th><th>durak %</th>"
            "<th>rating ± 95%</th><th>LOS next</th><th>forfeits</th></tr>")
    rows = []
    for b in st["table"]:
        rating = "-" if b["rating"] is None else f"{b['rating']:+.1f} ± {b['error95']:.1f}"
        los = "-" if b["los_next"] is None else f"{100 * b['los_next']:.1f}%"
        forfeits = ", ".join(f"{k} {v}" for k, v in sorted(b["forfeits"].items())) or "-"
        rows.append(f'<tr data-bot="{escape(b["bot"])}"><td>{b["rank"]}</td>'
                    f'<td class=bot>{escape(b["bot"])}</td><td>{b["games"]}</td>'
                    f"<td>{_pct(b['durak_rate'])}</td><td>{rating}</td><td>{los}</td>"
                    f"<td>{escape(forfeits)}</td></tr>")
    note = (f'<p class="note">ratings: {escape(st["rating_error"])}</p>' if st.get("rating_error") else "")
    return f'<div class=scroll><table id="standings">{head}{"".join(rows)}</table></div>{note}'


def _ratings_svg(st: dict[str, Any]) -> str:
    rated = [b for b in st["table"] if b["rating"] is not None]
    if not rated:
        return '<p class="note">no ratings (no games, or they could not be fitted)</p>'
    # An interval wider than +-1000 (a bot that never lost) is drawn cut at the edge.
    spans = [(b["rating"], min(_finite(b["error95"], 1000.0), 1000.0)) for b in rated]
    lo = min(r - e for r, e in spans)
    hi = max(r + e for r, e in spans)
    lo, hi = math.floor(lo / 50) * 50 - 50, math.ceil(hi / 50) * 50 + 50
    left, width, row = 170, 460, 26
    height = row * len(rated) + 40

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    out = [f'<svg id="ratings-plot" viewBox="0 0 {left + width + 20} {height}" width="{left + width + 20}" '
           f'height="{height}" role="img" aria-label="ratings with 95% intervals">']
    for tick in _ticks(lo, hi, 50 if hi - lo <= 600 else 100 if hi - lo <= 1200 else 250):
        out.append(f'<line x1="{x(tick):.1f}" y1="10" x2="{x(tick):.1f}" y2="{height - 25}" '
                   f'stroke="{"#999" if tick == 0 else "#eee"}"/>'
                   f'<text x="{x(tick):.1f}" y="{height - 10}" text-anchor="middle">{tick:+g}</text>')
    for i, (b, (r, e)) in enumerate(zip(rated, spans, strict=True)):
        y = 22 + i * row
        out.append(f'<g class="rating" data-bot="{escape(b["bot"])}">'
                   f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{escape(b["bot"])}</text>'
                   f'<line x1="{x(r - e):.1f}" y1="{y}" x2="{x(r + e):.1f}" y2="{y}" stroke="#555" '
                   f'stroke-width="2"/><line x1="{x(r - e):.1f}" y1="{y - 5}" x2="{x(r - e):.1f}" '
                   f'y2="{y + 5}" stroke="#555"/><line x1="{x(r + e):.1f}" y1="{y - 5}" '
                   f'x2="{x(r + e):.1f}" y2="{y + 5}" stroke="#555"/>'
                   f'<circle cx="{x(r):.1f}" cy="{y}" r="4.5" fill="{PALETTE[i % len(PALETTE)]}"/>'
                   f"<title>{escape(b['bot'])}: {r:+.1f} ± {b['error95']:.1f}</title></g>")
    out.append("</svg>")
    return "".join(out)


def _ticks(lo: float, hi: float, step: float) -> list[float]:
    """The grid lines of an axis from ``lo`` to ``hi``: every multiple of ``step`` in it."""
    first = math.ceil(lo / step)
    return [k * step for k in range(first, math.floor(hi / step) + 1)]


def _finite(x: float | None, default: float) -> float:
    return x if x is not None and math.isfinite(x) else default


def _crosstable(ct: dict[str, Any]) -> str:
    bots, cells, two = ct["bots"], ct["cells"], ct["two_player"]
    if not bots:
        return '<p class="note">no games</p>'
    what = ("each cell: the row bot's wins-losses-draws against the column bot" if two else
            "each cell: games together, and the row bot's share of the two bots' durak "
            "results (lower is better)")
    head = "<tr><th class=bot></th>" + "".join(f"<th>{escape(b)}</th>" for b in bots) + "</tr>"
    rows = []
    for a in bots:
        tds = []
        for b in bots:
            c = cells.get(a, {}).get(b)
            if a == b:
                tds.append("<td class=self></td>")
            elif c is None:
                tds.append("<td>-</td>")
            elif two:
                tone = "good" if c["wins"] > c["losses"] else "bad" if c["wins"] < c["losses"] else ""
                tds.append(f'<td class="{tone}">{c["wins"]}-{c["losses"]}-{c["draws"]}</td>')
            else:
                share = c["durak_share"]
                tone = "" if share is None or share == 0.5 else "good" if share < 0.5 else "bad"
                tds.append(f'<td class="{tone}">{c["games"]} g, {_pct(share)}%</td>')
        rows.append(f'<tr data-bot="{escape(a)}"><td class=bot>{escape(a)}</td>{"".join(tds)}</tr>')
    return (f'<p class="note">{what}</p><div class=scroll><table id="crosstable">{head}'
            f'{"".join(rows)}</table></div>')


def _history_svg(history: dict[str, Any], ranked: list[str]) -> str:
    """One line per bot, coloured as in the ratings plot (``ranked``: standings order)."""
    series = {b: pts for b, pts in history["series"].items() if pts}
    if not series:
        return '<p class="note">no games</p>'
    games = max(p[0] for pts in series.values() for p in pts)
    ys = [p[1] for pts in series.values() for p in pts]
    lo, hi = math.floor(min(ys) / 25) * 25 - 25, math.ceil(max(ys) / 25) * 25 + 25
    left, top, width, height = 60, 15, 640, 300
    legend_w = 190

    def x(g: float) -> float:
        return left + (g / max(games, 1)) * width

    def y(r: float) -> float:
        return top + (hi - r) / (hi - lo) * height

    out = [f'<svg id="history-plot" viewBox="0 0 {left + width + legend_w} {top + height + 40}" '
           f'width="{left + width + legend_w}" height="{top + height + 40}" role="img" '
           f'aria-label="rating history">']
    for tick in _ticks(lo, hi, 25 if hi - lo <= 300 else 100 if hi - lo <= 1500 else 500):
        out.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + width}" y2="{y(tick):.1f}" '
                   f'stroke="#eee"/><text x="{left - 6}" y="{y(tick) + 4:.1f}" '
                   f'text-anchor="end">{tick:g}</text>')
    every = next(n for n in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10**4, 10**5, 10**9)
                 if games / n <= 8)
    for g in range(every, games + 1, every):
        out.append(f'<line x1="{x(g):.1f}" y1="{top + height}" x2="{x(g):.1f}" y2="{top + height + 4}" '
                   f'stroke="#999"/><text x="{x(g):.1f}" y="{top + height + 16}" '
                   f'text-anchor="middle">{g}</text>')
    out.append(f'<text x="{left + width / 2}" y="{top + height + 32}" text-anchor="middle">'
               f"game (1 to {games})</text>")
    rank = {b: i for i, b in enumerate(ranked)}
    for i, (bot, pts) in enumerate(sorted(series.items(), key=lambda kv: (rank.get(kv[0], 99), kv[0]))):
        colour = PALETTE[rank.get(bot, i) % len(PALETTE)]
        path = " ".join(f"{x(g):.1f},{y(r):.1f}" for g, r in pts)
        out.append(f'<g class="history" data-bot="{escape(bot)}"><polyline fill="none" '
                   f'stroke="{colour}" stroke-width="1.8" points="{path}"/>'
                   f'<rect x="{left + width + 14}" y="{top + i * 18}" width="12" height="12" '
                   f'fill="{colour}"/><text x="{left + width + 32}" y="{top + i * 18 + 10}">'
                   f"{escape(bot)} ({pts[-1][1]:.0f})</text><title>{escape(bot)}</title></g>")
    out.append("</svg>")
    return f'{"".join(out)}<p class="note">{escape(history["source"])}</p>'


def _forfeits(forfeits: dict[str, dict[str, int]]) -> str:
    if not forfeits:
        return '<p class="note">no forfeits</p>'
    kinds = sorted({k for by_kind in forfeits.values() for k in by_kind})
    head = "<tr><th class=bot>bot</th>" + "".join(f"<th>{escape(k)}</th>" for k in kinds) + "</tr>"
    rows = "".join(f'<tr data-bot="{escape(b)}"><td class=bot>{escape(b)}</td>'
                   + "".join(f"<td>{by_kind.get(k, 0)}</td>" for k in kinds) + "</tr>"
                   for b, by_kind in forfeits.items())
    return f'<table id="forfeits">{head}{rows}</table>'
