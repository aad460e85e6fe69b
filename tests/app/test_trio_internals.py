"""trio's internals that durak-ref uses are all in ``referee/console/trio_internals.py``,
and each works with the installed trio: a trio upgrade that breaks one fails here."""

from __future__ import annotations

import os
import re
from pathlib import Path

import trio
import trio.testing

from referee.console import trio_internals
from referee.console.trio_internals import TRIO_PRIVATE_NAMES, fd_holder

ROOT = Path(__file__).resolve().parents[2]
MODULE = Path(trio_internals.__file__).resolve()


def test_an_fd_streams_holder_is_its_open_fd_and_minus_one_once_closed() -> None:
    """What the compiled pipe lane relies on: ``holder.fd`` is the stream's fd while it is
    open (a read through it gets what the other end wrote) and -1 after ``aclose``."""
    async def main() -> None:
        ours, theirs = os.pipe()
        os.write(theirs, b"frame")
        stream = trio.lowlevel.FdStream(ours)
        holder = fd_holder(stream)
        assert holder is not None, f"trio {trio.__version__}: FdStream has no usable _fd_holder"
        assert holder.fd == stream.fileno() >= 0
        assert os.read(holder.fd, 16) == b"frame"
        await stream.aclose()
        assert holder.fd == -1, f"trio {trio.__version__}: a closed FdStream's holder kept its fd"
        os.close(theirs)
    trio.run(main)


def test_a_stream_without_an_fd_has_no_holder() -> None:
    send, receive = trio.testing.memory_stream_pair()
    assert fd_holder(send) is None and fd_holder(receive) is None


def test_no_other_module_uses_trios_private_names() -> None:
    names = "|".join(re.escape(name) for name in TRIO_PRIVATE_NAMES)
    private = re.compile(rf"\btrio(\.\w+)*\._\w|\b({names})\b")
    offenders = [f"{path.relative_to(ROOT)}:{number} {line.strip()}"
                 for top in ("referee", "protocol") for path in sorted((ROOT / top).rglob("*.py"))
                 if path.resolve() != MODULE
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if private.search(line)]
    assert offenders == [], ("use trio's internals only through referee/console/trio_internals.py "
                             "(with why, and a case here):\n" + "\n".join(offenders))
