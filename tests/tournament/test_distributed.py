"""Distributed runs: a coordinator queues a tournament in a real PostgreSQL
store, real ``durak-ref worker`` processes claim, play and store its games.

- three workers give exactly the games and results of the same schedule played locally;
- kill -9 of a worker mid-game loses nothing: its game is claimed again once its lease
  runs out (a short lease by option; the game is stalled for good, so "mid-game" is not
  a matter of timing);
- a game finished twice (a slow worker whose lease ran out) is stored once;
- a lease renewed by heartbeats outlives the lease time: nothing is reclaimed from a live
  worker (this test runs past every lease beneath it);
- a worker that cannot start a bot says so once and leaves that run's games to others.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pgserver import PgServer
from referee.league import distributed
from referee.league.tournament import ScheduledGame
from referee.records.store import GameRow, SeatRow, Store
from referee.records.storedb import redact
from support import DURAK_REF

BOTS = ["--bot", "a=builtin:random", "--bot", "b=builtin:greedy", "--bot", "c=builtin:random"]
SLOW_BOT = Path(__file__).resolve().parent / "bots" / "slow_bot.py"
DEADLINE = 180.0  # seconds any wait below may take on a loaded machine before it fails


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ, COLUMNS="200", NO_COLOR="1", DURAK_REF_PROGRESS_INTERVAL="0")
    out.pop("DURAK_DB", None)
    out.update(extra)
    return out


def start(*args: str, cwd: Path, **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([str(DURAK_REF), *args], cwd=cwd, env=env(**extra), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def finish(proc: subprocess.Popen[str], timeout: float = DEADLINE) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def wait_for(what: str, check: Callable[[], Any], timeout: float = DEADLINE) -> Any:
    """Poll ``check`` until it returns something true; fail naming ``what`` after ``timeout``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def queue(url: str) -> list[tuple[Any, ...]]:
    with Store(url) as store:
        return list(store.db.execute(
            "SELECT tournament_id, game_index, state, worker, attempts FROM queue ORDER BY game_index"))


