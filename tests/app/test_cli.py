"""The command line as a newcomer uses it: real `durak-ref` processes, real example bots.

These are the end-to-end tests of the match command: a match of built-in bots prints a
summary and a JSON object with the documented keys; every example bot (Python, JS, C)
plays complete games against the built-in bots over real pipes with no protocol error;
bad input of every kind gets one clear line on stderr and exit code 2.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from support import c_example_bot, js_example_bot

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
DURAK_REF = str(Path(sys.executable).parent / "durak-ref")
PY = sys.executable


def run(*args: str, cwd: Path = ROOT, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DURAK_REF, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def match_json(*args: str, tmp_path: Path) -> dict:
    result = run("match", *args, "--json", "--log-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_builtin_match_summary_is_readable(tmp_path: Path) -> None:
    result = run("match", "builtin:random", "builtin:greedy", "--games", "20", "--log-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for word in ("random", "greedy", "durak", "draws", "bouts per game", "log:"):
        assert word in result.stdout


def test_builtin_match_json_has_the_documented_keys(tmp_path: Path) -> None:
    data = match_json("builtin:random", "builtin:greedy", "--games", "30", "--seed", "1", tmp_path=tmp_path)
    for key in ("command", "version", "games", "draws", "standings", "bouts_mean", "decisions", "wall_s"):
        assert key in data
    assert data["games"] == 30
    assert [b["name"] for b in data["standings"]] == ["random", "greedy"]
    assert sum(b["durak"] for b in data["standings"]) + data["draws"] == 30
    # greedy is a far stronger player than random
    assert data["standings"][1]["durak"] < data["standings"][0]["durak"]


def test_the_same_bot_twice_gets_unique_names(tmp_path: Path) -> None:
    data = match_json("builtin:greedy", "builtin:greedy", "builtin:random", "--games", "5",
                      tmp_path=tmp_path)
    assert [b["name"] for b in data["standings"]] == ["greedy", "greedy#2", "random"]


def test_same_seed_same_match(tmp_path: Path) -> None:
    a = match_json("builtin:random", "builtin:greedy", "--games", "10", "--seed", "5", tmp_path=tmp_path)
    b = match_json("builtin:random", "builtin:greedy", "--games", "10", "--seed", "5", tmp_path=tmp_path)
    assert [x["durak"] for x in a["standings"]] == [x["durak"] for x in b["standings"]]
    assert a["decisions"] == b["decisions"] and a["bouts_mean"] == b["bouts_mean"]


def test_perevodnoy_and_set_reach_the_rules(tmp_path: Path) -> None:
    data = match_json("builtin:random", "builtin:greedy", "--games", "5", "--rules", "perevodnoy",
                      "--set", "deck=52", "--set", "trump_exchange=on", tmp_path=tmp_path)
    assert data["rules"]["transfer"] == "on"
    assert data["rules"]["deck"] == 52
    assert data["rules"]["trump_exchange"] is True


def test_the_log_of_a_match_verifies(tmp_path: Path) -> None:
    data = match_json("builtin:random", "builtin:greedy", "--games", "10", tmp_path=tmp_path)
    result = run("replay", data["log"], "--verify")
    assert result.returncode == 0, result.stderr
    assert "10 of 10 games verified" in result.stdout


def test_rules_lists_every_option() -> None:
    from referee.rules.options import OPTIONS

    result = run("rules", "--json")
    assert result.returncode == 0
    names = [o["name"] for o in json.loads(result.stdout)["options"]]
    assert names == [o.name for o in OPTIONS]
    text = run("rules").stdout
    for o in OPTIONS:
        assert o.name in text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["match", "builtin:random", "builtin:greedy", "--set", "deck=25"], "bad value '25' for rules option deck"),
        (["match", "builtin:random", "builtin:greedy", "--set", "nosuch=1"], "unknown rules option 'nosuch'"),
        (["match", "builtin:random", "builtin:greedy", "--set", "deck"], "expected name=value"),
        (["match", "builtin:random", "builtin:greedy", "--rules", "fancy"], "unknown rules preset 'fancy'"),
        (["match"] + ["builtin:random"] * 7, "a table has 2 to 6 players, not 7"),
        (["match"] + ["builtin:random"] * 5 + ["--set", "deck=24"], "5 players need 30 cards"),
        (["match", "builtin:nosuch", "builtin:greedy"], "unknown built-in bot 'nosuch'"),
        (["match", "builtin:random", "builtin:greedy", "--tc", "60+x"], "time control '60+x'"),
        (["match", "builtin:random", "builtin:greedy", "--on-illegal", "sometimes"], "--on-illegal"),
        (["match", "definitely-not-a-program-xyz", "builtin:greedy"], "cannot start 'definitely-not-a-program-xyz'"),
        (["match", "builtin:random", "builtin:greedy", "--set", "first_attacker=seat:4"], "names a seat that does not exist"),
        (["match", "builtin:random", "builtin:greedy", "--set", "first_attacker=two_of_clubs"],
         "first_attacker=two_of_clubs needs the 52-card deck"),
        (["match", "builtin:random", "builtin:greedy", "--set", "trump_exchange=seats:0,2"],
         "trump_exchange=seats:0,2 names a seat that does not exist"),
        (["match", "builtin:random", "builtin:greedy", "--set", "transfer=reflection"],
         "bad value 'reflection' for rules option transfer"),
        (["match", "builtin:random", "builtin:greedy", "--reconnect-grace", "-1"],
         "--reconnect-grace -1: must be a number >= 0"),
        (["replay", "/nonexistent/log.jsonl"], "cannot open"),
        (["tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy", "--db",
          "/proc/no-such-dir/x.sqlite"], "cannot create the store"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(args: list[str], needle: str, tmp_path: Path) -> None:
    result = run(*args, "--log-dir", str(tmp_path)) if args[0] == "match" else run(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert needle in lines[0]
    assert "Traceback" not in result.stderr


def test_an_unwritable_log_dir_is_the_users_error() -> None:
    result = run("match", "builtin:random", "builtin:greedy", "--log-dir", "/proc/no-such-dir")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "cannot write the log" in result.stderr


def test_a_corrupt_log_names_the_line_and_keeps_the_games_before(tmp_path: Path) -> None:
    data = match_json("builtin:random", "builtin:greedy", "--games", "4", tmp_path=tmp_path)
    lines = Path(data["log"]).read_text().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])  # header, 2 games, half
    result = run("replay", str(damaged), "--verify")
    assert result.returncode == 1
    assert "2 of 2 games verified" in result.stdout
    assert "damaged.jsonl:4" in result.stderr and "truncated" in result.stderr
    shown = run("replay", str(damaged), "--game", "1")
    assert "result:" in shown.stdout


def test_replay_from_one_seat_shows_only_that_seats_cards(tmp_path: Path) -> None:
    data = match_json("builtin:random", "builtin:greedy", "--games", "1", tmp_path=tmp_path)
    omniscient = run("replay", data["log"], "--game", "0").stdout
    seat0 = run("replay", data["log"], "--game", "0", "--seat", "0").stdout
    hand_of_1 = next(line for line in omniscient.splitlines() if line.startswith("    seat 1: "))
    assert hand_of_1 not in seat0  # seat 0 never sees seat 1's dealt hand
    assert "    seat 1: 6 cards" in seat0
    assert "seat 1: 6 cards" not in omniscient


# --------------------------------------------------------------- example bots over real pipes

def _c_bot() -> str:
    return shlex.join(c_example_bot())


def _js_bot() -> str:
    return shlex.join(js_example_bot())


EXAMPLES = {
    "python-random": lambda: f"{PY} {ROOT / 'examples/python/random_bot.py'} 3",
    "python-greedy": lambda: f"{PY} {ROOT / 'examples/python/greedy_bot.py'}",
    "python-minimal": lambda: f"{PY} {ROOT / 'examples/python/minimal_bot.py'}",
    "javascript": _js_bot,
    "c": _c_bot,
}


#: Rules the example bots are played under: the presets, and every table-rule option at
#: once (reflection reverses the direction; leads of several cards send `pass` in phase
#: attack; throw-ins while cards are uncovered).
EXAMPLE_RULES = {
    "classic": ["--rules", "classic", "--set", "trump_exchange=on"],
    "perevodnoy_trump": ["--rules", "perevodnoy_trump", "--set", "trump_exchange=on"],
    "issue14": ["--set", "transfer=reflect", "--set", "lead=same_rank", "--set",
                "throw_in_timing=any", "--set", "draw_others=counter_clockwise", "--set",
                "defender_fairness=on", "--set", "trump_exchange=seats:0,2"],
}


@pytest.mark.parametrize("example", sorted(EXAMPLES))
@pytest.mark.parametrize("rules", sorted(EXAMPLE_RULES))
def test_every_example_bot_plays_complete_games(example: str, rules: str, tmp_path: Path) -> None:
    bot = EXAMPLES[example]()
    data = match_json(bot, "builtin:greedy", "builtin:random", "--games", "6",
                      *EXAMPLE_RULES[rules], tmp_path=tmp_path)
    assert data["games"] == 6
    assert all(not b["forfeits"] for b in data["standings"]), data["forfeit_details"]
    assert data["standings"][0]["decisions"] > 0
    assert run("replay", data["log"], "--verify").returncode == 0


def test_all_example_bots_at_one_table(tmp_path: Path) -> None:
    bots = [EXAMPLES[name]() for name in ("javascript", "python-greedy", "c")]
    data = match_json(*bots, "--games", "10", tmp_path=tmp_path)
    assert data["terminations"].keys() <= {"normal", "draw", "stalemate"}
    assert all(not b["forfeits"] for b in data["standings"])
    names = [b["name"] for b in data["standings"]]  # each took its name from its hello
    assert names[0] == "js-bot" and names[2] == "c-bot"


def test_tcp_bots_play_in_the_arena_not_in_tournaments_sprt_or_ladder_run(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    refused = [
        run("tournament", "--bot", "a=tcp:a", "--bot", "b=builtin:greedy", "--db", db),
        run("sprt", "tcp:a", "builtin:greedy"),
        run("ladder", "add", "t", "tcp:t", "--db", db),
    ]
    for result in refused:
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "TCP" in result.stderr or "tcp:" in result.stderr
    assert run("register", "remote", "--db", db).returncode == 0
    assert run("ladder", "add", "g", "builtin:greedy", "--db", db).returncode == 0
    lonely = run("ladder", "run", "--games", "2", "--db", db)
    assert lonely.returncode == 2 and "two local bots" in lonely.stderr  # the TCP bot is not started
    assert run("ladder", "add", "r", "builtin:random", "--db", db).returncode == 0
    played = run("ladder", "run", "--games", "2", "--db", db, "--log-dir", str(tmp_path), "--json")
    assert played.returncode == 0 and json.loads(played.stdout)["played"] == 2


def _live_workers(marker: str) -> set[int]:
    """Pids of running (not zombie) referee worker processes started by the command whose
    environment holds ``marker`` (other tests, in other pytest-xdist workers or other
    checkouts, run workers of their own meanwhile)."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environ = (proc / "environ").read_bytes().split(b"\0") if b"referee.league.worker" in cmd else []
        except (OSError, IndexError, ValueError):
            continue
        if marker.encode() in environ and state != "Z":
            found.add(int(proc.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to list processes")
def test_sprt_with_worker_processes_accepts_h1_and_leaves_no_worker(tmp_path: Path) -> None:
    marker = f"DURAK_TEST_RUN={uuid.uuid4().hex}"
    name, value = marker.split("=")
    result = subprocess.run([DURAK_REF, "sprt", "builtin:random", "builtin:greedy", "--concurrency", "2",
                             "--json", "--db", str(tmp_path / "s.sqlite"), "--log-dir", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT, timeout=120,
                            env=dict(os.environ, **{name: value}))
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["state"] == "accept_h1" and status["pairs"] >= 10
    assert _live_workers(marker) == set()  # both workers ended with the command


def test_ladder_run_with_a_bot_that_cannot_start_is_the_users_error(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    assert run("ladder", "add", "g", "builtin:greedy", "--db", db).returncode == 0
    assert run("ladder", "add", "x", "/nonexistent/bot", "--db", db).returncode == 0
    result = run("ladder", "run", "--games", "2", "--db", db, "--log-dir", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert "cannot start '/nonexistent/bot'" in result.stderr and "Traceback" not in result.stderr
