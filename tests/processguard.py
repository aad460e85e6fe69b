"""The ``process`` marker kept true: a test that starts a process (a bot, the CLI, bwrap,
PostgreSQL, Chromium, a ``serve``) carries it, and a test without it cannot start one.

``pytest -m "not process and not slow"`` is the quick loop (docs/TESTING.md). So that
it stays quick and honest, every test without the marker runs with process creation refused:
``subprocess`` (and so ``trio.run_process``, asyncio's and Playwright's drivers),
``os.fork``, ``os.forkpty`` (pexpect), ``os.posix_spawn``, ``os.system`` and
multiprocessing's spawn all raise :class:`UnmarkedProcessStart`, naming the test and
the marker to add. The refusal is also recorded and fails the test afterwards, so code
that treats a bot that cannot start as a game result (the referee does) cannot hide it.

A test is marked by ``@pytest.mark.process``, by ``pytestmark = pytest.mark.process``
in its module, or automatically when it uses one of :data:`PROCESS_FIXTURES`.
"""

from __future__ import annotations

import _posixsubprocess
import os
import subprocess
from collections.abc import Callable, Generator
from typing import Any

import pytest

MARKER = "process"
#: Fixtures that start a process: a test that uses one (directly or through another
#: fixture) is marked ``process`` at collection.
PROCESS_FIXTURES = frozenset({
    "pg_server", "pg_url",            # tests/pgserver.py: a real PostgreSQL server
    "browser", "browser_page",        # tests/browser/conftest.py: Chromium and Playwright's driver
    "c_bot_cmd", "js_bot_cmd",        # tests/examples/conftest.py: make, npm, the bots themselves
})


class UnmarkedProcessStart(RuntimeError):
    """A test without the ``process`` marker tried to start a process."""


class ProcessGuard:
    """The pytest plugin: marks tests from their fixtures, and refuses process creation
    to every test that is not marked, during its setup, call and teardown."""

    def __init__(self) -> None:
        self.test: str | None = None  # the unmarked test now running, if any
        self.attempts: list[str] = []
        self._install()

    def _install(self) -> None:
        """Replace each way of starting a process with one that first asks the guard.
        Installed once per test process; inactive (a plain call through) between tests
        and during marked ones."""
        def guarded(how: str, real: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                self.check(how, args)
                return real(*args, **kwargs)
            return call

        popen = subprocess.Popen._execute_child  # type: ignore[attr-defined]

        def execute_child(popen_self: Any, args: Any, *rest: Any, **kwargs: Any) -> Any:
            self.check("subprocess.Popen", (args,))
            return popen(popen_self, args, *rest, **kwargs)

        subprocess.Popen._execute_child = execute_child  # type: ignore[attr-defined]
        _posixsubprocess.fork_exec = guarded("_posixsubprocess.fork_exec", _posixsubprocess.fork_exec)
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
            if hasattr(os, name):
                setattr(os, name, guarded(f"os.{name}", getattr(os, name)))

    def check(self, how: str, args: tuple[Any, ...]) -> None:
        """Raise, and remember, when an unmarked test is running."""
        if self.test is None:
            return
        what = f"{how}({args[0]!r})" if args else f"{how}()"
        message = (f"{self.test} started a process ({what[:200]}) but is not marked "
                   f"`{MARKER}`: add @pytest.mark.{MARKER} to it, or "
                   f"`pytestmark = pytest.mark.{MARKER}` to its module (docs/TESTING.md)")
        self.attempts.append(message)
        raise UnmarkedProcessStart(message)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Mark the tests that use a process fixture, before ``-m`` selects."""
        for item in items:
            if PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
                item.add_marker(MARKER)

    def _guarded(self, item: pytest.Item, guard: bool = True) -> Generator[None, None, None]:
        if not guard or item.get_closest_marker(MARKER) is not None:
            yield
            return
        self.test, self.attempts = item.nodeid, []
        try:
            yield
        except BaseException as exc:  # the refusal's own traceback, or whatever followed it
            if not self.attempts or isinstance(exc, KeyboardInterrupt):
                raise
        finally:
            self.test = None
        if self.attempts:
            pytest.fail(self.attempts[0], pytrace=False)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from self._guarded(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from self._guarded(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item,
                                nextitem: pytest.Item | None) -> Generator[None, None, None]:
        """Guarded only when the next test is of the same module or class: otherwise the
        module's and session's fixtures end here too, and a process fixture that marked
        tests started (PostgreSQL, Chromium) may stop its process whichever test is last."""
        same_scope = nextitem is not None and nextitem.parent is item.parent
        return (yield from self._guarded(item, guard=same_scope))


def install(config: pytest.Config) -> None:
    """Register the guard (once) with this pytest run."""
    if not config.pluginmanager.has_plugin("process-guard"):
        config.pluginmanager.register(ProcessGuard(), "process-guard")
