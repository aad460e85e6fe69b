"""The hostile-bot zoo: real bot processes that misbehave, one way each.

Each bot (``bots/hostile_bot.py MODE``) plays a short match against builtin:greedy
through ``run_match_async``, with a log in tmp_path. For each we check: the termination
kind of every game, that the forfeit names the bot and keeps the evidence, that the
opponent is never the durak of a forfeit, that the match plays every requested game
(restarting the bot as allowed), that every log verifies, and that no process of the
bot is left afterwards (zombies included).

Every bot appends its pid (and a forked child its own) to a pid file. The bot runs in
a session of its own, so its pid is also its process group and session id: after the
match no process may have one of those pids, or be in one of their groups or sessions.

Timing: limits are short but every wait has a wide margin (a bot that sleeps 3 s
against a 0.5 s limit; a bot that hangs for a minute). ``GRACE`` shortens the
referee's kill sequence.

Orphans: a forked child whose parent exited is re-parented to the nearest "subreaper",
normally PID 1. In some sandboxes PID 1 never reaps, so a child the referee killed
would stay a zombie forever there, whatever the referee does. The tests therefore make
the test process a subreaper: a killed orphan becomes our zombie, and we reap it. A
bot process proper (the referee's own child) must be reaped by the referee.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.records.matchlog import LogContents, read_log
from referee.replay.replay import verify_log
from referee.rules.options import make_rules
from referee.seats.players import parse_bot_spec
from referee.table.clock import TimeControl
from referee.table.match import FORFEITS, MatchConfig, MatchResult
from referee.table.runner import SeatOptions, run_match_async
from support import child_subreaper, default_signals, proc_stat

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
BOT = Path(__file__).resolve().parent / "bots" / "hostile_bot.py"
DURAK_REF = Path(sys.executable).parent / "durak-ref"
NAME = "hostile"
GRACE = 0.2  # the referee's grace periods (stdin close -> SIGTERM -> SIGKILL)
MATCH_LIMIT = 30.0  # no match here should take a tenth of this


# -- processes ---------------------------------------------------------------------


@pytest.fixture(autouse=True)
def subreaper() -> Iterator[None]:
    """Orphans of this test's bots are re-parented to us, not to PID 1 (see above)."""
    with child_subreaper():
        yield


def read_pids(pidfile: Path) -> dict[str, list[int]]:
    pids: dict[str, list[int]] = {"bot": [], "child": []}
    if pidfile.exists():
        for line in pidfile.read_text().splitlines():
            role, pid = line.split()
            pids[role].append(int(pid))
    return pids


def leftovers(pids: set[int]) -> dict[int, str]:
    """Every process that is one of ``pids`` or in one of their groups or sessions, with
    its state letter (``Z``: a zombie, which counts)."""
    left = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = proc_stat(int(entry))
            if st is not None and (int(entry) in pids or st[2] in pids or st[3] in pids):
                left[int(entry)] = st[0]
    return left


def reap_orphans(children: list[int]) -> None:
    """Reap the forked children that were re-parented to us and are dead (our duty as
    their subreaper, not the referee's)."""
    for pid in children:
        st = proc_stat(pid)
        if st is not None and st[0] == "Z" and st[1] == os.getpid():
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def assert_no_bot_left(pidfile: Path) -> dict[str, list[int]]:
    """No bot process, forked child, or member of their groups/sessions is left."""
    pids = read_pids(pidfile)
    everything = set(pids["bot"]) | set(pids["child"])
    assert pids["bot"], "the bot never started"
    # The referee has reaped its own children; a SIGKILLed orphan needs a moment to die.
    deadline = time.monotonic() + 3.0
    while True:
        reap_orphans(pids["child"])
        left = leftovers(everything)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not left, f"bot processes left after the match (pid: state): {left}"
    return pids


def kill_leftovers(pidfile: Path) -> None:
    """After a failed test: kill whatever our bots left, so nothing lingers."""
    pids = read_pids(pidfile)
    for pid in pids["bot"] + pids["child"]:
        st = proc_stat(pid)
        if st is not None and st[0] != "Z":
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    time.sleep(0.05)
    reap_orphans(pids["child"])


# -- one match --------------------------------------------------------------------


