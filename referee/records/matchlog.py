"""Match logs: one JSON Lines file per match, written as the match goes.

Format ``durak-ref-log/2`` (documented for users in logs/README.md; ``/1``, the same
without signatures, is still read):

1. a ``header`` record: versions, rules with every option, bots, time control, seeds,
   and ``signing_key``, the public half of the key that signs the log;
2. one ``game`` record per finished game: deck order, every decision, the result;
3. a ``footer`` record: the summary, and whether the match was interrupted.

Every line ends with its ``sig`` (referee/records/signing.py: a signature chained to
the line before, made once per line by the writer).

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..console import jsonout

# LogError lives with the checks that raise it; it is part of this module's interface.
from .logcheck import LogError, check_footer, check_game, check_header
from .private import PRIVATE_FILE, private_mkdir, private_open
from .signing import NO_PREVIOUS, LineChecker, SigningKey, referee_key

FORMAT = "durak-ref-log/2"
#: Formats this durak-ref reads: ``/1`` logs are the same records without signatures.
READABLE_FORMATS = ("durak-ref-log/1", FORMAT)


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


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
    """Appends records to a match log, one JSON object per line, flushed per record,
    each line signed (``signing``): the header is given the key's public half."""

    def __init__(self, path: Path, key: SigningKey | None = None) -> None:
        """Create the log file, signed with ``key`` (default: the referee's key,
        ``signing.referee_key``). Raises LogError if it cannot be written there,
        signing.SigningKeyError if the key cannot be made or read."""
        self.path = path
        self._key = referee_key() if key is None else key
        self._previous = NO_PREVIOUS  #: the signature of the last line written
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
        """Append one record as one line (the first, a header, is given ``signing_key``).
        Raises LogError if it cannot be written (disk full, permission, file size
        limit); the lines before it stay complete."""
        if self._lines == 0 and record.get("type") == "header":
            record = dict(record, signing_key=self._key.public)
        self.write_lines([encode_line(record)])

    def write_lines(self, encoded: list[bytes]) -> None:
        """Append records already encoded by ``encode_line``, each signed, in one write:
        how the tournament writes the records its workers encoded. Raises LogError as
        ``write`` does; on failure the file is cut back to the last complete line before
        these, so none of them is in the log."""
        signed = []
        previous = self._previous
        for line in encoded:
            body, previous = self._key.sign_line(previous, line[:-1])
            signed.append(body)
        lines = b"".join(signed)
        count = len(encoded)
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
        self._previous = previous

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
    corrupt or truncated line); everything before it is in ``games``.

    Read with ``check_signatures``: ``signing_key`` is the key the header names (None:
    an unsigned log, format ``/1``), ``signature_problems`` what fails in the header or
    footer, and each game record's ``_signature`` is None when its signature holds,
    else why not (``signing.LineChecker``). Whether the key is one to trust is the
    reader's question (``signing.Trust``)."""

    path: Path
    header: dict[str, Any]
    games: list[dict[str, Any]]
    footer: dict[str, Any] | None
    error: LogError | None = None
    signing_key: str | None = None
    signature_problems: list[str] = field(default_factory=list)

    @property
    def signed(self) -> bool:
        """Whether the log claims signatures: a signing key, or a format that has them."""
        return self.signing_key is not None or self.header.get("format") == FORMAT


_GAME_KEYS = ("game", "seed", "dealer", "deck", "players", "decisions", "termination", "durak")