def comparable(rows: list[GameRow]) -> list[tuple[Any, ...]]:
    """What a game is and how it went; not when, nor where it is logged."""
    return [(g.game_index, g.deal_seed, g.rotation, g.termination, g.durak,
             [(s.seat, s.bot, s.result, s.forfeit, s.decisions) for s in g.seats]) for g in rows]


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen[str]]]:
    """Worker processes a test starts; any still running at the end are killed."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.communicate()  # reaps it and closes its pipes


def test_three_workers_play_exactly_the_local_schedule(pg_url: str, tmp_path: Path,
                                                       workers: list[subprocess.Popen[str]]) -> None:
    local = subprocess.run([str(DURAK_REF), "tournament", *BOTS, "--games", "6", "--seed", "42",
                            "--db", str(tmp_path / "local.sqlite"), "--json",
                            "--log-dir", str(tmp_path / "local-logs")],
                           cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=DEADLINE)
    assert local.returncode == 0, local.stderr
    coordinator = start("tournament", *BOTS, "--games", "6", "--seed", "42", "--db", pg_url,
                        "--distributed", "--json", cwd=tmp_path)
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 18)
    for _ in range(3):
        workers.append(start("worker", "--db", pg_url, "--exit-when-idle", "--poll", "0.1",
                             "--json", cwd=tmp_path))
    results = [finish(w) for w in workers]
    assert [r[0] for r in results] == [0, 0, 0], [r[2] for r in results]
    code, out, err = finish(coordinator)
    assert code == 0, err
    import json
    summaries = [json.loads(r[1]) for r in results]
    assert sum(s["stored"] for s in summaries) == 18
    assert all((s["command"], s["version"]) == ("worker", 1) for s in summaries)  # docs/JSON.md
    with Store(tmp_path / "local.sqlite") as store:
        tid = store.tournaments()[0][0]
        expected = comparable(store.games(tid))
    with Store(pg_url) as store:
        dtid = store.tournaments()[0][0]
        assert comparable(store.games(dtid)) == expected
        assert store.tournament(dtid)[2] == "finished"
        assert store.db.execute("SELECT count(*) FROM game_records").fetchone()[0] == 18
    def table(text: str) -> list[dict[str, Any]]:  # timings and where stderr went aside
        return [{k: v for k, v in row.items() if k not in ("mean_decision_ms", "stderr_logs")}
                for row in json.loads(text)["standings"]]

    assert table(out) == table(local.stdout)
    # Every game is in the coordinator's log and agrees with the store.
    checked = subprocess.run([str(DURAK_REF), "verify", "--db", pg_url], cwd=tmp_path, env=env(),
                             capture_output=True, text=True, timeout=DEADLINE)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_worker_killed_mid_game_loses_nothing_and_its_game_is_played_again(
        pg_url: str, tmp_path: Path, workers: list[subprocess.Popen[str]]) -> None:
    bots = ["--bot", f"s={sys.executable} {SLOW_BOT} dist-kill-{tmp_path.name}", "--bot", "g=builtin:greedy"]
    coordinator = start("tournament", *bots, "--games", "2", "--seed", "9", "--db", pg_url,
                        "--distributed", "--move-time", "600", "--sandbox", "none", "--json", cwd=tmp_path)
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 2)
    # This worker's bot answers 3 decisions, then never again: its first game stalls.
    doomed = start("worker", "--db", pg_url, "--lease", "1", "--poll", "0.1", cwd=tmp_path,
                   DURAK_BOT_STALL_AFTER="3")
    workers.append(doomed)
    held = wait_for("the first worker to claim a game",
                    lambda: [r for r in queue(pg_url) if r[3] is not None and r[2] == "todo"])
    os.killpg(doomed.pid, signal.SIGKILL)  # the worker, its referee and its bots: all at once
    doomed.wait()
    rescuer = start("worker", "--db", pg_url, "--lease", "1", "--poll", "0.1", "--exit-when-idle",
                    "--json", cwd=tmp_path)
    workers.append(rescuer)
    code, out, err = finish(rescuer)
    assert code == 0, err
    code, _, err = finish(coordinator)
    assert code == 0, err
    rows = queue(pg_url)
    assert [r[2] for r in rows] == ["done", "done"]
    killed_game = held[0][1]
    assert rows[killed_game][4] >= 2  # claimed again after the dead worker's lease ran out
    with Store(pg_url) as store:
        assert sorted(store.finished_indices(rows[0][0])) == [0, 1]


def _queued_run(url: str) -> tuple[Store, str, ScheduledGame]:
    store = Store(url)
    with store.transaction():
        store.ensure_bot("a", "builtin:random")
        store.ensure_bot("b", "builtin:greedy")
    store.create_tournament("t1", "tournament", {})
    sg = ScheduledGame(0, 0, 0, ("a", "b"), "tournament:0")
    distributed.enqueue(store, "t1", [sg])
    return store, "t1", sg


def _row(tid: str, durak: str) -> GameRow:
    return GameRow(tid, 0, "tournament:0", 0, {}, None, None, "normal", durak, "s", "e",
                   [SeatRow(0, "a", "durak" if durak == "a" else "safe", None, 1, 0.1),
                    SeatRow(1, "b", "durak" if durak == "b" else "safe", None, 1, 0.1)])


def test_a_game_finished_twice_is_stored_once(pg_url: str) -> None:
    store, tid, _ = _queued_run(pg_url)
    other = Store(pg_url)
    try:
        slow = distributed.claim(store, "slow", lease_s=0)  # its lease runs out at once
        assert slow is not None
        fast = distributed.claim(other, "fast", lease_s=60)  # ... so another takes the game
        assert fast is not None and fast.game == slow.game and fast.attempt == 2
        assert distributed.claim(other, "third", lease_s=60) is None  # held by "fast" now
        assert distributed.store_result(other, "fast", _row(tid, "a"), {"game": 0, "by": "fast"})
        assert not distributed.store_result(store, "slow", _row(tid, "b"), {"game": 0, "by": "slow"})
        assert not distributed.heartbeat(store, "slow", slow, 60)  # stored: slow may stop
        [game] = store.games(tid)
        assert game.durak == "a"
        assert store.db.execute("SELECT worker FROM game_records").fetchall() == [("fast",)]
    finally:
        store.close()
        other.close()


def test_a_stopped_run_is_not_claimed_and_its_late_results_are_dropped(pg_url: str) -> None:
    store, tid, _ = _queued_run(pg_url)
    try:
        c = distributed.claim(store, "w", lease_s=60)
        assert c is not None
        store.set_status(tid, "finished")  # e.g. the SPRT decided
        assert not distributed.heartbeat(store, "w", c, 60)
        assert not distributed.store_result(store, "w", _row(tid, "a"), {})
        store.db.execute("UPDATE queue SET worker = NULL")
        assert distributed.claim(store, "w", lease_s=60) is None
        assert distributed.open_games(store, None, []) == 0
    finally:
        store.close()


def test_two_workers_racing_for_the_last_games_store_each_once(
        pg_url: str, tmp_path: Path, workers: list[subprocess.Popen[str]]) -> None:
    coordinator = start("tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy",
                        "--games", "4", "--seed", "3", "--db", pg_url, "--distributed", cwd=tmp_path)
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 4)
    for _ in range(2):
        workers.append(start("worker", "--db", pg_url, "--exit-when-idle", "--poll", "0.05",
                             "--concurrency", "2", "--json", cwd=tmp_path))
    import json
    results = [finish(w) for w in workers]
    assert [r[0] for r in results] == [0, 0], [r[2] for r in results]
    assert sum(json.loads(r[1])["stored"] for r in results) == 4
    assert finish(coordinator)[0] == 0
    with Store(pg_url) as store:
        assert store.db.execute("SELECT count(*) FROM games").fetchone()[0] == 4
        assert store.db.execute("SELECT count(*) FROM seats").fetchone()[0] == 8


def test_heartbeats_keep_a_game_longer_than_its_lease(pg_url: str, tmp_path: Path,
                                                      workers: list[subprocess.Popen[str]]) -> None:
    """The slow bot waits 0.5 s per decision and plays dozens: each game lasts several
    lease times (3 s, renewed every second); a second worker polling all the while never
    takes a game from the first, and no game is claimed twice."""
    bots = ["--bot", f"s={sys.executable} {SLOW_BOT} dist-beat-{tmp_path.name}", "--bot", "g=builtin:greedy"]
    coordinator = start("tournament", *bots, "--games", "2", "--seed", "4", "--db", pg_url,
                        "--distributed", "--sandbox", "none", "--move-time", "600", cwd=tmp_path)
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 2)
    for _ in range(2):
        workers.append(start("worker", "--db", pg_url, "--lease", "3", "--poll", "0.05",
                             "--exit-when-idle", "--json", cwd=tmp_path, DURAK_BOT_DELAY="0.5"))
    import json
    results = [finish(w) for w in workers]
    assert [r[0] for r in results] == [0, 0], [r[2] for r in results]
    assert finish(coordinator)[0] == 0
    with Store(pg_url) as store:  # the games outlasted the lease: the heartbeats held them
        held = [s.time_used for g in store.games(queue(pg_url)[0][0]) for s in g.seats if s.bot == "s"]
    assert len(held) == 2 and min(held) > 3
    assert [r[4] for r in queue(pg_url)] == [1, 1]  # never claimed twice
    assert sum(json.loads(r[1])["dropped"] for r in results) == 0


def test_a_worker_that_cannot_start_a_bot_says_so_once_and_leaves_the_games(
        pg_url: str, tmp_path: Path, workers: list[subprocess.Popen[str]]) -> None:
    bots = ["--bot", "x=/nonexistent/bot", "--bot", "g=builtin:greedy"]
    said = tmp_path / "coordinator.err"
    with said.open("w") as stderr:  # read while it runs: it cannot finish without workers
        coordinator = subprocess.Popen(
            [str(DURAK_REF), "tournament", *bots, "--games", "4", "--seed", "1", "--db", pg_url,
             "--distributed", "--sandbox", "none"], cwd=tmp_path, env=env(), text=True,
            stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
    workers.append(coordinator)
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 4)
    code, out, err = finish(start("worker", "--db", pg_url, "--exit-when-idle", "--poll", "0.05",
                                  "--json", cwd=tmp_path))
    assert code == 0, err
    assert err.count("not playing run") == 1 and "/nonexistent/bot" in err
    import json
    summary = json.loads(out)
    assert summary["stored"] == 0 and list(summary["refused"]) == [queue(pg_url)[0][0]]
    assert all(r[2] == "todo" and r[3] is None for r in queue(pg_url))  # given back, for others
    # The coordinator tells its user why nothing happens.
    note = wait_for("the worker's note on the coordinator's stderr",
                    lambda: [line for line in said.read_text().splitlines() if "not playing this run" in line])
    assert len(note) == 1 and "/nonexistent/bot" in note[0] and summary["worker"] in note[0]


@pytest.mark.process
def test_distributed_runs_need_a_server_store(tmp_path: Path) -> None:
    proc = subprocess.run([str(DURAK_REF), "tournament", *BOTS, "--distributed", "--db",
                           str(tmp_path / "x.sqlite")], cwd=tmp_path, env=env(), capture_output=True,
                          text=True, timeout=DEADLINE)
    assert proc.returncode == 2 and "--distributed needs a PostgreSQL store" in proc.stderr
    proc = subprocess.run([str(DURAK_REF), "worker", "--db", str(tmp_path / "x.sqlite")], cwd=tmp_path,
                          env=env(), capture_output=True, text=True, timeout=DEADLINE)
    assert proc.returncode == 2 and "a worker needs the PostgreSQL store" in proc.stderr


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="process groups and kill -9 as on Linux")


def test_a_distributed_sprt_decides_from_stored_pairs_and_stops_the_workers(
        pg_url: str, tmp_path: Path, workers: list[subprocess.Popen[str]]) -> None:
    import json

    coordinator = start("sprt", "builtin:random", "builtin:greedy", "--max-pairs", "400", "--seed", "5",
                        "--db", pg_url, "--distributed", "--json", cwd=tmp_path)
    wait_for("the pairs in the queue", lambda: len(queue(pg_url)) == 800)
    workers.append(start("worker", "--db", pg_url, "--exit-when-idle", "--poll", "0.05", "--json",
                         cwd=tmp_path))
    code, out, err = finish(coordinator)
    assert code == 0, err  # H1: greedy is stronger than random
    status = json.loads(out)
    assert status["state"] == "accept_h1" and status["pairs"] == status["decided_after"]
    code, wout, err = finish(workers[0])
    assert code == 0, err  # the run is finished: nothing left to claim, the worker exits
    with Store(pg_url) as store:
        tid = store.tournaments()[0][0]
        assert store.tournament(tid)[2] == "finished"
        stored = store.finished_indices(tid)
        assert len(stored) == json.loads(wout)["stored"] < 800  # it stopped well short of the budget
        assert distributed.claim(store, "late", 60) is None
    # A resumed run finds the decision in the store and plays nothing.
    resumed = subprocess.run([str(DURAK_REF), "sprt", "--resume", tid, "--db", pg_url, "--distributed",
                              "--json"], cwd=tmp_path, env=env(), capture_output=True, text=True,
                             timeout=DEADLINE)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["state"] == "accept_h1"


def test_a_workers_bots_never_see_the_stores_url_or_password(
        pg_url: str, tmp_path: Path, workers: list[subprocess.Popen[str]]) -> None:
    """The server trusts this test's user, so any password works: the bot must not learn
    this one (from the environment or from its parent's command line)."""
    loot = tmp_path / "loot.txt"
    spy = Path(__file__).resolve().parent / "bots" / "env_spy_bot.py"
    bots = ["--bot", f"spy={sys.executable} {spy} {loot}", "--bot", "g=builtin:greedy"]
    coordinator = start("tournament", *bots, "--games", "2", "--seed", "2", "--db", pg_url,
                        "--distributed", "--sandbox", "none", cwd=tmp_path)
    workers.append(coordinator)
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 2)
    secret_url = pg_url.replace("durak@", "durak:pw-hunter2@")
    code, _, err = finish(start("worker", "--exit-when-idle", "--poll", "0.05", cwd=tmp_path,
                                DURAK_DB=secret_url, PGPASSWORD="pw-hunter2"))
    assert code == 0, err
    assert finish(coordinator)[0] == 0
    text = loot.read_text()
    assert "PATH=" in text  # the spy did look
    assert "pw-hunter2" not in text and "DURAK_DB" not in text and "PGPASSWORD" not in text


