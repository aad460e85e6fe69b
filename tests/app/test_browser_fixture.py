"""The browser tests' fixture without a browser: a visible skip on a developer's machine,
a failure on CI (where .ci/run installs Chromium, so a missing one is a broken set-up)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]


def _run_a_browser_test(tmp_path: Path, ci: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DURAK_CHROMIUM=str(tmp_path / "no-chromium"), CI=ci)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs",
                           "tests/browser/test_replay_viewer.py", "-k", "link_opens"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("ci, outcome", [("", "1 skipped"), ("true", "1 error")])
def test_a_missing_chromium_skips_visibly_except_on_ci(tmp_path: Path, ci: str, outcome: str) -> None:
    res = _run_a_browser_test(tmp_path, ci)
    assert outcome in res.stdout, res.stdout + res.stderr
    assert f"Chromium at {tmp_path / 'no-chromium'}" in res.stdout
