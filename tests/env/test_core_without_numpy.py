"""The core install needs none of the env extra: every referee module outside referee/env
imports with numpy, pettingzoo, gymnasium and open_spiel missing, and ``bench env``
says what to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import ROOT

pytestmark = pytest.mark.process

#: Makes the env extra's packages unimportable, as on a core install.
BLOCK = """
import sys
for name in ("numpy", "pettingzoo", "gymnasium", "pyspiel", "open_spiel"):
    sys.modules[name] = None
"""


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK + code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_every_core_module_imports_without_the_env_extra() -> None:
    done = run("""
import importlib, pkgutil, referee, protocol
names = [m.name for pkg in (referee, protocol) for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
         if not m.name.startswith("referee.env") and not m.name.endswith("__main__")]
for name in names:
    importlib.import_module(name)
print(len(names))
""")
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 50


def test_bench_env_without_the_extra_says_what_to_install() -> None:
    done = run("""
from referee.cli import main
sys.argv = ["durak-ref", "bench", "env", "--games", "1", "--rounds", "1"]
main()
""")
    assert done.returncode == 2, done.stderr
    assert "pip install -e '.[env]'" in done.stderr + done.stdout
