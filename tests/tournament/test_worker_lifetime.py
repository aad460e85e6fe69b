"""Referee workers live exactly as long as their run, and a run ends
cleanly on SIGTERM as on Ctrl-C (exit 130, README "Exit codes").

The old failure: every ``--concurrency 2`` tournament died after about ten seconds with
``WorkerError: worker 1 exited (code None)``. Workers asked for SIGTERM on their parent's
death with ``PR_SET_PDEATHSIG``, which fires when the *thread* that spawned them exits,
and trio spawns processes from its thread cache, whose idle threads exit after ten
seconds. ``test_a_worker_outlives_the_thread_that_spawned_it`` reproduces that without
waiting: it spawns a worker from a thread that then exits.

Real processes throughout; nothing waits a fixed time except the one test whose point is
real time (a tournament that outlives trio's idle timeout). The bots
(``bots/slow_bot.py TAG``) stall after $DURAK_BOT_STALL_AFTER decisions, so a run is
still going whenever a signal is sent; TAG finds them in /proc. This process is a child
subreaper, so whatever the referee leaves behind is re-parented to us and seen.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol.codec import FrameDecoder, encode
from referee.league.tournament import BotEntry, TournamentSettings, schedule
from support import DURAK_REF, child_subreaper, default_signals, proc_stat

pytestmark = pytest.mark.process

BOT = Path(__file__).resolve().parent / "bots" / "slow_bot.py"
TIMEOUT = 60.0  # for every wait; none should take a tenth of this
SEEN: set[int] = set()  # processes these tests saw: killed and reaped at teardown if left


@pytest.fixture(autouse=True)
def subreaper() -> Iterator[None]:
    with child_subreaper():
        yield
    for pid in sorted(SEEN):
        st = proc_stat(pid)
        if st is not None and st[1] == os.getpid():
            if st[0] != "Z":
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    SEEN.clear()


def wait_until(check: Any, what: str, proc: subprocess.Popen[bytes] | None = None) -> Any:
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


def alive(pid: int) -> bool:
    """Running (not a zombie, not gone)."""
    st = proc_stat(pid)
    return st is not None and st[0] != "Z"


def processes(needle: str) -> set[int]:
    """Live processes with ``needle`` as one of their arguments."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    out.add(int(entry.name))
            except OSError:
                pass
    out = {pid for pid in out if alive(pid)}
    SEEN.update(out)
    return out


def workers_of(parent: int) -> set[int]:
    """Live referee workers whose parent is ``parent``."""
    return {pid for pid in processes("referee.league.worker") if (proc_stat(pid) or ("", 0))[1] == parent}


def children() -> set[int]:
    """Our child processes, live or zombie."""
    me = os.getpid()
    return {int(e.name) for e in Path("/proc").iterdir()
            if e.name.isdigit() and (proc_stat(int(e.name)) or ("", 0))[1] == me}




# -- one worker, driven by hand ------------------------------------------------------------


class Worker:
    """A worker process spoken to as the parent does, with blocking pipes."""

    def __init__(self, settings: TournamentSettings) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "referee.league.worker", "--parent", str(os.getpid())],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     preexec_fn=default_signals())
        SEEN.add(self.proc.pid)
        self.decoder = FrameDecoder(64 << 20, strict=False)
        self.send({"type": "setup", "settings": settings.as_dict(), "stderr_stem": None})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(encode(message))
        self.proc.stdin.flush()

    def play(self, game: Any) -> dict[str, Any] | None:
        """Send a game; the worker's answer, or None if it exited instead."""
        assert self.proc.stdout is not None
        self.send({"type": "game", "index": game.index, "deal": game.deal, "rotation": game.rotation,
                   "table": list(game.table), "seed": game.seed})
        while True:
            message = self.decoder.next_message()
            if message is not None:
                return message
            chunk = self.proc.stdout.read1(1 << 16)
            if not chunk:
                return None
            self.decoder.feed(chunk)


def test_a_worker_outlives_the_thread_that_spawned_it() -> None:
    settings = TournamentSettings([BotEntry("a", "builtin:greedy"), BotEntry("b", "builtin:random")])
    games = schedule(settings)
    spawned: dict[str, Any] = {}

    def spawn() -> None:  # as trio does: from a thread that then goes away
        spawned["worker"] = worker = Worker(settings)
        spawned["first"] = worker.play(games[0])  # the worker is up and set up
        spawned["thread"] = threading.get_native_id()

    thread = threading.Thread(target=spawn)
    thread.start()
    thread.join()
    worker, first = spawned["worker"], spawned["first"]
    assert first is not None and first["type"] == "finished" and first["index"] == 0
    # join() returns when the Python thread is done; wait until the OS thread is gone too.
    wait_until(lambda: not Path(f"/proc/self/task/{spawned['thread']}").exists(),
               "the spawning thread to exit")

    with worker.proc:  # closes the pipes at the end
        for game in games[1:4]:
            answer = worker.play(game)
            assert answer is not None, (f"the worker exited (code {worker.proc.wait()}) after the "
                                        f"thread that spawned it exited")
            assert answer["type"] == "finished" and answer["index"] == game.index
        assert worker.proc.stdin is not None
        worker.proc.stdin.close()  # the parent is done: the worker exits on its own
        assert worker.proc.wait(timeout=TIMEOUT) == 0


