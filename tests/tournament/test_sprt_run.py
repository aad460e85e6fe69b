"""``durak-ref sprt`` as a first-class run: every game logged and
stored like a tournament's, so it replays and verifies; resumable after Ctrl-C with the
stored pairs counted once; ``--tc``; and plain progress lines when stderr is not a
terminal (sprt, tournament, match)."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from referee.console.progress import PlainLines, progress_for, status_line
from support import DURAK_REF, LONG_TIMEOUT_S, cli, default_signals

BOT = Path(__file__).resolve().parent / "bots" / "slow_bot.py"
#: The keys of ``sprt --json`` before this issue: all still there.
OLD_KEYS = {"elo0", "elo1", "alpha", "beta", "lower", "upper", "model", "counts", "n", "llr",
            "state", "decided_after", "elo", "elo_error95", "los", "pairs", "games", "forfeits",
            "seed", "reproduce", "sandbox", "duplicates"}


def sprt_json(*args: str | Path, cwd: Path, code: int | None = None,
              env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    proc = subprocess.run([str(DURAK_REF), "sprt", *map(str, args), "--json"], capture_output=True,
                          text=True, cwd=cwd, timeout=300,
                          env=dict(os.environ, COLUMNS="200", NO_COLOR="1", **(env or {})))
    assert "Traceback" not in proc.stderr, proc.stderr
    if code is not None:
        assert proc.returncode == code, (proc.returncode, proc.stderr)
    return json.loads(proc.stdout), proc.stderr


def stored(db: Path, tid: str) -> tuple[tuple[str, dict[str, Any], str], list[tuple[int, ...]]]:
    """The run's (kind, settings, status) and its games (index, rotation, log_line)."""
    with sqlite3.connect(db) as con:
        kind, settings, status = con.execute(
            "SELECT kind, settings, status FROM tournaments WHERE id = ?", (tid,)).fetchone()
        games = list(con.execute("SELECT game_index, rotation, log_line FROM games WHERE "
                                 "tournament_id = ? ORDER BY game_index", (tid,)))
    return (kind, json.loads(settings), status), games


@pytest.mark.process
def test_sprt_games_are_logged_and_stored_and_replay_and_verify(tmp_path: Path) -> None:
    db, logs = tmp_path / "s.sqlite", tmp_path / "logs"
    st, err = sprt_json("builtin:random", "builtin:greedy", "--tc", "30+0.5", "--seed", "s1",
                        "--elo1", "50", "--db", db, "--log-dir", logs, cwd=tmp_path, code=0)
    assert OLD_KEYS <= set(st), OLD_KEYS - set(st)  # every key it had, and the run's
    tid = st["tournament"]
    assert f"durak-ref sprt --resume {tid} --db {db}" in err  # printed at the start
    assert st["state"] == "accept_h1" and st["resumed_pairs"] == 0
    (kind, settings, status), games = stored(db, tid)
    assert (kind, status) == ("sprt", "finished")
    assert settings["tc"] == "30+0.5" and settings["seed"] == "s1"
    assert settings["sprt"] == {"a": "A-random", "b": "B-greedy", "opponents": [], "elo0": 0.0,
                                "elo1": 50.0, "alpha": 0.05, "beta": 0.05,
                                "model": "pentanomial", "max_pairs": 20000}
    assert [g[0] for g in games] == list(range(2 * st["pairs"]))  # whole pairs, each once
    assert [g[1] for g in games] == [0, 1] * st["pairs"]
    log = Path(st["log"])
    assert log.parent == logs
    lines = log.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["tournament"] == tid and header["settings"] == settings
    assert header["time_control"]["base_s"] == 30 and header["time_control"]["increment_s"] == 0.5
    assert all(json.loads(lines[line - 1])["game"] == index for index, _, line in games)
    assert cli("replay", log, "--verify", cwd=tmp_path).returncode == 0
    shown = cli("replay", log, "--game", "3", cwd=tmp_path)
    assert shown.returncode == 0 and "game 3:" in shown.stdout
    checked = cli("verify", "--db", db, cwd=tmp_path)
    assert checked.returncode == 0 and "store and logs agree" in checked.stdout, checked.stdout


