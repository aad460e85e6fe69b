"""The ``process`` marker is true (tests/processguard.py): a test without it that starts a
process fails, naming itself and the marker to add, whichever way it starts one, in its
fixtures too, and even when it swallows the refusal; a marked test, or one using a
process fixture, runs as before, and so does the end of a module fixture that a marked
test started, in whichever test's teardown it comes. Specified on a real pytest run of a small test file, in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # the pytest run under test is a process

TESTS = Path(__file__).resolve().parents[1]

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import pytest
import processguard

def pytest_configure(config):
    processguard.install(config)

@pytest.fixture
def c_bot_cmd():
    return ["true"]
"""

TESTS_FILE = """
import multiprocessing, os, subprocess
import pytest, trio

def test_unmarked_subprocess_run():
    subprocess.run(["true"])

def test_unmarked_that_swallows_the_refusal():
    try:
        subprocess.run(["true"])
    except Exception:
        pass

def test_unmarked_fork():
    os.fork()

def test_unmarked_posix_spawn():
    os.posix_spawn("/bin/true", ["true"], os.environ)

def test_unmarked_trio_run_process():
    trio.run(trio.run_process, ["true"])

def test_unmarked_multiprocessing_spawn():
    multiprocessing.get_context("spawn").Process(target=print).start()

@pytest.mark.process
def test_marked_starts_a_process():
    subprocess.run(["true"], check=True)

def test_unmarked_with_a_process_fixture(c_bot_cmd):
    subprocess.run(c_bot_cmd, check=True)

@pytest.fixture
def starts_a_process_at_teardown():
    yield
    subprocess.run(["true"])

def test_unmarked_whose_fixture_starts_a_process_at_teardown(starts_a_process_at_teardown):
    pass

@pytest.fixture(scope="module")
def stops_its_process_at_module_end():
    yield
    subprocess.run(["true"], check=True)

@pytest.mark.process
def test_marked_with_a_module_fixture(stops_its_process_at_module_end):
    pass

def test_unmarked_and_in_process():
    assert sum(range(4)) == 6
"""

UNMARKED = ["test_unmarked_subprocess_run", "test_unmarked_that_swallows_the_refusal",
            "test_unmarked_fork", "test_unmarked_posix_spawn", "test_unmarked_trio_run_process",
            "test_unmarked_multiprocessing_spawn"]


def run_pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_guarded.py").write_text(TESTS_FILE)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --strict-markers -p no:cacheprovider -p no:xdist -p no:randomly\n"
        "markers =\n    process: starts a process\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfE", *args, str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_an_unmarked_test_that_starts_a_process_fails_naming_itself_and_the_marker(
        tmp_path: Path) -> None:
    done = run_pytest(tmp_path)
    out = done.stdout
    for name in UNMARKED:
        assert f"FAILED test_guarded.py::{name}" in out, out
        assert f"test_guarded.py::{name} started a process (" in out, out
    assert "but is not marked `process`: add @pytest.mark.process to it" in out
    teardown = "test_unmarked_whose_fixture_starts_a_process_at_teardown"
    assert f"ERROR test_guarded.py::{teardown}" in out, out
    assert f"test_guarded.py::{teardown} started a process (" in out, out
    # the module fixture of a marked test stops its process in the last test's teardown
    assert "ERROR test_guarded.py::test_unmarked_and_in_process" not in out, out
    assert f"{len(UNMARKED)} failed, 5 passed, 1 error" in out, out
    assert done.returncode == 1


def test_not_process_selects_the_unmarked_tests_and_leaves_out_the_fixture_users(
        tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "-m", "not process")
    out = done.stdout
    assert f"{len(UNMARKED)} failed, 2 passed, 3 deselected, 1 error" in out, out
    for name in ("test_marked_starts_a_process", "test_unmarked_with_a_process_fixture",
                 "test_marked_with_a_module_fixture"):
        assert name not in out, out
