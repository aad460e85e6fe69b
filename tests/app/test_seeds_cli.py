"""Secret seeds through the real CLI: without --seed every run draws a
secret seed, deals from it, keeps it only in the log header and the store, never on a
command line or in an environment a bot can read, and prints it at the end with the
command that deals the same decks again."""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.records.matchlog import read_log
from referee.rules.cards import card_str
from referee.rules.deal import deal_deck
from tests.support import cli

SPY = Path(__file__).resolve().parents[1] / "referee" / "bots" / "seed_spy_bot.py"
SECRET = re.compile(r"[0-9a-f]{32}")


def run_json(*args: str | Path, cwd: Path) -> dict[str, Any]:
    proc = cli(*args, "--json", cwd=cwd, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def log_games(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    contents = read_log(path)
    return contents.header, contents.games


def decks(path: Path) -> list[list[str]]:
    return [g["deck"] for g in log_games(path)[1]]


def keyed(seed: str, game: dict[str, Any], size: int = 36) -> list[str]:
    """The deck the documented derivation gives for a logged game."""
    return [card_str(c) for c in deal_deck(seed, game["seed"], size)]


@pytest.mark.process
def test_runs_without_a_seed_deal_differently_and_the_printed_seed_reproduces(tmp_path: Path) -> None:
    bots = ("builtin:random", "builtin:greedy", "--games", "6")
    a = run_json("match", *bots, cwd=tmp_path)
    b = run_json("match", *bots, cwd=tmp_path)
    assert SECRET.fullmatch(a["seed"]) and SECRET.fullmatch(b["seed"]) and a["seed"] != b["seed"]
    da, db = decks(tmp_path / a["log"]), decks(tmp_path / b["log"])
    assert len(da) == len(db) == 6 and not set(map(tuple, da)) & set(map(tuple, db))
    header, games = log_games(tmp_path / a["log"])
    assert header["seed"] == a["seed"] and "HMAC-SHA256" in header["deal"]
    assert [g["seed"] for g in games] == [f"match:{i}" for i in range(6)]
    assert all(g["deck"] == keyed(a["seed"], g) for g in games)  # re-derivable from the seed
    assert a["seed"] not in a["log"]  # the log's name does not give it away
    # The printed command deals the same decks (and the random bot plays the same moves).
    argv = shlex.split(a["reproduce"])
    assert argv[0] == "durak-ref" and argv[-2:] == ["--seed", a["seed"]] and "--json" in argv
    again = json.loads(cli(*argv[1:], cwd=tmp_path).stdout)
    assert again["seed"] == a["seed"] and decks(tmp_path / again["log"]) == da
    assert again["standings"][0]["durak"] == a["standings"][0]["durak"]


@pytest.mark.process
def test_the_text_summary_ends_with_the_seed_and_the_command(tmp_path: Path) -> None:
    proc = cli("match", "builtin:random", "builtin:greedy", "--games", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    *_, seed_line, again_line = proc.stdout.strip().splitlines()
    seed = seed_line.removeprefix("seed: ")
    assert SECRET.fullmatch(seed)
    assert again_line == ("same deals again: durak-ref match builtin:random builtin:greedy "
                          f"--games 2 --seed {seed}")
    # An explicit seed replaces the one on the command line, and is kept as given.
    proc = cli("match", "builtin:random", "builtin:greedy", "--seed", "my-seed", "--games", "2",
               cwd=tmp_path)
    assert proc.stdout.strip().splitlines()[-2:] == [
        "seed: my-seed",
        "same deals again: durak-ref match builtin:random builtin:greedy --games 2 --seed my-seed"]


@pytest.mark.process
@pytest.mark.parametrize("bad", ["", "two words", "x" * 129])
def test_an_unusable_seed_is_the_users_error(tmp_path: Path, bad: str) -> None:
    for command in (["match", "builtin:random", "builtin:greedy"],
                    ["sprt", "builtin:random", "builtin:greedy"],
                    ["tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy",
                     "--db", str(tmp_path / "s.sqlite")]):
        proc = cli(*command, "--seed", bad, "--no-log" if command[0] == "match" else "--json",
                   cwd=tmp_path)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        assert "--seed" in proc.stderr and "seed" in proc.stderr.split("error:", 1)[1]


@pytest.mark.process
def test_the_seed_is_on_no_command_line_or_environment_a_bot_can_read(tmp_path: Path) -> None:
    """The spy bot reads its own and every ancestor's command line and environment (the
    referee's; in a tournament with --concurrency 2 also its worker's). Unsandboxed, so
    that it can see them at all (the sandbox hides every process outside the bot's own)
    and write what it saw where the test reads it."""
    spy = f"{sys.executable} {SPY} {tmp_path / 'seen.bin'}"
    data = run_json("match", spy, "builtin:greedy", "--games", "2", "--sandbox", "none",
                    cwd=tmp_path)
    seen = (tmp_path / "seen.bin").read_bytes()
    assert b"match" in seen and b"builtin:greedy" in seen  # it did read the referee's
    assert data["seed"].encode() not in seen
    data = run_json("tournament", "--bot", f"s1={spy}", "--bot", f"s2={spy}", "--games", "4",
                    "--concurrency", "2", "--db", tmp_path / "t.sqlite", "--sandbox", "none",
                    cwd=tmp_path)
    seen = (tmp_path / "seen.bin").read_bytes()
    assert b"referee.league.worker" in seen  # it did read a worker's
    assert SECRET.fullmatch(data["seed"]) and data["seed"].encode() not in seen


@pytest.mark.process
def test_tournament_seed_is_secret_stored_printed_and_kept_on_resume(tmp_path: Path) -> None:
    db = tmp_path / "t.sqlite"
    data = run_json("tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy",
                    "--bot", "c=builtin:random", "--games", "4", "--db", db, cwd=tmp_path)
    seed, tid = data["seed"], data["tournament"]
    assert SECRET.fullmatch(seed) and data["reproduce"].endswith(f"--seed {seed}")
    store = sqlite3.connect(db)
    [(settings,)] = store.execute("SELECT settings FROM tournaments WHERE id = ?", (tid,))
    assert json.loads(settings)["seed"] == seed
    [log] = (tmp_path / "logs").glob(f"tournament-{tid}*.jsonl")
    header, games = log_games(log)
    assert header["seed"] == seed and len(games) == 12
    by_deal: dict[str, list[list[str]]] = {}
    for g in games:
        assert g["deck"] == keyed(seed, g) and g["seed"].startswith("tournament:")
        by_deal.setdefault(g["seed"], []).append(g["deck"])
    assert all(len(ds) == 2 and ds[0] == ds[1] for ds in by_deal.values())  # rotations share
    # Lose the last five games from the store; --resume plays them again on the same decks.
    with store:
        store.execute("DELETE FROM seats WHERE tournament_id = ? AND game_index >= 7", (tid,))
        store.execute("DELETE FROM games WHERE tournament_id = ? AND game_index >= 7", (tid,))
    store.close()
    resumed = run_json("tournament", "--resume", tid, "--db", db, cwd=tmp_path)
    assert resumed["seed"] == seed and resumed["reproduce"] is None and resumed["games"] == 12
    [again] = (tmp_path / "logs").glob(f"tournament-{tid}-resumed-*.jsonl")
    assert log_games(again)[0]["seed"] == seed
    replayed = {g["game"]: g["deck"] for g in log_games(again)[1]}
    assert sorted(replayed) == [7, 8, 9, 10, 11]
    assert all(replayed[g["game"]] == g["deck"] for g in games if g["game"] >= 7)


@pytest.mark.process
def test_sprt_seed_is_secret_printed_and_reproduces(tmp_path: Path) -> None:
    args = ("sprt", "builtin:random", "builtin:greedy", "--max-pairs", "5", "--elo1", "2000")
    a, b = run_json(*args, cwd=tmp_path), run_json(*args, cwd=tmp_path)
    assert SECRET.fullmatch(a["seed"]) and a["seed"] != b["seed"]
    argv = shlex.split(a["reproduce"])
    assert argv[-2:] == ["--seed", a["seed"]]
    again = json.loads(cli(*argv[1:], cwd=tmp_path, timeout=120).stdout)
    assert (again["seed"], again["counts"], again["llr"]) == (a["seed"], a["counts"], a["llr"])


@pytest.mark.process
def test_ladder_run_seed_is_secret_logged_stored_and_printed(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    for name, command in (("r", "builtin:random"), ("g", "builtin:greedy")):
        assert cli("ladder", "add", name, command, "--db", db, cwd=tmp_path).returncode == 0
    first = run_json("ladder", "run", "--games", "4", "--db", db, cwd=tmp_path)
    second = run_json("ladder", "run", "--games", "2", "--db", db, cwd=tmp_path)
    assert SECRET.fullmatch(first["seed"]) and first["seed"] != second["seed"]
    assert first["reproduce"].endswith(f"--seed {first['seed']}")
    with sqlite3.connect(db) as store:
        [(settings,)] = store.execute("SELECT settings FROM tournaments WHERE id = 'ladder'")
    runs = json.loads(settings)["runs"]
    assert [(r["first_game"], r["seed"]) for r in runs] == [(0, first["seed"]), (4, second["seed"])]
    logs = sorted((tmp_path / "logs").glob("ladder-*.jsonl"))
    games = []
    for log in logs:
        header, found = log_games(log)
        assert header["seed"] in (first["seed"], second["seed"])
        games += [(header["seed"], g) for g in found]
    assert sorted(g["seed"] for _, g in games) == ["ladder:0", "ladder:0", "ladder:2", "ladder:2",
                                                   "ladder:4", "ladder:4"]
    assert all(g["deck"] == keyed(seed, g) for seed, g in games)


def test_the_reproducing_command_replaces_any_seed_and_quotes_for_the_shell() -> None:
    from referee.table.seeds import new_seed, reproduce_command

    assert SECRET.fullmatch(new_seed()) and new_seed() != new_seed()
    assert reproduce_command(["match", "builtin:random", "python3 my bot.py", "--seed", "7",
                              "-n", "3"], "abc") == (
        "durak-ref match builtin:random 'python3 my bot.py' -n 3 --seed abc")
    assert reproduce_command(["sprt", "a", "b", "--seed=7"], "x'y") == \
        "durak-ref sprt a b --seed 'x'\"'\"'y'"


def test_the_reproducing_command_never_shows_a_tcp_seats_token() -> None:
    from referee.table.seeds import reproduce_command

    assert reproduce_command(["match", "tcp:alice", "builtin:random", "--listen", "127.0.0.1:0",
                              "--token", "alice=s3cr3t-token", "--token=bob=other-secret"], "abc") == (
        "durak-ref match tcp:alice builtin:random --listen 127.0.0.1:0 --token 'alice=***' "
        "'--token=bob=***' --seed abc")