def test_a_stopped_worker_gives_its_game_back_at_once(pg_url: str, tmp_path: Path,
                                                      workers: list[subprocess.Popen[str]]) -> None:
    """SIGTERM (a service manager, Ctrl-C alike) mid-game: the claim is released, not left
    to a lease that here would last ten minutes."""
    bots = ["--bot", f"s={sys.executable} {SLOW_BOT} dist-term-{tmp_path.name}", "--bot", "g=builtin:greedy"]
    workers.append(start("tournament", *bots, "--games", "2", "--seed", "9", "--db", pg_url,
                         "--distributed", "--move-time", "600", "--sandbox", "none", cwd=tmp_path))
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 2)
    worker = start("worker", "--db", pg_url, "--lease", "600", "--poll", "0.1", cwd=tmp_path,
                   DURAK_BOT_STALL_AFTER="3")  # its game stalls: it is mid-game until stopped
    workers.append(worker)
    wait_for("the worker to claim a game", lambda: [r for r in queue(pg_url) if r[3] is not None])
    worker.send_signal(signal.SIGTERM)
    code, _, err = finish(worker)
    assert code == 130, err
    assert "its unfinished games return to the queue" in err
    assert [(r[2], r[3]) for r in queue(pg_url)] == [("todo", None), ("todo", None)]


