"""--max-memory and --max-cpu: a bot over its limit is stopped by the kernel, and that is
its crash forfeit with the evidence; the opponent and the match are unharmed. The memory
limit is a cgroup's where one can be had (tests/sandbox/test_resource_walls.py has the
hostile cases), else an address-space rlimit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from referee.rules import make_rules
from referee.seats.cgroups import Limits, confinement
from referee.seats.players import parse_bot_spec
from referee.table.clock import TimeControl
from referee.table.match import MatchConfig
from referee.table.runner import SeatOptions, run_match_async

pytestmark = pytest.mark.process

HOG = Path(__file__).with_name("bots") / "hog_bot.py"


async def play(mode: str, tmp_path: Path, **limits: Any) -> dict:
    specs = [parse_bot_spec(f"hog={sys.executable} {HOG} {mode}"), parse_bot_spec("builtin:greedy")]
    config = MatchConfig(rules=make_rules(), games=2, seed=3, max_restarts=1,
                         tc=TimeControl.parse(None, 20.0, 10.0))
    result = await run_match_async(specs, config, log_dir=tmp_path, options=SeatOptions(**limits))
    return result.summary()


@pytest.mark.skipif(confinement(Limits(200), announce=False).backend is None,
                    reason="no memory cgroup usable here (not root, no delegation)")
async def test_a_bot_over_its_memory_limit_crashes_alone(tmp_path: Path) -> None:
    """With a memory cgroup the limit is the group's: the kernel kills the bot there."""
    summary = await play("memory", tmp_path, limits=Limits(memory_mb=200))
    assert summary["games"] == 2
    assert summary["bots"][0]["forfeits"] == {"crash": 2}
    assert summary["bots"][1]["forfeits"] == {}
    detail = summary["forfeit_details"][0]
    assert "memory limit (200 MB" in detail["reason"] and detail["evidence"]["memory_limit_mb"] == 200


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS semantics are checked on Linux")
async def test_without_a_memory_cgroup_max_memory_is_an_address_space_rlimit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No cgroup hierarchy where the detector looks (an empty directory): the fallback."""
    monkeypatch.setenv("DURAK_CGROUP_ROOT", str(tmp_path / "none"))
    summary = await play("memory", tmp_path, max_memory_mb=200, limits=Limits(memory_mb=200))
    assert summary["bots"][0]["forfeits"] == {"crash": 2}
    assert summary["bots"][1]["forfeits"] == {}
    detail = summary["forfeit_details"][0]
    assert "MemoryError" in "\n".join(detail["evidence"]["stderr_tail"])
    assert "memory limit" not in detail["reason"]


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_CPU is checked on Linux")
async def test_a_bot_over_its_cpu_limit_is_killed(tmp_path: Path) -> None:
    summary = await play("cpu", tmp_path, max_cpu_s=1)
    assert summary["bots"][0]["forfeits"] == {"crash": 2}
    detail = summary["forfeit_details"][0]
    assert detail["evidence"]["exit_code"] in (-24, -9)  # SIGXCPU, or SIGKILL at the hard limit
    assert "signal" in detail["reason"]
