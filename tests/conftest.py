"""Make tests/support.py importable from every test folder, whatever pytest's import mode."""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# The real PostgreSQL server fixtures (pg_server, pg_url) for every test folder.
from pgserver import pg_server, pg_url  # noqa: E402,F401


def _mutmut_test_durations() -> dict[str, float]:
    """Each test's duration from mutmut's stats pass, when this pytest runs a mutant's
    tests inside mutmut (its working directory is ``mutants/``); empty otherwise."""
    if not os.environ.get("MUTANT_UNDER_TEST"):
        return {}
    try:
        with open("mutmut-stats.json") as f:
            return json.load(f)["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return {}


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ARG001 (pytest's signature)
    """Under mutmut, a mutant's tests run fastest first: mutmut stops at the first failure
    (-x) but passes the tests in no particular order, and one long property test first
    would cost every mutant a fast specification kills. Outside mutmut: collection order."""
    durations = _mutmut_test_durations()
    if durations:
        items.sort(key=lambda item: durations.get(item.nodeid, 0.0))
