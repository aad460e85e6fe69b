"""``durak-ref check-bot``'s engine (referee/conformance/checkbot.py) against real bot processes.

Conforming bots (the Python examples) pass every check and reach every decision type;
misbehaving bots (written to tmp_path, one misbehaviour each) fail with the evidence:
what was sent, what came back, what the spec requires.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from referee.conformance.checkbot import CONFIGS, DECISION_TYPES, CheckReport, check_bot, render
from referee.seats.players import BotStartError
from referee.seats.sandbox import Sandbox

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"
GRACE = 0.2  # the referee's grace periods, where a bot is expected to need killing

# A bot on the SDK whose choose() is given as BODY; N counts the requests so far.
SDK_BOT = """\
import os, sys
sys.path.insert(0, {root!r})
from protocol.bot import Bot, run

class B(Bot):
    name, version, author = "test-bot", "0.1", "tests"
    n = 0

    def choose(self, observation, legal):
        self.n += 1
{body}

{tail}
"""


def sdk_bot(tmp_path: Path, body: str, tail: str = "run(B())") -> list[str]:
    script = tmp_path / "bot.py"
    indented = "\n".join("        " + line for line in body.strip().splitlines())
    script.write_text(SDK_BOT.format(root=str(ROOT), body=indented, tail=tail))
    return [sys.executable, str(script)]


def statuses(report: CheckReport) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


def rendered(report: CheckReport) -> str:
    buffer = io.StringIO()
    render(report, Console(file=buffer, width=200, color_system=None))
    return buffer.getvalue()


# -- conforming bots ----------------------------------------------------------------------


@pytest.mark.parametrize("bot", ["random_bot.py", "greedy_bot.py"])
async def test_a_conforming_bot_passes_every_check(bot: str) -> None:
    report = await check_bot([sys.executable, str(EXAMPLES / bot)])
    s = statuses(report)
    assert report.ok, rendered(report)
    # The examples send no author: a warning, not a failure.
    assert s["handshake"] == "warn"
    assert [p.kind for p in report.check("handshake").problems] == ["hello"]
    assert report.hello is not None and report.hello["version"] == "1.0"
    # Every rule set ran cleanly and reached what it is there for.
    assert [c.key for c in report.configs] == [c.key for c in CONFIGS]
    for rs, run in zip(CONFIGS, report.configs, strict=True):
        assert s[f"games: {run.title}"] == "pass"
        assert run.failure is None and run.missing == [] and set(run.covered) == set(rs.targets)
        assert len(run.games) >= rs.players  # the bot sat in every seat
        if rs.key != "trump_exchange":  # there the bot sits where the exchange is offered
            assert {g["seat"] for g in run.games} == set(range(rs.players))
        # ... and met both built-ins (at a bigger table, several of each).
        assert {name.split("#")[0] for g in run.games for seat, name in enumerate(g["players"])
                if seat != g["seat"]} == {"greedy", "random"}
        assert run.exit is not None and run.exit["ok"] and run.exit["exit_code"] == 0
    # Every decision type was offered and answered legally.
    for t in DECISION_TYPES:
        assert s[f"decision: {t}"] == "pass"
        stats = report.coverage[t]
        assert stats.offered >= stats.answered >= 1
    assert s["latency"] == "pass" and s["exit after bye"] == "pass"
    for name in ("one answer per request", "no answer before request", "no processes left"):
        assert s[name] == "pass"
    lat = report.latency
    assert lat["decisions"] == sum(c.decisions for c in report.configs)
    assert 0 < lat["median_ms"] <= lat["worst_ms"] < 5000
    data = json.loads(json.dumps(report.as_dict()))
    assert data["ok"] is True and data["counts"]["fail"] == 0
    assert "PASSED (1 warning)" in rendered(report)


async def test_a_type_no_rule_set_reaches_is_a_warning(tmp_path: Path) -> None:
    # Classic rules only: transfer, show_trump, exchange, ... are never offered.
    report = await check_bot([sys.executable, str(EXAMPLES / "random_bot.py")], configs=CONFIGS[:1])
    s = statuses(report)
    assert report.ok
    for t in ("transfer", "show_trump", "exchange", "decline"):
        assert s[f"decision: {t}"] == "warn"
        (problem,) = report.check(f"decision: {t}").problems
        assert problem.kind == "not_reached" and "never offered" in problem.message
    assert "trump_exchange=on" in report.check("decision: exchange").summary
    # A lone pass or take is asked under the default rules (ask_forced=on).
    for t in ("attack", "cover", "throw_in", "take", "pass", "forced"):
        assert s[f"decision: {t}"] == "pass"


# -- failing bots ------------------------------------------------------------------------------


async def test_a_bot_that_plays_illegal_moves_fails_with_the_evidence(tmp_path: Path) -> None:
    # Three legal answers, then a well-formed action of a type that is not offered.
    argv = sdk_bot(tmp_path, """
