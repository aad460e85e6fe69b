"""Fail fast, recover on request: a bot that fails its first start-up
stops match, tournament, sprt and ladder run with exit 2, naming the bot, its command and
its stderr; ``--recover`` plays on with forfeits; a bot that fails later is a game result.
Summaries show forfeits by kind and the stderr logs, and warn loudly about a bot that
forfeited every game. Real CLI runs: the bot process is the point."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from referee.console.jsonout import strict_loads
from tests.support import cli, proc_stat, standing

pytestmark = pytest.mark.process

BOT = Path(__file__).parent / "bots" / "broken_bot.py"
PY = sys.executable


def broken(mode: str, *args: str) -> str:
    return " ".join([PY, str(BOT), mode, *args])


MISSING = f"{PY} /nonexistent/durak-bot.py"

#: (bot command, extra options, what its stderr tail must show, forfeit kind)
FIRST_START_FAILURES = {
    "missing script": (MISSING, [], "can't open file", "crash"),
    "exit 1 at once": (broken("exit1"), [], "cannot load weights.bin", "crash"),
    "garbage hello": (broken("garbage"), [], "broken-bot garbage: starting", "protocol"),
    "version mismatch": (broken("version"), [], "broken-bot version: starting", "protocol"),
    # 5 s, not less: the mute bot must have started and printed its line before the
    # start-up limit ends it, also on a loaded machine (the suite runs on every core).
    "handshake timeout": (broken("mute"), ["--startup-time", "5"], "broken-bot mute: starting", "timeout"),
}


def assert_names_the_failure(stderr: str, name: str, command: str, tail: str) -> None:
    assert f"bot {name} failed its first start-up" in stderr
    assert f"command: {command}" in stderr
    assert tail in stderr  # the bot's own last words
    assert "--recover" in stderr  # and how to play on anyway


@pytest.mark.parametrize("case", FIRST_START_FAILURES, ids=list(FIRST_START_FAILURES))
def test_match_stops_with_exit_2_on_a_failed_first_start_up(tmp_path: Path, case: str) -> None:
    command, extra, tail, kind = FIRST_START_FAILURES[case]
    r = cli("match", "builtin:greedy", f"victim={command}", "-n", "3", "--log-dir", tmp_path / "logs",
            *extra, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert_names_the_failure(r.stderr, "victim", command, tail)
    assert f"({kind})" in r.stderr
    assert "durak" not in r.stdout  # no verdict at all
    log = r.stderr.split("stderr log: ")[1].split(";")[0]
    assert tail in Path(tmp_path, log).read_text() if not Path(log).is_absolute() else Path(log).read_text()
    assert not list((tmp_path / "logs").glob("*.jsonl"))  # no match log of games never played


def test_a_version_mismatch_is_named_as_one_in_the_exit_message(tmp_path: Path) -> None:
    """SPEC section 4: the bot that answers with a version the referee does not speak is
    told so in words, and the run's message says it the same way (it said "protocol:
    the bot speaks protocol version 99; ...", read as a malformed hello)."""
    command = broken("version_says_why")
    r = cli("match", "builtin:greedy", f"victim={command}", "-n", "3", "--log-dir", tmp_path / "logs",
            cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert_names_the_failure(r.stderr, "victim", command, "broken-bot version_says_why: starting")
    assert ("failed its first start-up (protocol): version mismatch: the bot speaks protocol 99, "
            "the referee 1;") in r.stderr


def test_the_exit_message_quotes_what_a_refused_bot_said_on_stderr_before_it_exited(
        tmp_path: Path) -> None:
    """A bot that reads the referee's fatal error and says why on stderr before it exits
    (SPEC section 4: it should exit) is heard: the fail-fast message quotes those lines.
    The referee killed it at once, so the message said "(nothing on stderr)": a bot
    that took a moment (here 1 s) never said anything. Now its stdin is closed and it
    has the grace period to exit (SPEC section 11); a generous grace here, so that no
    scheduling delay on a loaded machine can decide the test (the grace only bounds the
    wait: the bot exits after its second). Confined as the CLI confines it (auto)."""
    import trio

    from referee.seats.players import BotFailure, BotSpec
    from referee.seats.process import ProcessPlayer
    from referee.seats.sandbox import Sandbox
    from referee.table.failfast import BotFirstStartError, first_start_error

    log = tmp_path / "victim.stderr.log"
    argv = (PY, str(BOT), "version_says_why", "1")

    async def main() -> BotFirstStartError:
        player = ProcessPlayer("victim", BotSpec("command", "victim", argv), grace=30.0,
                               stderr_path=log, sandbox=Sandbox("auto", warn=False))
        async with trio.open_nursery() as nursery:
            with pytest.raises(BotFailure) as failed:
                await player.start(nursery)
            error = await first_start_error(player, failed.value)
            await player.close()
        return error

    error = trio.run(main)
    said = ["broken-bot version_says_why: starting",
            "broken-bot: the referee refused me: version mismatch: the bot speaks protocol 99, "
            "the referee 1",
            "broken-bot: exiting"]
    assert error.stderr_tail == said
    assert "stderr tail: " + " | ".join(said) + ";" in str(error)
    assert log.read_text().splitlines() == said


def test_match_with_recover_plays_on_and_warns_loudly(tmp_path: Path) -> None:
    r = cli("match", "builtin:greedy", f"victim={broken('exit1')}", "-n", "3", "--recover",
            "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "WARNING: victim forfeited every one of its 3 games (crash 3)" in r.stdout
    assert "victim: forfeits crash 3 (of 3 games); stderr: " in r.stdout
    stderr_log = r.stdout.split("victim: forfeits crash 3 (of 3 games); stderr: ")[1].split("\n")[0]
    assert "cannot load weights.bin" in Path(tmp_path, stderr_log).read_text()
    assert "greedy: forfeits none (of 3 games)" in r.stdout

    j = cli("match", "builtin:greedy", f"victim={broken('exit1')}", "-n", "2", "--recover", "--json",
            "--log-dir", tmp_path / "logs", cwd=tmp_path)
    data = strict_loads(j.stdout)
    victim = data["standings"][1]
    (stderr_log,) = victim["stderr_logs"]
    assert victim["forfeited_all"] is True and victim["forfeits"] == {"crash": 2}
    assert "cannot load" not in stderr_log and Path(tmp_path, stderr_log).exists()
    assert data["standings"][0]["forfeited_all"] is False
    assert len(data["warnings"]) == 1 and "victim" in data["warnings"][0]


def test_with_recover_a_bot_that_never_started_is_not_restarted_game_after_game(tmp_path: Path) -> None:
    """Restarts are for a bot that worked and then failed: one that never completed a
    handshake is started once, and its games are forfeits at once (each restart waited
    out the start-up limit again: 40 games took a minute)."""
    r = cli("match", "builtin:greedy", f"victim={broken('mute')}", "-n", "20", "--recover",
            "--startup-time", "3", "--log-dir", tmp_path / "logs", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    victim = strict_loads(r.stdout)["standings"][1]
    assert victim["forfeits"] == {"timeout": 20}
    stderr_log = Path(tmp_path, *victim["stderr_logs"]).read_text()
    assert stderr_log.count("broken-bot mute: starting") == 1 and "restarted" not in stderr_log


def test_a_bot_that_crashes_in_game_3_is_a_game_result_not_an_early_stop(tmp_path: Path) -> None:
    r = cli("match", "builtin:greedy", f"crasher={broken('crash_at', '3')}", "-n", "6", "--json",
            "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = strict_loads(r.stdout)
    assert data["games"] == 6
    crasher = data["standings"][1]
    assert crasher["forfeits"].get("crash", 0) >= 1 and crasher["forfeited_all"] is False
    assert data["warnings"] == []


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_tournament_stops_resumably_and_resume_with_recover_finishes(tmp_path: Path,
                                                                      concurrency: str) -> None:
    db = tmp_path / "t.sqlite"
    bots = ["--bot", "a=builtin:greedy", "--bot", f"b={broken('exit1')}", "--bot", "c=builtin:random"]
    r = cli("tournament", *bots, "--games", "2", "--concurrency", concurrency, "--db", db,
            "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert_names_the_failure(r.stderr, "b", broken("exit1"), "cannot load weights.bin")
    assert "resume with durak-ref tournament --resume " in r.stderr
    tid = r.stderr.split("--resume ")[1].split()[0]
    # Resuming without --recover stops again, just as fast.
    again = cli("tournament", "--resume", tid, "--db", db, "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert again.returncode == 2 and "bot b failed its first start-up" in again.stderr
    done = cli("tournament", "--resume", tid, "--recover", "--db", db, "--log-dir", tmp_path / "logs",
               "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = strict_loads(done.stdout)
    assert data["games"] == 6  # from the store: every game of the 3 tables
    b = standing(data, "b")
    assert b["forfeited_all"] is True and b["forfeits"] == {"crash": 4}
    assert standing(data, "a")["forfeited_all"] is False
    assert any("WARNING: b forfeited every one of its 4 games" in w for w in data["warnings"])
    assert b["stderr_logs"] and all(Path(p).exists() or Path(tmp_path, p).exists()
                                    for p in b["stderr_logs"])


def test_tournament_text_summary_shows_forfeits_and_stderr_logs(tmp_path: Path) -> None:
    r = cli("tournament", "--bot", "a=builtin:greedy", "--bot", f"b={broken('exit1')}", "--games", "2",
            "--recover", "--db", tmp_path / "t.sqlite", "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "WARNING: b forfeited every one of its 2 games (crash 2)" in r.stdout
    assert r.stdout.index("WARNING") < r.stdout.index("rating")  # before the verdict
    assert "b: forfeits crash 2 (of 2 games); stderr: " in r.stdout
    assert ".stderr.log" in r.stdout.split("b: forfeits crash 2")[1]
    assert "a: forfeits none (of 2 games)" in r.stdout


def test_sprt_with_a_broken_bot_stops_instead_of_an_elo_of_minus_infinity(tmp_path: Path) -> None:
    r = cli("sprt", "builtin:greedy", MISSING, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert_names_the_failure(r.stderr, "B-durak-bot", MISSING, "can't open file")
    assert "inf" not in r.stdout + r.stderr.split("command:")[0]
    assert "H0 accepted" not in r.stdout


def test_sprt_with_recover_names_the_bots_and_warns_in_strict_json(tmp_path: Path) -> None:
    r = cli("sprt", "builtin:greedy", MISSING, "--recover", "--max-pairs", "300", "--json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    data = strict_loads(r.stdout)  # an Elo of -inf would be "-Infinity" here: not JSON
    assert data["elo"] is None
    assert data["a"] == {"name": "A-greedy", "command": "builtin:greedy"}
    assert data["b"] == {"name": "B-durak-bot", "command": MISSING}
    assert data["opponents"] == []
    assert standing(data, "B-durak-bot")["forfeited_all"] is True
    assert standing(data, "A-greedy")["forfeits"] == {}
    assert data["warnings"] and "B-durak-bot forfeited every one" in data["warnings"][0]

    text = cli("sprt", "builtin:greedy", MISSING, "--recover", "--max-pairs", "300", cwd=tmp_path)
    assert "WARNING: B-durak-bot forfeited every one" in text.stdout
    assert text.stdout.index("WARNING") < text.stdout.index("accepted")
    assert "-inf" not in text.stdout and "Elo not finite" in text.stdout
    assert "B-durak-bot: forfeits crash" in text.stdout


def test_ladder_run_stops_on_a_failed_first_start_up_and_recovers_on_request(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    assert cli("ladder", "add", "--db", db, "g", "builtin:greedy", cwd=tmp_path).returncode == 0
    assert cli("ladder", "add", "--db", db, "x", broken("exit1"), cwd=tmp_path).returncode == 0
    r = cli("ladder", "run", "--db", db, "--games", "2", "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert_names_the_failure(r.stderr, "x", broken("exit1"), "cannot load weights.bin")
    ok = cli("ladder", "run", "--db", db, "--games", "2", "--recover", "--log-dir", tmp_path / "logs",
             cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "WARNING: x forfeited every one of its 2 games" in ok.stdout
    assert "x: forfeits crash 2 (of 2 games)" in ok.stdout


def test_a_tournament_with_the_default_store_in_the_log_dir_starts_its_sandboxed_bots(
        tmp_path: Path) -> None:
    """Found by failing fast: with the default --db logs/durak.sqlite inside the default
    --log-dir logs, bwrap could not hide the store inside the already hidden log dir, so
    every sandboxed program bot failed to start and silently forfeited every game."""
    greedy = f"{PY} {Path(__file__).parents[2] / 'examples' / 'python' / 'greedy_bot.py'}"
    r = cli("tournament", "--bot", "a=builtin:greedy", "--bot", f"b={greedy}", "--games", "2", "--json",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = strict_loads(r.stdout)
    assert all(row["forfeits"] == {} for row in data["standings"])


def _logged_file(where: str, cwd: Path) -> Path:
    path = Path(where)
    return path if path.is_absolute() else cwd / path


def test_sprt_summary_and_json_name_each_program_bots_stderr_log(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    r = cli("sprt", "builtin:greedy", f"x={broken('exit1')}", "--recover", "--max-pairs", "2",
            "--db", tmp_path / "s.sqlite", "--log-dir", logs, "--json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    data = strict_loads(r.stdout)
    (log,) = standing(data, "B-x")["stderr_logs"][:1]  # sprt names the bots A-... and B-...
    assert "cannot load weights.bin" in _logged_file(log, tmp_path).read_text()
    assert _logged_file(log, tmp_path).parent == logs  # in the run's log dir
    assert standing(data, "A-greedy")["stderr_logs"] == []  # a builtin bot has no process, no log

    text = cli("sprt", "builtin:greedy", f"x={broken('exit1')}", "--recover", "--max-pairs", "2",
               "--db", tmp_path / "s.sqlite", "--log-dir", logs, cwd=tmp_path)
    line = next(x for x in text.stdout.splitlines() if x.startswith("B-x: forfeits crash"))
    assert "not logged" not in line and ".stderr.log" in line
    assert "A-greedy: forfeits none" in text.stdout


def test_ladder_run_summary_and_json_name_each_program_bots_stderr_log(tmp_path: Path) -> None:
    db, logs = tmp_path / "l.sqlite", tmp_path / "logs"
    assert cli("ladder", "add", "--db", db, "g", "builtin:greedy", cwd=tmp_path).returncode == 0
    assert cli("ladder", "add", "--db", db, "x", broken("exit1"), cwd=tmp_path).returncode == 0
    r = cli("ladder", "run", "--db", db, "--games", "2", "--recover", "--log-dir", logs, "--json",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = strict_loads(r.stdout)
    assert data["log"] and _logged_file(data["log"], tmp_path).parent == logs
    (log, *_) = standing(data, "x", "this_run")["stderr_logs"]
    assert "cannot load weights.bin" in _logged_file(log, tmp_path).read_text()
    assert standing(data, "g", "this_run")["stderr_logs"] == []

    text = cli("ladder", "run", "--db", db, "--games", "2", "--recover", "--log-dir", logs,
               cwd=tmp_path)
    line = next(x for x in text.stdout.splitlines() if x.startswith("x: forfeits crash"))
    assert "not logged" not in line and ".stderr.log" in line


# -- a hostile bot whose forked child keeps its pipes open through the failed start-up

FORKING_BOT = Path(__file__).parent / "bots" / "forking_bot.py"


def needs_bwrap() -> None:
    """Skip, visibly, without bubblewrap; but never on CI (CI=true), which installs it."""
    if shutil.which("bwrap") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but bubblewrap (bwrap) is not installed")
        pytest.skip("bubblewrap (bwrap) not installed: apt-get install bubblewrap")


def processes_with(marker: str) -> list[int]:
    """The pids of every live (not zombie) process whose command line names ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        stat = proc_stat(int(entry.name))
        if marker.encode() in cmdline and stat is not None and stat[0] != "Z":
            found.append(int(entry.name))
    return found


#: mode -> (the failure kind, the bot's last words the message must quote)
FORKING_FAILURES = {
    "garbage": ("protocol", "forking-bot: answering with garbage"),
    "exit1": ("crash", "forking-bot: cannot load weights.bin"),
}


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
@pytest.mark.parametrize("mode", FORKING_FAILURES)
def test_a_failed_start_up_whose_forked_child_holds_stderr_stops_at_once_and_leaves_nothing(
        tmp_path: Path, mode: str, sandbox: str) -> None:
    """The child sleeps for 10 minutes holding stdout and stderr. The referee must not
    wait for their EOF past its grace period: with a start-up limit of 5 minutes, a
    'timeout' kind (or the CLI's own 60 s limit) would mean it waited; it must name the
    real failure, quote the bot's last words, and kill the child with the bot."""
    if sandbox == "bwrap":
        needs_bwrap()
    kind, last_words = FORKING_FAILURES[mode]
    marker = f"durak-ref-test-child-{tmp_path.name}-{mode}-{sandbox}"
    command = f"{PY} {FORKING_BOT} {mode} {marker}"
    r = cli("match", "builtin:greedy", f"victim={command}", "-n", "3", "--startup-time", "300",
            "--sandbox", sandbox, "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert_names_the_failure(r.stderr, "victim", command, last_words)
    assert f"({kind})" in r.stderr and "forking-bot " + mode + ": starting" in r.stderr
    assert processes_with(marker) == []  # the child died with the bot


def test_a_child_that_left_the_process_group_cannot_turn_the_bots_exit_into_a_timeout(
        tmp_path: Path) -> None:
    """Unsandboxed, a child that calls setsid() escapes the group kill (README, Threat
    model: only the sandbox kills such processes) and holds the pipes for good. The
    referee still reports the bot's exit as the crash it is, once its grace periods are
    over, instead of waiting out the start-up limit and calling it a timeout."""
    marker = f"durak-ref-test-child-{tmp_path.name}-escape"
    command = f"{PY} {FORKING_BOT} escape_exit1 {marker}"
    try:
        r = cli("match", "builtin:greedy", f"victim={command}", "-n", "3", "--startup-time", "300",
                "--sandbox", "none", "--log-dir", tmp_path / "logs", cwd=tmp_path)
        assert r.returncode == 2, r.stdout + r.stderr
        assert_names_the_failure(r.stderr, "victim", command, "forking-bot: cannot load weights.bin")
        assert "(crash): the bot exited with code 1" in r.stderr
    finally:
        for pid in processes_with(marker):  # what the threat model says may be left
            os.kill(pid, signal.SIGKILL)


def test_in_the_sandbox_even_a_child_that_left_the_process_group_dies_with_the_bot(
        tmp_path: Path) -> None:
    needs_bwrap()
    marker = f"durak-ref-test-child-{tmp_path.name}-escape-bwrap"
    command = f"{PY} {FORKING_BOT} escape_exit1 {marker}"
    r = cli("match", "builtin:greedy", f"victim={command}", "-n", "3", "--startup-time", "300",
            "--sandbox", "bwrap", "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert r.returncode == 2 and "(crash): the bot exited with code 1" in r.stderr, r.stderr
    assert processes_with(marker) == []
