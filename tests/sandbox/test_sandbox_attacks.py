"""The sandbox: real hostile bot processes inside the real bubblewrap
sandbox, one attack each, through the real CLI.

Each bot (``bots/attack_bot.py MODE``) plays legal random moves and tries one attack,
reporting what it saw as ``ATTACK {json}`` lines on its stderr, which the referee keeps
in the bot's stderr log. Every test checks that the attack failed AND that the run ended
normally (exit 0, every game played, no forfeit). Where the attack is only meaningful if
the target would otherwise be visible (tmp_path lives under /tmp, which the sandbox
masks anything), the test binds tmp_path back in with ``--bind``: the hidden paths must
stay hidden even then. Controls with ``--sandbox none`` show the attacks are real.

Skipped, with the reason shown, only where bwrap is missing (CI installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support import LONG_TIMEOUT_S, cli
from support import attack_reports as attacks

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("bwrap") is None,
                       reason="bubblewrap (bwrap) not installed: apt-get install bubblewrap"),
]

BOT = Path(__file__).resolve().parent / "bots" / "attack_bot.py"
PY = sys.executable


def bot(mode: str, *args: object) -> str:
    return " ".join([PY, str(BOT), mode, *map(str, args)])




def match(tmp_path: Path, *bots: str, games: int = 2, extra: tuple[str, ...] = (),
          cwd: Path | None = None, logs: Path | None = None) -> tuple[dict[str, Any], Path, str]:
    """Play a match through the CLI; check it ended normally. (summary, log dir, stderr)"""
    logs = logs or tmp_path / "logs"
    proc = cli("match", *bots, "--games", games, "--log-dir", logs, "--json", "--move-time", 10,
               *extra, cwd=cwd or tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["games"] == games and not summary["forfeit_details"], summary
    return summary, logs, proc.stderr


def one(reports: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    found = [r for r in reports if r["mode"] == mode]
    assert found, f"the {mode} bot reported nothing: {reports}"
    return found[0]


# -- what a sandboxed bot cannot see ---------------------------------------------------------


def test_a_bot_sees_no_other_process_and_not_the_seed_on_the_referees_command_line(
        tmp_path: Path) -> None:
    secret = "918273645"
    summary, logs, _ = match(tmp_path, bot("scan", secret), "builtin:greedy",
                             extra=("--seed", secret))
    report = one(attacks(logs), "scan")
    assert report["found"] == [] and report["others"] == [], report  # its PID namespace only
    assert report["me"] == 1
    assert summary["sandbox"] == "bwrap"
    header = json.loads(next(logs.glob("match-*.jsonl")).read_text().splitlines()[0])
    assert header["sandbox"] == "bwrap"


def test_unsandboxed_the_same_bot_reads_the_seed_and_a_warning_says_so(tmp_path: Path) -> None:
    """The control: without the sandbox the attack works (and the run still plays)."""
    secret = "918273645"
    summary, logs, err = match(tmp_path, bot("scan", secret), "builtin:greedy",
                               extra=("--seed", secret, "--sandbox", "none"))
    assert one(attacks(logs), "scan")["found"], "unsandboxed, the referee's argv is readable"
    assert summary["sandbox"] == "none"
    warnings = [line for line in err.splitlines() if "unsandboxed" in line]
    assert len(warnings) == 1, err


def test_the_log_dir_stays_hidden_and_unwritable_even_under_a_bound_parent(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "earlier.jsonl").write_text("{}\n")
    _, logs, _ = match(tmp_path, bot("dir", logs), "builtin:greedy", logs=logs,
                       extra=("--bind", str(tmp_path)))
    report = one(attacks(logs), "dir")
    assert report["listed"] == [True, []], report  # an empty stand-in, not the real dir
    assert report["wrote"][0] is False, report
    assert not (logs / "planted.txt").exists()
    assert (logs / "earlier.jsonl").read_text() == "{}\n"


def test_a_bot_cannot_read_or_change_the_store(tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite"
    logs = tmp_path / "logs"
    proc = cli("tournament", "--bot", f"mallory={bot('store', db)}", "--bot", "rand=builtin:random",
               "--games", "4", "--db", db, "--log-dir", logs, "--bind", tmp_path, "--json",
               cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sandbox"] == "bwrap"
    reports = [r for r in attacks(logs) if r["mode"] == "store"]
    assert reports
    for report in reports:
        # /dev/null stands in for it (unreadable on bwrap's nodev bind, or empty)
        assert report["raw"] == [True, ""] or report["raw"][0] is False, report
        assert report["read"][0] is False and report["delete"][0] is False, report
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 4


def test_a_bot_cannot_read_another_bots_stderr_log_while_the_match_runs(tmp_path: Path) -> None:
    secret = "AS-KS-QS"
    logs = tmp_path / "logs"
    logs.mkdir()
    _, logs, _ = match(tmp_path, f"peeker={bot('peek', logs)}", f"chatty={bot('chat', secret)}",
                       logs=logs, extra=("--bind", str(tmp_path)))
    chatty = [p for p in logs.glob("*.stderr.log") if "chatty" in p.name]
    assert chatty and secret in chatty[0].read_text()  # there was something to read
    assert [r for r in attacks(logs) if r["mode"] == "peek"] == []


def test_a_bot_has_no_network(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        _, logs, _ = match(tmp_path, bot("connect", listener.getsockname()[1]), "builtin:greedy")
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    report = one(attacks(logs), "connect")
    assert report["result"][0] is False, report


def test_a_bot_writes_only_to_its_private_scratch(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    _, logs, _ = match(tmp_path, bot("write"), "builtin:greedy", cwd=work)
    report = one(attacks(logs), "write")
    assert report["results"] == {"cwd": False, "own_dir": False, "root": False, "var_tmp": False,
                                 "home": True}, report
    assert report["home"] == report["tmpdir"] == "/tmp"
    assert list(work.iterdir()) == [] and not list(BOT.parent.glob("planted-*"))


def _tagged(tag: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                pass
    return out


def test_a_setsid_double_fork_daemon_dies_with_the_bot(tmp_path: Path) -> None:
    tag = f"durak-daemon-{os.getpid()}-{time.monotonic_ns()}"
    _, logs, _ = match(tmp_path, bot("daemon", tag), "builtin:greedy")
    assert one(attacks(logs), "daemon")["started"] is True
    deadline = time.monotonic() + 5.0  # the kernel kills the namespace; allow it a moment
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _tagged(tag)
    for pid in left:  # never leave one behind, even when the test fails
        os.kill(pid, 9)
    assert left == [], "the daemon outlived the match"


def test_fresh_bots_start_with_an_empty_scratch_every_game(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    proc = cli("tournament", "--bot", f"memo={bot('memo')}", "--bot", "rand=builtin:random",
               "--games", "4", "--fresh-bots", "--db", tmp_path / "s.sqlite", "--log-dir", logs,
               "--json", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["sandbox"] == "bwrap" and data["duplicates"] == "page-cache"
    reports = [r for r in attacks(logs) if r["mode"] == "memo"]
    assert len(reports) >= 4  # one process per game
    assert [r["found"] for r in reports] == [False] * len(reports)


def test_bind_makes_a_data_file_readable(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "work").mkdir()
    data = tmp_path / "data" / "book.txt"
    data.write_text("opening book")
    # The files in its command bring their project dirs; this one is in none of them.
    _, logs, _ = match(tmp_path, bot("read", f"at={data}"), "builtin:greedy",
                       logs=tmp_path / "a", cwd=tmp_path / "work")
    assert one(attacks(logs), "read")["result"][0] is False  # /tmp is private in the sandbox
    _, logs, _ = match(tmp_path, bot("read", f"at={data}"), "builtin:greedy", logs=tmp_path / "b",
                       cwd=tmp_path / "work", extra=("--bind", str(data)))
    assert one(attacks(logs), "read")["result"] == [True, "opening book"]


# -- the user's options ----------------------------------------------------------------------


def test_sandbox_bwrap_without_bwrap_is_the_users_error(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # no bwrap on PATH
    import subprocess

    from support import DURAK_REF
    args = [str(DURAK_REF), "match", bot("memo"), "builtin:greedy", "--no-log", "--games", "1"]
    proc = subprocess.run([*args, "--sandbox", "bwrap"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "install bubblewrap" in proc.stderr, proc.stderr
    # auto: one warning line, and the match is played.
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines() if "unsandboxed" in line] == [
        "durak-ref: bots run unsandboxed: bwrap not found on PATH; install bubblewrap "
        "(Debian/Ubuntu: apt-get install bubblewrap)"]


def test_bind_of_a_missing_path_is_the_users_error(tmp_path: Path) -> None:
    proc = cli("match", bot("write"), "builtin:greedy", "--no-log", "--bind", tmp_path / "nope",
               cwd=tmp_path)
    assert proc.returncode == 2 and "--bind" in proc.stderr and "no such file" in proc.stderr


def test_unsandboxed_duplicates_warn_that_a_bot_could_remember(tmp_path: Path) -> None:
    proc = cli("tournament", "--bot", f"w={bot('memo')}", "--bot", "rand=builtin:random",
               "--games", "2", "--sandbox", "none", "--db", tmp_path / "s.sqlite", "--log-dir",
               tmp_path / "logs", "--json", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["duplicates"] == "unsound"
    assert "could remember the first seat rotation" in proc.stderr
    header = json.loads(next((tmp_path / "logs").glob("tournament-*.jsonl")).read_text()
                        .splitlines()[0])
    assert header["sandbox"] == "none" and header["duplicates"] == "unsound"


# -- the bot stays alive: die-with-parent and the forking thread ------------------------------


def test_a_sandboxed_bot_still_plays_long_after_its_start(tmp_path: Path) -> None:
    """bwrap --die-with-parent kills the bot when the *thread* that forked it exits. The
    bot must be forked by a thread that lives as long as the referee: this bot answers
    its first request 13 s after its start, later than an idle trio worker thread lives
    (about 10 s), with nothing else going on in the referee meanwhile. Real time is the
    point here; the only test of this kind."""
    summary, logs, _ = match(tmp_path, bot("sleep", 13), "builtin:greedy", games=1,
                             extra=("--move-time", "60", "--sandbox", "bwrap"))
    assert one(attacks(logs), "sleep")["slept"] == 13
    assert summary["standings"][0]["forfeits"] == {}


# -- every command that starts bots ----------------------------------------------------------


def test_worker_processes_sandbox_their_bots_and_hide_the_logs_and_store(tmp_path: Path) -> None:
    """--concurrency 2: the bots run in worker processes, which get the parent's resolved
    sandbox over their pipe (the log dir and store stay hidden there too)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    proc = cli("tournament", "--bot", f"snoop={bot('dir', logs)}", "--bot", f"thief={bot('store', tmp_path / 's.sqlite')}",
               "--bot", "rand=builtin:random", "--games", "2", "--concurrency", "2",
               "--db", tmp_path / "s.sqlite", "--log-dir", logs, "--bind", tmp_path, "--json",
               cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["games"] == 6
    reports = attacks(logs)
    dirs = [r for r in reports if r["mode"] == "dir"]
    stores = [r for r in reports if r["mode"] == "store"]
    assert dirs and stores
    assert all(r["listed"] == [True, []] and r["wrote"][0] is False for r in dirs), dirs
    assert all(r["read"][0] is False and r["delete"][0] is False for r in stores), stores


def test_the_tournament_config_sets_the_sandbox_and_binds(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "book.txt").write_text("from the config")
    (tmp_path / "work").mkdir()
    config = tmp_path / "t.toml"
    config.write_text(f'''games = 2
sandbox = "bwrap"
bind = ["data"]
[[bots]]
name = "reader"
command = "{bot('read', f'at={tmp_path}/data/book.txt')}"
cwd = "work"
[[bots]]
name = "rand"
command = "builtin:random"
''')
    logs = tmp_path / "logs"
    proc = cli("tournament", "--config", config, "--db", tmp_path / "s.sqlite", "--log-dir", logs,
               "--json", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sandbox"] == "bwrap"
    assert one(attacks(logs), "read")["result"] == [True, "from the config"]
    config.write_text('sandbox = "docker"\n[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
                      '[[bots]]\nname = "b"\ncommand = "builtin:greedy"\n')
    proc = cli("tournament", "--config", config, "--db", tmp_path / "s2.sqlite", cwd=tmp_path)
    assert proc.returncode == 2 and "--sandbox 'docker'" in proc.stderr, proc.stderr


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_sprt_and_check_bot_sandbox_their_bots(tmp_path: Path) -> None:
    proc = cli("sprt", bot("write"), "builtin:random", "--max-pairs", "2", "--sandbox", "bwrap",
               "--json", cwd=tmp_path, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    status = json.loads(proc.stdout)
    assert status["sandbox"] == "bwrap" and status["duplicates"] == "page-cache"
    # The write attack planted nothing in its cwd (logs/: the run's own log and store).
    assert [p.name for p in tmp_path.iterdir()] == ["logs"]
    proc = cli("check-bot", f"{PY} {Path(__file__).resolve().parents[2] / 'examples/python/greedy_bot.py'}",
               "--games", "2", "--sandbox", "bwrap", "--json", cwd=tmp_path, timeout=180)
    assert json.loads(proc.stdout)["settings"]["sandbox"] == "bwrap", proc.stderr


def test_bench_match_compares_the_sandbox_with_none(tmp_path: Path) -> None:
    """The measurement exists and is complete (its numbers are never asserted)."""
    proc = cli("bench", "match", "--sandbox", "both", "--games", "2", "--starts", "2", "--cpu", "-1",
               "--json", cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {m: r["sandbox"] for m, r in data["runs"].items()} == {"none": "none", "bwrap": "bwrap"}
    for run in data["runs"].values():
        assert run["startup_ms_median"] > 0 and run["decision_us_mean"] > 0
    assert set(data["ratio_bwrap_vs_none"]) == {"startup_ms_median", "decision_us_mean"}