if self.n <= 3:
    return legal[0]
types = {a["type"] for a in legal}
return {"type": "pass"} if "pass" not in types else {"type": "take"}
""")
    report = await check_bot(argv, grace=GRACE)
    assert not report.ok
    s = statuses(report)
    assert s["handshake"] == "pass"
    assert s["games: classic"] == "fail"
    assert s["exit after bye"] == "skip"  # no match ended cleanly
    failures = report.failures
    assert len(failures) == len(CONFIGS)  # each rule set stops at its first failure
    for f in failures:
        assert f.kind == "illegal"
        assert f.message.startswith("illegal action ")
        # Sent: the request, in short form.
        assert f.sent is not None and f.sent["request"] == f.where["request"]
        assert f.sent["phase"] and f.sent["legal"] and "hand" in f.sent
        # Received: the bot's action, which is none of the legal ones.
        answer = f.received["received"]
        assert answer["type"] in ("pass", "take")
        assert answer["type"] not in {a.split()[0] for a in f.sent["legal"]}
        assert f.received["legal"] == f.sent["legal"]
        assert "copied verbatim" in (f.required or "")
    # The answers before the illegal one count.
    assert report.coverage["attack"].answered >= 1
    text = rendered(report)
    assert "FAILED" in text and "sent:" in text and "received:" in text and "required:" in text


async def test_a_bot_that_crashes_after_a_few_moves_fails(tmp_path: Path) -> None:
    argv = sdk_bot(tmp_path, """
if self.n > 3:
    print("test-bot: giving up after 3 answers", file=sys.stderr, flush=True)
    os._exit(5)
return legal[0]
""")
    report = await check_bot(argv, configs=CONFIGS[:2], grace=GRACE)
    assert not report.ok
    assert statuses(report)["games: classic"] == "fail"
    for f in report.failures:
        assert f.kind == "crash"
        assert "exited with code 5" in f.message
        assert f.received["exit_code"] == 5
        assert "test-bot: giving up after 3 answers" in f.received["stderr_tail"]
        assert f.sent is not None and f.sent["request"] == f.where["request"]
        assert "exits (with status 0) only after bye" in (f.required or "")
    # Three answers per process were accepted before the crash.
    assert [c.decisions - 1 for c in report.configs] == [3, 3]


async def test_a_bot_that_never_answers_the_handshake_fails_it(tmp_path: Path) -> None:
    """One start-up limit, not one per rule set, and the mute bot is killed when it ends,
    not waited for: the bot notes each start and each end of its 30 s sleep in a file."""
    script, notes = tmp_path / "mute.py", tmp_path / "notes.txt"
    script.write_text(f"import sys, time\nopen({str(notes)!r}, 'a').write('started\\n')\n"
                      f"sys.stdin.buffer.read(4)\ntime.sleep(30)\n"
                      f"open({str(notes)!r}, 'a').write('woke\\n')\n")
    # Unsandboxed: the sandbox would keep the bot from writing its notes in tmp_path.
    report = await check_bot([sys.executable, str(script)], startup_time=1.0, grace=GRACE,
                             sandbox=Sandbox("none", warn=False))
    assert notes.read_text() == "started\n"  # started once, killed in its sleep
    assert not report.ok
    assert statuses(report) == {"handshake": "fail", "decision types": "skip",
                                "latency": "skip", "exit after bye": "skip",
                                "one answer per request": "skip",
                                "no answer before request": "skip", "no processes left": "pass"}
    (f,) = report.failures
    assert f.kind == "timeout" and "the handshake within 1.000 s" in f.message
    assert f.sent == {"message": "hello", "protocol": 1, "versions": [1]}
    assert f.received["budget_s"] == 1.0 and f.received["waited_s"] >= 0.9
    assert "within the start-up time of 1 s" in (f.required or "")
    assert len(report.configs) == 1 and report.hello is None


async def test_a_bot_that_exits_badly_after_bye_fails_the_exit_check(tmp_path: Path) -> None:
    argv = sdk_bot(tmp_path, "return legal[0]", tail="run(B())\nsys.exit(3)")
    report = await check_bot(argv, configs=CONFIGS[:1])
    s = statuses(report)
    assert not report.ok
    assert s["exit after bye"] == "fail" and s["games: classic"] == "pass"
    (f,) = report.failures
    assert f.kind == "exit" and "exited with status 3" in f.message
    assert f.received["exit_code"] == 3
    assert "exit with status 0" in (f.required or "")


async def test_a_command_that_cannot_start_is_the_users_error(tmp_path: Path) -> None:
    with pytest.raises(BotStartError):
        await check_bot([str(tmp_path / "no-such-bot")], grace=GRACE)
