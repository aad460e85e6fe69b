"""Every sandbox test's tmp_path is readable by others (see ``shared_tmp_path``): the
attack bots run as the sandbox's unprivileged uid when the referee is root, and tests
bind parts of tmp_path in for them."""

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _tmp_path_readable_by_the_sandbox_uid(shared_tmp_path: Path) -> None:
    pass
