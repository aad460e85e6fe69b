"""``durak-ref verify``: the result store is cross-checked against the
match logs, so a bot that rewrote a result is caught.

One real tournament (built-in bots and a program bot that plays illegally, so forfeits
are on record) and a ladder run are played once into a store; each test copies them,
tampers as a hostile bot would (a store row, a log line, a whole file) and checks the
exact field reported and the exit code: 0 when everything agrees, 1 for any
difference, 2 for unusable input with one line naming the file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from replay_logs import resign_log
from support import cli

pytestmark = pytest.mark.process

HOSTILE = Path(__file__).resolve().parents[1] / "referee" / "bots" / "hostile_bot.py"
DB = Path("st/durak.sqlite")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with ``st/durak.sqlite`` and ``st/*.jsonl``: a 3-bot round robin (6
    games, one bot forfeits every game by an illegal action) and 4 ladder games."""
    base = tmp_path_factory.mktemp("played")
    cheat = f"{sys.executable} {HOSTILE} illegal {base / 'pids'}"
    # Unsandboxed: the cheat writes its pid file in tmp (sandboxed, /tmp is its own and it
    # failed to start, which fail-fast now reports instead of 6 silent crash forfeits).
    proc = cli("tournament", "--bot", "g=builtin:greedy", "--bot", "r=builtin:random",
               "--bot", f"x={cheat}", "--games", "2", "--db", DB, "--log-dir", "st",
               "--sandbox", "none", "--json", cwd=base)
    assert proc.returncode == 0, proc.stderr
    for name, spec in (("lg", "builtin:greedy"), ("lr", "builtin:random")):
        assert cli("ladder", "add", name, spec, "--db", DB, cwd=base).returncode == 0
    proc = cli("ladder", "run", "--games", "4", "--db", DB, "--log-dir", "st", cwd=base)
    assert proc.returncode == 0, proc.stderr
    return base


@pytest.fixture
def run(played: Path, tmp_path: Path) -> Path:
    """A private copy of the played directory to tamper with."""
    shutil.copytree(played, tmp_path / "run")
    return tmp_path / "run"


def sql(base: Path, *statements: str) -> None:
    db = sqlite3.connect(base / DB)
    for s in statements:
        db.execute(s)
    db.commit()
    db.close()


def tid(base: Path) -> str:
    db = sqlite3.connect(base / DB)
    (t,) = db.execute("SELECT id FROM tournaments WHERE kind = 'tournament'").fetchone()
    db.close()
    return str(t)


def tournament_log(base: Path) -> Path:
    (log,) = (base / "st").glob("tournament-*.jsonl")
    return log


def verify_json(base: Path, *args: str | Path) -> tuple[int, dict]:
    """``durak-ref verify --db st/durak.sqlite --json ARGS`` run in ``base``: the exit code
    and the report. In-process (the same command function; a subprocess per tampering
    would only add start-up time): the CLI's own process is exercised below."""
    old = os.getcwd()
    os.chdir(base)
    try:
        result = CliRunner().invoke(app, ["verify", "--db", str(DB), "--json", *map(str, args)])
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def fields(report: dict) -> set[tuple[int | None, str]]:
    return {(d["game"], d["field"]) for d in report["differences"]}


def test_an_untouched_store_verifies(run: Path) -> None:
    proc = cli("verify", "--db", DB, cwd=run)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "10 stored games of 2 tournament(s) checked against 2 log(s): store and logs agree" \
        in proc.stdout
    code, report = verify_json(run)
    assert code == 0 and report["ok"] and report["differences"] == []
    assert report["games_checked"] == 10 and sorted(report["tournaments"]) == sorted([tid(run), "ladder"])
    # the forfeits are really there to be checked
    db = sqlite3.connect(run / DB)
    assert db.execute("SELECT count(*) FROM seats WHERE forfeit = 'illegal'").fetchone()[0] == 4


T = "tournament_id != 'ladder'"  # the tournament's rows (ladder games have numbers 0..3 too)

