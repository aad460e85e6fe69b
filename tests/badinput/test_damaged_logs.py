"""A damaged match log is the user's input, never our bug: every kind of damage ends
with exit 1 (``--verify``: the log failed its check) or 2 (the log cannot be used at
all), naming the file and line, and never with an internal error (exit 3)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from referee.cli import app

Record = dict[str, Any]


@pytest.fixture(scope="module")
def good_log(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The lines of a real 3-game log with one forfeit-free game per line 2..4."""
    d = tmp_path_factory.mktemp("goodlog")
    r = CliRunner().invoke(app, ["match", "builtin:greedy", "builtin:random", "-n", "3",
                                 "--seed", "damage", "--log-dir", str(d), "--json"])
    assert r.exit_code == 0, r.output
    (log,) = d.glob("*.jsonl")
    return log.read_text().splitlines(keepends=True)


def _game(change: Callable[[Record], None]) -> Callable[[list[Record]], None]:
    """Damage the second game record (line 3 of the log)."""
    return lambda recs: change(recs[2])


def _set(key: str, value: Any) -> Callable[[Record], None]:
    return lambda r: r.__setitem__(key, value)


def _decision(i: int, value: Any) -> Callable[[Record], None]:
    def change(r: Record) -> None:
        r["decisions"][0][i] = value
    return change


# (name, how the records are damaged, the line named, the exit code under --verify)
GAME_DAMAGE: list[tuple[str, Callable[[Record], None]]] = [
    ("forfeit is a string", _set("forfeit", "seat 0")),
    ("forfeit seat out of range", _set("forfeit", {"seat": 9, "kind": "crash"})),
    ("forfeit evidence a list", _set("forfeit", {"seat": 0, "evidence": [1]})),
    ("players an int", _set("players", 2)),
    ("one player", _set("players", ["solo"])),
    ("players not names", _set("players", [1, 2])),
    ("durak 99", _set("durak", 99)),
    ("durak a name", _set("durak", "greedy")),
    ("dealer -1", _set("dealer", -1)),
    ("game number text", _set("game", "one")),
    ("game number negative", _set("game", -4)),
    ("seed a list", _set("seed", [1])),
    ("deck not a list", _set("deck", "6S 7S")),
    ("deck with a non-card", lambda r: r["deck"].__setitem__(0, "ZZ")),
    ("deck repeats a card", lambda r: r["deck"].__setitem__(1, r["deck"][0])),
    ("decisions a map", _set("decisions", {"0": "attack"})),
    ("decision too short", lambda r: r["decisions"].__setitem__(0, [0])),
    ("decision a string", lambda r: r["decisions"].__setitem__(0, "attack 6S")),
    ("decision seat 7", _decision(0, 7)),
    ("decision seat text", _decision(0, "0")),
    ("decision action a number", _decision(1, 42)),
    ("decision action garbage", _decision(1, "fly away")),
    ("decision forced flag text", _decision(2, "yes")),
    ("decision seconds text", _decision(3, "fast")),
    ("termination a number", _set("termination", 5)),
    ("last_out not seats", _set("last_out", ["x"])),
    ("wall_ms text", _set("wall_ms", "slow")),
    ("game record lacks its deck", lambda r: r.pop("deck")),
]


@pytest.mark.slow
@pytest.mark.parametrize("change", [c for _, c in GAME_DAMAGE], ids=[n for n, _ in GAME_DAMAGE])
def test_a_damaged_game_record_fails_verify_with_file_and_line(
        good_log: list[str], tmp_path: Path, change: Callable[[Record], None]) -> None:
    records = [json.loads(line) for line in good_log]
    change(records[2])
    log = tmp_path / "damaged.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    for args, code in ((["--verify"], 1), (["--verify", "--json"], 1), ([], 1), (["--json"], 1),
                       (["--game", "0"], 0)):
        r = CliRunner().invoke(app, ["replay", str(log), *args])
        assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
        assert r.exit_code == code, (args, r.output)
        if code == 1:
            assert f"{log}:3" in r.output, (args, r.output)
    # The game before the damage is still verified.
    r = CliRunner().invoke(app, ["replay", str(log), "--verify", "--json"])
    data = json.loads(r.stdout[r.stdout.index("{"):])
    assert data["games"] == 1 and data["ok"] == 1


def _line(n: int, text: str) -> Callable[[list[str]], list[str]]:
    return lambda lines: [*lines[:n - 1], text, *lines[n:]]


def _header(key: str, value: Any) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        h = json.loads(lines[0])
        h[key] = value
        return [json.dumps(h) + "\n", *lines[1:]]
    return change


# (name, damage of the lines, exit code under --verify, the line the message names)
LINE_DAMAGE: list[tuple[str, Callable[[list[str]], list[str]], int, int]] = [
    ("not JSON", _line(3, "{not json\n"), 1, 3),
    ("a JSON array", _line(3, "[1, 2]\n"), 1, 3),
    ("an unknown record type", _line(3, '{"type": "gossip"}\n'), 1, 3),
    ("a truncated last line", lambda lines: [*lines[:-1], lines[-1][:40]], 1, 5),
    ("footer summary a list", lambda lines: [*lines[:-1], '{"type": "footer", "summary": []}\n'], 1, 5),
    ("footer interrupted text", lambda lines: [*lines[:-1], '{"type": "footer", "interrupted": "no"}\n'],
     1, 5),
    ("header rules a list", _header("rules", [36]), 2, 1),
    ("header bots a string", _header("bots", "greedy"), 2, 1),
    ("header settings a number", _header("settings", 3), 2, 1),
    ("header missing", lambda lines: lines[1:], 2, 1),
    ("header of another format", _header("format", "other/9"), 2, 1),
    ("binary garbage", lambda lines: ["\x00\xff" * 20 + "\n"], 2, 1),
]


@pytest.mark.slow
@pytest.mark.parametrize(("damage", "code", "line"), [c[1:] for c in LINE_DAMAGE],
                         ids=[c[0] for c in LINE_DAMAGE])
def test_a_damaged_or_unusable_log_is_exit_1_or_2_never_3(
        good_log: list[str], tmp_path: Path, damage: Callable[[list[str]], list[str]],
        code: int, line: int) -> None:
    log = tmp_path / "damaged.jsonl"
    log.write_text("".join(damage(list(good_log))))
    for args in (["--verify"], [], ["--json"]):
        r = CliRunner().invoke(app, ["replay", str(log), *args])
        assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
        assert r.exit_code == code, (args, r.output)
        assert f"{log}:{line}" in r.output, (args, r.output)


def test_a_gzip_log_that_is_not_gzip_is_unusable(tmp_path: Path) -> None:
    log = tmp_path / "x.jsonl.gz"
    log.write_text("plain text, not gzip\n")
    r = CliRunner().invoke(app, ["replay", str(log), "--verify"])
    assert r.exit_code == 2 and f"{log}:1" in r.output, r.output
