"""The referee's signing key and the signatures on every line of a match log.

Every log line the referee writes (``matchlog.MatchLogWriter``: header, game records,
footer) carries ``"sig"``, its last member: an Ed25519 signature by the referee's key
over

    ``DOMAIN`` + the previous line's signature (64 bytes; 64 zero bytes for the header)
    + the record's canonical bytes: the record without ``sig``, encoded as every line
    is (``matchlog.encode_line``: compact strict JSON, UTF-8, members in the order
    written), without the newline.

A reader decodes a line and encodes it again to check it, so spacing and the escaping
of characters do not matter, while every name, value and the members' order do.
The header names the public half (``signing_key``, ``ed25519:`` and 64 hex digits).
Chaining each line to the one before makes a removed, repeated or reordered line fail
too, and ties every record to its log's header (its rules, bots and seed). The key is
signed over once per line: once per game, never per decision.

What a good signature proves: a referee holding that key wrote these bytes and they
were not changed since. It proves nothing about a key it does not trust: a forger
re-signs with a key of their own and names it in the header, so a signature counts
only against a trusted public key (``Trust``: the local key file's, or ``--trust``).

The key file (``key_path``): ``$DURAK_REF_KEY``, else
``$XDG_DATA_HOME/durak-ref/referee-ed25519.key`` (``~/.local/share`` when unset), a
PKCS#8 PEM private key created 0600 on first use. It is the referee's, never a bot's:
bots do not get the variable, and the sandbox shows them no home directory.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..errors import UserError
from .private import PRIVATE_FILE, private_mkdir

#: What every signed message starts with (a signature made for anything else never
#: verifies as a log line's).
DOMAIN = b"durak-ref-log-line\0"
#: The chain's start: what the header's signature is chained to.
NO_PREVIOUS = bytes(64)
KEY_ENV = "DURAK_REF_KEY"
KEY_PREFIX = "ed25519:"


class SigningKeyError(UserError, ValueError):
    """The referee's key file cannot be made or read, or a key given to trust is not a
    key. The message names the file or the text."""

    hint = f"set ${KEY_ENV} to a key file durak-ref may create or read (0600), or give --trust ed25519:HEX"


def key_path() -> Path:
    """Where the referee's private key lives (see the module doc)."""
    given = os.environ.get(KEY_ENV)
    if given:
        return Path(given)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "durak-ref" / "referee-ed25519.key"


@dataclass(frozen=True)
class SigningKey:
    """The referee's private key: signs log lines."""

    private: Ed25519PrivateKey
    public: str  #: ``ed25519:`` and the public key's 64 hex digits

    def sign_line(self, previous: bytes, body: bytes) -> tuple[bytes, bytes]:
        """``body`` (a record's canonical bytes: compact JSON ending ``}``, no newline)
        as its signed line (with the newline), chained to ``previous`` (the signature of
        the line before, ``NO_PREVIOUS`` for the first); and the new signature."""
        sig = self.private.sign(DOMAIN + previous + body)
        return body[:-1] + b',"sig":"' + sig.hex().encode() + b'"}\n', sig


def public_text(key: Ed25519PublicKey) -> str:
    return KEY_PREFIX + key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def _from_pem(data: bytes, where: str) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise SigningKeyError(f"{where}: not a PEM private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{where}: not an Ed25519 key")
    return key


