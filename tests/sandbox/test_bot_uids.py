"""A uid per running bot (referee/seats/uids.py): real bots in the real sandbox, through
the real CLI, as root (the only case where the referee can give uids away).

``bots/pool_bot.py hog`` takes every inotify instance and every POSIX timer (pending
signal) its uid may have; ``bots/pool_bot.py probe``, its opponent in the same match,
tries to make some after that. Before the leases both ran as uid 65534 and the probe got
none (issue 35: 0 of 22 inotify instances, 2 of 22 timers).
"""

from __future__ import annotations

import json
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

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None,
                       reason="bubblewrap (bwrap) not installed: apt-get install bubblewrap"),
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="bots get uids of their own only when the referee runs as root"),
]


def pool_match(tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    logs = tmp_path / "logs"
    proc = cli("match", f"{PY} {BOT} hog", f"{PY} {BOT} probe", "--games", "2",
               "--log-dir", logs, "--json", cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), attack_reports(logs)


def test_a_bot_that_takes_its_uids_pools_leaves_its_opponent_its_own(tmp_path: Path) -> None:
    """The attack: one bot takes every inotify instance and every timer it can; its
    opponent, asked after that in the same match, still gets all 22 of each. The hog got
    at most ``SIGPENDING`` timers (its RLIMIT_SIGPENDING), not the machine's 96,367."""
    _, reports = pool_match(tmp_path)
    hogs = [r for r in reports if r["mode"] == "hog"]
    assert hogs, reports
    hog = hogs[0]
    assert hog["inotify"] > 0 and hog["timers"] > 0, hog  # it did take them
    assert hog["timers"] <= SIGPENDING, hog
    assert hog["sigpending"] == SIGPENDING
    after = [r for r in reports if r["mode"] == "probe" and r["at_ms"] > hog["done_ms"]]
    assert after, f"the probe was never asked after the hog took the pools: {reports}"
    for probe in after:
        assert (probe["inotify"], probe["timers"]) == (22, 22), probe


def test_two_bots_running_at_once_have_different_uids_from_the_range(tmp_path: Path) -> None:
    """Each bot process runs as a uid of its own from the range (not nobody), with a low
    RLIMIT_SIGPENDING and RLIMIT_NPROC at the process limit."""
    _, reports = pool_match(tmp_path)
    low, high = uids.uid_range()
    by_mode = {r["mode"]: r for r in reports}
    hog, probe = by_mode["hog"], by_mode["probe"]
    assert hog["uid"] != probe["uid"]
    for r in (hog, probe):
        assert low <= r["uid"] <= high and r["uid"] != SANDBOX_ID, r
        assert r["gid"] == r["uid"]
        assert r["sigpending"] == SIGPENDING
        assert r["nproc"] == 64  # the default --max-procs


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


@pytest.mark.parametrize("text, says", [
    ("abc", "expected FIRST-LAST"),
    ("5-10", "needs 1000 <= FIRST <= LAST"),
    ("60000-70000", "holds 65534"),
])
def test_a_bad_uid_range_is_refused_before_any_game_naming_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, says: str) -> None:
    monkeypatch.setenv(uids.ENV, text)
    proc = cli("match", f"{PY} {BOT} probe", f"{PY} {BOT} probe", "--games", "1", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"{uids.ENV}={text!r}" in proc.stderr and says in proc.stderr
