"""The shape of the code a newcomer reads: no function in ``referee/`` or ``protocol/``
longer than a screen and a half (80 lines, its signature and docstring included), and no
module reaching into another module's private names (a leading underscore means "only
this module relies on it", so a change to it never breaks another file)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("referee", "protocol")
MAX_FUNCTION_LINES = 80


def sources() -> list[Path]:
    return sorted(p for root in SOURCES for p in (ROOT / root).rglob("*.py"))


def long_functions(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line name (N lines)`` for each function of ``path`` (under ``root``) longer
    than MAX_FUNCTION_LINES lines, decorators left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    limit = MAX_FUNCTION_LINES
    return [f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)"
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for length in [(node.end_lineno or node.lineno) - node.lineno + 1] if length > limit]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def module_names(root: Path = ROOT) -> set[str]:
    """The project's modules and packages under ``root``, dotted."""
    return {".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            for top in SOURCES for p in (root / top).rglob("*.py")}


def private_reaches(path: Path, known: set[str], root: Path = ROOT) -> list[str]:
    """Where ``path`` (under ``root``; ``known``: the project's modules) uses another
    module's private name: ``from m import _x``, ``import m._x``, or ``m._x`` on a module
    it imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = parts[:-1]
    where = str(path.relative_to(root))
    found: list[str] = []
    modules: dict[str, str] = {}  # a local name bound to an imported module -> that module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if any(_private(part) for part in alias.name.split(".")):
                    found.append(f"{where}:{node.lineno} import {alias.name}")
                modules[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            if any(_private(part) for part in target.split(".")):
                found.append(f"{where}:{node.lineno} from {target} import ...")
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{where}:{node.lineno} from {target} import {alias.name}")
                elif f"{target}.{alias.name}" in known:
                    modules[alias.asname or alias.name] = f"{target}.{alias.name}"
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in modules):
            found.append(f"{where}:{node.lineno} {modules[node.value.id]}.{node.attr}")
    return found


def test_no_function_is_longer_than_80_lines() -> None:
    offenders = [line for path in sources() for line in long_functions(path)]
    assert offenders == [], (
        f"split these functions (at most {MAX_FUNCTION_LINES} lines each):\n" + "\n".join(offenders))


def test_no_module_uses_another_modules_private_names() -> None:
    known = module_names()
    offenders = [line for path in sources() for line in private_reaches(path, known)]
    assert offenders == [], ("a private name is that module's own; make it public (and document "
                             "it) or move the code that needs it:\n" + "\n".join(offenders))


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    """Both checks on a file that breaks each rule once."""
    (tmp_path / "referee" / "league").mkdir(parents=True)
    (tmp_path / "protocol").mkdir()
    (tmp_path / "referee" / "league" / "tournament.py").write_text("", encoding="utf-8")
    probe = tmp_path / "referee" / "league" / "probe.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    probe.write_text(
        "from . import tournament\n"
        "from .tournament import _check_type\n"
        "import trio._core\n"
        "def fine():\n    return tournament._private_thing, _check_type\n"
        f"def long():\n{body}\n", encoding="utf-8")
    assert long_functions(probe, tmp_path) == ["referee/league/probe.py:6 long (81 lines)"]
    assert private_reaches(probe, module_names(tmp_path), tmp_path) == [
        "referee/league/probe.py:2 from referee.league.tournament import _check_type",
        "referee/league/probe.py:3 import trio._core",
        "referee/league/probe.py:5 referee.league.tournament._private_thing"]