@dataclass
class Run:
    result: MatchResult
    log: LogContents
    pids: dict[str, list[int]]
    stderr_log: Path

    @property
    def games(self) -> list[dict[str, Any]]:
        return self.log.games

    def forfeits(self) -> list[dict[str, Any]]:
        return [g["forfeit"] for g in self.games]

    def asked(self, game: dict[str, Any], seat: int = 0) -> int:
        """Decisions ``seat`` was asked for (not forced) in ``game``."""
        return sum(1 for s, _, forced, _ in game["decisions"] if s == seat and not forced)


async def play(tmp_path: Path, mode: str, *args: object, games: int = 2, max_restarts: int = 3,
               move: float | None = 1.0, startup: float = 2.0, illegal_retries: int = 0,
               stderr_cap: int = 1 << 20, recover: bool = False, program: bool = False) -> Run:
    """Play ``games`` games of the bot in ``mode`` (seat 0) against builtin:greedy and
    check what holds for every hostile bot. ``recover``: as ``--recover`` (a failed first
    start-up is a forfeit, not the end of the match: tests/failfast). ``program``: the
    opponent is a well-behaved bot process (``hostile_bot.py play``, named ``steady``)
    instead, so that every decision takes the referee's frame lane (both seats take
    request frames: referee/table/framelane.py)."""
    pidfile = tmp_path / "pids.txt"
    argv = [sys.executable, str(BOT), mode, str(pidfile), *map(str, args)]
    opponent, opponent_pids = "greedy", tmp_path / "opponent-pids.txt"
    if program:
        opponent = "steady"
        steady = [sys.executable, str(BOT), "play", str(opponent_pids)]
        specs = [parse_bot_spec(f"{NAME}={shlex.join(argv)}"),
                 parse_bot_spec(f"{opponent}={shlex.join(steady)}")]
    else:
        specs = [parse_bot_spec(f"{NAME}={shlex.join(argv)}"), parse_bot_spec("builtin:greedy")]
    config = MatchConfig(rules=make_rules("classic"), games=games, seed=4,
                         tc=TimeControl(move=move, startup=startup),
                         illegal_retries=illegal_retries, max_restarts=max_restarts)
    # Unsandboxed: the pid bookkeeping needs the bots' real pids and a pid file they can
    # write; the same attacks inside the sandbox are tests/sandbox/.
    options = SeatOptions(grace=GRACE, stderr_cap=stderr_cap, sandbox="none")
    try:
        with trio.fail_after(MATCH_LIMIT):
            result = await run_match_async(specs, config, log_dir=tmp_path, options=options,
                                           recover=recover)
        pids = assert_no_bot_left(pidfile)
        if program:
            assert len(assert_no_bot_left(opponent_pids)["bot"]) == 1  # never restarted
    except BaseException:
        kill_leftovers(pidfile)
        kill_leftovers(opponent_pids)
        raise

    assert not result.interrupted
    assert result.log_path is not None
    log = read_log(Path(result.log_path))
    assert log.error is None and log.footer is not None and not log.footer["interrupted"]
    # The match goes on to the requested number of games.
    assert result.played == games
    assert [g["game"] for g in log.games] == list(range(games))
    bad = [v for v in verify_log(log.header, log.games) if not v.ok]
    assert not bad, bad
    for g in log.games:
        assert g["players"] == [NAME, opponent]
        if g["termination"] in FORFEITS:
            # The forfeit names the bot; the opponent is unharmed.
            f = g["forfeit"]
            assert (f["seat"], f["bot"], f["kind"], g["durak"]) == (0, NAME, g["termination"], 0)
            assert g["reason"].startswith(f"{NAME} forfeited ({f['kind']}): ")
        else:
            assert g["forfeit"] is None
    assert result.bots[1].forfeits == {}
    (stderr_log,) = tmp_path.glob(f"*.seat0-{NAME}.stderr.log")
    return Run(result, log, pids, stderr_log)


def expect_forfeits(run: Run, kind: str) -> list[dict[str, Any]]:
    assert [g["termination"] for g in run.games] == [kind] * len(run.games)
    return run.forfeits()


def tail(evidence: dict[str, Any]) -> str:
    return "\n".join(evidence["stderr_tail"])