# (what a hostile bot does to the store, the (game, field) that must be reported)
STORE_TAMPERING: dict[str, tuple[list[str], set[tuple[int | None, str]]]] = {
    # "0% durak while the logs showed losses": the cheater's durak rows become safe
    "cheater never the durak": (
        ["UPDATE seats SET result = 'safe', forfeit = NULL WHERE bot = 'x' AND result = 'durak'",
         "UPDATE games SET durak = NULL, termination = 'draw' WHERE durak = 'x'"],
        {(g, f) for g in (1, 2, 4, 5) for f in ("durak", "termination")}
        | {(g, f"seats[{s}].{c}") for g, s in ((1, 1), (2, 1), (4, 0), (5, 0))
           for c in ("result", "forfeit")}),
    "durak flipped": ([f"UPDATE games SET durak = 'g' WHERE game_index = 1 AND {T}"], {(1, "durak")}),
    "seat result flipped": ([f"UPDATE seats SET result = 'safe' WHERE game_index = 1 AND {T} AND bot = 'x'"],
                            {(1, "seats[1].result")}),
    "forfeit erased": ([f"UPDATE seats SET forfeit = NULL WHERE game_index = 1 AND {T}"], {(1, "seats[1].forfeit")}),
    "termination": ([f"UPDATE games SET termination = 'timeout' WHERE game_index = 3 AND {T}"],
                    {(3, "termination")}),
    "decisions": ([f"UPDATE seats SET decisions = decisions + 1 WHERE game_index = 3 AND seat = 0 AND {T}"],
                  {(3, "seats[0].decisions")}),
    "time used": ([f"UPDATE seats SET time_used = time_used + 0.5 WHERE game_index = 0 AND seat = 1 AND {T}"],
                  {(0, "seats[1].time_used")}),
    "deal seed": ([f"UPDATE games SET deal_seed = 'T9:d0' WHERE game_index = 0 AND {T}"], {(0, "deal_seed")}),
    "rotation": ([f"UPDATE games SET rotation = 1 - rotation WHERE game_index = 0 AND {T}"], {(0, "rotation")}),
    "rules": ([f"UPDATE games SET rules = '{{\"deck\": 52}}' WHERE game_index = 3 AND {T}"], {(3, "rules")}),
    "seats swapped": ([f"UPDATE seats SET bot = CASE bot WHEN 'g' THEN 'r' ELSE 'g' END WHERE game_index = 0 AND {T}"],
                      {(0, "seats[0].bot"), (0, "seats[1].bot"), (0, "players")}),
    "ended after the log": ([f"UPDATE games SET ended = '2099-01-01T00:00:00+00:00' WHERE game_index = 0 AND {T}"],
                            {(0, "ended")}),
    "started not a time": ([f"UPDATE games SET started = '2026-01-01T00:00:00' WHERE game_index = 4 AND {T}"],
                           {(4, "started")}),
    "log pointer moved": ([f"UPDATE games SET log_line = 2 WHERE game_index = 3 AND {T}"], {(3, "log_line")}),
    "log pointer erased": ([f"UPDATE games SET log_file = NULL WHERE game_index = 3 AND {T}"],
                           {(3, "log_file")}),
    "game deleted": ([f"DELETE FROM seats WHERE game_index = 2 AND {T}",
                      f"DELETE FROM games WHERE game_index = 2 AND {T}"],
                     {(2, "stored")}),
    "settings": (["UPDATE tournaments SET settings = replace(settings, '\"games\": 2', '\"games\": 3') "
                  "WHERE kind = 'tournament'"], {(None, "settings.games")}),
    "ladder result": (["UPDATE games SET durak = CASE durak WHEN 'lg' THEN 'lr' ELSE 'lg' END "
                       "WHERE tournament_id = 'ladder' AND game_index = 1"], {(1, "durak")}),
    "ladder rating": (["UPDATE ladder SET rating = rating + 100 WHERE bot = 'lr'"],
                      {(None, "ladder[lr].rating")}),
    "ladder update": (["UPDATE ladder_history SET rating_after = rating_after + 5 "
                       "WHERE game_index = 2 AND bot = 'lg'"],
                      {(2, "ladder_history[lg].rating_after")}),
    "ladder game count": (["UPDATE ladder SET games = 3 WHERE bot = 'lg'"], {(None, "ladder[lg].games")}),
}


@pytest.mark.parametrize("name", list(STORE_TAMPERING))
def test_a_tampered_store_row_is_reported(run: Path, name: str) -> None:
    statements, expected = STORE_TAMPERING[name]
    sql(run, *statements)
    code, report = verify_json(run)
    assert code == 1
    assert not report["ok"]
    got = fields(report)
    assert expected <= got, (expected - got, report["differences"])
    # nothing unrelated is reported (the ladder's ratings follow from its games' results)
    assert {f for _, f in got} <= {f for _, f in expected} | {"ladder_history[lg].rating_after",
                                                                "ladder_history[lr].rating_after"}


