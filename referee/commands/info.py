"""What the referee knows: `rules` (every table rule and preset) and `version`."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import __version__
from ..printing.jsonresult import emit_result
from ..rules.options import OPTIONS, PRESETS
from .common import (
    out,
)
from .options import (
    JsonFlag,
)


def rules(
    as_json: Annotated[bool, typer.Option("--json", help="Print the options and presets as JSON.")] = False,
) -> None:
    """List every table rule: name, default, allowed values, meaning; and the presets."""
    if as_json:
        emit_result("rules", {
            "options": [{"name": o.name, "default": o.default, "allowed": o.allowed, "help": o.help}
                        for o in OPTIONS],
            "presets": PRESETS,
        })
        return
    from ..printing.report import presets_table, rules_table
    out.print(rules_table())
    out.print(presets_table())


def version(as_json: JsonFlag = False) -> None:
    """Print the durak-ref and protocol versions, and which hot modules run compiled
    (mypyc, built at install) or as Python (and why)."""
    from protocol.messages import PROTOCOL_VERSION, SUPPORTED_VERSIONS

    from ..native.loader import describe, status
    native = status()
    if as_json:
        emit_result("version", {"durak_ref": __version__, "protocol": PROTOCOL_VERSION,
                   "protocols_supported": list(SUPPORTED_VERSIONS), "native": native})
        return
    out.print(f"durak-ref {__version__}, protocol {PROTOCOL_VERSION}")
    out.print(describe(native), markup=False, highlight=False)
