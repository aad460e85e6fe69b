"""Reading what was played: `replay` and `verify` (logs and the store checked), `ratings`, `report`, `stats`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from ..console.progress import progress_for
from ..printing.jsonresult import emit_result, report_body, standings_body
from ..records.storedb import PgUrl
from .common import (
    err,
    fail,
    out,
    store_target,
)
from .options import (
    DB_FORMS,
    DEFAULT_DB,
    RequireSignatureFlag,
    TrustOption,
    db_option,
)


def _replay_html(log: Path, html_out: Path, game: int | None, seat: int | None, as_json: bool) -> None:
    from ..records.private import private_open
    from ..web.replay_html import render_replay_html

    if html_out.exists() and log.exists() and html_out.resolve() == log.resolve():
        fail(f"--html {html_out} is the log itself: give another file to write the page to")
    text = render_replay_html(log, game=game, seat=seat)
    try:
        # 0600 like the log it comes from: the omniscient view holds every hidden card.
        with private_open(html_out) as f:
            f.write(text)
    except OSError as exc:
        fail(f"--html {html_out}: cannot write: {exc.strerror or exc}")
    if as_json:
        emit_result("replay", {"log": str(log), "html": str(html_out), "game": game, "seat": seat,
                   "bytes": len(text.encode("utf-8"))})
    else:
        view = "omniscient view" if seat is None else f"seat {seat}'s view"
        out.print(f"{html_out}: replay viewer of {log} ({'game ' + str(game) if game is not None else 'all games'}, "
                  f"{view}); open it in a browser", markup=False, highlight=False)


def replay(
    log: Annotated[Path | None, typer.Argument(
        metavar="LOG", help="A match log (.jsonl or .jsonl.gz); with --verify --db it may be left out.",
        show_default=False)] = None,
    verify: Annotated[bool, typer.Option(
        "--verify", help="Re-simulate every game with the rules engine and check every result.")] = False,
    db: Annotated[str | None, typer.Option(
        help="With --verify: also cross-check the result store against its logs, as "
        "`durak-ref verify` does (LOG, if given, is checked against the store). " + DB_FORMS,
        show_default=False, metavar="DB")] = None,
    game: Annotated[int | None, typer.Option(help="Show game N step by step.")] = None,
    seat: Annotated[int | None, typer.Option(
        help="With --game or --html: show only what this seat saw (default: everything).")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the verification (with --html: what was written) as JSON.")] = False,
    html_out: Annotated[Path | None, typer.Option(
        "--html", metavar="OUT.html",
        help="Write a self-contained HTML viewer of the log (every game, or --game N; "
        "--seat S: only what that seat saw) to OUT.html: a table you step through with "
        "buttons, a scrub bar or the keyboard. Opens from the file, offline.",
        show_default=False)] = None,
    trust: TrustOption = None,
    require_signature: RequireSignatureFlag = False,
) -> None:
    """Verify a match log, show one of its games step by step, or write an HTML viewer.

    Without options: list the games. Exit 1 if --verify finds a divergence, an
    impossible forfeit, a record whose signature fails, a log signed by a key other
    than the trusted one, or a damaged log (every complete game before the damage is
    still checked and shown); an unsigned log is reported, and fails only with
    --require-signature. --html OUT.html: exit 2 if the log is damaged or a game
    diverges (no page is written).
    """
    from ..records.matchlog import read_log
    from ..records.signing import local_trust

    if (trust is not None or require_signature) and not verify:
        fail("--trust and --require-signature check signatures: use them with --verify")
    checked = local_trust(trust, require_signature) if verify else None
    if db is not None:
        if not verify or game is not None:
            fail("--db cross-checks a store: use it with --verify (and without --game)")
        assert checked is not None
        _verify_store(store_target(db), [log] if log else [], None, as_json, "replay", checked)
    if log is None:
        fail("give a LOG to replay, or --verify --db STORE to check a store against its logs")
    if html_out is not None:
        if verify:
            fail("--html writes a viewer and --verify checks the log: give one of them")
        _replay_html(log, html_out, game, seat, as_json)
        return
    if seat is not None and game is None:
        fail("--seat S shows a game as seat S saw it: give --game N too (or --html)")
    contents = read_log(log, check_signatures=verify)
    games = contents.games
    damaged = contents.error
    if game is not None:
        _show_game(log, contents, game, seat)
        return
    if checked is not None:
        _verify_log(log, contents, as_json, checked)
    if as_json:
        emit_result("replay", {"log": str(log), "header": contents.header, "games": len(games),
                   "results": [{k: g[k] for k in ("game", "players", "termination", "durak")} for g in games],
                   "damaged": str(damaged) if damaged else None})
    else:
        h = contents.header
        out.print(f"{log}: {len(games)} games, rules {h.get('preset')}, seed {h.get('seed')}",
                  markup=False, highlight=False)
        for g in games:
            d = g["durak"]
            who = "draw" if d is None else f"durak {d} ({g['players'][d]})"
            out.print(f"  game {g['game']}: {g['termination']}, {who}, {len(g['decisions'])} decisions",
                      markup=False, highlight=False)
    if damaged:
        err.print(f"durak-ref: damaged log: {damaged}", markup=False)
        raise typer.Exit(1)


def _show_game(log: Path, contents: Any, game: int, seat: int | None) -> None:
    """Print game ``game`` of the log read as ``contents`` step by step (as seat ``seat``
    saw it, or everything); exit 2 for a game or seat the log lacks, 1 if it diverges."""
    from ..replay.replay import Divergence, game_steps

    games = contents.games
    record = next((g for g in games if g["game"] == game), None)
    if record is None:
        fail(f"{log}: no complete game {game} (games: {', '.join(str(g['game']) for g in games) or 'none'})")
    if seat is not None and not 0 <= seat < len(record["players"]):
        fail(f"--seat {seat}: game {game} has seats 0..{len(record['players']) - 1}")
    try:
        for line in game_steps(contents.header, record, seat):
            out.print(line, highlight=False, markup=False)
    except Divergence as exc:
        err.print(f"durak-ref: divergence: {exc}", markup=False)
        raise typer.Exit(1) from None


def _verify_log(log: Path, contents: Any, as_json: bool, trust: Any) -> NoReturn:
    """``replay LOG --verify``: every complete game of ``contents`` (the log read with its
    signatures checked) replayed and its signature checked, the log's signatures judged
    under ``trust``; exit 1 if a game fails, the signatures do, or the log is damaged."""
    from ..replay.replay import Divergence, log_signature, verify_log

    damaged = contents.error
    try:
        results = verify_log(contents.header, contents.games)
    except Divergence as exc:
        fail(f"{log}: {exc}")
    signature = log_signature(contents.signing_key, contents.signed, contents.signature_problems, trust)
    bad = [r for r in results if not r.ok]
    if as_json:
        emit_result("replay", {"log": str(log), "games": len(results), "ok": len(results) - len(bad),
                   "divergences": [{"game": r.game, "message": r.message} for r in bad],
                   "signature": signature.as_dict(),
                   "damaged": str(damaged) if damaged else None,
                   "complete": contents.footer is not None})
    else:
        for r in bad:
            err.print(f"FAILS: {r.message}", markup=False)
        (out if signature.ok else err).print(f"{log}: {signature.message}", markup=False,
                                             highlight=False)
        out.print(f"{log}: {len(results) - len(bad)} of {len(results)} games verified"
                  + ("" if contents.footer else " (no footer: the match did not finish)"),
                  markup=False, highlight=False)
    if damaged:
        err.print(f"durak-ref: damaged log: {damaged}", markup=False)
    raise typer.Exit(1 if bad or damaged or not signature.ok else 0)


def verify(
    logs: Annotated[list[Path] | None, typer.Argument(
        metavar="LOG", help="Tournament, ladder or arena logs whose games must all be in the store (default: "
        "every log the store names, and the other logs of its tournaments beside them).",
        show_default=False)] = None,
    db: Annotated[str, db_option("The result store to check.")] = DEFAULT_DB,
    tournament_id: Annotated[str | None, typer.Option(
        "--tournament", help="Check only this tournament (ladder: the ladder and arena games).",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
    trust: TrustOption = None,
    require_signature: RequireSignatureFlag = False,
) -> None:
    """Cross-check every stored game against its log record: results, durak, forfeits,
    seats, seeds, rules, times; every logged game must replay, every forfeit must have
    been possible, every signature must hold (against the trusted key) and every game
    must be stored.

    Each difference names the tournament, the game, the field, the store's and the
    log's value and the log's file:line. Exit 0 when store and logs agree, 1 when
    anything differs or is missing, 2 for unusable input (no store, an unreadable LOG).
    """
    target = store_target(db)
    if logs and isinstance(target, Path) and not target.exists():
        # A log checked on its own is replay's job: verify compares a store with its logs.
        fail(f"{target}: no such store; give the --db a tournament or ladder wrote, or check "
             f"the log on its own with: durak-ref replay {shlex.join(map(str, logs[:1]))} --verify")
    from ..records.signing import local_trust

    _verify_store(target, logs or [], tournament_id, as_json, "verify",
                  local_trust(trust, require_signature))


def _verify_store(db: Path | PgUrl, logs: list[Path], tournament_id: str | None, as_json: bool,
                  command: str, trust: Any) -> NoReturn:
    from ..league.verify import Verification

    check = Verification(db, logs, tournament_id, trust)
    with progress_for(check.total, "verify", enabled=not as_json, console=err) as advance:
        report = check.run(lambda: advance(""))
    if as_json:
        emit_result(command, report.as_dict())
    else:
        for d in report.differences:
            out.print(d.message(), markup=False, highlight=False)
        for v in report.signatures:
            if v["ok"]:  # (a failing verdict is among the differences)
                out.print(f"{v['log']}: {v['message']}", markup=False, highlight=False)
        verdict = "store and logs agree" if report.ok else f"{len(report.differences)} differences"
        out.print(f"{db}: {report.games} stored games of {len(report.tournaments)} tournament(s) "
                  f"checked against {len(report.logs)} log(s): {verdict}", markup=False,
                  highlight=False)
    raise typer.Exit(0 if report.ok else 1)


def ratings(
    tournament_id: Annotated[str | None, typer.Option("--tournament", help="Rate one tournament of the store.")] = None,
    from_: Annotated[Path | None, typer.Option(
        "--from", help="Rate the games of a file instead: a durak-ref log (match, tournament, "
        'sprt, ladder), or JSON Lines of one {"players": [...], "durak": NAME or null, '
        '"last_two": [A, B]} per line.')] = None,
    db: Annotated[str, db_option("The result store.")] = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Ratings, errors and the LOS matrix as JSON.")] = False,
) -> None:
    """Maximum-likelihood ratings (Elo scale, sum zero) with 95% errors and LOS."""
    from ..scoring.ratings import fit_ratings
    from ..scoring.ratingsio import rating_report

    if from_ is not None:
        from ..records.matchlog import rated_games
        games, warning = rated_games(from_)
        if warning:
            err.print(f"durak-ref: warning: {warning}", markup=False, highlight=False)
    else:
        from ..records.store import iter_rated, open_store
        target = store_target(db)
        if isinstance(target, Path) and not target.exists():
            fail(f"no store at {target}; give --db PATH, or --from FILE to rate a JSON Lines file")
        with open_store(target, check=True) as store:
            if tournament_id:
                store.tournament(tournament_id)
            games = list(iter_rated(store.games(tournament_id)))
    if not games:
        fail("no games to rate")
    report = rating_report(games, fit_ratings(games))
    if as_json:
        emit_result("ratings", standings_body(report))
        return
    from ..printing.report import ratings_table
    out.print(ratings_table(report))


def report(
    tournament_id: Annotated[str, typer.Option(
        "--tournament", help="The run to report: a tournament id, an sprt id, or 'ladder'.",
        show_default=False)],
    db: Annotated[str, db_option("The result store.")] = DEFAULT_DB,
    html: Annotated[Path | None, typer.Option(
        "--html", help="Also write the report as one self-contained HTML page (plots as inline "
        "SVG, no JavaScript, nothing fetched).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole report as one JSON object.")] = False,
) -> None:
    """A stored run's report: standings, ratings with 95% intervals, the crosstable (W-L-D
    at two-player tables, else each pair's games and durak shares), each bot's rating
    history over the games, and forfeits by bot and kind."""
    from ..league.tourreport import report_data
    from ..records.store import open_store

    target = store_target(db)
    if isinstance(target, Path) and not target.exists():
        fail(f"no store at {target}; give --db PATH")
    with open_store(target, check=True) as store:
        data = report_data(store, tournament_id)
    if html is not None:
        from ..web.report_html import render_report_html
        try:
            html.write_text(render_report_html(data), encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write the page {html}: {exc.strerror or exc}")
    if as_json:
        emit_result("report", dict(report_body(data), html=str(html) if html else None))
        return
    from ..printing.report import print_report
    print_report(data, out)
    if html is not None:
        out.print(f"page: {html}", markup=False, highlight=False)


def stats(
    logs: Annotated[list[Path] | None, typer.Argument(
        metavar="LOG", help="Match, tournament or SPRT logs (.jsonl or .jsonl.gz).",
        show_default=False)] = None,
    tournament_id: Annotated[str | None, typer.Option(
        "--tournament", help="Instead of LOGs: the games of this tournament or SPRT run of the "
        "store (read from the log records it names).", show_default=False)] = None,
    db: Annotated[str, db_option("The result store, with --tournament.")] = DEFAULT_DB,
    export: Annotated[Path | None, typer.Option(
        help="Also write the per-game facts, one row per seat of each game (opening trumps, "
        "opener, position after the dealer, bouts, result), to this file: CSV or JSON Lines "
        "by its extension (.csv, .jsonl) or --format; '-' writes them to stdout instead of "
        "the table.", show_default=False)] = None,
    form: Annotated[str | None, typer.Option(
        "--format", help="csv or jsonl for --export (default: from its extension).",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
) -> None:
    """The statistics Durak sites quote, from logged games, with 95% intervals.

    Per player count: the durak rate by the number of trumps in the opening hand (0-6),
    for every seat and for the opener alone; the durak rate by position after the
    dealer; the draw rate; the mean bouts per game. Forfeited games are counted apart
    and left out. Then the published reference figures (about 6,900 games of gentle bots,
    rules classic with first_bout_limit=on) beside ours: each figure, the difference,
    whether it is within 30% (draws: within 1 point), and whether each effect the
    reference shows goes the same way here. docs/STATS.md discusses them.
    """
    from ..league.stats import (
        collect_logs,
        collect_tournament,
        compare_reference,
        export_form,
        export_text,
        summarize,
        write_export,
    )

    if bool(logs) == (tournament_id is not None):
        fail("give LOG files or --tournament ID (not both)")
    collected = (collect_tournament(store_target(db), tournament_id) if tournament_id is not None
                 else collect_logs(logs or []))
    form_ = export_form(export, form) if export is not None else None
    if export is not None and form_ is not None:
        if str(export) == "-":
            sys.stdout.write(export_text(collected.facts, form_))
            return
        write_export(export, collected.facts, form_)
    table = summarize(collected.facts)
    comparison = compare_reference(table)
    if as_json:
        emit_result("stats", {"sources": collected.sources, "games": collected.games,
                   "forfeited": collected.forfeited, "export": str(export) if export else None,
                   "rules": collected.rules, "by_players": table, "reference": comparison})
        return
    from ..printing.report import reference_tables, stats_tables
    out.print(f"{collected.games} games from {len(collected.sources)} log(s)"
              + (f"; {collected.forfeited} forfeited games left out" if collected.forfeited else ""),
              markup=False, highlight=False)
    for item in [*stats_tables(table), *reference_tables(comparison, collected.rules)]:
        if isinstance(item, str):
            out.print(item, markup=False, highlight=False)
        else:
            out.print(item)
    if export is not None:
        out.print(f"facts written to {export}", markup=False, highlight=False)