# -- crashes ----------------------------------------------------------------------


async def test_dies_before_the_handshake(tmp_path: Path) -> None:
    # Start fails (with --recover: else the match stops there, tests/failfast); a bot that
    # never completed a handshake is not restarted (the restart allowed is for a bot that
    # worked): games 0 to 2 are forfeits of that one process.
    run = await play(tmp_path, "die_early", games=3, max_restarts=1, recover=True)
    for f in expect_forfeits(run, "crash"):
        assert f["evidence"]["exit_code"] == 3
        assert "hostile: dying before the handshake" in tail(f["evidence"])
        assert f["decision"] == 0
    assert len(run.pids["bot"]) == 1
    assert run.stderr_log.read_text().count("dying before the handshake") == 1


async def test_dies_mid_game(tmp_path: Path) -> None:
    run = await play(tmp_path, "die_mid", 3, games=3, max_restarts=1)
    forfeits = expect_forfeits(run, "crash")
    for f in forfeits:
        assert f["evidence"]["exit_code"] == 7
        assert "hostile: crashing after 3 answers" in tail(f["evidence"])
        assert "exited with code 7" in f["reason"]
    # Games 0 and 1 (restarted once) crash after three answers; game 2 has no restart left.
    assert [run.asked(g) for g in run.games] == [3, 3, 0]
    assert len(run.pids["bot"]) == 2
    text = run.stderr_log.read_text()
    assert text.count("crashing after 3 answers") == 2
    assert "[durak-ref: bot restarted (start 2)]" in text


async def test_closes_stdout_and_keeps_running(tmp_path: Path) -> None:
    run = await play(tmp_path, "close_stdout", games=2)
    for f in expect_forfeits(run, "crash"):
        assert "closed its stdout (still running)" in f["reason"]
        assert f["evidence"]["exit_code"] is None
    assert len(run.pids["bot"]) == 2  # restarted for game 1


async def test_forks_a_child_that_holds_the_pipes_and_exits(tmp_path: Path) -> None:
    # No time limit at all: the referee must notice the exit although a child still
    # holds the bot's stdout, kill the child with the rest of the group, and go on.
    run = await play(tmp_path, "fork", 2, games=2, move=None)
    for g, f in zip(run.games, expect_forfeits(run, "crash"), strict=True):
        assert f["evidence"]["exit_code"] == 0
        assert "exited with code 0" in f["reason"]
        assert run.asked(g) == 2
    assert len(run.pids["bot"]) == 2 and len(run.pids["child"]) == 2


# -- silence and slowness -----------------------------------------------------------


async def test_never_answers_the_handshake(tmp_path: Path) -> None:
    run = await play(tmp_path, "mute", games=2, max_restarts=1, startup=1.0, recover=True)
    for f in expect_forfeits(run, "timeout"):
        assert "the handshake" in f["reason"]
        assert f["evidence"]["budget_s"] == 1.0
        assert 0.9 <= f["evidence"]["waited_s"] < 5.0
    assert len(run.pids["bot"]) == 1  # never started: not restarted


async def test_stops_answering_mid_game(tmp_path: Path) -> None:
    run = await play(tmp_path, "mute_mid", 2, games=2, move=0.5)
    for g, f in zip(run.games, expect_forfeits(run, "timeout"), strict=True):
        assert "within 0.500 s" in f["reason"]
        assert f["evidence"]["budget_s"] == 0.5
        assert 0.4 <= f["evidence"]["waited_s"] < 3.0
        assert run.asked(g) == 2
    assert len(run.pids["bot"]) == 2


async def test_answers_after_its_time_ran_out(tmp_path: Path) -> None:
    # The bot sleeps 3 s, then answers; the limit is 0.5 s. It is restarted before the
    # next game, so its late answer never reaches a later request.
    run = await play(tmp_path, "late", 3.0, games=2, move=0.5)
    for g, f in zip(run.games, expect_forfeits(run, "timeout"), strict=True):
        assert f["evidence"]["budget_s"] == 0.5
        assert 0.4 <= f["evidence"]["waited_s"] < 3.0
        assert run.asked(g) == 0
    assert len(run.pids["bot"]) == 2


