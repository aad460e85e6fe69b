"""The one convention of every ``--json`` result (docs/JSON.md), through the real CLI.

Every command with ``--json`` prints exactly one strict JSON object on stdout whose first
keys are ``command`` (the command as typed) and ``version`` (the format's version); a
per-bot table is the list ``standings`` of rows that each name the bot (``name``) and its
``games``, with only the documented keys. The cases below run every such command on
built-in bots and a few games; the commands that need a server or a long run are named
with the test that holds their output to the same shape.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer

from referee.console.jsonout import strict_loads
from referee.printing.jsonresult import FORMAT_VERSION, STANDING_KEYS
from support import DURAK_REF, ROOT

GREEDY_BOT = f"{sys.executable} {ROOT / 'examples' / 'python' / 'greedy_bot.py'}"
#: The facts every row of a two-player run's standings holds, by command.
RUN_ROW = {"rank", "name", "games", "durak", "draws", "durak_rate", "forfeits", "forfeited_all",
           "elo", "elo_error95", "los_next"}
RATING_ROW = {"rank", "name", "games", "elo", "elo_error95", "los_next"}
LADDER_ROW = {"rank", "name", "games", "elo"}
TALLY_ROW = {"name", "games", "forfeits", "forfeited_all", "stderr_logs"}
MATCH_ROW = {"name", "games", "durak", "draws", "forfeits", "forfeited_all", "decisions",
             "mean_decision_ms", "max_decision_ms", "stderr_logs"}


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``durak-ref ARGS`` with stdin closed (``play`` then gives up its seat at once)."""
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return subprocess.run([str(DURAK_REF), *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=120, stdin=subprocess.DEVNULL)


def result_of(args: list[str], cwd: Path, codes: tuple[int, ...] = (0,)) -> dict[str, Any]:
    """The --json result of ``durak-ref ARGS``: stdout must be one strict JSON object."""
    done = run(args, cwd)
    assert done.returncode in codes, (args, done.returncode, done.stderr[-2000:])
    data = strict_loads(done.stdout)  # the whole of stdout: one document, nothing around it
    assert isinstance(data, dict), f"{args}: --json printed a {type(data).__name__}, not an object"
    return data


def played(logs: str) -> list[str]:
    """The options of a cheap run, its logs in their own folder (``verify`` checks a store
    against the logs beside its own)."""
    return ["--sandbox", "none", "--seed", "7", "--log-dir", f"logs-{logs}"]


@dataclass
class Workspace:
    """Runs made once for every case: a match log, a tournament, an SPRT run, a ladder,
    an arena bot (``delta``)."""

    path: Path
    log: Path
    tournament: str
    sprt: str


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    path = tmp_path_factory.mktemp("json")
    match = result_of(["match", "builtin:greedy", "builtin:random", "--games", "2", "--json",
                       *played("m")], path)
    tournament = result_of(["tournament", "--bot", "a=builtin:greedy", "--bot", "b=builtin:random",
                            "--games", "2", "--db", "t.sqlite", "--json", *played("t")], path)
    sprt = result_of(["sprt", "builtin:greedy", "builtin:random", "--max-pairs", "2", "--db", "s.sqlite",
                      "--json", *played("s")], path, codes=(1,))
    for name, spec in (("alpha", "builtin:greedy"), ("beta", "builtin:random")):
        assert run(["ladder", "add", name, spec, "--db", "l.sqlite"], path).returncode == 0
    result_of(["ladder", "run", "--games", "2", "--db", "l.sqlite", "--json", *played("l")], path)
    assert run(["register", "delta", "--db", "r.sqlite"], path).returncode == 0
    return Workspace(path, path / match["log"], tournament["tournament"], sprt["tournament"])


@dataclass
class Case:
    command: str  #: the command as typed, what ``command`` must say
    args: Callable[[Workspace], list[str]]  #: its arguments after the command
    row: set[str] | None = None  #: the keys of each standing row (None: no standings)
    codes: tuple[int, ...] = (0,)

    def argv(self, ws: Workspace) -> list[str]:
        return [*self.command.split(), *self.args(ws), "--json"]


CASES = {
    "match": Case("match", lambda w: ["builtin:greedy", "builtin:random", "--games", "2", *played("m")],
                  MATCH_ROW),
    "play": Case("play", lambda w: ["builtin:random", "--games", "1", "--no-log", "--sandbox", "none"],
                 MATCH_ROW),
    "replay": Case("replay", lambda w: [str(w.log)]),
    "replay --verify": Case("replay", lambda w: [str(w.log), "--verify"]),
    "replay --html": Case("replay", lambda w: [str(w.log), "--html", "page.html"]),
    "replay --verify --db": Case("replay", lambda w: ["--verify", "--db", "t.sqlite"]),
    "verify": Case("verify", lambda w: ["--db", "t.sqlite"]),
    "rules": Case("rules", lambda w: []),
    "version": Case("version", lambda w: []),
    "tournament": Case("tournament", lambda w: [
        "--bot", "a=builtin:greedy", "--bot", "b=builtin:random", "--games", "2", "--db", "t2.sqlite",
        *played("t2")], RUN_ROW | {"decisions", "mean_decision_ms", "stderr_logs"}),
    "sprt": Case("sprt", lambda w: ["builtin:greedy", "builtin:random", "--max-pairs", "2",
                                    "--db", "s2.sqlite", *played("s2")], TALLY_ROW, codes=(1,)),
    "ratings": Case("ratings", lambda w: ["--tournament", w.tournament, "--db", "t.sqlite"], RATING_ROW),
    "ratings --from": Case("ratings", lambda w: ["--from", str(w.log)], RATING_ROW),
    "report": Case("report", lambda w: ["--tournament", w.tournament, "--db", "t.sqlite"],
                   RUN_ROW | {"decisions", "mean_decision_ms"}),
    "report sprt": Case("report", lambda w: ["--tournament", w.sprt, "--db", "s.sqlite"],
                        RUN_ROW | {"decisions", "mean_decision_ms"}),
    "stats": Case("stats", lambda w: [str(w.log)]),
    "check-bot": Case("check-bot", lambda w: [GREEDY_BOT, "--sandbox", "none"]),
    "register": Case("register", lambda w: ["gamma", "--db", "r.sqlite"]),
    "unregister": Case("unregister", lambda w: ["delta", "--db", "r.sqlite"]),
    "ladder run": Case("ladder run", lambda w: ["--games", "2", "--db", "l.sqlite", *played("l")], LADDER_ROW),
    "ladder show": Case("ladder show", lambda w: ["--db", "l.sqlite"], LADDER_ROW),
    "ladder history": Case("ladder history", lambda w: ["alpha", "--db", "l.sqlite"]),
    "bench engine": Case("bench engine", lambda w: ["--games", "2", "--rounds", "1"]),
    "bench match": Case("bench match", lambda w: ["--bots", "builtin", "--games", "2", "--cpu", "-1"]),
    "bench protocol": Case("bench protocol", lambda w: [
        "--bot", GREEDY_BOT, "--codec-n", "100", "--round-trips", "10", "--cpu", "-1"]),
    "bench tcp": Case("bench tcp", lambda w: ["--round-trips", "10", "--idle", "1"]),
    "bench env": Case("bench env", lambda w: ["--games", "2", "--rounds", "1", "--cpu", "-1"]),
    "bench solver": Case("bench solver", lambda w: ["--games", "2", "--budget-ms", "20"]),
    "bench tournament": Case("bench tournament", lambda w: [
        "--games", "2", "--builtin-games", "2", "--rounds", "1"]),
    "bench strength": Case("bench strength", lambda w: ["--only", "random,greedy", "--games", "2"],
                           {"rank", "name", "games", "durak", "durak_rate", "elo", "elo_error95",
                            "decisions", "mean_decision_ms", "cpu_ms_per_decision", "forfeits"}),
}
#: Commands whose --json needs more than this module runs (a TCP arena with bots that
#: connect, a PostgreSQL server, minutes of soak): the test that checks their shape.
ELSEWHERE = {
    "serve": "tests/tcp/test_arena_hardening.py (two bots connect and play 4 games)",
    "worker": "tests/tournament/test_distributed.py (needs PostgreSQL)",
    "bench soak": "tests/app/test_bench_soak.py (a soak of 0.2 minutes)",
    "bench loop": "tests/app/test_bench_loop.py (a real serve with a lobby table of experts)",
    "bench distributed": "tests/app/test_bench_distributed.py (needs PostgreSQL)",
}


def check_convention(data: dict[str, Any], command: str, row: set[str] | None) -> None:
    """``data`` is a --json result of ``command`` as docs/JSON.md says."""
    assert list(data)[:2] == ["command", "version"], list(data)[:4]
    assert data["command"] == command and data["version"] == FORMAT_VERSION
    if row is None:
        assert "standings" not in data
        return
    assert isinstance(data["standings"], list) and data["standings"]
    for entry in data["standings"]:
        assert set(entry) == row, (command, sorted(set(entry) ^ row))
        assert list(entry) == [k for k in STANDING_KEYS if k in entry]  # the documented order
    ranks = [r["rank"] for r in data["standings"] if "rank" in r]
    assert ranks in ([], list(range(1, len(data["standings"]) + 1)))


@pytest.mark.process
@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_every_json_result_is_one_object_with_its_command_version_and_standings(
        case: Case, ws: Workspace) -> None:
    data = result_of(case.argv(ws), ws.path, case.codes)
    check_convention(data, case.command, case.row)


def _json_commands() -> set[str]:
    """Every command of the CLI that has a --json option, as typed (``ladder show``)."""
    from referee.cli import app

    found = set()

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):  # a group
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        elif any("--json" in p.opts for p in command.params):
            found.add(" ".join(path))

    walk(typer.main.get_command(app), [])
    return found