def test_a_worker_whose_parent_is_killed_closes_its_bots_and_exits(tmp_path: Path) -> None:
    """A parent that spawns a worker from a thread that exits, hands it a game against a
    bot that stalls mid-game, and is then killed with SIGKILL: nobody closes the worker,
    it must notice by itself, close its bot and exit."""
    tag = f"tag-{uuid.uuid4().hex}"
    settings = TournamentSettings([BotEntry("a", f"{sys.executable} {BOT} {tag}"),
                                   BotEntry("b", "builtin:random")])
    game = schedule(settings)[0]
    parent_code = f"""
import os, sys, threading
from protocol.codec import encode
import subprocess
def spawn():
    p = subprocess.Popen([sys.executable, "-m", "referee.league.worker", "--parent", str(os.getpid())],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdin.write(encode({{"type": "setup", "settings": {settings.as_dict()!r}, "stderr_stem": None}}))
    p.stdin.write(encode({{"type": "game", "index": 0, "deal": {game.deal}, "rotation": {game.rotation},
                          "table": {list(game.table)!r}, "seed": {game.seed!r}}}))
    p.stdin.flush()
    print(p.pid, flush=True)
    globals()["p"] = p
t = threading.Thread(target=spawn)
t.start()
t.join()
threading.Event().wait()
"""
    env = dict(os.environ, DURAK_BOT_STALL_AFTER="3")
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, env=env,
                              preexec_fn=default_signals())
    SEEN.add(parent.pid)
    assert parent.stdout is not None
    with parent.stdout:
        worker = int(parent.stdout.readline())
    SEEN.add(worker)
    bots = wait_until(lambda: processes(tag), "the bot to start", parent)
    # The bot stalls after 3 decisions: the game never ends; the worker waits for it.
    parent.kill()
    assert parent.wait(timeout=TIMEOUT) == -signal.SIGKILL
    wait_until(lambda: not alive(worker) and not any(alive(b) for b in bots),
               "the orphaned worker to close its bot and exit")


# -- a real tournament ------------------------------------------------------------------------


class Run:
    """``durak-ref tournament --concurrency 2`` with two stalling program bots and a builtin:
    3 tables, 3 x ``games`` games, far more decisions than the bots' budget (60 decisions
    per process, at most 4 processes), so it never ends alone."""

    def __init__(self, tmp_path: Path, games: int = 6, **env: str) -> None:
        self.total = 3 * games
        self.tmp = tmp_path
        self.tag = f"tag-{uuid.uuid4().hex}"
        self.db = tmp_path / "store.sqlite"
        self.logs = tmp_path / "logs"
        bot = f"{sys.executable} {BOT} {self.tag}"
        self.args = ["--bot", f"a={bot}", "--bot", f"b={bot}", "--bot", "c=builtin:random",
                     "--games", str(games), "--concurrency", "2", "--seed", "3",
                     "--db", str(self.db), "--log-dir", str(self.logs)]
        self.env = dict(os.environ, COLUMNS="200", NO_COLOR="1", DURAK_BOT_STALL_AFTER="60")
        self.env.update(env)

    def start(self, *, ignore_sigint: bool = False, group: bool = False) -> subprocess.Popen[bytes]:
        self.err_path = self.tmp / "first.err"
        with open(self.err_path, "wb") as err:
            proc = subprocess.Popen([str(DURAK_REF), "tournament", *self.args], stdout=subprocess.DEVNULL,
                                    stderr=err, env=self.env, cwd=self.tmp, start_new_session=group,
                                    preexec_fn=default_signals(ignore_sigint))
        SEEN.add(proc.pid)
        return proc

    def stored(self) -> int:
        if not self.db.exists():
            return 0
        try:
            db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
            try:
                return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
            finally:
                db.close()
        except sqlite3.Error:  # not created yet
            return 0

    def tid(self) -> str:
        db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
        try:
            return str(db.execute("SELECT id FROM tournaments").fetchone()[0])
        finally:
            db.close()

    def resume(self) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in self.env.items() if not k.startswith("SLOW_BOT_")}
        return subprocess.run([str(DURAK_REF), "tournament", "--resume", self.tid(), "--db", str(self.db),
                               "--log-dir", str(self.logs), "--json"], capture_output=True, text=True,
                              env=env, cwd=self.tmp, timeout=TIMEOUT)


