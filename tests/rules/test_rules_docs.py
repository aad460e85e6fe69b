"""docs/RULES.md: the options and presets tables are generated from ``OPTIONS``."""

from __future__ import annotations

from pathlib import Path

from referee.rules import Game, card_str, make_rules
from referee.rules.deal import deal_deck
from referee.rules.docs import END_MARKER, START_MARKER, options_markdown
from referee.rules.options import OPTIONS, PRESETS

RULES_MD = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"
REGENERATE = ('run `python -c "from referee.rules.docs import options_markdown; '
              'print(options_markdown())"` and paste its output into docs/RULES.md between '
              f"the lines {START_MARKER} and {END_MARKER}")


def _between_markers(text: str) -> str:
    assert text.count(START_MARKER) == 1 and text.count(END_MARKER) == 1, (
        f"docs/RULES.md must hold exactly one {START_MARKER} and one {END_MARKER}")
    start = text.index(START_MARKER) + len(START_MARKER)
    end = text.index(END_MARKER)
    assert start <= end, f"{START_MARKER} must come before {END_MARKER}"
    return text[start:end]


def test_options_table_in_docs_matches_options():
    block = _between_markers(RULES_MD.read_text(encoding="utf-8"))
    assert block == "\n" + options_markdown() + "\n", (
        "the options table in docs/RULES.md is out of date with referee.rules.options: "
        + REGENERATE)


def test_options_markdown_lists_every_option_and_preset():
    md = options_markdown()
    assert not md.startswith("\n") and not md.endswith("\n")
    for o in OPTIONS:
        assert f"| `{o.name}` | `{o.format(o.default)}` | {o.allowed} |" in md
    for name in PRESETS:
        assert f"| `{name}` |" in md


def test_worked_deal_example_in_docs():
    """The example in 'Seats, dealer and the deal' (--seed 1, game 0, two players)."""
    text = RULES_MD.read_text(encoding="utf-8")
    assert "`9H 6S JS TH 7C TS KH AC KD 7H AD QS 6H QH 8H ...`" in text
    g = Game.new(make_rules(), 2, deck=deal_deck("1", "match:0", 36), dealer=1)
    assert g.dealer == 1
    assert set(g.observe(0)["hand"]) == set("9H JS 7C KH KD AD".split())
    assert set(g.observe(1)["hand"]) == set("6S TH TS AC 7H QS".split())
    assert g.observe(0)["trump"] == "6H"
    assert g.attacker == 1  # 7H, the lowest trump
    assert card_str(g.talon[-1]) == "QH" and g.talon[-1] == g.deck[13]  # drawn first: deck[6n+1]