def test_the_report_names_store_value_log_value_and_line(run: Path) -> None:
    sql(run, f"UPDATE games SET durak = 'g' WHERE game_index = 1 AND {T}")
    code, report = verify_json(run)
    assert code == 1
    (d,) = report["differences"]
    t = tid(run)
    log = tournament_log(run)
    assert d == {"tournament": t, "game": 1, "field": "durak", "store": "g", "log": "x",
                 "where": f"st/{log.name}:3", "note": "",
                 "message": f"{t} game 1: durak: store 'g', log 'x' [st/{log.name}:3]"}
    record = json.loads(log.read_text().splitlines()[2])
    assert record["game"] == 1 and record["players"][record["durak"]] == "x"
    proc = cli("verify", "--db", DB, cwd=run)
    assert proc.returncode == 1
    assert d["message"] in proc.stdout
    assert "1 differences" in proc.stdout


def edit_line(log: Path, line: int, change: Callable[[dict], None] | None) -> None:
    """Rewrite (or, with None, delete) record ``line`` (1-based) of ``log``."""
    lines = log.read_text().splitlines(keepends=True)
    if change is None:
        del lines[line - 1]
    else:
        record = json.loads(lines[line - 1])
        change(record)
        lines[line - 1] = json.dumps(record) + "\n"
    log.write_text("".join(lines))


def test_a_deleted_log_line_is_reported(run: Path) -> None:
    edit_line(tournament_log(run), 3, None)  # game 1's record
    code, report = verify_json(run)
    assert code == 1
    # (game 2's record was chained to game 1's signature: its own no longer holds)
    assert fields(report) == ({(1, "record"), (2, "signature")}
                              | {(g, "log_line") for g in range(2, 6)})
    d = next(d for d in report["differences"] if d["field"] == "record")
    assert d["where"].endswith(".jsonl:3") and "no record of game 1" in d["note"]


def test_an_edited_log_record_is_reported(run: Path) -> None:
    def blame_the_other(record: dict) -> None:
        record["durak"] = 1 - record["durak"]

    edit_line(tournament_log(run), 3, blame_the_other)  # game 1: x forfeited, g is blamed
    code, report = verify_json(run)
    assert code == 1
    assert fields(report) == {(1, "replay"), (1, "signature"), (1, "durak"),
                              (1, "seats[0].result"), (1, "seats[1].result")}


def test_edited_decision_times_are_reported(run: Path) -> None:
    def slower(record: dict) -> None:
        for d in record["decisions"]:
            if d[0] == 0 and not d[2]:
                d[3] += 100.0

    edit_line(tournament_log(run), 2, slower)
    code, report = verify_json(run)
    assert code == 1 and fields(report) == {(0, "seats[0].time_used"), (0, "signature")}


def test_a_forged_log_record_the_store_lacks_is_reported(run: Path) -> None:
    log = tournament_log(run)
    lines = log.read_text().splitlines(keepends=True)
    forged = json.loads(lines[1])
    forged["game"] = 99
    lines.insert(-1, json.dumps(forged) + "\n")
    log.write_text("".join(lines))
    code, report = verify_json(run)
    assert code == 1
    # (and the footer after it, chained to the record before, no longer holds)
    assert fields(report) == {(99, "stored"), (None, "signature")}
    assert report["differences"][0]["where"].endswith(f"{log.name}:8")


def test_a_second_record_of_a_stored_game_in_its_log_is_reported(run: Path) -> None:
    log = tournament_log(run)
    lines = log.read_text().splitlines(keepends=True)
    forged = json.loads(lines[2])  # game 1: x forfeited; the copy blames g
    forged["durak"] = 0
    lines.insert(-1, json.dumps(forged) + "\n")
    log.write_text("".join(lines))
    code, report = verify_json(run)
    assert code == 1
    assert fields(report) == {(1, "record"), (None, "signature")}
    assert report["differences"][0]["where"].endswith(f"{log.name}:8")


def test_the_logs_are_reported_signed_by_the_trusted_key(run: Path) -> None:
    code, report = verify_json(run)
    assert code == 0
    assert len(report["signatures"]) == 2
    assert all(v["ok"] and v["state"] == "signed" for v in report["signatures"])


