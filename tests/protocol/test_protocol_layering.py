"""protocol/ is sans-IO: no trio, typer, rich, sockets, subprocesses, and no referee."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import protocol

FORBIDDEN = {"trio", "typer", "rich", "socket", "subprocess", "asyncio", "selectors", "referee"}
PACKAGE = Path(protocol.__file__).parent


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_forbidden_imports_in_protocol_sources() -> None:
    offenders = {path.name: sorted(imported_roots(path) & FORBIDDEN)
                 for path in sorted(PACKAGE.glob("*.py"))}
    assert {name: bad for name, bad in offenders.items() if bad} == {}


@pytest.mark.process
def test_importing_protocol_pulls_in_nothing_forbidden() -> None:
    code = (
        "import sys, pkgutil, importlib, protocol\n"
        "for info in pkgutil.iter_modules(protocol.__path__):\n"
        "    importlib.import_module('protocol.' + info.name)\n"
        f"print(sorted(m for m in {sorted(FORBIDDEN)!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
