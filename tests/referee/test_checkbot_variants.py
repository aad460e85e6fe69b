"""check-bot plays every rule variant a tournament may use (transfer, reflection, show-trump
transfer, same-rank leads, throw-in any time, the 24-, 36- and 52-card decks, 2 to 6
players), each as probe games the bot must play legally, and reports each variant's
verdict; run from a script (not a terminal) it prints a line per phase as it goes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.conformance.checkbot import CONFIGS
from referee.rules.options import make_rules
from support import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"

#: What every variant must cover, named as the options a tournament sets.
VARIANTS = {
    "transfer": ("transfer", "on"), "reflect": ("transfer", "reflect"),
    "show_trump": ("transfer", "trump_show"), "same_rank": ("lead", "same_rank"),
    "throw_in_any": ("throw_in_timing", "any"),
}


def test_the_rule_sets_cover_every_variant_deck_and_table_size() -> None:
    rules = [(rs, rs.rules()) for rs in CONFIGS]
    for option, value in VARIANTS.values():
        assert any(getattr(r, option) == value for _, r in rules), (option, value)
    assert {r.deck for _, r in rules} == {24, 36, 52}
    assert {rs.players for rs, _ in rules} == {2, 3, 4, 5, 6}
    for rs, r in rules:
        r.check_table(rs.players)  # every pair is one the engine accepts
    assert make_rules().deck == 36


BAD_AT_TRANSFER = """\
import sys
sys.path.insert(0, {root!r})
from protocol.bot import Bot, run

class NoTransfer(Bot):
    name, version, author = "no-transfer", "0.1", "tests"

    def choose(self, observation, legal):
        # Knows the podkidnoy actions only: a transfer offer is a KeyError.
        known = {{"attack": 0, "cover": 1, "throw_in": 2, "take": 3, "pass": 4, "exchange": 5}}
        return sorted(legal, key=lambda a: known[a["type"]])[0]

run(NoTransfer())
"""


@pytest.mark.process
def test_a_bot_that_cannot_transfer_fails_naming_the_variants(tmp_path: Path) -> None:
    script = tmp_path / "no_transfer.py"
    script.write_text(BAD_AT_TRANSFER.format(root=str(ROOT)))
    result = cli("check-bot", f"{sys.executable} {script}", "--json", "--sandbox", "none",
                 cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    failed = {key for key, status in data["variants"].items() if status == "fail"}
    assert failed == {"perevodnoy", "perevodnoy_trump", "reflect"}
    assert all(status == "pass" for key, status in data["variants"].items() if key not in failed)
    # The text report names each failed variant, one line per variant, as it goes.
    for title in ("perevodnoy (transfer)", "transfer=reflect (reflection)"):
        assert any(line.startswith("check-bot: variant ") and f": {title}: fail: " in line
                   for line in result.stderr.splitlines()), result.stderr
    text = cli("check-bot", f"{sys.executable} {script}", "--sandbox", "none", cwd=tmp_path)
    assert "games: transfer=reflect (reflection)" in text.stdout and "FAILED" in text.stdout


@pytest.mark.process
def test_not_on_a_terminal_check_bot_prints_a_line_per_phase(tmp_path: Path) -> None:
    result = cli("check-bot", f"{sys.executable} {EXAMPLES / 'random_bot.py'}", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("check-bot: ")]
    assert lines[0].startswith("check-bot: handshake: warn: hello in ")
    assert [line.split(":")[1] for line in lines[1:]] == [
        f" variant {i}/{len(CONFIGS)}" for i in range(1, len(CONFIGS) + 1)]
    for line, rs in zip(lines[1:], CONFIGS, strict=True):
        assert f": {rs.title}: pass: " in line