def test_an_edit_the_store_agrees_with_is_caught_by_its_signature(run: Path) -> None:
    """Two cards of one opening hand swapped in a record: the game replays the same and
    the store (which keeps no deck) agrees field by field; only the signature shows
    that the referee did not write it."""
    def swap(record: dict) -> None:
        deck = record["deck"]
        deck[0], deck[2] = deck[2], deck[0]  # (2 seats: both go to one hand)

    edit_line(tournament_log(run), 4, swap)  # game 2
    code, report = verify_json(run)
    assert code == 1
    assert fields(report) == {(2, "signature")}
    d = report["differences"][0]
    assert "signature does not match: the record was changed after the referee wrote it" in d["log"]
    assert d["where"].endswith(".jsonl:4")


def test_a_log_resigned_by_another_key_is_refused(run: Path) -> None:
    """A forger who edits a record and the store alike, then signs the whole log again
    with a key of their own: refused, since that key is not the trusted one."""
    log = tournament_log(run)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    records[2]["durak"] = 1 - records[2]["durak"]
    resign_log(records, log)
    code, report = verify_json(run)
    assert code == 1
    assert (None, "signature") in fields(report)
    d = next(d for d in report["differences"] if d["field"] == "signature")
    assert d["log"] == "foreign" and "not by the trusted key" in d["note"]


def test_an_impossible_forfeit_is_refused_even_signed_by_the_trusted_key(run: Path) -> None:
    """A referee's own key does not make any result true: a played-out game (g against
    r) rewritten (by whoever holds the key) as a timeout of the seat that was not to
    move after its first decision, the store edited alike, is still refused by the
    forfeit check."""
    from referee.records.signing import referee_key
    from referee.replay.replay import dealt_game, log_rules, replayed_decisions

    log = tournament_log(run)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    record = next(r for r in records if r.get("type") == "game" and not r.get("forfeit"))
    game = dealt_game(log_rules(records[0]), record)
    for _ in replayed_decisions(game, dict(record, decisions=record["decisions"][:1])):
        pass
    idle = 1 - game.current_seat
    record.update(decisions=record["decisions"][:1], termination="timeout", durak=idle,
                  forfeit=dict(seat=idle, kind="timeout", decision=1, reason="no answer within 10 s",
                               bot=record["players"][idle]))
    resign_log(records, log, referee_key())
    name = record["players"][idle]
    sql(run, f"UPDATE games SET durak = '{name}', termination = 'timeout' "
             f"WHERE game_index = {record['game']} AND {T}")
    code, report = verify_json(run)
    assert code == 1
    d = next(d for d in report["differences"] if d["field"] == "replay")
    assert d["game"] == record["game"]
    assert f"seat {idle} is recorded as forfeiting by timeout, which is impossible" in d["log"]
    assert (None, "signature") not in fields(report)


def test_a_log_of_the_tournament_the_store_never_mentions_is_found(run: Path) -> None:
    """A whole run deleted from the store (games and all) is found from its log beside."""
    sql(run, f"DELETE FROM seats WHERE {T}",
        f"DELETE FROM games WHERE {T}")
    code, report = verify_json(run)
    assert code == 1
    assert fields(report) == {(g, "stored") for g in range(6)}


def test_a_tournament_deleted_from_the_store_is_found_from_its_log(run: Path) -> None:
    t = tid(run)
    sql(run, f"DELETE FROM seats WHERE {T}", f"DELETE FROM games WHERE {T}",
        f"DELETE FROM tournaments WHERE id = '{t}'")
    code, report = verify_json(run)
    assert code == 1
    assert fields(report) == {(g, "stored") for g in range(6)}
    assert all(d["tournament"] == t and f"the store has no tournament '{t}'" in d["note"]
               for d in report["differences"])
    assert verify_json(run, "--tournament", "ladder")[0] == 0  # restricted: not looked for


def test_a_resumed_tournament_verifies(run: Path) -> None:
    """Games logged, then lost before they were stored (the referee killed in between),
    are played again by --resume into a new log: both logs hold them, the store once."""
    t = tid(run)
    sql(run, f"DELETE FROM seats WHERE game_index >= 4 AND {T}",
        f"DELETE FROM games WHERE game_index >= 4 AND {T}")
    assert verify_json(run)[0] == 1
    proc = cli("tournament", "--resume", t, "--db", DB, "--log-dir", "st", "--concurrency", "2",
               cwd=run)
    assert proc.returncode == 0, proc.stderr
    code, report = verify_json(run)
    assert code == 0, report["differences"]
    assert len([p for p in report["logs"] if "tournament-" in p]) == 2