def check_stopped_cleanly(run: Run, proc: subprocess.Popen[bytes], workers: set[int],
                          bots: set[int], before: set[int], resume: bool = True) -> None:
    """Exit 130 with the resume hint, no WorkerError; every worker and bot closed by the
    referee itself (nothing left for us to adopt); the store resumable to the end."""
    code = proc.wait(timeout=TIMEOUT)
    err = run.err_path.read_text()
    assert code == 130, err
    assert "Traceback" not in err and "WorkerError" not in err and "internal error" not in err
    assert f"Resume with: durak-ref tournament --resume {run.tid()}" in err
    assert processes(run.tag) == set()
    assert not any(alive(pid) for pid in workers | bots)
    assert children() - before == set()
    assert 2 <= run.stored() < run.total
    if resume:
        resumed = run.resume()
        assert resumed.returncode == 0, resumed.stderr
        assert run.stored() == run.total
        assert processes(run.tag) == set()


@pytest.mark.parametrize(("sig", "group", "ignore_sigint"), [
    (signal.SIGTERM, False, False),
    (signal.SIGINT, False, False),
    # Ctrl-C, systemd, ``timeout``: the whole process group, workers included, at once.
    (signal.SIGTERM, True, False),
    (signal.SIGINT, True, False),
    # A background job of a non-interactive shell: SIGINT ignored, SIGTERM still works.
    (signal.SIGTERM, False, True),
], ids=["sigterm", "sigint", "sigterm-group", "sigint-group", "sigterm-sigint-ignored"])
def test_a_signalled_concurrent_tournament_stops_cleanly_and_resumes(
        tmp_path: Path, sig: int, group: bool, ignore_sigint: bool) -> None:
    before = children()
    run = Run(tmp_path)
    proc = run.start(ignore_sigint=ignore_sigint, group=group)
    wait_until(lambda: run.stored() >= 2, "two stored games", proc)
    workers = wait_until(lambda: workers_of(proc.pid) if len(workers_of(proc.pid)) == 2 else None,
                         "two workers", proc)
    bots = wait_until(lambda: processes(run.tag), "bot processes", proc)
    if group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    # Resuming is the same whatever stopped the run: checked once per signal.
    check_stopped_cleanly(run, proc, workers, bots, before, resume=not group and not ignore_sigint)


def test_sigkill_of_the_referee_takes_its_workers_and_bots_with_it(tmp_path: Path) -> None:
    run = Run(tmp_path)
    proc = run.start()
    wait_until(lambda: run.stored() >= 2, "two stored games", proc)
    workers = wait_until(lambda: workers_of(proc.pid) if len(workers_of(proc.pid)) == 2 else None,
                         "two workers", proc)
    bots = wait_until(lambda: processes(run.tag), "bot processes", proc)
    proc.kill()
    assert proc.wait(timeout=TIMEOUT) == -signal.SIGKILL
    wait_until(lambda: not any(alive(pid) for pid in workers | bots),
               "the orphaned workers to close their bots and exit")
    assert processes(run.tag) == set()
    # Resuming after SIGKILL: tests/tournament/test_tournament_kill.py.


def test_a_concurrent_tournament_outlives_the_thread_idle_timeout(tmp_path: Path) -> None:
    """Real time is the point: trio's cached threads exit after 10 s idle. Each of the
    program bots' decisions takes 50 ms and there are at least 24 per bot in every game
    (1440 in all), so the run takes at least 36 s; games must still be stored 12 s after
    the workers started, by the same workers."""
    before = children()
    run = Run(tmp_path, games=20, DURAK_BOT_STALL_AFTER="0", DURAK_BOT_DELAY="0.05")
    proc = run.start()
    workers = wait_until(lambda: workers_of(proc.pid) if len(workers_of(proc.pid)) == 2 else None,
                         "two workers", proc)
    time.sleep(12)  # past trio's thread idle timeout (10 s)
    assert proc.poll() is None, run.err_path.read_text()
    stored = run.stored()
    wait_until(lambda: run.stored() > stored, "a game finished after the idle timeout", proc)
    assert workers_of(proc.pid) == workers  # the very same workers still play
    bots = processes(run.tag)
    os.kill(proc.pid, signal.SIGTERM)
    check_stopped_cleanly(run, proc, workers, bots, before, resume=False)


