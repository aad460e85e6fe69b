"""Lift the user's errors out of trio's exception groups.

An error that is the user's (a full disk, an unwritable log, a port in use) raised in a
task reaches ``trio.run``'s caller wrapped in one or more ``ExceptionGroup``s; the CLI
needs it bare to print one line and exit 2 instead of a traceback and exit 3.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def lifted(*kinds: type[BaseException]) -> Iterator[None]:
    """Inside, a group holding an exception of one of ``kinds`` raises the first such
    exception instead (the others in the group are follow-on failures of the same run)."""
    try:
        yield
    except BaseExceptionGroup as group:
        leaf = first_of(group, kinds)
        if leaf is None:
            raise
        raise leaf from None


def first_of(group: BaseExceptionGroup, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first exception of one of ``kinds`` in ``group`` (nested groups searched in
    order), or None if it holds none."""
    wanted = group.subgroup(kinds)
    if wanted is None:
        return None
    leaf: BaseException = wanted
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    return leaf


def leaves(group: BaseException) -> list[BaseException]:
    """Every exception in ``group`` that is not itself a group, depth first (``[group]``
    for a plain exception)."""
    if isinstance(group, BaseExceptionGroup):
        return [leaf for e in group.exceptions for leaf in leaves(e)]
    return [group]