@pytest.mark.parametrize("args, says", [
    (["--lease", "nan"], "--lease"),
    (["--poll", "inf"], "--poll inf: must be a number"),
    (["--tournament", "nope"], "no tournament 'nope'"),
])
def test_a_workers_unusable_options_are_exit_2(args: list[str], says: str, pg_url: str,
                                               tmp_path: Path) -> None:
    proc = subprocess.run([str(DURAK_REF), "worker", "--db", pg_url, *args], cwd=tmp_path, env=env(),
                          capture_output=True, text=True, timeout=DEADLINE)
    assert proc.returncode == 2 and says in proc.stderr and "Traceback" not in proc.stderr


def test_an_interrupted_coordinator_is_resumed_distributed_only(
        pg_url: str, tmp_path: Path, workers: list[subprocess.Popen[str]]) -> None:
    import json

    coordinator = start("tournament", "--bot", "a=builtin:random", "--bot", "b=builtin:greedy",
                        "--games", "6", "--seed", "6", "--db", pg_url, "--distributed", cwd=tmp_path)
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 6)
    coordinator.send_signal(signal.SIGINT)  # Ctrl-C: it stops watching; the queue stays
    code, _, err = finish(coordinator)
    assert code == 130, err
    tid = queue(pg_url)[0][0]
    assert f"--resume {tid} --db {shlex.quote(redact(pg_url))} --distributed" in err
    code, _, err = finish(start("worker", "--db", pg_url, "--exit-when-idle", "--poll", "0.05",
                                cwd=tmp_path))
    assert code == 0, err  # the workers played on without a coordinator
    here = subprocess.run([str(DURAK_REF), "tournament", "--resume", tid, "--db", pg_url], cwd=tmp_path,
                          env=env(), capture_output=True, text=True, timeout=DEADLINE)
    assert here.returncode == 2 and "was queued for workers" in here.stderr
    again = subprocess.run([str(DURAK_REF), "tournament", "--resume", tid, "--db", pg_url, "--distributed",
                            "--json"], cwd=tmp_path, env=env(), capture_output=True, text=True,
                           timeout=DEADLINE)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["games"] == 6
    checked = subprocess.run([str(DURAK_REF), "verify", "--db", pg_url], cwd=tmp_path, env=env(),
                             capture_output=True, text=True, timeout=DEADLINE)
    assert checked.returncode == 0, checked.stdout  # the resumed coordinator logged every game


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) not installed")
def test_a_workers_sandboxed_bot_cannot_reach_the_server_or_the_password_file(
        pg_server: PgServer, pg_url: str, tmp_path: Path, workers: list[subprocess.Popen[str]]) -> None:
    passfile = tmp_path / "secret" / "pgpass"
    passfile.parent.mkdir()
    passfile.write_text("*:*:*:durak:pw-in-the-file\n")
    passfile.chmod(0o600)
    thief = Path(__file__).resolve().parent / "bots" / "store_thief_bot.py"
    bots = ["--bot", f"t={sys.executable} {thief} {pg_server.host} {pg_server.port} {passfile}",
            "--bot", "g=builtin:greedy"]
    workers.append(start("tournament", *bots, "--games", "2", "--seed", "2", "--db", pg_url,
                         "--distributed", "--sandbox", "bwrap", cwd=tmp_path))
    wait_for("the schedule in the queue", lambda: len(queue(pg_url)) == 2)
    logs = tmp_path / "worker-logs"
    code, _, err = finish(start("worker", "--db", pg_url, "--exit-when-idle", "--poll", "0.05",
                                "--log-dir", str(logs), cwd=tmp_path, PGPASSFILE=str(passfile)))
    assert code == 0, err
    said = "".join(p.read_text() for p in logs.glob("*.stderr.log"))
    assert "THIEF: server unreachable" in said and "server reached" not in said
    assert "pw-in-the-file" not in said
