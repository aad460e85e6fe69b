"""Text that is safe to show on a terminal, and the console that shows only such text.

A bot writes what it likes: its stderr, its hello's ``version`` and ``author``, the
bytes that an error message quotes. Written raw to the organiser's terminal, an escape
sequence there can set the window title, write the clipboard (OSC 52), clear the
screen, hide text, or reorder it (bidi overrides). ``printable`` removes every such
sequence and character; ``TerminalConsole`` applies it to every piece of text it
renders, whatever its source, so no printer of the referee can forget it. Logs (JSON)
keep the exact text: the JSON encoder escapes control characters there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment

# One alternation, tried left to right at each position:
#  - a 7-bit string command (OSC ``ESC ]``, DCS ``ESC P``, SOS ``ESC X``, PM ``ESC ^``,
#    APC ``ESC _``) up to its terminator (BEL or ST, as ``ESC \`` or the C1 ST); left
#    open, up to the next escape or line end (rich drops a BEL before we see the text);
#  - its 8-bit form (C1 OSC, DCS, SOS, PM, APC), likewise;
#  - a control sequence (CSI ``ESC [`` or the C1 CSI): parameters, intermediates, final;
#  - any other escape (``ESC 7``, ``ESC c``, ``ESC ( B``): intermediates and a final byte;
#  - any lone C0 control but newline and tab, DEL, any C1 control;
#  - the bidirectional controls that reorder what is shown (LRM, RLM, ALM, the
#    embeddings, overrides and isolates).
_UNPRINTABLE = re.compile(
    "\x1b[\\]PX^_].*?(?:\x07|\x1b\\\\|\x9c|(?=[\x1b\n])|$)"
    "|[\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x1b\\\\|\x9c|(?=[\x1b\n])|$)"
    "|(?:\x1b\\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    "|\x1b[\x20-\x2f]*[\x30-\x7e]?"
    "|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
    "|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]",
    re.DOTALL,
)


def printable(text: str) -> str:
    """``text`` without anything a terminal would act on rather than show: escape
    sequences (CSI, OSC, DCS and the other string commands, 7-bit and 8-bit, whole),
    C0 controls except newline and tab, DEL, C1 controls and bidi controls. Printable
    text, newlines and tabs are kept as they are; ``printable(printable(t)) ==
    printable(t)``."""
    if text.isprintable():  # the usual case: nothing to look for
        return text
    return _UNPRINTABLE.sub("", text)


class TerminalConsole(Console):
    """A rich ``Console`` that passes the text of everything it renders through
    ``printable``: a table cell, a ``Text``, a progress line, an f-string holding a bot's
    stderr. Its own styling (colours, cursor moves of a live display) is kept: rich
    holds that apart from the text, as styles and control segments. Every console of
    the referee is one (tests/console/test_printable.py checks that none is built
    otherwise)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No emoji codes either: ":x:" in a bot's name or output is text, not a picture.
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)

    def render(self, renderable: RenderableType,
               options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            text, style, control = segment
            if control or text.isprintable():
                yield segment
            else:
                yield Segment(printable(text), style)
