"""The options and presets tables of docs/RULES.md, rendered from ``OPTIONS``.

docs/RULES.md carries the output of ``options_markdown()`` between the markers
``<!-- options:start -->`` and ``<!-- options:end -->``, and a test checks that the two
agree, so the table in the docs can never drift from the engine's one table of options.
To refresh the docs after changing ``OPTIONS``, ``PRESETS`` or ``PRESET_HELP``::

    python -c "from referee.rules.docs import options_markdown; print(options_markdown())"

and paste the output between the markers (on the lines after the start marker).
Pure: no I/O; imports only from ``.options``.
"""

from __future__ import annotations

from .options import OPTIONS, OPTIONS_BY_NAME, PRESET_HELP, PRESETS

START_MARKER = "<!-- options:start -->"
END_MARKER = "<!-- options:end -->"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def options_markdown() -> str:
    """The options table (option, default, allowed, meaning) and the presets table,
    as Markdown, without a trailing newline."""
    lines = [
        "Options (change one with `--set name=value`):",
        "",
        _row(["option", "default", "allowed", "meaning"]),
        _row(["---"] * 4),
    ]
    for o in OPTIONS:
        lines.append(_row([f"`{o.name}`", f"`{_cell(o.format(o.default))}`",
                           _cell(o.allowed), _cell(o.help)]))
    lines += [
        "",
        "Presets (choose one with `--rules NAME`; each sets only the options shown, every "
        "other option keeps its default):",
        "",
        _row(["preset", "sets", "meaning"]),
        _row(["---"] * 3),
    ]
    for name, values in PRESETS.items():
        sets = " ".join(f"`{k}={_cell(OPTIONS_BY_NAME[k].format(v))}`" for k, v in values.items())
        lines.append(_row([f"`{name}`", sets or "(all defaults)", _cell(PRESET_HELP[name])]))
    return "\n".join(lines)
