"""Tournament worker processes: one referee per core.

One trio process cannot referee faster than one core allows, and a referee spends
about as long per decision as a quick bot does, so a tournament with ``--concurrency
K`` > 1 runs K worker processes (``python -m referee.worker``), each playing one game at
a time with its own pool of bot processes. The parent keeps the schedule, the store and
the log; it speaks to each worker over the worker's stdin/stdout with the same framing
as the bot protocol (4-byte length + msgpack map):

    parent -> worker: {"type": "setup", "settings": {...}, "stderr_stem": str or nil,
                       "sandbox": {...} or nil}   (resolved in the parent; see sandbox.py)
    parent -> worker: {"type": "game", "index", "deal", "rotation", "table", "seed"}
    worker -> parent: {"type": "record", "record": {...}, "seats": [...], "started", "ended"}
    worker -> parent: {"type": "start_error", "message": str}    (a bot cannot start)

End of stdin (the parent finished) makes the worker close its bots and exit. If the
parent dies, the kernel sends the worker SIGTERM (Linux: the parent-death signal),
and SIGTERM, like Ctrl-C, makes the worker close its bots before it exits, even in
the middle of a game with a bot that never answers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
import sys
from pathlib import Path
from typing import Any

import trio

from protocol.codec import FrameDecoder, encode

from .match import GameRecord, record_from_dict
from .matchlog import utc_now
from .players import BotStartError
from .sandbox import Sandbox
from .store import SeatRow
from .tournament import PlayerPool, ScheduledGame, TournamentSettings, seat_rows

MAX_FRAME = 64 << 20  # a game record with every decision; generous, still bounded


class WorkerError(RuntimeError):
    """A worker process broke its side of the parent's framing: a bug in durak-ref."""


async def _read(stream: trio.abc.ReceiveStream, decoder: FrameDecoder) -> dict[str, Any] | None:
    while True:
        message = decoder.next_message()
        if message is not None:
            return message
        chunk = await stream.receive_some(1 << 16)
        if not chunk:
            return None
        decoder.feed(chunk)


async def serve_games(stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream) -> None:
    """The worker's loop: set up, then play each game it is sent and send its record."""
    decoder = FrameDecoder(MAX_FRAME, strict=False)
    setup = await _read(stdin, decoder)
    if setup is None:
        return
    settings = TournamentSettings.from_dict(setup["settings"])
    config = settings.validate()
    stem = Path(setup["stderr_stem"]) if setup.get("stderr_stem") else None
    # The parent resolved the sandbox (and warned); None: it had no program bots.
    sandbox = Sandbox.from_dict(setup["sandbox"]) if setup.get("sandbox") else None
    counter = iter(range(1, 1 << 62))
    async with trio.open_nursery() as nursery:
        pool = PlayerPool(settings, config, nursery, stem, sandbox)
        try:
            while True:
                message = await _read(stdin, decoder)
                if message is None:
                    break
                sg = ScheduledGame(message["index"], message["deal"], message["rotation"],
                                   tuple(message["table"]), message["seed"])
                try:
                    record, started = await pool.play(sg, counter.__next__, settings.fresh_bots)
                except BotStartError as exc:
                    await stdout.send_all(encode({"type": "start_error", "message": str(exc)}))
                    break
                await stdout.send_all(encode({
                    "type": "record", "record": record.as_dict(), "started": started,
                    "ended": utc_now(), "seats": [dataclasses.asdict(s) for s in seat_rows(record)]}))
        finally:
            await pool.close()
            nursery.cancel_scope.cancel()


class WorkerClient:
    """The parent's handle on one worker process: ``start``, then ``play`` games one at a
    time, then ``close`` (always: it ends the worker, which closes its bots)."""

    def __init__(self, number: int, settings: TournamentSettings, stderr_stem: Path | None,
                 sandbox: Sandbox | None = None) -> None:
        self.number = number
        self.sandbox = None if sandbox is None else replace(sandbox, warn=False)
        self.settings = settings
        self.stderr_stem = stderr_stem
        self.process: trio.Process | None = None
        self._decoder = FrameDecoder(MAX_FRAME, strict=False)

    async def start(self) -> None:
        self.process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "referee.worker"], stdin=-1, stdout=-1)
        stem = self.stderr_stem
        assert self.process.stdin is not None
        await self.process.stdin.send_all(encode({
            "type": "setup", "settings": self.settings.as_dict(),
            "sandbox": None if self.sandbox is None else self.sandbox.as_dict(),
            "stderr_stem": None if stem is None else str(stem.with_name(f"{stem.name}.w{self.number}"))}))

    async def play(self, sg: ScheduledGame) -> tuple[GameRecord, list[SeatRow], str, str]:
        """Play one game in the worker: (record, seat rows, started, ended). Raises
        BotStartError if a bot cannot be started, WorkerError if the worker died."""
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        await process.stdin.send_all(encode({
            "type": "game", "index": sg.index, "deal": sg.deal, "rotation": sg.rotation,
            "table": list(sg.table), "seed": sg.seed}))
        answer = await _read(process.stdout, self._decoder)
        if answer is None:
            raise WorkerError(f"worker {self.number} exited (code {process.returncode}) "
                              f"during game {sg.index}")
        if answer["type"] == "start_error":
            raise BotStartError(answer["message"])
        return (record_from_dict(answer["record"]), [SeatRow(**row) for row in answer["seats"]],
                answer["started"], answer["ended"])

    async def close(self) -> None:
        """End the worker: end of its stdin; if it is mid-game (we were cancelled), SIGTERM,
        on which it closes its bots; SIGKILL only if it does not exit in time."""
        process = self.process
        if process is None:
            return
        with trio.CancelScope(shield=True):
            assert process.stdin is not None
            try:
                await process.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
            with trio.move_on_after(0.5):
                await process.wait()
            if process.returncode is None:
                process.terminate()
                with trio.move_on_after(10):
                    await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


def _die_with_parent() -> None:
    """Ask the kernel for SIGTERM when the parent dies (Linux; elsewhere a no-op)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import os
    import signal

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def main() -> None:
    import signal

    async def run() -> None:
        stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
        stdout = trio.lowlevel.FdStream(sys.stdout.fileno())
        async with trio.open_nursery() as nursery:
            async def on_term() -> None:
                with trio.open_signal_receiver(signal.SIGTERM) as signals:
                    async for _ in signals:
                        nursery.cancel_scope.cancel()  # the pool closes its bots, shielded
                        return

            async def games() -> None:
                await serve_games(stdin, stdout)
                nursery.cancel_scope.cancel()

            nursery.start_soon(on_term)
            nursery.start_soon(games)

    _die_with_parent()
    try:
        trio.run(run, restrict_keyboard_interrupt_to_checkpoints=True)
    except KeyboardInterrupt:
        sys.exit(130)
    except BaseExceptionGroup as group:  # Ctrl-C inside a nursery arrives grouped
        if group.subgroup(KeyboardInterrupt) is not None:
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
