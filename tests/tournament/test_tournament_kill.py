"""Interrupted tournaments: SIGKILL and SIGINT of a real ``durak-ref
tournament`` process with real (stalling) bot processes, then ``--resume``.

The bot (``bots/slow_bot.py TAG``) stalls for good after $DURAK_BOT_STALL_AFTER
decisions per process. A tournament has at most 2 processes per subprocess bot here
(concurrency 2), so the bots give 4 x 60 decisions in all, while the 60 games need
thousands (about 3000 with --seed 3; no game fewer than 20): the first run stores a
few games (at most 240 / 20 = 12) and then waits forever, so the signal always finds it
running, however slow the machine. The resume runs the same stored command without
the budget. TAG, unique per test, marks every bot's command line so the test finds
them in /proc. Nothing here waits a fixed time: the test polls the store (and /proc)
with generous timeouts.

Orphans. The referee starts each bot in a session (and process group) of its own.
Killed with SIGKILL it cannot close them, so the bots outlive it, re-parented to the
nearest subreaper: this test process (see ``subreaper``), else PID 1, which in some
sandboxes never reaps. What we saw: right after the SIGKILL every bot still existed,
re-parented to us, most still running and some already zombies (they exit on their
own once they see EOF on stdin). The test does not rely on that: it SIGKILLs each
bot's process group and reaps it. After SIGINT, by contrast,
the referee must close every bot itself: no bot process may be left, zombies included.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.league.tournament import TournamentSettings, schedule
from referee.records.matchlog import read_log
from referee.records.store import GameRow, Store
from support import child_subreaper, default_signals, proc_stat

pytestmark = pytest.mark.process

DURAK_REF = Path(sys.executable).parent / "durak-ref"
BOT = Path(__file__).resolve().parent / "bots" / "slow_bot.py"
TIMEOUT = 60.0  # for every wait; none should take a tenth of this


# -- processes ---------------------------------------------------------------------------


SEEN: set[int] = set()  # every bot process this module's tests have seen


@pytest.fixture(autouse=True)
def subreaper() -> Iterator[None]:
    """Orphaned bots are re-parented to us (not to a PID 1 that may never reap them).
    Afterwards, any bot we saw that is still our child is killed and reaped; no other
    process is touched."""
    with child_subreaper():
        yield
    # pytest runs this teardown whatever the test's outcome.
    for pid in sorted(SEEN):
        st = proc_stat(pid)
        if st is not None and st[1] == os.getpid():
            if st[0] != "Z":
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    SEEN.clear()


def tagged(tag: str) -> set[int]:
    """Live bot processes: ``tag`` is one of their arguments (the referee's own command
    line holds it only inside a ``--bot`` value; a zombie's command line is empty)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    out.add(int(entry.name))
            except OSError:
                pass
    SEEN.update(out)
    return out


def children() -> set[int]:
    """Our child processes (live or zombie), bar the referee Popens still running."""
    me = os.getpid()
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = proc_stat(int(entry.name))
            if st is not None and st[1] == me and int(entry.name) not in _popen_pids:
                out.add(int(entry.name))
    return out


_popen_pids: set[int] = set()


def wait_until(check, what: str, proc: subprocess.Popen[bytes] | None = None):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + TIMEOUT
    while True:
        value = check()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the referee exited ({proc.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


# -- the tournament ----------------------------------------------------------------------


class Run:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.tag = f"tag-{uuid.uuid4().hex}"
        self.db = tmp_path / "store.sqlite"
        self.logs = tmp_path / "logs"
        bot = f"{sys.executable} {BOT} {self.tag}"
        # Two stalling subprocess bots and a built-in: 3 tables, 60 games.
        self.args = ["--bot", f"a={bot}", "--bot", f"b={bot}", "--bot", "c=builtin:random",
                     "--games", "20", "--concurrency", "2", "--seed", "3"]

    def env(self, stall_after: int | None) -> dict[str, str]:
        env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
        env.pop("DURAK_BOT_STALL_AFTER", None)
        if stall_after is not None:
            env["DURAK_BOT_STALL_AFTER"] = str(stall_after)
        return env

    def start(self) -> subprocess.Popen[bytes]:
        self.out = open(self.tmp / "first.out", "wb")  # noqa: SIM115
        self.err = open(self.tmp / "first.err", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [str(DURAK_REF), "tournament", *self.args, "--db", str(self.db), "--log-dir",
             str(self.logs)], stdout=self.out, stderr=self.err, env=self.env(60), cwd=self.tmp,
            preexec_fn=default_signals())
        _popen_pids.add(proc.pid)
        return proc

    def finish(self, proc: subprocess.Popen[bytes]) -> tuple[int, str]:
        try:
            code = proc.wait(timeout=TIMEOUT)
        finally:
            _popen_pids.discard(proc.pid)
            self.out.close()
            self.err.close()
        return code, (self.tmp / "first.err").read_text()

    def stored(self) -> int:
        if not self.db.exists():
            return 0
        try:
            db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
            try:
                return db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error:  # not created yet
            return 0

    def snapshot(self) -> tuple[str, TournamentSettings, str, list[GameRow]]:
        with Store(self.db) as store:
            [(tid, _, kind, _)] = store.tournaments()
            _, saved, status = store.tournament(tid)
            return tid, TournamentSettings.from_dict(saved), status, store.games(tid)

    def resume(self, tid: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(DURAK_REF), "tournament", "--resume", tid, "--db", str(self.db), "--log-dir",
             str(self.logs), "--json"], capture_output=True, text=True, env=self.env(None),
            cwd=self.tmp, timeout=TIMEOUT)


def check_consistent(rows: list[GameRow], settings: TournamentSettings) -> None:
    planned = {g.index: g for g in schedule(settings)}
    logs: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for r in rows:
        g = planned[r.game_index]
        assert r.deal_seed == g.seed and r.rotation == g.rotation
        assert tuple(r.players) == g.table and [s.seat for s in r.seats] == [0, 1]
        assert sum(s.result == "durak" for s in r.seats) == (r.durak is not None)
        # The game's log line is that very game.
        assert r.log_file is not None
        if r.log_file not in logs:
            logs[r.log_file] = read_log(Path(r.log_file)).games
        game = next(x for x in logs[r.log_file] if x["_line"] == r.log_line)
        assert game["game"] == r.game_index and game["seed"] == r.deal_seed


def reap_children() -> None:
    """Reap every exited child of ours (the dead referee's workers were re-parented to us)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def check_resumed(run: Run, tid: str, before: list[GameRow]) -> None:
    proc = run.resume(tid)
    assert proc.returncode == 0, proc.stderr
    _, settings, status, after = run.snapshot()
    total = len(schedule(settings))
    assert total == 60
    assert status == "finished"
    assert [r.game_index for r in after] == list(range(total))  # every game exactly once
    assert json.loads(proc.stdout)["games"] == total
    by_index = {r.game_index: r for r in after}
    assert before and all(by_index[r.game_index] == r for r in before)  # untouched
    check_consistent(after, settings)
    assert tagged(run.tag) == set()  # the resumed referee closed its bots


def test_resume_after_sigkill(tmp_path: Path) -> None:
    run = Run(tmp_path)
    proc = run.start()
    wait_until(lambda: run.stored() >= 2, "two stored games", proc)
    bots = wait_until(lambda: tagged(run.tag), "bot processes")
    os.kill(proc.pid, signal.SIGKILL)
    code, _ = run.finish(proc)
    assert code == -signal.SIGKILL

    # The referee itself could not clean up, but it ran its games in worker processes
    # (concurrency 2), and a worker watches its parent (a pidfd): when it dies, each worker
    # closes its bots (bye, terminate, kill) and exits, even mid-game with a stalled
    # bot. The workers, re-parented to us, are reaped here.
    wait_until(lambda: not tagged(run.tag), "the workers to close their bots")
    assert bots
    reap_children()
    tid, settings, status, before = run.snapshot()
    assert status == "running" and 2 <= len(before) < 60
    check_consistent(before, settings)
    first_log = read_log(run.logs / f"tournament-{tid}.jsonl")
    assert first_log.footer is None  # killed: no footer
    check_resumed(run, tid, before)


def test_sigint_exits_130_closes_bots_and_resumes(tmp_path: Path) -> None:
    ours_before = children()
    run = Run(tmp_path)
    proc = run.start()
    wait_until(lambda: run.stored() >= 2, "two stored games", proc)
    bots = wait_until(lambda: tagged(run.tag), "bot processes")
    os.kill(proc.pid, signal.SIGINT)  # what Ctrl-C sends (bots are in sessions of their own)
    code, err = run.finish(proc)
    tid, settings, status, before = run.snapshot()
    assert code == 130, err
    assert "Traceback" not in err
    assert f"Resume with: durak-ref tournament --resume {tid} --db {run.db}" in err
    # The referee closed and reaped every bot before exiting: nothing tagged is alive,
    # no bot we saw exists even as a zombie, and nothing was left for us to adopt.
    assert tagged(run.tag) == set()
    assert {pid: proc_stat(pid) for pid in bots} == dict.fromkeys(bots)
    assert children() - ours_before == set()
    assert status == "running" and 2 <= len(before) < 60
    check_consistent(before, settings)
    log = read_log(run.logs / f"tournament-{tid}.jsonl")
    assert log.error is None and log.footer is not None and log.footer["interrupted"] is True
    assert {g["game"] for g in log.games} >= {r.game_index for r in before}
    check_resumed(run, tid, before)