def read_log(path: Path, check_signatures: bool = False) -> LogContents:
    """Read a whole log. Raises LogError if the file or its header is unusable; a bad
    line later on (not JSON, or a record that fails ``logcheck``'s schema checks) stops
    reading and is reported in ``error`` with its line number. ``check_signatures``:
    check every line's signature against the header's key as it is read (see
    ``LogContents``)."""

    header: dict[str, Any] | None = None
    games: list[dict[str, Any]] = []
    footer = None
    checker = LineChecker() if check_signatures else None
    problems: list[str] = []
    signed = False

    def signature(record: dict[str, Any]) -> str | None:
        assert checker is not None
        rest = {k: v for k, v in record.items() if k != "sig"}
        return checker.check(record.get("sig"), encode_line(rest)[:-1])

    try:
        for lineno, record in _records(path):
            if header is None:
                if record.get("type") != "header":
                    raise LogError(f"{path}:{lineno}: expected the header record first, "
                                   f"got type {record.get('type')!r}")
                if record.get("format") not in READABLE_FORMATS:
                    raise LogError(f"{path}:{lineno}: log format {record.get('format')!r} is not "
                                   f"one of {', '.join(READABLE_FORMATS)}; this durak-ref cannot read it")
                check_header(path, lineno, record)
                header = record
                signed = "signing_key" in record or record.get("format") == FORMAT
                if checker is not None and signed:
                    problem = checker.start(record.get("signing_key")) or signature(record)
                    if problem is not None:
                        problems.append(f"the header (line {lineno}) {_as_clause(problem)}")
            elif record.get("type") == "game":
                missing = [k for k in _GAME_KEYS if k not in record]
                if missing:
                    raise LogError(f"{path}:{lineno}: game record lacks {', '.join(missing)}")
                check_game(path, lineno, record)
                if checker is not None and signed:
                    record["_signature"] = signature(record)
                record["_line"] = lineno
                games.append(record)
            elif record.get("type") == "footer":
                check_footer(path, lineno, record)
                footer = record
                if checker is not None and signed:
                    problem = signature(record)
                    if problem is not None:
                        problems.append(f"the footer (line {lineno}) {_as_clause(problem)}")
            else:
                raise LogError(f"{path}:{lineno}: unknown record type {record.get('type')!r}")
    except LogError as exc:
        if header is None:
            raise
        return LogContents(path, header, games, footer, exc, _key_of(header, checker), problems)
    if header is None:
        raise LogError(f"{path}: the log is empty")
    return LogContents(path, header, games, footer, None, _key_of(header, checker), problems)


def _key_of(header: dict[str, Any], checker: LineChecker | None) -> str | None:
    key = header.get("signing_key") if checker is not None else None
    return key if isinstance(key, str) else None


def _as_clause(problem: str) -> str:
    """A LineChecker problem after a subject: "signature does not match" reads "'s
    signature does not match"; the others ("carries no signature") follow as they are."""
    return "'s " + problem if problem.startswith("signature") else problem


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


def rated_games(path: Path) -> tuple[list[Any], str | None]:
    """The games of ``path`` as ``ratings.RatedGame`` values: a durak-ref log (match,
    tournament, sprt, ladder or arena: its first line is a log header), read and checked
    as ``replay`` reads it, or else a JSON Lines games file (``ratingsio``). The second
    value is a warning when a log was cut short (its complete games are rated). Raises
    ``ratingsio.RatingsInputError`` naming the file (and line) when it cannot be used."""
    from ..scoring.ratings import RatedGame, RatingError
    from ..scoring.ratingsio import RatingsInputError, read_games_jsonl

    try:
        with path.open("rb") as f:
            first = f.readline()
    except OSError as exc:
        raise RatingsInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        head = json.loads(first)
    except (ValueError, UnicodeDecodeError):
        head = None
    if not (isinstance(head, dict) and head.get("type") == "header"):
        return read_games_jsonl(path), None
    try:
        log = read_log(path)
    except LogError as exc:
        raise RatingsInputError(str(exc)) from None
    games = []
    for g in log.games:
        names = tuple(str(p) for p in g["players"])
        try:
            if g["durak"] is not None:
                games.append(RatedGame(names, durak=names[g["durak"]]))
            else:  # a draw: shared by those who went out last (everyone after a stalemate)
                last = tuple(names[s] for s in g.get("last_out") or ()) or names
                games.append(RatedGame(names, last_two=last))
        except RatingError as exc:
            raise RatingsInputError(f"{path}: game {g['game']}: {exc}") from None
    warning = None if log.error is None else (
        f"{log.error}; the {len(games)} complete games before it are rated")
    return games, warning
