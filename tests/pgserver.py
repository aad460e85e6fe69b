"""A real PostgreSQL server for the tests: the machine's ``initdb`` and ``postgres``, started
by referee/records/pgserver.py (the code ``bench distributed`` uses too).

``pg_server`` (one per test session) is a cluster on a free loopback port; its URLs carry
the superuser's generated password, and one more user signs in with a password of its
own (the tests of a wrong one). It runs as a child of the test process and dies with it.
Without the binaries the tests that need them skip, visibly; on CI (``CI=true``) they
fail instead, as ``.ci/run`` installs the ``postgresql`` package.

``pg_url`` gives each test a fresh, empty database on that server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager

import pytest

from referee.records import pgserver
from referee.records.pgserver import PgServer, free_port  # noqa: F401  (the tests' names for them)

PASSWORD_USER, PASSWORD = "pwuser", "right-horse"  #: the one user that needs a password


def missing(reason: str) -> None:
    """Skip visibly, or on CI fail: there the component must exist."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {reason}")
    pytest.skip(reason)


@contextmanager
def cluster(listen: str = "127.0.0.1", clients: Sequence[str] = ()) -> Iterator[PgServer]:
    """A running test server listening on ``listen`` (and taking ``clients`` too, CIDRs)
    with the password user; stopped and removed afterwards. Skips (on CI: fails) without
    the binaries; fails if the server does not start."""
    with ExitStack() as stack:
        try:
            server = stack.enter_context(pgserver.cluster(
                listen, clients, hba=[f"host all {PASSWORD_USER} 127.0.0.1/32 scram-sha-256"]))
        except pgserver.PgServerError as exc:
            if exc.unavailable:
                missing(str(exc))
            pytest.fail(str(exc))
        import psycopg

        with psycopg.connect(server.socket_url(), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {PASSWORD_USER} LOGIN PASSWORD '{PASSWORD}'")
            conn.execute(f"CREATE DATABASE {PASSWORD_USER} OWNER {PASSWORD_USER}")
        yield server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    with cluster() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh, empty database on the session's server: its URL."""
    return pg_server.create_database()
