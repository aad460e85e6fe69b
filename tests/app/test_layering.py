"""The layers of DESIGN.md: the rules engine and the protocol are pure.

``referee/rules`` may import only the standard library, itself and ``referee/errors`` (the
user's error base, which imports nothing); ``protocol`` the
standard library and msgpack. Neither may import trio, typer, rich, sockets or
subprocesses, and importing them must not pull those in indirectly either.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IO_MODULES = {"trio", "typer", "rich", "socket", "subprocess", "asyncio", "selectors", "click"}
LAYERS = {
    "referee/rules": IO_MODULES | {"msgpack", "protocol"},
    "protocol": IO_MODULES | {"referee"},
}


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layer_sources_import_nothing_forbidden(layer: str) -> None:
    files = sorted((ROOT / layer).glob("*.py"))
    assert files, f"no sources found under {layer}"
    offenders = {p.name: sorted(imported_roots(p) & LAYERS[layer]) for p in files}
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.process
@pytest.mark.parametrize("package", ["referee.rules", "protocol"])
def test_importing_a_layer_pulls_in_no_io_library(package: str) -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        f"pkg = importlib.import_module({package!r})\n"
        "for info in pkgutil.iter_modules(pkg.__path__):\n"
        f"    importlib.import_module({package!r} + '.' + info.name)\n"
        f"print(sorted(m for m in {sorted(IO_MODULES)!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"


def test_the_cli_module_stays_thin() -> None:
    """cli.py parses, calls and prints: no game logic, no trio, no subprocesses."""
    roots = imported_roots(ROOT / "referee" / "cli.py")
    assert not roots & {"trio", "subprocess", "socket", "msgpack"}


#: The modules of the decision path that are written to be compiled by mypyc: pure
#: Python that reaches trio only through the objects it is handed.
SYNCHRONOUS_PATH = ["referee.table.framelane", "referee.seats.pipelane", "referee.table.requests",
                    "referee.table.clock"]


@pytest.mark.process
@pytest.mark.parametrize("module", SYNCHRONOUS_PATH)
def test_the_synchronous_decision_path_pulls_in_no_io_library(module: str) -> None:
    code = (
        f"import importlib, sys\nimportlib.import_module({module!r})\n"
        f"print(sorted(m for m in {sorted(IO_MODULES)!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"
