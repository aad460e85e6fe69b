"""Strict JSON: the one emitter for every ``--json`` output, match log line and store cell.

Python's ``json`` writes ``Infinity``, ``-Infinity`` and ``NaN`` for non-finite floats,
which no other JSON parser accepts (``JSON.parse``, ``jq``, Go, Rust all reject them).
A non-finite figure (an Elo of -inf after a 0% score, a rate over zero games) means "no
finite value", so it is written as ``null``; ``allow_nan=False`` then guarantees that
nothing non-finite slips through another way (it raises ValueError: our bug).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, TextIO


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (inf, -inf, nan), at any depth in dicts,
    lists and tuples, replaced by None. Other values are returned as they are."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` that writes strict JSON: non-finite floats become null (``finite``)."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)


def strict_loads(text: str) -> Any:
    """``json.loads`` that refuses NaN, Infinity and -Infinity (as every strict parser does)."""
    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def emit_json(data: Any, file: TextIO | None = None) -> None:
    """Print ``data`` as one strict JSON document (indented) on ``file`` (stdout): the
    ``--json`` result of a command."""
    (file or sys.stdout).write(dumps(data, indent=2) + "\n")
