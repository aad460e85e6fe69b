"""A raw bot (no SDK, which keeps a private copy of stdout): hello, then at its first
request MODE ``close`` closes its stdout, or ``cut`` writes a frame header and one byte
of the body and closes its stdout; either way it stays alive (sleeping)."""

import os
import struct
import sys
import time

import msgpack


def read() -> dict:
    (size,) = struct.unpack(">I", sys.stdin.buffer.read(4))
    return msgpack.unpackb(sys.stdin.buffer.read(size))


def write(message: dict) -> None:
    body = msgpack.packb(message)
    os.write(1, struct.pack(">I", len(body)) + body)


while True:
    message = read()
    if message["type"] == "hello":
        write({"type": "hello", "name": "closer", "protocol": 1})
    elif message["type"] == "request":
        if sys.argv[1] == "cut":
            os.write(1, struct.pack(">I", 50) + b"\x81")
        os.close(1)
        time.sleep(60)
