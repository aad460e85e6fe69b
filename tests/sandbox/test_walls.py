"""The sandbox's walls against the machine: kernel settings, the uid outside, unix
sockets, what of the filesystem a bot sees, and the environment it inherits.

Real hostile bots (``bots/attack_bot.py``) under the real sandbox, through the real CLI
with default options; each attack is shown to work with ``--sandbox none`` where that is
cheap (the wall is what stops it). Kernel settings are only ever opened for writing,
never written. Skipped, with the reason shown, where bwrap is missing (CI installs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_sandbox_attacks import BOT, PY, attacks, bot, match, one

from referee.seats.uids import uid_range
from support import DURAK_REF, cli

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) not installed: apt-get install bubblewrap")

ROOT = Path(__file__).resolve().parents[2]
AS_ROOT = os.geteuid() == 0
NO_CAPS = "0000000000000000"


def _tagged_bot(tag: str) -> int | None:
    """The pid of the bot process whose argv holds ``tag`` as a word (not bwrap's, not the
    referee's, whose argv holds the whole command as one word)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if tag.encode() in words and os.path.basename(words[0]).startswith(b"python"):
            return int(entry.name)
    return None


def _status(pid: int) -> dict[str, str]:
    text = Path(f"/proc/{pid}/status").read_text()
    return {k: v.strip() for k, v in (line.split(":", 1) for line in text.splitlines() if ":" in line)}


def _kernel_attack(tmp_path: Path, *extra: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The kernel bot's report, and its process's status as the host sees it."""
    tag = f"durak-kernel-{os.getpid()}-{time.monotonic_ns()}"
    go = tmp_path / "go"
    go.mkdir(mode=0o755)
    logs = tmp_path / "logs"
    args = [str(DURAK_REF), "match", bot("kernel", tag, go), "builtin:greedy", "--games", "1",
            "--log-dir", str(logs), "--json", *extra]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 60
        pid = _tagged_bot(tag)
        while pid is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            pid = _tagged_bot(tag)
        assert pid is not None, "the kernel bot never ran"
        outside = _status(pid)
        (go / "go").write_text("")
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert json.loads(out)["games"] == 1
    return one(attacks(logs), "kernel"), outside


@pytest.mark.process
def test_a_bot_cannot_open_kernel_settings_for_writing_and_has_no_capabilities(
        tmp_path: Path) -> None:
    report, outside = _kernel_attack(tmp_path)
    assert report["opened"] == dict.fromkeys(report["opened"], False), report
    assert report["cap_eff"] == report["cap_prm"] == report["cap_bnd"] == NO_CAPS, report
    assert report["no_new_privs"] == "1"
    assert outside["CapEff"] == NO_CAPS
    if AS_ROOT:
        # The uid the kernel checks, seen from the host: not root (no user namespace maps
        # it back to root, as bwrap's --uid did) but the bot's own, leased from the range.
        low, high = uid_range()
        uid = report["uid"]
        assert low <= uid <= high, report
        assert outside["Uid"].split() == [str(uid)] * 4, outside
        assert outside["Gid"].split() == [str(uid)] * 4 and outside["Groups"] == "", outside


@pytest.mark.process
@pytest.mark.skipif(not AS_ROOT, reason="the control needs a referee running as root")
def test_unsandboxed_as_root_the_same_bot_could_open_them(tmp_path: Path) -> None:
    report, outside = _kernel_attack(tmp_path, "--sandbox", "none")
    assert report["opened"]["/proc/sys/vm/overcommit_ratio"] is True, report
    assert outside["Uid"].split()[0] == "0" and outside["CapEff"] != NO_CAPS


def _listening(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.listen(8)
    return s


def test_unix_socket_daemons_and_a_postgres_socket_are_unreachable(
        tmp_path: Path, pg_server: Any) -> None:
    """A daemon's sockets under the test's dir, /run and /tmp, and a real PostgreSQL
    server's socket (local connections trusted): the bot reaches none of them."""
    tag = f"durak-walls-{os.getpid()}"
    daemons = [tmp_path / "daemon.sock", Path("/run") / f"{tag}.sock", Path("/tmp") / f"{tag}.sock"]
    pg_socket = Path(pg_server.root) / f".s.PGSQL.{pg_server.port}"
    assert pg_socket.exists()
    listeners = [_listening(p) for p in daemons]
    try:
        targets = [f"at={p}" for p in [*daemons, pg_socket]]
        _, logs, _ = match(tmp_path, bot("unix", *targets), "builtin:greedy", games=1)
        results = one(attacks(logs), "unix")["results"]
        assert {p: ok for p, (ok, _) in results.items()} == dict.fromkeys(results, False), results
        _, logs, _ = match(tmp_path, bot("unix", *targets), "builtin:greedy", games=1,
                           logs=tmp_path / "control", extra=("--sandbox", "none"))
        control = one(attacks(logs), "unix")["results"]
        assert {p: ok for p, (ok, _) in control.items()} == dict.fromkeys(control, True), control
    finally:
        for s, p in zip(listeners, daemons, strict=True):
            s.close()
            p.unlink(missing_ok=True)


@pytest.mark.process
def test_earlier_logs_root_and_the_opponents_programs_are_invisible(shared_tmp_path: Path) -> None:
    """An earlier run's log (its seed in the header) under another log dir, /root, the
    opponent's program in the attacker's own directory and one elsewhere."""
    tmp_path = shared_tmp_path
    seed = "5550123"
    old = tmp_path / "old-logs"
    cli("match", "builtin:greedy", "builtin:random", "--games", "1", "--seed", seed,
        "--log-dir", old, cwd=tmp_path, timeout=60)
    old_log = next(old.glob("match-*.jsonl"))
    assert seed in old_log.read_text()
    same_dir = BOT.parent / "opponent_bot.py"
    elsewhere = tmp_path / "elsewhere" / "opponent_bot.py"
    elsewhere.parent.mkdir(mode=0o755)
    shutil.copy(same_dir, elsewhere)
    elsewhere.chmod(0o644)
    reads = [f"at={p}" for p in (old_log, same_dir, elsewhere)]
    seats = (bot("env", "mark=OPPONENT-SECRET", *reads), f"{PY} {same_dir}", f"{PY} {elsewhere}",
             bot("list", "at=/root"))
    _, logs, _ = match(tmp_path, *seats, games=1)
    report = one(attacks(logs), "env")
    assert report["leaked"] == [], report
    assert {p: r[0] and seed in r[1] for p, r in report["read"].items()} == dict.fromkeys(
        report["read"], False)
    listed = one(attacks(logs), "list")["result"]
    real = sorted(os.listdir("/root"))
    # At most the way to a bound interpreter (a pyenv under /root), never root's files.
    assert not listed[0] or set(listed[1]) <= {".pyenv", ".local", ".cache"} & set(real), listed
    # The control: unsandboxed, every one of them is readable.
    _, logs, _ = match(tmp_path, *seats, games=1, logs=tmp_path / "control",
                       extra=("--sandbox", "none"))
    control = one(attacks(logs), "env")
    assert sorted(control["leaked"]) == sorted(str(p) for p in (same_dir, elsewhere))
    assert one(attacks(logs), "list")["result"] == [True, real]


@pytest.mark.process
def test_the_bots_own_program_and_a_venv_under_a_private_home_still_work(
        shared_tmp_path: Path) -> None:
    """A venv under a 0700 home (its python a symlink to the base interpreter, its
    packages named by a .pth file) runs the bot; a program inside such a home is a start
    error that names the path, its mode and what to do (as root: the bot's uid cannot
    read it)."""
    home = shared_tmp_path / "home"
    home.mkdir(mode=0o700)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], check=True)
    site = next((home / "venv" / "lib").glob("python*/site-packages"))
    ours = next((ROOT / ".venv" / "lib").glob("python*/site-packages")) if (ROOT / ".venv").is_dir() \
        else Path(next(p for p in sys.path if p.endswith("site-packages")))
    (site / "deps.pth").write_text(f"{ours}\n")
    venv_python = home / "venv" / "bin" / "python"
    summary, logs, _ = match(shared_tmp_path, f"{venv_python} {BOT} write", "builtin:greedy",
                             games=1)
    assert one(attacks(logs), "write")["results"]["home"] is True
    if AS_ROOT:
        private = home / "bot.py"
        shutil.copy(BOT, private)
        proc = cli("match", f"{venv_python} {private} write", "builtin:greedy", "--games", "1",
                   "--no-log", cwd=shared_tmp_path, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert re.search(r"runs as uid \d+, which cannot", proc.stderr), proc.stderr
        assert f"{home} has mode rwx------ (0700, owner uid 0)" in proc.stderr, proc.stderr
        assert "chmod o+rx" in proc.stderr, proc.stderr


SECRET = "walls-secret-31337"


def _secret_env(tmp_path: Path) -> dict[str, str]:
    """A referee environment full of credentials: the store URL with its password,
    libpq's password, a password file elsewhere and one in the referee's home."""
    home = tmp_path / "home"
    home.mkdir(mode=0o755, exist_ok=True)
    (home / ".pgpass").write_text(f"*:*:*:*:{SECRET}\n")
    passfile = tmp_path / "elsewhere.pgpass"
    passfile.write_text(f"*:*:*:*:{SECRET}\n")
    for f in (home / ".pgpass", passfile):
        f.chmod(0o644)  # readable by anyone: only the sandbox can stop the bot
    return dict(os.environ, DURAK_DB=f"postgresql://durak:{SECRET}@127.0.0.1:1/durak",
                PGPASSWORD=SECRET, PGPASSFILE=str(passfile), HOME=str(home),
                DURAK_TOKEN=SECRET, SOME_API_TOKEN=SECRET)


def _run(tmp_path: Path, env: dict[str, str], *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(DURAK_REF), *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=180)


@pytest.mark.process
def test_no_secret_of_the_environment_reaches_a_bot_in_any_command(shared_tmp_path: Path) -> None:
    """match, tournament --db file.sqlite (and its worker processes), sprt and
    check-bot: the bot sees no credential variable, and neither password file, though
    both lie under a --bind path."""
    tmp_path = shared_tmp_path
    env = _secret_env(tmp_path)
    spy = bot("env", f"mark={SECRET}", f"at={env['PGPASSFILE']}", f"at={env['HOME']}/.pgpass")
    bind = ("--bind", tmp_path)
    logs = tmp_path / "logs"
    proc = _run(tmp_path, env, "match", spy, "builtin:greedy", "--games", "1", "--log-dir",
                logs / "m", *bind)
    assert proc.returncode == 0, proc.stderr
    proc = _run(tmp_path, env, "tournament", "--bot", f"spy={spy}", "--bot", "r=builtin:random",
                "--games", "2", "--concurrency", "2", "--db", tmp_path / "t.sqlite",
                "--log-dir", logs / "t", *bind)
    assert proc.returncode == 0, proc.stderr
    proc = _run(tmp_path, env, "sprt", spy, "builtin:random", "--max-pairs", "1",
                "--db", tmp_path / "s.sqlite", "--log-dir", logs / "s", *bind)
    assert proc.returncode in (0, 1), proc.stderr
    reports = attacks(logs / "m") + attacks(logs / "t") + attacks(logs / "s")
    assert len(reports) >= 3
    for report in reports:
        assert report["leaked"] == [], report
        assert not {k for k in report["env"] if k.startswith(("DURAK_", "PG"))}, report["env"]
    proc = _run(tmp_path, env, "check-bot", spy, "--games", "1", "--json", *bind)
    assert json.loads(proc.stdout)["hello"]["name"] == "attack-env-clean", proc.stdout
    # --sandbox none filters the environment too (the password files are then readable:
    # nothing hides files without the sandbox).
    proc = _run(tmp_path, env, "match", spy, "builtin:greedy", "--games", "1", "--log-dir",
                logs / "none", "--sandbox", "none")
    assert proc.returncode == 0, proc.stderr
    report = one(attacks(logs / "none"), "env")
    assert sorted(report["leaked"]) == sorted([env["PGPASSFILE"], f"{env['HOME']}/.pgpass"])


@pytest.mark.process
def test_an_opponents_whole_project_is_hidden_where_it_holds_nothing_of_the_bots_own(
        tmp_path: Path) -> None:
    """The C example (its own project: examples/c has a Makefile) against a Python bot
    of the same repository: the Python bot sees the repository, but not examples/c."""
    from support import c_example_bot
    c_bot = c_example_bot()
    source = ROOT / "examples" / "c" / "bot.c"
    readme = ROOT / "README.md"
    _, logs, _ = match(tmp_path, bot("env", "mark=c-bot:", f"at={source}", f"at={readme}"),
                       " ".join(c_bot), games=1)
    report = one(attacks(logs), "env")
    assert report["read"][str(source)][0] is False and report["leaked"] == [], report
    assert report["read"][str(readme)][0] is True  # its own project, the repository