@pytest.mark.process
def test_a_tampered_sprt_game_fails_verify(tmp_path: Path) -> None:
    """verify really checks sprt games: a stored durak that is not the logged one differs
    (a well-formed value: a name that is no player is a damaged row, exit 2)."""
    db = tmp_path / "s.sqlite"
    st, _ = sprt_json("builtin:random", "builtin:greedy", "--max-pairs", "2", "--elo1", "2000",
                      "--db", db, "--log-dir", tmp_path, cwd=tmp_path)
    with sqlite3.connect(db) as con:
        (durak,) = con.execute("SELECT durak FROM games WHERE tournament_id = ? AND game_index = 1",
                               (st["tournament"],)).fetchone()
        (other,) = con.execute("SELECT bot FROM seats WHERE tournament_id = ? AND game_index = 1 "
                               "AND bot IS NOT ?", (st["tournament"], durak)).fetchone()
        con.execute("UPDATE games SET durak = ? WHERE tournament_id = ? AND game_index = 1",
                    (other, st["tournament"]))
    checked = cli("verify", "--db", db, cwd=tmp_path)
    assert checked.returncode == 1 and "durak" in checked.stdout


@pytest.mark.process
def test_sprt_tc_and_move_time_are_parsed_as_for_match(tmp_path: Path) -> None:
    st, _ = sprt_json("builtin:random", "builtin:greedy", "--move-time", "2.5", "--max-pairs", "1",
                      "--db", tmp_path / "s.sqlite", "--log-dir", tmp_path, cwd=tmp_path)
    (_, settings, _), _ = stored(tmp_path / "s.sqlite", st["tournament"])
    assert settings["move_time"] == 2.5 and settings["tc"] is None
    bad = cli("sprt", "builtin:random", "builtin:greedy", "--tc", "5x", "--db", tmp_path / "b.sqlite",
              cwd=tmp_path)
    assert bad.returncode == 2 and "time control '5x'" in bad.stderr
    assert not (tmp_path / "b.sqlite").exists()  # bad options create no store
    for command in (["sprt"], ["match"], ["tournament"]):
        text = " ".join(cli(*command, "--help", cwd=tmp_path).stdout.split())
        assert "--tc" in text and "--move-time" in text


