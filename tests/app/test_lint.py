"""Static checks that catch bugs in code paths the tests rarely run (an undefined name in
an error branch, an unused import hiding a typo). Rules: [tool.ruff.lint] and [tool.mypy]
in pyproject."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.fail("ruff is not installed: pip install -e '.[test]'")
    result = subprocess.run([ruff, "check", "referee", "protocol", "tests", "examples/python"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes() -> None:
    """The engine, the protocol and the referee application type-check."""
    result = subprocess.run([sys.executable, "-m", "mypy", "referee", "protocol"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def _strict_packages() -> list[str]:
    """The packages pyproject's [[tool.mypy.overrides]] hold to strict, as paths."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["overrides"]
    strict = [o for o in config if o.get("disallow_untyped_defs") and o.get("disallow_any_generics")]
    return [m.removesuffix(".*").replace(".", "/") for o in strict for m in o["module"]]


def test_the_engine_protocol_table_and_scoring_pass_mypy_strict() -> None:
    """`mypy --strict` itself (not only the override's flags, which could fall behind a
    new mypy's --strict) on the packages the override names, which include these four;
    modules they import are checked at the ordinary settings (follow-imports=silent)."""
    packages = _strict_packages()
    assert {"referee/rules", "protocol", "referee/table", "referee/scoring"} <= set(packages)
    # Its own cache: the run above, at other global settings, would invalidate a shared one.
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                             "--cache-dir", ".mypy_cache/strict", *packages],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
