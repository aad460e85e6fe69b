"""examples/learning: train.py writes a model; play.py plays it as a protocol bot in the
referee (every check-bot variant, a real match), and refuses a model it cannot read."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.conformance.checkbot import CONFIGS, check_bot
from support import DURAK_REF, ROOT

pytestmark = pytest.mark.process

EXAMPLE = ROOT / "examples" / "learning"


def _example_policy() -> Any:
    """examples/learning/policy.py, loaded from its path (the example is no package)."""
    spec = importlib.util.spec_from_file_location("learning_policy", EXAMPLE / "policy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FEATURE_NAMES = _example_policy().FEATURE_NAMES


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """Weights that prefer covering to taking and low cards to high: no training needed."""
    theta = np.zeros(len(FEATURE_NAMES))
    theta[FEATURE_NAMES.index("cover")], theta[FEATURE_NAMES.index("take")] = 2.0, -2.0
    theta[FEATURE_NAMES.index("rank")] = -1.0
    path = tmp_path / "model.npz"
    np.savez(path, theta=theta, features=np.array(FEATURE_NAMES))
    return path


def test_train_writes_a_model_with_the_policys_features(tmp_path: Path) -> None:
    out = tmp_path / "trained.npz"
    done = subprocess.run([sys.executable, str(EXAMPLE / "train.py"), "--minutes", "0.02",
                           "--eval-games", "10", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "self-play games" in done.stdout
    with np.load(out) as data:
        assert tuple(data["features"]) == FEATURE_NAMES and data["theta"].shape == (len(FEATURE_NAMES),)


async def test_the_trained_agent_passes_check_bot_in_every_variant(model: Path) -> None:
    report = await check_bot([sys.executable, str(EXAMPLE / "play.py"), str(model)])
    assert report.as_dict()["variants"] == {rs.key: "pass" for rs in CONFIGS}, [
        c.summary for c in report.checks if c.status == "fail"]


def test_the_trained_agent_plays_a_match_in_the_referee(model: Path) -> None:
    done = subprocess.run([str(DURAK_REF), "match", f"{sys.executable} {EXAMPLE / 'play.py'} {model}",
                           "builtin:random", "--games", "20", "--seed", "example", "--no-log", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    learned, rnd = result["standings"]
    assert learned["forfeits"] == {} and rnd["forfeits"] == {}
    assert learned["durak"] < rnd["durak"]  # 20 games: these weights lose about 1 in 20


def test_a_model_with_other_features_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.npz"
    np.savez(path, theta=np.zeros(3), features=np.array(["a", "b", "c"]))
    done = subprocess.run([sys.executable, str(EXAMPLE / "play.py"), str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0 and "train again" in done.stderr
