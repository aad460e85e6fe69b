"""A uid per running bot (referee/seats/uids.py): real bots in the real sandbox, through
the real CLI, as root (the only case where the referee can give uids away).

``bots/pool_bot.py hog`` takes every inotify instance, POSIX timer (pending signal), POSIX
message queue byte and process its uid may have; ``bots/pool_bot.py probe``, its
opponent in the same match, running at the same time, tries to make some after that.
On main (5aa61aa) both ran as uid 65534 and the probe got 0 of 22 inotify instances,
0 of 22 timers and 0 of 22 message queues; the hog got 96,367 timers.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from referee.seats import uids
from referee.seats.sandbox import SANDBOX_ID, SIGPENDING
from support import attack_reports, cli

BOT = Path(__file__).resolve().parent / "bots" / "pool_bot.py"
PY = sys.executable
RANGE = (1_900_300_000, 1_900_300_099)  #: the range the pool match gives with --bot-uids

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None,
                       reason="bubblewrap (bwrap) not installed: apt-get install bubblewrap"),
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="bots get uids of their own only when the referee runs as root"),
]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """The hog's and the probe's reports from one match between them (with ``--bot-uids``
    set to ``RANGE``), by mode; probes only from after the hog took its pools."""
    tmp_path = tmp_path_factory.mktemp("pools")
    logs = tmp_path / "logs"
    proc = cli("match", f"{PY} {BOT} hog", f"{PY} {BOT} probe", "--games", "2",
               "--bot-uids", f"{RANGE[0]}-{RANGE[1]}", "--log-dir", logs, "--json",
               cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr
    found = attack_reports(logs)
    hogs = [r for r in found if r["mode"] == "hog"]
    assert hogs, found
    after = [r for r in found if r["mode"] == "probe" and r["at_ms"] > hogs[0]["done_ms"]]
    assert after, f"the probe was never asked after the hog took the pools: {found}"
    return {"hog": hogs, "probe": after}


@pytest.mark.process
def test_the_hog_did_take_its_uids_pools(reports: dict[str, list[dict[str, Any]]]) -> None:
    """The attack is real: the kernel refused the hog more of each pool, and its timers
    stopped at its own RLIMIT_SIGPENDING, not the machine's 96,367."""
    hog = reports["hog"][0]
    assert hog["inotify"] > 0 and hog["inotify_errno"] != 0, hog
    assert 0 < hog["timers"] <= SIGPENDING, hog
    assert hog["queues"] > 0 and hog["queue_errno"] != 0, hog
    assert hog["processes"] > 0 and hog["fork_errno"] != 0, hog


@pytest.mark.process
def test_its_running_opponent_still_gets_inotify_instances_and_timers(
        reports: dict[str, list[dict[str, Any]]]) -> None:
    """Issue 35's attack: on main 0 of 22 ``inotify_init1`` and 0 of 22 ``timer_create``."""
    for probe in reports["probe"]:
        assert (probe["inotify"], probe["timers"]) == (22, 22), probe


@pytest.mark.process
def test_its_running_opponent_still_gets_message_queues(
        reports: dict[str, list[dict[str, Any]]]) -> None:
    """The uid's RLIMIT_MSGQUEUE bytes are the bot's own (on main: 0 of 22 ``mq_open``)."""
    for probe in reports["probe"]:
        assert probe["queues"] == 22, probe


@pytest.mark.process
def test_rlimit_nproc_counts_only_the_bots_own_processes(
        reports: dict[str, list[dict[str, Any]]]) -> None:
    """Each bot has RLIMIT_NPROC at the process limit (64) for a uid of its own: the hog
    holding all it may does not stop its opponent forking. (On main RLIMIT_NPROC was
    root's 96,367, for the one uid 65534 every bot on the machine shared.)"""
    assert reports["hog"][0]["nproc"] == 64
    for probe in reports["probe"]:
        assert probe["nproc"] == 64 and probe["forks"] == 22, probe


@pytest.mark.process
def test_two_bots_running_at_once_have_different_uids_from_the_range_given(
        reports: dict[str, list[dict[str, Any]]]) -> None:
    """Each bot process runs as a uid of its own from ``--bot-uids`` (not nobody), gid
    the same, with a low RLIMIT_SIGPENDING."""
    hog, probe = reports["hog"][0], reports["probe"][0]
    assert hog["uid"] != probe["uid"]
    for r in (hog, probe):
        assert RANGE[0] <= r["uid"] <= RANGE[1] and r["uid"] != SANDBOX_ID, r
        assert r["gid"] == r["uid"]
        assert r["sigpending"] == SIGPENDING