def test_sigterm_stops_a_concurrent_sprt_cleanly(tmp_path: Path) -> None:
    """``sprt --concurrency 2`` with a program bot that stalls: the test cannot decide,
    so it is running whenever SIGTERM comes; it ends like Ctrl-C, nothing left behind."""
    before = children()
    tag = f"tag-{uuid.uuid4().hex}"
    err_path = tmp_path / "sprt.err"
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", DURAK_BOT_STALL_AFTER="60")
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([str(DURAK_REF), "sprt", f"{sys.executable} {BOT} {tag}", "builtin:random",
                                 "--concurrency", "2"], stdout=subprocess.DEVNULL, stderr=err, env=env,
                                cwd=tmp_path, preexec_fn=default_signals())
    SEEN.add(proc.pid)
    workers = wait_until(lambda: workers_of(proc.pid) if len(workers_of(proc.pid)) == 2 else None,
                         "two workers", proc)
    bots = wait_until(lambda: processes(tag), "bot processes", proc)
    os.kill(proc.pid, signal.SIGTERM)
    code = proc.wait(timeout=TIMEOUT)
    text = err_path.read_text()
    assert code == 130, text
    assert "durak-ref: interrupted" in text
    assert "Traceback" not in text and "WorkerError" not in text
    assert processes(tag) == set()
    assert not any(alive(pid) for pid in workers | bots)
    assert children() - before == set()


# -- the parent's view of a worker stopped by a signal ------------------------------------


@pytest.mark.parametrize("when", ["mid-game", "between-games"])
async def test_a_worker_stopped_by_sigterm_interrupts_the_run_and_is_no_internal_error(
        when: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A service manager or a terminal signals the whole process group: a worker may
    exit before the parent's own signal is handled. The parent then sees WorkerStopped
    (a KeyboardInterrupt: the run is interrupted), never a WorkerError."""
    import trio

    from referee.league.workerclient import WorkerClient, WorkerError, WorkerStopped

    tag = f"tag-{uuid.uuid4().hex}"
    settings = TournamentSettings([BotEntry("a", f"{sys.executable} {BOT} {tag}"),
                                   BotEntry("b", "builtin:random")])
    games = schedule(settings)
    monkeypatch.setenv("DURAK_BOT_STALL_AFTER", "3" if when == "mid-game" else "0")
    client = WorkerClient(0, settings, None)
    await client.start()
    assert client.process is not None
    worker = client.process.pid
    SEEN.add(worker)
    try:
        if when == "between-games":
            await client.play(games[0])
            os.kill(worker, signal.SIGTERM)
            await client.process.wait()
            with pytest.raises(WorkerStopped):
                await client.play(games[1])
        else:
            async def signal_when_the_bot_plays() -> None:
                while not processes(tag):
                    await trio.sleep(0.02)
                os.kill(worker, signal.SIGTERM)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(signal_when_the_bot_plays)
                with pytest.raises(WorkerStopped):
                    await client.play(games[0])  # the bot stalls: only the signal ends this
        assert not issubclass(WorkerStopped, WorkerError)
        assert client.process.returncode == 143  # it closed its bots first, then exited
        assert processes(tag) == set()
    finally:
        await client.close()


def test_sigterm_stops_ladder_run_cleanly(tmp_path: Path) -> None:
    before = children()
    tag = f"tag-{uuid.uuid4().hex}"
    db = tmp_path / "store.sqlite"
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", DURAK_BOT_STALL_AFTER="60")
    for name, command in (("slow", f"{sys.executable} {BOT} {tag}"), ("rnd", "builtin:random")):
        subprocess.run([str(DURAK_REF), "ladder", "add", name, command, "--db", str(db)], check=True,
                       capture_output=True, env=env, timeout=TIMEOUT)
    err_path = tmp_path / "ladder.err"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen([str(DURAK_REF), "ladder", "run", "--games", "100", "--db", str(db),
                                 "--log-dir", str(tmp_path / "logs")], stdout=subprocess.DEVNULL,
                                stderr=err, env=env, cwd=tmp_path, preexec_fn=default_signals())
    SEEN.add(proc.pid)
    run = Run(tmp_path)  # for its store census
    wait_until(lambda: run.stored() >= 1, "a stored ladder game", proc)
    bots = wait_until(lambda: processes(tag), "the bot process", proc)
    os.kill(proc.pid, signal.SIGTERM)
    code = proc.wait(timeout=TIMEOUT)
    text = err_path.read_text()
    assert code == 130, text
    assert "interrupted; every finished game and rating is stored" in text and "Traceback" not in text
    assert processes(tag) == set() and not any(alive(b) for b in bots)
    assert children() - before == set()
