"""Protocol errors, split by whose fault they are.

``RemoteProtocolError``: the peer sent something wrong (bad frame, bad msgpack, a message
of the wrong shape). ``LocalProtocolError``: this side tried to send something wrong, which
is a bug in this program. Both derive from ``ProtocolError``. None of them is about game
rules: an action that is well-formed but not legal right now is the rules engine's
business, not a protocol error.
"""

from __future__ import annotations

EVIDENCE_BYTES = 64
"""At most this many bytes of offending data are kept, as hex, in an error's evidence."""


def evidence_hex(data: bytes | bytearray | memoryview | None) -> str | None:
    """The first ``EVIDENCE_BYTES`` bytes of ``data`` as spaced hex (``"00 00 00 2a 84"``),
    with ``" ..."`` appended when the data was longer; None for None."""
    if data is None:
        return None
    head = bytes(data[:EVIDENCE_BYTES])
    text = head.hex(" ")
    return text + " ..." if len(data) > EVIDENCE_BYTES else text


class ProtocolError(Exception):
    """Something broke the wire protocol. Use the subclasses: they say whose fault it is.

    Not raised for game-rule violations (an illegal but well-formed action), timeouts or
    closed connections; those are handled by the referee as their own terminations.
    """


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol: the bytes or the message it sent are wrong.

    For the referee this means the bot is at fault (termination ``protocol``). The message
    says exactly what was wrong; ``field`` names the offending field path (``"action.card"``)
    when one applies; ``evidence`` holds up to 64 bytes of the offending data as hex, when
    there were bytes to show. ``code`` is the wire error code to report (``"protocol"``).

    Not a bug of this side, and not an illegal move: a well-formed action that the rules
    do not allow is not a ``RemoteProtocolError``.
    """

    code = "protocol"

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        evidence: bytes | bytearray | memoryview | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.evidence = evidence_hex(evidence)


class UnsupportedVersionError(RemoteProtocolError):
    """The peer's hello names a protocol version this side does not speak.

    The message lists the versions that work. The referee answers with an ``error`` of code
    ``"version"`` and a ``bye``. Not a malformed hello: a hello that fails validation is a
    plain ``RemoteProtocolError``.
    """

    code = "version"


class LocalProtocolError(ProtocolError):
    """This side tried to build or send a message that breaks the protocol: a bug here.

    Never caused by anything the peer did, so it must not be blamed on the peer (a bot must
    not forfeit because the referee built a bad message). Also raised by the Python bot SDK
    when a bot's ``choose`` returns something that is not an action map.
    """
