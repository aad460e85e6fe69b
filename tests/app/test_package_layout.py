"""The package layout is the architecture (README "Layout").

``referee/`` is split into subpackages by concern, and their import rule is an order:
each subpackage may import only the subpackages before it in ``LAYERS`` (and itself,
the root package ``referee`` for ``__version__``, and ``protocol``); ``referee/cli.py``
may import all of them. On top of that no import cycle between modules (no two modules
importing each other, even lazily inside a function), and no module at ``referee/`` top
level but the entry points. Imports under ``if TYPE_CHECKING:`` are annotations, not
dependencies, and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "referee"
#: The import order of the subpackages, lowest first.
LAYERS = [
    "errors",
    "native",
    "rules",
    "console",
    "scoring",
    "bots",
    "records",
    "seats",
    "table",
    "replay",
    "human",
    "conformance",
    "printing",
    "web",
    "league",
    "env",
    "bench",
    "commands",
]
TOP_LEVEL = {"__init__.py", "__main__.py", "cli.py"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)
    visit(tree)
    return found


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The referee modules ``name`` imports (anywhere in it, at run time)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "referee"}
            continue
        if node.level:
            base = package[: len(package) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if target.split(".")[0] != "referee":
            continue
        for alias in node.names:
            full = f"{target}.{alias.name}"
            out.add(full if full in known else target)
    return {m for m in out if m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imported_modules(name, path, known) for name, path in mods.items()}


def subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_the_checker_sees_lazy_and_relative_imports_but_not_annotations(tmp_path: Path) -> None:
    """A module cannot hide a dependency inside a function; TYPE_CHECKING imports are free."""
    source = tmp_path / "mod.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from ..seats import players\n"
        "if TYPE_CHECKING:\n"
        "    from ..league.tournament import TournamentSettings\n"
        "def later():\n"
        "    from ..league import store\n"
        "    import referee.bench.bench\n", encoding="utf-8")
    known = {"referee.seats.players", "referee.league.store", "referee.bench.bench"}
    assert imported_modules("referee.table.mod", source, known) == known


def test_the_layers_are_the_subpackages_on_disk() -> None:
    on_disk = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert on_disk == set(LAYERS), "a subpackage of referee/ is missing from LAYERS or from disk"


@pytest.mark.parametrize("name", LAYERS)
def test_each_subpackage_states_its_concern(name: str) -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 8, f"referee/{name}/__init__.py needs a docstring"


def test_only_the_entry_points_stay_at_the_top_level() -> None:
    stray = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in TOP_LEVEL)
    assert stray == [], ("put each module in the subpackage of its concern (README Layout): "
                         + ", ".join(stray))


def test_a_subpackage_imports_only_the_ones_before_it() -> None:
    rank = {name: i for i, name in enumerate(LAYERS)}
    wrong = []
    for module, deps in sorted(graph().items()):
        mine = subpackage(module)
        if mine is None:
            continue  # referee/__init__.py and cli.py: the entry points may import anything
        for dep in sorted(deps):
            theirs = subpackage(dep)
            if theirs is None and dep not in ("referee", "referee.__init__"):
                wrong.append(f"{module} imports {dep}, an entry point")
            elif theirs is not None and rank[theirs] > rank[mine]:
                wrong.append(f"{module} ({mine}) imports {dep} ({theirs}), which comes after it")
    assert wrong == [], "the import order is " + " < ".join(LAYERS) + ":\n" + "\n".join(wrong)


def test_no_import_cycle_between_modules() -> None:
    """Tarjan's strongly connected components: every component must be one module."""
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            strongconnect(v)
    assert cycles == [], f"modules that import each other (directly or in a ring): {cycles}"
