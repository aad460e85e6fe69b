"""Static checks that catch bugs in code paths the tests rarely run (an undefined name in
an error branch, an unused import hiding a typo). Rules: [tool.ruff.lint] in pyproject."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

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