def load_or_create(path: Path) -> SigningKey:
    """The key in ``path``, made first if there is none: a new Ed25519 key written 0600
    (and its directory 0700) under a temporary name and linked into place, so two
    referees starting at once end with one key, never half a file. Raises SigningKeyError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        try:
            private_mkdir(path.parent)
            pem = Ed25519PrivateKey.generate().private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption())
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
            try:
                os.fchmod(fd, PRIVATE_FILE)
                os.write(fd, pem)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another referee made it first: use theirs
            finally:
                tmp.unlink()
            data = path.read_bytes()
        except OSError as exc:
            raise SigningKeyError(f"cannot create the referee's signing key {path}: "
                            f"{exc.strerror or exc}") from None
    except OSError as exc:
        raise SigningKeyError(f"cannot read the referee's signing key {path}: {exc.strerror or exc}") from None
    private = _from_pem(data, str(path))
    return SigningKey(private, public_text(private.public_key()))


def referee_key() -> SigningKey:
    """The referee's signing key (``key_path``), loaded (or made) once per path in a
    process."""
    return _loaded(key_path())


@functools.cache
def _loaded(path: Path) -> SigningKey:
    return load_or_create(path)


def parse_public(text: str) -> Ed25519PublicKey | None:
    """The public key ``ed25519:HEX`` names, or None if ``text`` is not one."""
    if not isinstance(text, str) or not text.startswith(KEY_PREFIX):
        return None
    try:
        raw = bytes.fromhex(text[len(KEY_PREFIX):])
        return Ed25519PublicKey.from_public_bytes(raw) if len(raw) == 32 else None
    except ValueError:
        return None


def trusted_key(given: str) -> str:
    """The public key text of ``--trust``: ``ed25519:HEX`` itself, or a file holding a
    private key (the referee's key file) or that text. Raises SigningKeyError."""
    if parse_public(given.strip()) is not None:
        return given.strip()
    path = Path(given)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SigningKeyError(f"--trust {given}: neither ed25519:HEX (64 hex digits) nor a readable "
                        f"key file ({exc.strerror or exc})") from None
    text = data.decode("utf-8", "replace").strip()
    if parse_public(text) is not None:
        return text
    return public_text(_from_pem(data, f"--trust {given}").public_key())


@dataclass(frozen=True)
class Trust:
    """Which key a log's signatures must be made with: ``key`` (``ed25519:HEX``; None:
    no trusted key is known, so a signature shows only that the log is whole), named by
    ``source``; ``require``: an unsigned log fails instead of being reported."""

    key: str | None
    source: str
    require: bool = False


def local_trust(given: str | None = None, require: bool = False) -> Trust:
    """The trust of a check: the key ``given`` (``--trust``), else the local referee's
    key file's public half if that file exists (it is not created here). Raises SigningKeyError."""
    if given is not None:
        return Trust(trusted_key(given), f"--trust {given}", require)
    path = key_path()
    if not path.exists():
        return Trust(None, f"no key file at {path}", require)
    return Trust(referee_key().public, f"the key file {path}", require)


class LineChecker:
    """Checks a log's lines in order against the key its header names (``check``)."""

    def __init__(self) -> None:
        self.key: Ed25519PublicKey | None = None
        self.key_text: str | None = None
        self.previous = NO_PREVIOUS

    def start(self, header_key: object) -> str | None:
        """Take the header's ``signing_key``; a problem text if it names no key."""
        if header_key is None:
            return None
        self.key = parse_public(header_key)  # type: ignore[arg-type]
        if self.key is None:
            return f"names signing_key {header_key!r}, which is not ed25519: and 64 hex digits"
        self.key_text = str(header_key)
        return None

    def check(self, sig: object, body: bytes) -> str | None:
        """The signature of the next line: ``sig``, its ``sig`` member as read, over
        ``body``, the record's canonical bytes (see the module doc). None if it holds,
        else why not. A line without a signature in a signed log fails."""
        try:
            signature = bytes.fromhex(sig) if isinstance(sig, str) and len(sig) == 128 else None
        except ValueError:
            signature = None
        previous, self.previous = self.previous, signature or NO_PREVIOUS
        if signature is None:
            return ("carries no signature (it was removed, or the line was written by something else)"
                    if sig is None else f"has a sig that is not 128 hex digits: {str(sig)[:20]!r}")
        if self.key is None:
            return "is signed, but the header names no signing key"
        try:
            self.key.verify(signature, DOMAIN + previous + body)
        except InvalidSignature:
            return ("signature does not match: the record was changed after the referee wrote "
                    "it (or a line before it was removed or moved)")
        return None