async def test_ignores_sigterm_and_hangs(tmp_path: Path) -> None:
    run = await play(tmp_path, "ignore_term", games=2, move=0.5)
    for f in expect_forfeits(run, "timeout"):
        assert f["evidence"]["budget_s"] == 0.5
    assert len(run.pids["bot"]) == 2  # both SIGKILLed (checked by play)


# -- bad bytes and bad messages ---------------------------------------------------------


async def test_sends_random_bytes(tmp_path: Path) -> None:
    garbage = bytes([0xA7]) + random.Random(4).randbytes(255)
    run = await play(tmp_path, "garbage", garbage.hex(), games=2)
    for f in expect_forfeits(run, "protocol"):
        assert f["reason"].startswith(f"frame header says {int.from_bytes(garbage[:4], 'big')} bytes; "
                                      f"the limit is 1048576")
        assert f["evidence"]["bytes"] == garbage[:64].hex(" ") + " ..."
    assert len(run.pids["bot"]) == 2


async def test_sends_a_header_announcing_4_gib(tmp_path: Path) -> None:
    run = await play(tmp_path, "huge_header", games=2)
    for f in expect_forfeits(run, "protocol"):
        assert "frame header says 4294967295 bytes; the limit is 1048576" in f["reason"]
        assert f["evidence"]["bytes"] == "ff ff ff ff" + " 00" * 16


async def test_sends_invalid_msgpack(tmp_path: Path) -> None:
    run = await play(tmp_path, "bad_msgpack", games=2)
    for f in expect_forfeits(run, "protocol"):
        assert "not valid msgpack" in f["reason"]
        assert f["evidence"]["bytes"] == "00 00 00 03 c1 c1 c1"


async def test_sends_a_map_of_the_wrong_shape(tmp_path: Path) -> None:
    run = await play(tmp_path, "wrong_shape", games=2)
    for f in expect_forfeits(run, "protocol"):
        received = f["evidence"]["received"]
        assert received == {"type": "action", "id": received["id"], "move": "6S"}
        assert f"(request {received['id']})" in f["reason"]
        assert "action" in f["reason"]


async def test_answers_with_an_illegal_action(tmp_path: Path) -> None:
    run = await play(tmp_path, "illegal", games=2)
    for f in expect_forfeits(run, "illegal"):
        action = f["evidence"]["received"]
        assert action["type"] in ("attack", "throw_in", "cover")
        card = action["card"]
        assert not any(card in text for text in f["evidence"]["legal"])
        assert "illegal action" in f["reason"]
    # An illegal action is not a fault of the process: no restart.
    assert len(run.pids["bot"]) == 1


async def test_illegal_then_legal_with_retries(tmp_path: Path) -> None:
    # --on-illegal retry:2: every decision is first answered illegally, then legally.
    run = await play(tmp_path, "illegal_once", games=2, illegal_retries=2)
    for g in run.games:
        assert g["termination"] not in FORFEITS
        asked = run.asked(g)
        assert asked > 0
        assert len(g["retries"]) == asked
        assert all(r["seat"] == 0 and r["reason"].startswith("illegal action") for r in g["retries"])
    assert len(run.pids["bot"]) == 1
    assert "referee says: illegal: illegal action" in run.stderr_log.read_text()


async def test_stale_request_id_is_ignored(tmp_path: Path) -> None:
    # SPEC section 11: an action whose id is not the open request is ignored (error
    # "stale", not fatal); the right answer that follows counts.
    run = await play(tmp_path, "stale", games=2)
    for g in run.games:
        assert g["termination"] not in FORFEITS
    assert len(run.pids["bot"]) == 1
    assert "referee says: stale:" in run.stderr_log.read_text()


async def test_only_stale_request_ids_time_out(tmp_path: Path) -> None:
    run = await play(tmp_path, "stale_only", games=2, move=0.5)
    for g, f in zip(run.games, expect_forfeits(run, "timeout"), strict=True):
        assert run.asked(g) == 1  # the first answer of each process is right
        assert f["evidence"]["stale_answers"] == 1
        assert 0.4 <= f["evidence"]["waited_s"] < 3.0


# -- against a program bot: the frame lane --------------------------------------------