def test_a_uid_range_holding_an_accounts_uid_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot must never own a person's or a service's files."""
    account = next((u for u in pwd.getpwall() if 1000 <= u.pw_uid < 65534), None)
    if account is None:
        pytest.skip("no account with a uid from 1000 in this machine's /etc/passwd")
    text = f"{account.pw_uid}-{account.pw_uid}"
    with pytest.raises(uids.UidRangeError, match=f"holds the uid of {account.pw_name}"):
        uids.uid_range(text)


#: Leases ``sys.argv[2]`` uids under ``sys.argv[1]``, prints them, waits for stdin to close.
HOLDER = """
import sys
from referee.seats import uids
held = [uids.lease(sys.argv[1]) for _ in range(int(sys.argv[2]))]
print(" ".join(str(h.uid) for h in held), flush=True)
sys.stdin.read()
"""


@pytest.mark.process
def test_a_uid_leased_by_another_referee_process_is_not_leased_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leases hold across referee processes on one machine: with 3 uids in the range and
    2 held by another process, this one gets the third, then none (a start error), and
    the others once that process is gone."""
    where = str(tmp_path / "uids")
    env_range = "1900200000-1900200002"
    monkeypatch.setenv(uids.ENV, env_range)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    holder = subprocess.Popen([PY, "-c", HOLDER, where, "2"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    assert holder.stdout is not None and holder.stdin is not None
    theirs = {int(u) for u in holder.stdout.readline().split()}
    try:
        assert len(theirs) == 2
        mine = uids.lease(where)
        assert mine.uid not in theirs and 1900200000 <= mine.uid <= 1900200002
        with pytest.raises(uids.NoUidError, match="all 3 bot uids"):
            uids.lease(where)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    # Free once the other process and its watchdog (which held them too) have exited.
    again = {lease_soon(where).uid, lease_soon(where).uid}
    assert again == theirs
    mine.release()  # free once our watchdog closed its copy too
    assert lease_soon(where).uid == mine.uid


def lease_soon(where: str) -> uids.UidLease:
    """A lease, waiting (up to 30 s) for one to be released: a watchdog closes its copy
    of a lease a moment after the referee did."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return uids.lease(where)
        except uids.NoUidError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


BAD_RANGES = [
    ("abc", "expected FIRST-LAST"),
    ("5-10", "needs 1000 <= FIRST <= LAST"),
    ("60000-70000", "holds 65534"),
]


@pytest.mark.process
@pytest.mark.parametrize("text, says", BAD_RANGES)
def test_a_bad_bot_uids_option_is_refused_before_any_game_naming_it(
        tmp_path: Path, text: str, says: str) -> None:
    proc = cli("match", f"{PY} {BOT} probe", f"{PY} {BOT} probe", "--games", "1",
               "--bot-uids", text, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"{uids.OPTION}/{uids.ENV} {text!r}" in proc.stderr and says in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.process
@pytest.mark.parametrize("text, says", BAD_RANGES[:1])
def test_a_bad_bot_uids_variable_is_refused_the_same_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, says: str) -> None:
    monkeypatch.setenv(uids.ENV, text)
    proc = cli("match", f"{PY} {BOT} probe", f"{PY} {BOT} probe", "--games", "1", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"{uids.OPTION}/{uids.ENV} {text!r}" in proc.stderr and says in proc.stderr


@pytest.mark.process
def test_a_range_too_small_for_the_bots_running_at_once_stops_the_run_naming_the_option(
        tmp_path: Path) -> None:
    """Two bots at once need two uids: with one, the second bot cannot start, and the
    error says how to give more (no bot ever shares a uid to make do)."""
    only = 1_900_400_000
    proc = cli("match", f"{PY} {BOT} probe", f"{PY} {BOT} probe", "--games", "1",
               "--bot-uids", f"{only}-{only}", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert f"all 1 bot uids ({only}-{only}) are leased" in proc.stderr
    assert uids.OPTION in proc.stderr and uids.ENV in proc.stderr
