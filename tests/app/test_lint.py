"""Static checks that catch bugs in code paths the tests rarely run (an undefined name in
an error branch, an unused import hiding a typo). Rules: [tool.ruff.lint] and [tool.mypy]
in pyproject."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
#: What ruff checks (the pre-commit hook's ``files`` names the same folders).
RUFF_PATHS = ("referee", "protocol", "tests", "examples/python")


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.fail("ruff is not installed: pip install -e '.[test]'")
    result = subprocess.run([ruff, "check", *RUFF_PATHS],
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


def test_the_pre_commit_hooks_are_a_valid_config_running_these_checks() -> None:
    """`pre-commit install` sets up ruff, ruff format (manual stage until the tree is
    formatted) and mypy: a config pre-commit accepts, whose ruff hook sees every path the
    ruff test checks."""
    config_path = ROOT / ".pre-commit-config.yaml"
    result = subprocess.run([sys.executable, "-m", "pre_commit", "validate-config", str(config_path)],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, (result.stdout + result.stderr
                                    + "\n(pre-commit missing? pip install -e '.[test]')")
    hooks = {h["id"]: h for repo in yaml.safe_load(config_path.read_text())["repos"] for h in repo["hooks"]}
    assert {"ruff", "ruff-format", "mypy"} <= hooks.keys()
    assert hooks["mypy"]["entry"] == "mypy referee protocol"  # the command test_mypy_passes runs
    for path in RUFF_PATHS:
        assert re.search(hooks["ruff"]["files"], f"{path}/x.py"), path