@pytest.mark.parametrize(("mode", "args", "kind"), [
    ("die_mid", (2,), "crash"),
    ("close_stdout", (), "crash"),
    ("mute_mid", (2,), "timeout"),
    ("late", (3.0,), "timeout"),
    ("stale_only", (), "timeout"),
    ("garbage", ((bytes([0xA7]) + random.Random(4).randbytes(255)).hex(),), "protocol"),
    ("huge_header", (), "protocol"),
    ("bad_msgpack", (), "protocol"),
    ("wrong_shape", (), "protocol"),
    ("illegal", (), "illegal"),
])
async def test_against_a_program_bot_every_misbehaviour_gets_the_same_verdict(
        tmp_path: Path, mode: str, args: tuple[object, ...], kind: str) -> None:
    """Between two bot processes every decision is first tried synchronously (the frame
    lane), and any answer that is not a canonical legal one in time goes on to the
    awaited path: the verdicts are those against builtin:greedy, and the well-behaved
    opponent is never harmed nor restarted."""
    run = await play(tmp_path, mode, *args, games=2, move=0.5, program=True)
    expect_forfeits(run, kind)


async def test_against_a_program_bot_stale_answers_are_only_ignored(tmp_path: Path) -> None:
    run = await play(tmp_path, "stale", games=2, program=True)
    assert all(g["termination"] not in FORFEITS for g in run.games)
    assert "referee says: stale:" in run.stderr_log.read_text()


# -- stderr -----------------------------------------------------------------------------


def _memory_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)  # pragma: no cover


async def test_floods_stderr_with_100_mb(tmp_path: Path) -> None:
    cap = 64 * 1024
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS (VmHWM)
    before = _memory_kb("VmRSS")
    run = await play(tmp_path, "flood", 100, games=2, startup=20.0, stderr_cap=cap)
    peak = _memory_kb("VmHWM")
    for g in run.games:
        assert g["termination"] not in FORFEITS
    assert len(run.pids["bot"]) == 1
    # The referee drained all 100 MiB (else the bot would block and time out), kept
    # ``cap`` bytes and noted the rest.
    data = run.stderr_log.read_bytes()
    note = (f"\n[durak-ref: stderr capped at {cap} bytes; {100 * 2**20 - cap} more bytes "
            f"were discarded]\n").encode()
    assert data == (b"x" * 1023 + b"\n") * 64 + note
    assert peak - before < 30 * 1024, f"the referee's peak RSS grew by {peak - before} kB"


# -- the command line, interrupted ------------------------------------------------------


def _games_in(log: Path) -> int:
    try:
        return sum(1 for line in log.read_text().splitlines() if line.startswith('{"type":"game"'))
    except OSError:
        return 0


def test_cli_match_interrupted_with_sigint(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids.txt"
    bot = shlex.join([sys.executable, str(BOT), "play", str(pidfile), "0.02"])
    logs = tmp_path / "logs"
    proc = subprocess.Popen(
        [str(DURAK_REF), "match", f"slow={bot}", "builtin:greedy", "--games", "1000",
         "--log-dir", str(logs), "--json", "--startup-time", "10", "--sandbox", "none"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals())
    try:
        deadline = time.monotonic() + MATCH_LIMIT
        while not any(_games_in(p) >= 2 for p in logs.glob("*.jsonl")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the match did not get going"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=MATCH_LIMIT)
        assert proc.returncode == 130, err.decode()
        assert b"interrupted" in err
        assert json.loads(out)["interrupted"] is True
        assert len(assert_no_bot_left(pidfile)["bot"]) == 1
    except BaseException:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        kill_leftovers(pidfile)
        raise

    (log_path,) = logs.glob("*.jsonl")
    log = read_log(log_path)
    assert log.error is None
    assert log.footer is not None and log.footer["interrupted"] is True
    assert 2 <= len(log.games) < 1000
    assert all(v.ok for v in verify_log(log.header, log.games))
    replay = subprocess.run([str(DURAK_REF), "replay", str(log_path), "--verify"],
                            cwd=ROOT, capture_output=True, timeout=MATCH_LIMIT)
    assert replay.returncode == 0, replay.stderr.decode()
    assert f"{len(log.games)} of {len(log.games)} games verified".encode() in replay.stdout
