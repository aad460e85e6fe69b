"""Fixtures shared by the example-bot tests: build the C bot, find node and the JS bot.

A missing tool skips the tests that need it, with the reason shown (``-ra``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
C_DIR = ROOT / "examples" / "c"
JS_DIR = ROOT / "examples" / "javascript"


@pytest.fixture(scope="session")
def c_bot_cmd() -> list[str]:
    make = shutil.which("make")
    cc = shutil.which("cc") or shutil.which("gcc")
    if make is None:
        pytest.skip("C example bot not tested: `make` not found on PATH")
    if cc is None:
        pytest.skip("C example bot not tested: no C compiler (`cc`/`gcc`) on PATH")
    args = [make, "-C", str(C_DIR)]
    if shutil.which("cc") is None:
        args.append(f"CC={cc}")
    res = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"building the C bot failed:\n{res.stdout}\n{res.stderr}"
    bot = C_DIR / "bot"
    assert bot.is_file()
    return [str(bot)]


@pytest.fixture(scope="session")
def js_bot_cmd() -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("JavaScript example bot not tested: `node` not found on PATH")
    if not (JS_DIR / "node_modules" / "@msgpack" / "msgpack").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("JavaScript example bot not tested: node_modules missing and no `npm`")
        res = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=JS_DIR,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert res.returncode == 0, f"npm ci failed:\n{res.stdout}\n{res.stderr}"
    return [node, str(JS_DIR / "bot.js")]
