"""Match logs: one JSON Lines file per match, written as the match goes.

Format ``durak-ref-log/1`` (documented for users in logs/README.md):

1. a ``header`` record: versions, rules with every option, bots, time control, seeds;
2. one ``game`` record per finished game: deck order, every decision, the result;
3. a ``footer`` record: the summary, and whether the match was interrupted.

Each line is flushed as soon as it is written, so a killed referee loses at most the
game in flight; a log without a footer is an interrupted match, and every complete
game in it still replays. Files ending in ``.gz`` are written and read with gzip.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

from ..console import jsonout
# LogError lives with the checks that raise it; it is part of this module's interface.
from .logcheck import LogError, check_footer, check_game, check_header

FORMAT = "durak-ref-log/1"


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


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


def fresh_log_path(log_dir: Path, stem: str) -> Path:
    """Claim ``log_dir/STEM.jsonl``, or ``STEM-2.jsonl``, ``-3``, ... if taken, and return
    it: a log that stored games point into is never overwritten. The name is claimed by
    creating the file (empty, 0600) with ``O_EXCL``, so two runs started in the same
    second with the same log dir never get the same name (checking that a name is free
    and opening it later would let both pass the check). Creates ``log_dir`` if needed.
    Raises LogError if the directory cannot be written."""
    path = log_dir / f"{stem}.jsonl"
    try:
        private_mkdir(log_dir)
        n = 1
        while True:
            path = log_dir / (f"{stem}.jsonl" if n == 1 else f"{stem}-{n}.jsonl")
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                                 PRIVATE_FILE))
                return path
            except FileExistsError:
                n += 1
    except OSError as exc:
        raise LogError(f"cannot write the log {path}: {exc.strerror or exc}; "
                       f"give another --log-dir") from None


def timestamp() -> str:
    """Local time for file names: ``20261130-021500``."""
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def new_log_path(log_dir: Path) -> Path:
    """A fresh match log name: ``match-20261130-021500.jsonl`` (suffixed if taken). The
    seed is not in the name: it is secret while the match runs."""
    return fresh_log_path(log_dir, f"match-{timestamp()}")


def encode_line(record: dict[str, Any]) -> bytes:
    """One log record as its line in the log: compact strict JSON (jsonout), UTF-8, with
    the newline. The one encoding of every line, whichever process makes it."""
    return (jsonout.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")


class MatchLogWriter:
    """Appends records to a match log, one JSON object per line, flushed per record."""

    def __init__(self, path: Path) -> None:
        """Create the log file. Raises LogError if it cannot be written there."""
        self.path = path
        self._raw: IO[bytes] | None = None
        self._file: IO[str] | None = None
        self._plain: IO[bytes] | None = None
        self._good = 0  #: bytes of complete lines in a plain log
        self._lines = 0
        try:
            private_mkdir(path.parent)
            if path.suffix == ".gz":
                # GzipFile does not close a file object it was given: close() does.
                self._raw = private_open(path, "wb")
                self._file = gzip.open(self._raw, "wt", encoding="utf-8")
            else:
                # Written with os.write, unbuffered: a failed write (disk full, file size
                # limit) is cut back to the last complete line, so the log stays readable.
                self._plain = private_open(path, "wb")
        except OSError as exc:
            raise LogError(f"cannot write the log {path}: {exc.strerror or exc}; "
                           f"give another --log-dir") from None

    @property
    def lines(self) -> int:
        """How many lines (records) this writer has written: the next one is line
        ``lines + 1`` of the log."""
        return self._lines

    def write(self, record: dict[str, Any]) -> None:
        """Append one record as one line. Raises LogError if it cannot be written (disk
        full, permission, file size limit); the lines before it stay complete."""
        self.write_lines(encode_line(record))

    def write_lines(self, lines: bytes, count: int = 1) -> None:
        """Append ``count`` records already encoded by ``encode_line`` (concatenated), in
        one write: how the tournament writes the records its workers encoded. Raises
        LogError as ``write`` does; on failure the file is cut back to the last complete
        line before these, so none of them is in the log."""
        try:
            if self._plain is not None:
                data = memoryview(lines)
                fd = self._plain.fileno()
                while data:
                    data = data[os.write(fd, data):]
                self._good += len(lines)
            elif self._file is not None:
                self._file.write(lines.decode("utf-8"))
                self._file.flush()
        except OSError as exc:
            if self._plain is not None:
                try:
                    os.ftruncate(self._plain.fileno(), self._good)
                except OSError:
                    pass
            raise LogError(f"cannot write the log {self.path}: {exc.strerror or exc}; its first "
                           f"{self._lines} line(s) are complete") from None
        self._lines += count

    def close(self) -> None:
        """Close the log; a failure to flush its last bytes (gzip) is ignored: every
        complete line was already written."""
        for f in (self._file, self._raw, self._plain):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass


@dataclass
class LogContents:
    """What could be read from a log. ``error`` is set when reading stopped early (a
    corrupt or truncated line); everything before it is in ``games``."""

    path: Path
    header: dict[str, Any]
    games: list[dict[str, Any]]
    footer: dict[str, Any] | None
    error: LogError | None = None


_GAME_KEYS = ("game", "seed", "dealer", "deck", "players", "decisions", "termination", "durak")


def read_log(path: Path) -> LogContents:
    """Read a whole log. Raises LogError if the file or its header is unusable; a bad
    line later on (not JSON, or a record that fails ``logcheck``'s schema checks) stops
    reading and is reported in ``error`` with its line number."""

    header: dict[str, Any] | None = None
    games: list[dict[str, Any]] = []
    footer = None
    try:
        for lineno, record in _records(path):
            if header is None:
                if record.get("type") != "header":
                    raise LogError(f"{path}:{lineno}: expected the header record first, "
                                   f"got type {record.get('type')!r}")
                if record.get("format") != FORMAT:
                    raise LogError(f"{path}:{lineno}: log format {record.get('format')!r} is not "
                                   f"{FORMAT!r}; this durak-ref cannot read it")
                check_header(path, lineno, record)
                header = record
            elif record.get("type") == "game":
                missing = [k for k in _GAME_KEYS if k not in record]
                if missing:
                    raise LogError(f"{path}:{lineno}: game record lacks {', '.join(missing)}")
                check_game(path, lineno, record)
                record["_line"] = lineno
                games.append(record)
            elif record.get("type") == "footer":
                check_footer(path, lineno, record)
                footer = record
            else:
                raise LogError(f"{path}:{lineno}: unknown record type {record.get('type')!r}")
    except LogError as exc:
        if header is None:
            raise
        return LogContents(path, header, games, footer, exc)
    if header is None:
        raise LogError(f"{path}: the log is empty")
    return LogContents(path, header, games, footer)


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        f: IO[str] = (gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz"
                      else open(path, encoding="utf-8"))  # noqa: SIM115
    except OSError as exc:
        raise LogError(f"{path}: cannot open: {exc.strerror or exc}") from None
    with f:
        lineno = 0
        try:
            for lineno, line in enumerate(f, 1):  # noqa: B007
                if not line.strip():
                    continue
                if not line.endswith("\n"):
                    raise LogError(f"{path}:{lineno}: truncated line (the match was cut off "
                                   f"while writing it)")
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise LogError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
                if not isinstance(record, dict):
                    raise LogError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}")
                yield lineno, record
        except (UnicodeDecodeError, EOFError, OSError, gzip.BadGzipFile) as exc:
            raise LogError(f"{path}:{lineno + 1}: unreadable ({exc})") from None


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)