def _start(tmp_path: Path, tag: str, db: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", DURAK_BOT_STALL_AFTER="60")
    with open(tmp_path / "first.err", "wb") as err:
        return subprocess.Popen(
            [str(DURAK_REF), "sprt", f"{sys.executable} {BOT} {tag}", "builtin:random", "--elo1", "5",
             "--max-pairs", "6", "--move-time", "120", "--db", str(db), "--log-dir",
             str(tmp_path / "run-logs"), "--sandbox", "none", *extra],
            stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=tmp_path, preexec_fn=default_signals())


@pytest.mark.process
def test_sprt_resumes_after_ctrl_c_with_the_stored_pairs_counted_once(tmp_path: Path) -> None:
    """The bot answers 60 decisions, then stalls (tests/tournament/bots/slow_bot.py): the
    first run stores a few pairs and then waits, so Ctrl-C always finds it running. (The
    count is per process: the process that plays each pair's first game runs on, its
    twin is a fresh one, sound by default, that never gets that far in one game.)
    The resumed run (no stall) plays only the missing pairs: 6 in all, each stored once.
    Resumed without --log-dir, it logs to the run's own log dir, as the printed command says."""
    db = tmp_path / "s.sqlite"
    proc = _start(tmp_path, f"tag-{uuid.uuid4().hex}", db)
    try:
        deadline = time.monotonic() + 120
        tid = None
        while time.monotonic() < deadline and proc.poll() is None:
            m = re.search(r"--resume (\S+)", (tmp_path / "first.err").read_text())
            if m:
                tid = m.group(1)
                if len(stored(db, tid)[1]) >= 2:
                    break
            time.sleep(0.1)
        assert tid is not None and proc.poll() is None, (tmp_path / "first.err").read_text()
        time.sleep(0.5)  # let the run reach its stall: a Ctrl-C mid-game is the point
        os.kill(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = (tmp_path / "first.err").read_text()
    assert code == 130, text
    assert f"Resume with: durak-ref sprt --resume {tid} --db {db} --log-dir {tmp_path / 'run-logs'}" in text
    (_, _, status), games = stored(db, tid)
    assert status == "running"
    first = len(games) // 2
    assert 1 <= first < 6 and len(games) == 2 * first  # whole pairs only

    st, err = sprt_json("--resume", tid, "--db", db, cwd=tmp_path, code=1)
    assert f"durak-ref sprt --resume {tid}" in err
    assert not (tmp_path / "logs").exists()  # not scattered into ./logs
    assert len(list((tmp_path / "run-logs").glob(f"sprt-*{tid}*-resumed-*.jsonl"))) == 1
    assert st["tournament"] == tid and st["state"] == "continue"
    assert st["resumed_pairs"] == first and st["pairs"] == st["n"] == 6 and st["games"] == 12
    (_, _, status), games = stored(db, tid)
    assert status == "finished" and [g[0] for g in games] == list(range(12))
    checked = cli("verify", "--db", db, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout
    # Once finished, a resume plays nothing and reports the same test.
    again, _ = sprt_json("--resume", tid, "--db", db, cwd=tmp_path)
    assert (again["counts"], again["llr"], again["pairs"]) == (st["counts"], st["llr"], 6)


@pytest.mark.process
def test_a_half_stored_pair_is_played_again_whole(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    # Equal bots and a narrow test: undecided after 3 pairs, whatever the deals.
    st, _ = sprt_json("builtin:greedy", "builtin:greedy", "--max-pairs", "3", "--elo1", "5",
                      "--db", db, "--log-dir", tmp_path / "logs", cwd=tmp_path, code=1)
    tid = st["tournament"]
    with sqlite3.connect(db) as con:  # as if only game 2 of pair 1 had been stored
        con.execute("DELETE FROM seats WHERE tournament_id = ? AND game_index = 3", (tid,))
        con.execute("DELETE FROM games WHERE tournament_id = ? AND game_index = 3", (tid,))
    again, _ = sprt_json("--resume", tid, "--db", db, "--log-dir", tmp_path / "logs", cwd=tmp_path,
                         code=1)
    assert again["resumed_pairs"] == 2 and again["pairs"] == 3 and sum(again["counts"]) == 3
    _, games = stored(db, tid)
    assert [g[0] for g in games] == list(range(6))
    assert cli("verify", "--db", db, cwd=tmp_path).returncode == 0


@pytest.mark.process
def test_resume_refuses_new_settings_and_other_kinds(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    st, _ = sprt_json("builtin:random", "builtin:greedy", "--max-pairs", "1", "--db", db,
                      "--log-dir", tmp_path, cwd=tmp_path)
    bad = cli("sprt", "--resume", st["tournament"], "--elo1", "20", "--db", db, cwd=tmp_path)
    assert bad.returncode == 2 and "--elo1" in bad.stderr
    t = cli("tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy", "--games", "2",
            "--db", db, "--log-dir", tmp_path, cwd=tmp_path)
    tid = re.search(r"--resume (\S+)", t.stderr).group(1)  # type: ignore[union-attr]
    wrong = cli("sprt", "--resume", tid, "--db", db, cwd=tmp_path)
    assert wrong.returncode == 2 and "not an sprt run" in wrong.stderr
    assert cli("sprt", "builtin:random", cwd=tmp_path).returncode == 2


# -- progress lines ---------------------------------------------------------------------


def plain_lines(proc: subprocess.CompletedProcess[str], prefix: str) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith(prefix)]


@pytest.mark.process
@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_runs_print_plain_progress_lines_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", DURAK_REF_PROGRESS_INTERVAL="0")

    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(DURAK_REF), *map(str, args)], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=300)

    sprt = run("sprt", "builtin:greedy", "builtin:greedy", "--max-pairs", "4", "--elo1", "5",
               "--db", tmp_path / "s.sqlite", "--log-dir", tmp_path)
    lines = [x for x in plain_lines(sprt, "sprt s") if "pairs" in x]
    assert [re.search(r"pairs (\d+)", x).group(1) for x in lines] == ["1", "2", "3", "4"]  # type: ignore[union-attr]
    assert all("LLR" in x for x in lines)
    tour = run("tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy", "--games", "4",
               "--db", tmp_path / "s.sqlite", "--log-dir", tmp_path)
    lines = [x for x in plain_lines(tour, "tournament t") if "games" in x]
    assert [re.search(r"(\d+)/4 games", x).group(1) for x in lines] == ["1", "2", "3", "4"]  # type: ignore[union-attr]
    match = run("match", "builtin:random", "builtin:greedy", "-n", "3", "--log-dir", tmp_path)
    assert [x.split(",")[0] for x in plain_lines(match, "match:")] == [
        "match: 1/3 games", "match: 2/3 games", "match: 3/3 games"]
    for proc in (sprt, tour, match):
        assert "\r" not in proc.stderr and "\x1b" not in proc.stderr  # plain text, nothing to redraw


def test_plain_lines_wait_for_the_interval() -> None:
    now = [100.0]
    stream = io.StringIO()
    lines = PlainLines("job", stream, 10.0, clock=lambda: now[0])
    for t in (101.0, 109.9, 110.0, 115.0, 125.5):
        now[0] = t
        lines(f"at {t}")
    assert stream.getvalue().splitlines() == ["job: at 110.0 [0:00:10]", "job: at 125.5 [0:00:25]"]


def test_on_a_terminal_the_line_is_redrawn_not_appended() -> None:
    for make in (lambda c: status_line("sprt x", console=c), lambda c: progress_for(5, "t", console=c)):
        buffer = io.StringIO()
        console = Console(file=buffer, force_terminal=True, width=120)
        with make(console) as update:
            for i in range(5):
                update(f"step [/]{i}")  # markup-like text is printed literally (status_line)
        text = buffer.getvalue()
        assert "\x1b[" in text  # cursor control: the line is redrawn in place
        assert text.count("\n") < 5  # ... not one appended line per update


def test_status_line_off_a_terminal_waits_for_the_interval() -> None:
    """status_line off a terminal with a fake clock: nothing before the interval."""
    now = [0.0]
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False)
    with status_line("sprt y", console=console, interval=10.0, clock=lambda: now[0]) as update:
        update("pairs 1")
        now[0] = 10.0
        update("pairs 2")
    assert buffer.getvalue() == "sprt y: pairs 2 [0:00:10]\n"


@pytest.mark.process
def test_a_damaged_stored_pair_is_the_users_error_on_resume(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    st, _ = sprt_json("builtin:greedy", "builtin:greedy", "--max-pairs", "2", "--elo1", "5",
                      "--db", db, "--log-dir", tmp_path, cwd=tmp_path, code=1)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE seats SET result = 'won' WHERE tournament_id = ? AND game_index = 1",
                    (st["tournament"],))
    proc = cli("sprt", "--resume", st["tournament"], "--db", db, "--log-dir", tmp_path, cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    # The store's row check names the row: (run, game 1, seat 0).
    assert f"'{st['tournament']}', 1, 0)" in proc.stderr and "damaged" in proc.stderr