def test_every_command_with_json_is_checked_here_or_named_with_its_test() -> None:
    checked = {case.command for case in CASES.values()} | set(ELSEWHERE)
    assert _json_commands() == checked


def test_no_command_builds_its_json_output_itself() -> None:
    """Commands print --json only through printing.jsonresult.emit_result, which adds the
    envelope and checks the rows: a command that called the plain emitter (or json) would
    drift from the convention unseen."""
    for path in sorted((ROOT / "referee" / "commands").glob("*.py")):
        text = path.read_text()
        assert not re.search(r"\bemit_json\b|json\.dumps|print_json", text), path.name


def test_the_json_guide_documents_every_command_and_row_key() -> None:
    guide = (ROOT / "docs" / "JSON.md").read_text()
    for command in _json_commands():
        assert f"`{command}`" in guide, f"docs/JSON.md does not describe `{command}`"
    for key in STANDING_KEYS:
        assert f"`{key}`" in guide, f"docs/JSON.md does not describe the row key `{key}`"
    assert f'"version": {FORMAT_VERSION}' in guide


@pytest.mark.process
def test_one_bot_has_the_same_row_facts_in_tournament_report_and_ratings(ws: Workspace) -> None:
    """The same fact has the same name and value wherever it is printed."""
    args = ["--tournament", ws.tournament, "--db", "t.sqlite", "--json"]
    report = result_of(["report", *args], ws.path)
    ratings = result_of(["ratings", *args], ws.path)
    tournament = result_of(["tournament", "--resume", ws.tournament, "--db", "t.sqlite", "--json"], ws.path)
    played = {r["name"]: {k: v for k, v in r.items() if k != "stderr_logs"} for r in tournament["standings"]}
    assert {r["name"]: r for r in report["standings"]} == played
    for row in ratings["standings"]:
        assert (row["rank"], row["games"]) == (played[row["name"]]["rank"], played[row["name"]]["games"])
        assert row["elo"] == pytest.approx(played[row["name"]]["elo"], abs=0.05)
    assert report["tournament"] == tournament["tournament"] == ws.tournament
    assert report["los"] == tournament["los"] == ratings["los"]


