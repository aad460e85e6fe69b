"""Files only the user running the referee may read or write: every log, stderr log,
store and key durak-ref records is made with these modes, whatever the umask."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

#: Modes of everything durak-ref records (logs, stderr logs, the store): only the user
#: running the referee may read or change them, never another account on the machine.
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_mkdir(path: Path) -> None:
    """Create directory ``path`` and its missing parents, each 0700. A directory that
    already exists keeps its mode: it is the user's, not ours. Raises OSError."""
    missing = []
    d = path
    while not d.exists():
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:  # another referee process made it first
            continue
        os.chmod(d, PRIVATE_DIR)  # the umask may have cleared bits mkdir's mode asked for


@overload
def private_open(path: Path, mode: Literal["w", "a"] = "w") -> TextIO: ...
@overload
def private_open(path: Path, mode: Literal["wb", "ab"]) -> BinaryIO: ...
def private_open(path: Path, mode: str = "w") -> IO[Any]:
    """Open ``path`` for writing as a file only its owner can read or write (0600),
    whatever the umask, truncating it (``"w"``, ``"wb"``) or appending (``"a"``,
    ``"ab"``). A file that existed is made 0600 too. Its directory must exist (see
    ``private_mkdir``). Raises OSError."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    fd = os.open(path, flags, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
        if "b" in mode:
            return os.fdopen(fd, mode)
        return os.fdopen(fd, mode, encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise
