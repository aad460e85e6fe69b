"""Which of the compiled modules run compiled: decided once, before any of them is imported.

``setup.py`` compiles a few hot modules with mypyc and records, in ``compiled.json`` (next to this file), the
SHA-256 of each module's source at build time. A compiled extension sits next to its
``.py`` and Python would import it in preference, even after the ``.py`` was edited
(an editable checkout, or mutation testing, which mutates the sources in a copy of the
tree). So at start-up (``referee/__init__.py`` calls ``choose``), when any compiled
module's ``.py`` no longer hashes to its recorded digest, or when ``DURAK_PURE_PYTHON`` is
set (not "" or "0"), every compiled module is imported from its ``.py`` instead, by a
finder placed ahead of the standard ones. Behaviour is the same either way; only speed
differs. ``status()`` says what runs, for ``durak-ref bench`` and ``--version``.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .hotpath import COMPILED

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  #: the directory holding referee/
_MANIFEST = Path(__file__).with_name("compiled.json")
#: Modules imported from source although compiled, and why (module name -> reason).
_FROM_SOURCE: dict[str, str] = {}


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Finds the listed modules as their ``.py`` source, ignoring a compiled extension."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        leaf = fullname.rpartition(".")[2] + ".py"
        for entry in path or ():
            candidate = os.path.join(entry, leaf)
            if os.path.isfile(candidate):
                return importlib.util.spec_from_file_location(fullname, candidate)
        return None


def _manifest() -> dict[str, str]:
    """Compiled module -> source digest at build time; {} without a (readable) manifest."""
    try:
        modules = json.loads(_MANIFEST.read_text()).get("modules", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return {str(k): str(v) for k, v in modules.items()} if isinstance(modules, dict) else {}


def choose() -> None:
    """Route the compiled modules to their sources when they must run as Python: all of
    them, if ``DURAK_PURE_PYTHON`` is set or any one's source changed since the build
    (mypyc compiles them as one group that calls across modules natively: a compiled
    module given a Python ``Game`` would refuse it). Idempotent; to take effect it must
    run before those modules are first imported."""
    if any(isinstance(f, _SourceFirst) for f in sys.meta_path):
        return
    manifest = _manifest()
    if os.environ.get("DURAK_PURE_PYTHON", "") not in ("", "0"):
        why = "DURAK_PURE_PYTHON is set"
    else:
        changed = []
        for name, digest in manifest.items():
            source = _PACKAGE_ROOT / (name.replace(".", "/") + ".py")
            try:
                if hashlib.sha256(source.read_bytes()).hexdigest() != digest:
                    changed.append(str(source.relative_to(_PACKAGE_ROOT)))
            except OSError:
                pass  # no source next to it: only the extension can be imported
        if not changed:
            return
        why = f"{', '.join(changed)} changed since it was compiled (compiled modules run together)"
    for name in manifest:
        _FROM_SOURCE[name] = why
    if _FROM_SOURCE:
        sys.meta_path.insert(0, _SourceFirst(frozenset(_FROM_SOURCE)))


def status() -> dict[str, Any]:
    """What runs compiled: ``{"compiled": [...], "python": {module: reason}}`` over the
    hot path's modules (``hotpath.COMPILED``; an install with no compiled build at all
    gives two empty parts). Imports them."""
    compiled: list[str] = []
    python: dict[str, str] = {}
    if not _manifest():
        return {"compiled": compiled, "python": python}
    for name in sorted(COMPILED):
        try:
            module = importlib.import_module(name)
        except ImportError as e:  # pragma: no cover - a broken build; say so, do not crash
            python[name] = f"cannot be imported: {e}"
            continue
        spec = module.__spec__
        if spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            compiled.append(name)
        else:
            python[name] = _FROM_SOURCE.get(name, "not compiled (its C build failed or is missing)")
    return {"compiled": compiled, "python": python}


def describe(native: dict[str, Any]) -> str:
    """``status()`` in one line for people."""
    compiled, python = native["compiled"], native["python"]
    if not compiled and not python:
        return "hot path: Python (installed without a compiled build)"
    if not python:
        return f"hot path: compiled with mypyc ({len(compiled)} modules)"
    reasons = sorted(set(python.values()))
    return (f"hot path: Python, {len(python)} of {len(compiled) + len(python)} modules "
            f"({'; '.join(reasons)})")
