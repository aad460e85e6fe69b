"""Sound duplicate deals by default: no bot process plays two seat rotations of one deal.

``bots/memory_bot.py`` remembers every deal it sees (the trump and its own opening hand)
in its memory and in its scratch dir, and at each game start names the opponent's hand
if it remembers this deal: in a duplicate deal's second rotation (two players, seats
swapped) the opponent holds the hand the bot held in the first. Through the real CLI,
under the real sandbox, with default options (tournament, sprt with worker processes,
ladder run, match --duplicate) it names no hand in any twin: the twin is played by a
fresh process with a fresh scratch dir, and no warning is printed. With
``--keep-bots-across-twins`` (the explicit option) it names every hand, and the warning
says so. What stays open (the page cache a fresh process shares with its predecessor)
is tests/sandbox/test_seccomp.py's.

Skipped, with the reason shown, where bwrap is missing (CI installs it).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from support import LONG_TIMEOUT_S, attack_reports, cli

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(shutil.which("bwrap") is None,
                       reason="bubblewrap (bwrap) not installed: apt-get install bubblewrap"),
]

CHEAT = f"{sys.executable} {Path(__file__).resolve().parent / 'bots' / 'memory_bot.py'}"
WARNING = "--keep-bots-across-twins: a bot kept running could remember"


def twins(logs: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The cheat's reports of each deal's two rotations, (first, second), in game order
    (games 2d and 2d+1 are deal d's two rotations in every run used here)."""
    reports = sorted((r for r in attack_reports(logs) if r["mode"] == "memory"), key=lambda r: r["game"])
    pairs = list(zip(reports[0::2], reports[1::2], strict=True))
    for first, second in pairs:
        assert first["trump"] == second["trump"], (first, second)  # one deal, two rotations
    return pairs


def named(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> int:
    """In how many twins the cheat named its opponent's whole hand (its own first hand)."""
    return sum(second["named"] == sorted(first["hand"]) for first, second in pairs)


def header(logs: Path, kind: str) -> dict[str, Any]:
    return json.loads(next(logs.glob(f"{kind}-*.jsonl")).read_text().splitlines()[0])


def tournament(tmp_path: Path, *extra: str) -> tuple[Any, Path]:
    logs = tmp_path / "logs"
    proc = cli("tournament", "--bot", f"cheat={CHEAT}", "--bot", "rand=builtin:random",
               "--games", "12", "--seed", "7", "--db", tmp_path / "s.sqlite", "--log-dir", logs,
               "--json", *extra, cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return proc, logs


def test_by_default_a_remembering_bot_names_no_hand_in_any_twin(tmp_path: Path) -> None:
    proc, logs = tournament(tmp_path)
    pairs = twins(logs)
    assert len(pairs) == 6
    assert named(pairs) == 0
    # Every twin is a new process (it played nothing before) whose scratch dir held
    # nothing of an earlier process's; a first rotation may reuse the previous twin's
    # process (which never saw this deal): one start-up per twin, not per game.
    assert [second["games_before"] for _, second in pairs] == [0] * 6
    assert [first["games_before"] for first, _ in pairs] == [0] + [1] * 5
    assert not any(r["scratch_at_start"] or r["named"] for pair in pairs for r in pair)
    assert WARNING not in proc.stderr and "warning" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["duplicates"] == "page-cache"
    assert header(logs, "tournament")["duplicates"] == "page-cache"


def test_keeping_bots_across_twins_lets_it_name_every_hand_and_warns(tmp_path: Path) -> None:
    proc, logs = tournament(tmp_path, "--keep-bots-across-twins")
    pairs = twins(logs)
    assert named(pairs) == 6
    assert {second["from"] for _, second in pairs} == {"memory"}
    assert [line for line in proc.stderr.splitlines() if WARNING in line] != [], proc.stderr
    assert json.loads(proc.stdout)["duplicates"] == "memory"
    assert header(logs, "tournament")["duplicates"] == "memory"


def test_the_scratch_dir_alone_carries_nothing_to_a_twin(tmp_path: Path) -> None:
    """The same cheat with a process per game (--fresh-bots): what it finds can only come
    from its scratch dir, which is new with every process."""
    proc, logs = tournament(tmp_path, "--fresh-bots")
    pairs = twins(logs)
    assert named(pairs) == 0
    assert not any(r["scratch_at_start"] or r["games_before"] for pair in pairs for r in pair)


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_sprt_in_worker_processes_and_ladder_and_match_are_sound_by_default(tmp_path: Path) -> None:
    logs = tmp_path / "sprt"
    proc = cli("sprt", CHEAT, "builtin:random", "--max-pairs", "6", "--concurrency", "2", "--seed", "3",
               "--db", tmp_path / "s.sqlite", "--log-dir", logs, "--json", cwd=tmp_path, timeout=180)
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(proc.stdout)["duplicates"] == "page-cache" and "warning" not in proc.stderr
    pairs = twins(logs)
    assert len(pairs) == 6 and named(pairs) == 0

    db = tmp_path / "ladder.sqlite"
    for name, command in (("cheat", CHEAT), ("rand", "builtin:random")):
        assert cli("ladder", "add", "--db", db, name, command, cwd=tmp_path).returncode == 0
    logs = tmp_path / "ladder"
    proc = cli("ladder", "run", "--db", db, "--games", "8", "--seed", "3", "--log-dir", logs,
               cwd=tmp_path, timeout=180)
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    pairs = twins(logs)
    assert len(pairs) == 4 and named(pairs) == 0
    assert header(logs, "ladder")["duplicates"] == "page-cache"

    for extra, expected in (((), 0), (("--keep-bots-across-twins",), 3)):
        logs = tmp_path / f"match{len(extra)}"
        proc = cli("match", CHEAT, "builtin:random", "--duplicate", "--games", "6", "--seed", "3",
                   "--log-dir", logs, "--json", *extra, cwd=tmp_path, timeout=180)
        assert proc.returncode == 0, proc.stderr
        assert named(twins(logs)) == expected
        assert (WARNING in proc.stderr) == bool(extra), proc.stderr


def test_fresh_bots_and_keeping_bots_across_twins_are_refused_together(tmp_path: Path) -> None:
    for command in (("tournament", "--bot", "a=builtin:random", "--bot", f"b={CHEAT}", "--db", tmp_path / "t.sqlite"),
                    ("sprt", CHEAT, "builtin:random", "--db", tmp_path / "s.sqlite")):
        proc = cli(*command, "--fresh-bots", "--keep-bots-across-twins", cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "--fresh-bots" in proc.stderr and "give one of them" in proc.stderr, proc.stderr


def test_bots_restarted_between_games_are_never_left_frozen(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Two program bots, each replaced before every twin game (the default), that take
    40 ms per decision, so that each game outlasts the grace period after which a
    replaced process's exit watcher runs: it must not make the referee forget that the
    bot's new process is frozen (frozen while the other bot is waited for, that process
    would never see its next request and lose on time: a timeout forfeit without the
    fix), and a new process's handshake must not freeze the seats of the game before."""
    slow = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'tournament' / 'bots' / 'slow_bot.py'}"
    monkeypatch.setenv("DURAK_BOT_DELAY", "0.04")
    proc = cli("tournament", "--bot", f"a={slow} a", "--bot", f"b={slow} b", "--games", "4",
               "--move-time", "3", "--db", tmp_path / "s.sqlite",
               "--log-dir", tmp_path / "logs", "--json", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert "off-move frozen" in proc.stderr, proc.stderr
    assert [row["forfeits"] for row in data["standings"]] == [{}, {}], data["standings"]
