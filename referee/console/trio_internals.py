"""Every use of trio's internals, in one place, each with why no public API does the job.

An internal may change in any trio release. tests/app/test_trio_internals.py exercises
each one against the installed trio, so an upgrade that breaks one fails there (and
names it) instead of in a match; no other module reaches into trio's private names
(tests/app/test_code_shape.py).

- ``FdStream._fd_holder`` (``fd_holder``): trio keeps a pipe's file descriptor in a
  holder object whose ``fd`` turns -1 the moment the stream is closed, so a closed fd
  number that the kernel has since handed to another file is never used. The compiled
  pipe lane (``seats/pipelane.py``) reads ``holder.fd`` before each synchronous read and
  write: one attribute read on the hot path, where the public ``FdStream.fileno()``
  (which returns the same ``holder.fd``) costs a Python method call per frame. Without a
  holder (another stream, or a trio whose holder changed shape) the lane falls back to
  ``fileno()``, so a broken internal costs speed, never correctness.
"""

from __future__ import annotations

from typing import Any

import trio

#: The private names of trio this module uses (the test checks no other module does).
TRIO_PRIVATE_NAMES = ("_fd_holder",)


def fd_holder(stream: Any) -> Any:
    """The object whose ``fd`` is ``stream.fileno()`` while the stream is open and -1 once
    it is closed (a trio FdStream's holder), when there is one and it says the same now;
    else None (not an FdStream, or trio's holder is not what this module expects)."""
    holder = getattr(stream, "_fd_holder", None)
    if not isinstance(stream, trio.lowlevel.FdStream) or type(getattr(holder, "fd", None)) is not int:
        return None
    return holder if holder is not None and holder.fd == stream.fileno() else None
