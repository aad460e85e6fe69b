"""The referee's output is a function of the match seed: the same seed gives the same
match log and the same bytes to every bot, whatever the referee does to go faster.

Golden file ``golden/exact_output.json``: for two matches (three seats with transfers
and a trump exchange, program bots and a built-in; two program bots, classic; two
built-ins) the match log
with only its measured times, dates and paths taken out, and the SHA-256 of every byte
each program bot received after the handshake (hello frames name the referee version).
It was produced by the referee before the per-decision speed work; a
change that alters the wire bytes or the log on purpose regenerates it with
``DURAK_REGOLDEN=1 pytest tests/referee/test_exact_output.py`` and says why.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

from support import cli

pytestmark = pytest.mark.process

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "exact_output.json"
RECORD_BOT = Path(__file__).parent / "bots" / "record_bot.py"

#: Log fields that are measurements (times, CPU, dates) or where the run happened.
VOLATILE = {"started", "ended", "wall_ms", "wall_s", "mean_decision_ms", "max_decision_ms",
            "overhead_us_per_decision", "referee_cpu_us_per_decision",
            "referee_wall_us_per_decision", "log", "stderr_log", "durak_ref",
            "confinement", "seccomp",  # (what this machine can enforce: cgroups.py, seccomp.py)
            "sig", "signing_key"}  # (this machine's referee key, signing the volatile fields too)

#: Each match: how many recording program bots sit first, then the other arguments.
MATCHES = {
    "perevodnoy-3-seats": (2, ["--rules", "perevodnoy", "--set", "trump_exchange=on",
                               "--games", "4", "--seed", "exact-1", "builtin:greedy"]),
    "classic-2-seats": (2, ["--games", "4", "--seed", "exact-2"]),
    "builtins-only": (0, ["builtin:greedy", "builtin:random", "--games", "20", "--seed", "exact-3"]),
}


def _normal(value: Any, paths: dict[str, str]) -> Any:
    """``value`` without VOLATILE keys, with machine paths replaced by placeholders."""
    if isinstance(value, dict):
        return {k: _normal(v, paths) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_normal(v, paths) for v in value]
    if isinstance(value, str):
        for path, name in paths.items():
            value = value.replace(path, name)
    return value


def _log_lines(log: Path, paths: dict[str, str]) -> list[Any]:
    lines = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "game":
            record["decisions"] = [d[:3] for d in record["decisions"]]  # the times are measured
        lines.append(_normal(record, paths))
    return lines


def _after_hello(recording: bytes) -> bytes:
    (size,) = struct.unpack(">I", recording[:4])
    return recording[4 + size:]


def _play(name: str, tmp_path: Path) -> dict[str, Any]:
    programs, args = MATCHES[name]
    records = [tmp_path / f"{name}-{seat}.bin" for seat in range(programs)]
    bots = [f"{sys.executable} {RECORD_BOT} {rec} {name}-{seat}" for seat, rec in enumerate(records)]
    run = cli("match", *bots, *args, "--sandbox", "none", "--log-dir", tmp_path / name,
              cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (log,) = (tmp_path / name).glob("match-*.jsonl")
    paths = {str(tmp_path): "TMP", sys.executable: "PYTHON", str(REPO): "REPO"}
    return {"log": _log_lines(log, paths),
            "wire_sha256": [hashlib.sha256(_after_hello(r.read_bytes())).hexdigest() for r in records]}


@pytest.mark.parametrize("name", sorted(MATCHES))
def test_the_same_seed_gives_the_same_log_and_the_same_bytes_to_every_bot(name: str, tmp_path: Path) -> None:
    got = _play(name, tmp_path)
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if os.environ.get("DURAK_REGOLDEN") == "1":
        golden[name] = got
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
        pytest.skip(f"golden output of {name} written to {GOLDEN}")
    want = golden[name]
    assert got["wire_sha256"] == want["wire_sha256"], "the bytes sent to a bot changed"
    for line, (g, w) in enumerate(zip(got["log"], want["log"], strict=True), 1):
        assert g == w, f"match log line {line} differs"
