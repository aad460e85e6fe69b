"""Make tests/support.py importable from every test folder, whatever pytest's import mode."""

import os
import sys
from pathlib import Path

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# Every log a test writes is signed with a key of this test process's own
# (referee/records/signing.py), never the key of the user running the tests; the
# referee processes the tests start inherit it.
if not os.environ.get("DURAK_REF_KEY"):
    import tempfile

    os.environ["DURAK_REF_KEY"] = os.path.join(tempfile.mkdtemp(prefix="durak-ref-key-"),
                                               "referee-ed25519.key")

# The real PostgreSQL server fixtures (pg_server, pg_url) for every test folder.
import processguard  # noqa: E402
from pgserver import pg_server, pg_url  # noqa: E402,F401


def pytest_configure(config):  # type: ignore[no-untyped-def]
    """The ``process`` marker, kept true (tests/processguard.py): tests that use a
    process fixture are marked, and an unmarked test that starts a process fails."""
    processguard.install(config)


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Under mutation testing (docs/TESTING.md), while a mutant is tested: the tests
    that were fastest in mutmut's stats run first. mutmut runs a mutant's tests with
    ``-x`` in an arbitrary order (a set), so a mutant that a 0.01 s spec kills could wait
    behind a minute of hidden-information matches; the verdict is the same in any order
    (killed when any test fails, survived when all pass), only the cost changes. Outside
    a mutant run (``MUTANT_UNDER_TEST`` is not a mutant's name) nothing is reordered."""
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        return
    import json

    try:  # mutmut runs the tests in mutants/, where it keeps its stats
        with open("mutmut-stats.json", encoding="utf-8") as f:
            seconds = json.load(f)["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return
    items.sort(key=lambda item: seconds.get(item.nodeid, 0.0))


@pytest.fixture(autouse=True)
def shared_tmp_path(tmp_path: Path) -> Path:
    """Every test's ``tmp_path``, made readable by others (0755; pytest makes it 0700):
    when the referee runs as root (CI), sandboxed bots run as an unprivileged uid, which
    can run a program, read a data file or a --bind path there only if the directory
    lets it (referee/seats/sandbox_view.py). Tests name it where that is the point."""
    tmp_path.chmod(0o755)
    return tmp_path


def pytest_report_header(config):  # type: ignore[no-untyped-def]
    """The run's first lines say whether the hot path runs compiled: an edited compiled
    module turns them all into Python (referee/native/loader.py), which changes no result
    but every speed figure, and must not pass unnoticed."""
    from referee.native.loader import describe, status

    return [f"durak-ref {describe(status())}"]