@pytest.mark.process
def test_match_json_never_shows_a_tcp_seats_token(tmp_path: Path) -> None:
    """A tcp seat's token is the bot's password: the reproduce command (and anything else
    in the result) names the seat only. Nobody connects, so the seat forfeits its game
    (--recover plays on) and the result is printed."""
    secret = "s3cr3t-t0ken-value"
    data = result_of(["match", "tcp:alice", "builtin:random", "--listen", "127.0.0.1:0",
                      "--token", f"alice={secret}", "--connect-wait", "0.2", "--games", "1",
                      "--recover", "--log-dir", "logs", "--json"], tmp_path)
    assert secret not in json.dumps(data)
    assert "--token 'alice=***'" in data["reproduce"]


def test_a_body_cannot_shadow_the_envelope_and_a_row_holds_only_documented_keys() -> None:
    """Our bugs, refused before anything is printed: a result that would overwrite
    ``command`` or ``version``, a row with an undocumented key or without its bot's name
    and games."""
    from referee.printing.jsonresult import result, standing_row

    with pytest.raises(ValueError, match="envelope keys"):
        result("check-bot", {"command": "python3 bot.py"})
    with pytest.raises(ValueError, match=r"unknown keys \['score'\]"):
        standing_row({"name": "a", "games": 1, "score": 0.5})
    with pytest.raises(ValueError, match=r"missing \['games'\]"):
        result("ladder show", {"standings": [{"name": "a"}]})
    assert standing_row({"error95": 3.0, "bot": "a", "rating": 1.5, "games": 2, "stderr_log": None}) == {
        "name": "a", "games": 2, "elo": 1.5, "elo_error95": 3.0, "stderr_logs": []}


@pytest.mark.process
def test_bots_named_like_the_envelope_keys_stay_inside_their_rows(tmp_path: Path) -> None:
    """A bot's name is the user's (or a hello's) text: named ``command`` and ``version``
    they appear as row names and as keys of ``los``, never as the result's own keys."""
    data = result_of(["tournament", "--bot", "command=builtin:greedy", "--bot", "version=builtin:random",
                      "--games", "2", "--db", "t.sqlite", "--json", *played("t")], tmp_path)
    check_convention(data, "tournament", RUN_ROW | {"decisions", "mean_decision_ms", "stderr_logs"})
    assert {r["name"] for r in data["standings"]} == {"command", "version"}
    assert set(data["los"]) == {"command", "version"}
