"""The one shape of every command's ``--json`` result (docs/JSON.md describes it for users).

Every ``--json`` result is one JSON object on stdout, never a bare array and never several
objects, whose first two keys are ``"command"`` (the command as typed after ``durak-ref``:
``"match"``, ``"ladder show"``, ``"bench engine"``) and ``"version"`` (``FORMAT_VERSION``,
raised when a key is renamed or removed, never when one is added). A per-bot table is a
list ``"standings"`` of rows, one object per bot with ``"name"`` and ``"games"``, and only
the keys of ``STANDING_KEYS``, each meaning the same in every command. Pairwise figures
(``los``, a crosstable) are objects keyed by bot name: ``.los.A.B``.

The results themselves (a match summary, a tournament's standings, a rating fit) keep the
names their text and HTML renderings read; the functions here turn them into that shape,
so the text output and the JSON output cannot disagree on a figure, and no command builds
its JSON object on its own. Commands emit through ``emit_result`` only (a test holds them
to it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..console.jsonout import emit_json

#: The version of the --json format (the ``"version"`` key of every result).
FORMAT_VERSION = 1

#: Every key a standing row may hold, in the order it is written. ``name`` and ``games``
#: are in every row; the others where the command knows the fact (docs/JSON.md).
STANDING_KEYS = (
    "rank", "name", "games", "durak", "draws", "durak_rate", "forfeits",
    "forfeited_all", "elo", "elo_error95", "los_next", "decisions", "mean_decision_ms",
    "max_decision_ms", "stderr_logs",
)
REQUIRED_STANDING_KEYS = ("name", "games")

#: The results' own names for standing facts, where they differ from STANDING_KEYS.
_RENAMED = {"bot": "name", "rating": "elo", "error95": "elo_error95"}


def result(command: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The --json object of ``command``: its ``command`` and ``version`` keys, then ``body``.
    Raises ValueError (our bug) if ``body`` has either key or a malformed standing row."""
    clash = {"command", "version"} & body.keys()
    if clash:
        raise ValueError(f"the --json body of {command!r} has the envelope keys {sorted(clash)}")
    for row in body.get("standings") or ():
        check_standing_row(row)
    return {"command": command, "version": FORMAT_VERSION, **body}


def emit_result(command: str, body: Mapping[str, Any]) -> None:
    """Print ``result(command, body)`` on stdout: the whole --json output of a command."""
    emit_json(result(command, body))


def check_standing_row(row: Mapping[str, Any]) -> None:
    """Raise ValueError (our bug) unless ``row`` has the required keys and only known ones."""
    unknown = [k for k in row if k not in STANDING_KEYS]
    missing = [k for k in REQUIRED_STANDING_KEYS if k not in row]
    if unknown or missing:
        raise ValueError(f"standing row {dict(row)!r}: unknown keys {unknown}, missing {missing}")


def standing_row(facts: Mapping[str, Any]) -> dict[str, Any]:
    """One bot's row from a result's per-bot facts: renamed to STANDING_KEYS (``bot`` is
    ``name``, ``rating`` is ``elo``, ``error95`` is ``elo_error95``, a single
    ``stderr_log`` becomes the list ``stderr_logs``), in that order. Raises ValueError
    (our bug) for a fact with no standing key: a new fact is named in STANDING_KEYS and
    docs/JSON.md first."""
    named = {_RENAMED.get(k, k): v for k, v in facts.items()}
    if "stderr_log" in named:
        log = named.pop("stderr_log")
        named.setdefault("stderr_logs", [] if log is None else [log])
    check_standing_row(named)
    return {k: named[k] for k in STANDING_KEYS if k in named}


def standing_rows(rows: Iterable[Mapping[str, Any]],
                  stderr_logs: Mapping[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """``standing_row`` of each of ``rows``; with ``stderr_logs`` (bot name -> this run's
    stderr logs) each row also says where its bot's stderr went."""
    out = [standing_row(r) for r in rows]
    if stderr_logs is not None:
        for row in out:
            row["stderr_logs"] = list(stderr_logs.get(row["name"], []))
    return out


def rows_of_tally(tally: Mapping[str, Mapping[str, Any]],
                  stderr_logs: Mapping[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """Standing rows of a forfeit tally (``{name: {"games", "forfeits", "forfeited_all"}}``),
    in its order."""
    return standing_rows([dict(facts, name=name) for name, facts in tally.items()], stderr_logs)


def elo_pair(elo: Mapping[str, Any]) -> dict[str, Any]:
    """A two-bot Elo estimate (``a``, ``b``, ``wins``, ``losses``, ``draws``, ``elo``,
    ``error95``, ``los``) with its error named ``elo_error95`` as everywhere else."""
    return {("elo_error95" if k == "error95" else k): v for k, v in elo.items()}


def match_body(summary: Mapping[str, Any], seed: Mapping[str, Any]) -> dict[str, Any]:
    """The --json body of ``match`` and ``play``: the match summary with its bots as
    ``standings`` (in seat order), then ``seed`` and ``reproduce``."""
    body = {k: v for k, v in summary.items() if k != "bots"}
    body["standings"] = standing_rows(summary["bots"])
    if body.get("elo"):
        body["elo"] = elo_pair(body["elo"])
    body.update(seed)
    return body


def standings_body(table: Mapping[str, Any]) -> dict[str, Any]:
    """A run's standings (league.standings: ``table`` rows and the rest, and after a run
    its ``stderr_logs`` by bot) or a rating report (scoring.ratingsio) as a --json body:
    the rows as ``standings`` (with each bot's ``stderr_logs`` if given), the rest as it is."""
    body = {k: v for k, v in table.items() if k not in ("table", "stderr_logs")}
    body["standings"] = standing_rows(table["table"], table.get("stderr_logs"))
    return body


def sprt_body(status: Mapping[str, Any]) -> dict[str, Any]:
    """The --json body of ``sprt``: the test's status (its bots named by role in ``a``,
    ``b``, ``opponents``) with each bot's games and forfeits as ``standings`` rows, and the
    stored run's id as ``tournament`` (what ``report --tournament`` takes)."""
    body = {k: v for k, v in status.items() if k not in ("bots", "stderr_logs", "run")}
    if "run" in status:
        body["tournament"] = status["run"]
    body["standings"] = rows_of_tally(status["bots"], status.get("stderr_logs"))
    return body


def report_body(data: Mapping[str, Any]) -> dict[str, Any]:
    """The --json body of ``report``: the run's facts with its standings at the top level
    (``standings`` rows, ``rating_error``, ``warnings``, ``los``). The report's forfeits by
    bot are each row's ``forfeits``."""
    body = {k: v for k, v in data.items() if k not in ("standings", "forfeits")}
    inner = standings_body(data["standings"])
    body.update({k: v for k, v in inner.items() if k not in body})
    return body


def checkbot_body(report: Mapping[str, Any]) -> dict[str, Any]:
    """The --json body of ``check-bot``: its report, with the checked bot's command line as
    ``bot_command`` (``command`` is the --json result's own command)."""
    return {("bot_command" if k == "command" else k): v for k, v in report.items()}


def ladder_rows(ladder: Iterable[tuple[str, float, int]]) -> list[dict[str, Any]]:
    """Standing rows of the ladder (``(bot, rating, games)`` best first): rank, name, elo
    (incremental, rounded to 0.01) and games."""
    return [standing_row({"rank": i + 1, "name": bot, "elo": round(rating, 2), "games": games})
            for i, (bot, rating, games) in enumerate(ladder)]