def test_a_deleted_log_file_is_reported(run: Path) -> None:
    log = tournament_log(run)
    log.unlink()
    code, report = verify_json(run)
    assert code == 1
    assert fields(report) == {(g, "log") for g in range(6)}
    assert all(log.name in d["where"] and "cannot open" in d["note"] for d in report["differences"])


def test_a_damaged_log_line_is_reported(run: Path) -> None:
    log = tournament_log(run)
    lines = log.read_text().splitlines(keepends=True)
    lines[4] = lines[4][:40] + "\n"  # game 3's record, cut
    log.write_text("".join(lines))
    code, report = verify_json(run)
    assert code == 1
    assert fields(report) == {(g, "record") for g in (3, 4, 5)} | {(None, "log")}
    assert all("not valid JSON" in d["note"] for d in report["differences"])


def test_tournament_option_restricts_the_check(run: Path) -> None:
    sql(run, "UPDATE ladder SET rating = rating + 100 WHERE bot = 'lr'")
    code, report = verify_json(run, "--tournament", tid(run))
    assert code == 0 and report["tournaments"] == [tid(run)] and report["games_checked"] == 6
    code, report = verify_json(run, "--tournament", "ladder")
    assert code == 1 and report["games_checked"] == 4


def test_logs_given_on_the_command_line_must_be_stored(run: Path) -> None:
    log = tournament_log(run)
    code, report = verify_json(run, log)
    assert code == 0 and report["tournaments"] == [tid(run)]
    sql(run, f"DELETE FROM seats WHERE game_index = 5 AND {T}",
        f"DELETE FROM games WHERE game_index = 5 AND {T}")
    code, report = verify_json(run, log)
    assert code == 1 and fields(report) == {(5, "stored")}


def test_replay_verify_db_is_the_same_check(run: Path) -> None:
    assert cli("replay", "--verify", "--db", DB, cwd=run).returncode == 0
    assert cli("replay", tournament_log(run), "--verify", "--db", DB, cwd=run).returncode == 0
    sql(run, f"UPDATE games SET durak = 'g' WHERE game_index = 1 AND {T}")
    proc = cli("replay", "--verify", "--db", DB, cwd=run)
    assert proc.returncode == 1 and "game 1: durak: store 'g', log 'x'" in proc.stdout


def test_verify_from_another_directory_finds_the_logs_beside_the_store(run: Path) -> None:
    proc = cli("verify", "--db", run / DB, cwd=run.parent)
    assert proc.returncode == 0, proc.stdout


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("durak-ref: error: "), proc.stderr
    return lines[0]


def test_unusable_input_exits_2_naming_the_file(run: Path) -> None:
    assert "nowhere.sqlite: no such store" in one_error(cli("verify", "--db", "nowhere.sqlite", cwd=run))
    assert not (run / "nowhere.sqlite").exists()  # verify never creates a store
    (run / "notes.txt").write_text("not a database, just notes\n" * 20)
    assert "notes.txt: not a usable durak-ref store" in one_error(cli("verify", "--db", "notes.txt", cwd=run))
    (run / "empty.sqlite").write_bytes(b"")
    assert "empty.sqlite: not a durak-ref store" in one_error(cli("verify", "--db", "empty.sqlite", cwd=run))
    assert "st: not a durak-ref store" in one_error(cli("verify", "--db", "st", cwd=run))
    assert "gone.jsonl: cannot open" in one_error(cli("verify", "--db", DB, "gone.jsonl", cwd=run))
    (run / "bad.jsonl").write_text("{not json\n")
    assert "bad.jsonl:1: not valid JSON" in one_error(cli("verify", "--db", DB, "bad.jsonl", cwd=run))
    m = cli("match", "builtin:greedy", "builtin:random", "--games", "1", "--log-dir", "m", cwd=run)
    assert m.returncode == 0
    (match_log,) = (run / "m").glob("*.jsonl")
    assert re.search(r"match-.*\.jsonl: a match log", one_error(cli("verify", "--db", DB, match_log, cwd=run)))
    assert "no tournament 'nope'" in one_error(cli("verify", "--db", DB, "--tournament", "nope", cwd=run))
    assert "--verify" in one_error(cli("replay", "--db", DB, cwd=run))
    assert "give a LOG" in one_error(cli("replay", cwd=run))
