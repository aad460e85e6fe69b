"""The parent's side of the tournament worker processes (``referee/league/worker.py``).

A tournament or A/B test with ``--concurrency K`` > 1 starts K worker processes through
``WorkerClient`` and exchanges the framed messages described in ``referee/league/worker.py``.
This module holds what both sides share (frame size, exit codes, errors, reading a
frame) and the client, so that the tournament can start workers without importing the
worker's own side, which imports the tournament (no two modules import each other).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from protocol.codec import FrameDecoder, encode

from ..records.store import SeatRow
from ..seats.players import BotStartError
from ..seats.sandbox import Sandbox
from ..table.match import GameRecord, Watch
from .results import FinishedGame

if TYPE_CHECKING:  # annotations only: the tournament imports this module
    from .tournament import ScheduledGame, TournamentSettings

MAX_FRAME = 64 << 20  # a game record with every decision; generous, still bounded
EXIT_TERMINATED = 128 + signal.SIGTERM  #: the worker's exit code after SIGTERM
EXIT_INTERRUPTED = 128 + signal.SIGINT  #: ... after Ctrl-C
#: Exit codes of a worker that somebody stopped with a signal (its own handler, or none yet).
STOPPED = {EXIT_TERMINATED, EXIT_INTERRUPTED, -signal.SIGTERM, -signal.SIGINT}


class WorkerError(RuntimeError):
    """A worker process broke its side of the parent's framing: a bug in durak-ref."""


class WorkerStopped(KeyboardInterrupt):
    """A worker exited because it was sent SIGTERM or SIGINT (usually with its parent, by
    Ctrl-C or a service manager stopping the run): the run is interrupted, as by Ctrl-C.
    Not a WorkerError: nobody broke the framing."""


async def read_message(stream: trio.abc.ReceiveStream, decoder: FrameDecoder) -> dict[str, Any] | None:
    while True:
        message = decoder.next_message()
        if message is not None:
            return message
        chunk = await stream.receive_some(1 << 16)
        if not chunk:
            return None
        decoder.feed(chunk)


class WorkerClient:
    """The parent's handle on one worker process: ``start``, then ``play`` games one at a
    time, then ``close`` (always: it ends the worker, which closes its bots)."""

    def __init__(self, number: int, settings: TournamentSettings, stderr_stem: Path | None,
                 sandbox: Sandbox | None = None, recover: bool = False,
                 watch: Watch | None = None) -> None:
        self.number = number
        self.watch = watch  #: gets the worker's "public" messages (None: it sends none)
        self.recover = recover
        self.sandbox = None if sandbox is None else dataclasses.replace(sandbox, warn=False)
        self.settings = settings
        self.stderr_stem = stderr_stem
        self.process: trio.Process | None = None
        self._decoder = FrameDecoder(MAX_FRAME, strict=False)
        self._gone = False  #: its stdin is broken: it exited

    async def start(self) -> None:
        # Spawned from one of trio's cached threads: see the module docstring for why
        # the worker watches this process rather than relying on PR_SET_PDEATHSIG.
        self.process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "referee.league.worker", "--parent", str(os.getpid())],
            stdin=-1, stdout=-1)
        stem = self.stderr_stem
        assert self.process.stdin is not None
        await self.process.stdin.send_all(encode({
            "type": "setup", "settings": self.settings.as_dict(),
            "sandbox": None if self.sandbox is None else self.sandbox.as_dict(),
            "recover": self.recover, "watch": self.watch is not None,
            "stderr_stem": None if stem is None else str(stem.with_name(f"{stem.name}.w{self.number}"))}))

    async def play(self, sg: ScheduledGame) -> tuple[GameRecord, list[SeatRow], str, str]:
        """Play one game in the worker: (record, seat rows, started, ended); the record's
        ``worker_cpu_s`` is the worker's CPU for it. Raises as ``play_game``."""
        game = await self.play_game(sg)
        record = game.record()
        record.worker_cpu_s = game.cpu_s
        return record, game.seats, game.started, game.ended

    async def play_game(self, sg: ScheduledGame) -> FinishedGame:
        """Play one game in the worker: the game ready to log and store. Raises
        BotStartError if a bot cannot be started, WorkerStopped if a signal stopped the
        worker (the run is being interrupted), WorkerError if it died otherwise."""
        await self.send_game(sg)
        return await self.receive_game(sg)

    async def send_game(self, sg: ScheduledGame) -> None:
        """Give the worker one more game (``send_games``)."""
        await self.send_games([sg])

    async def send_games(self, games: list[ScheduledGame]) -> None:
        """Give the worker more games, in one write. It plays its games in the order sent,
        one at a time, so the parent may send games before the last one's result is back
        (``receive_game`` then takes the results in order). A worker that has exited is
        found out by ``receive_game``."""
        process = self.process
        assert process is not None and process.stdin is not None
        try:
            await process.stdin.send_all(b"".join(encode({
                "type": "game", "index": sg.index, "deal": sg.deal, "rotation": sg.rotation,
                "table": list(sg.table), "seed": sg.seed}) for sg in games))
        except trio.BrokenResourceError:  # it exited between games
            self._gone = True

    async def receive_game(self, sg: ScheduledGame) -> FinishedGame:
        """The result of the oldest game sent and not yet received (``sg``, named in
        errors). Raises as ``play_game``."""
        process = self.process
        assert process is not None and process.stdout is not None
        answer = None if self._gone else await read_message(process.stdout, self._decoder)
        while answer is not None and answer["type"] == "public" and self.watch is not None:
            await self.watch(answer["message"])
            answer = await read_message(process.stdout, self._decoder)
        if answer is None:
            with trio.move_on_after(10):  # its stdout is closed: it is exiting; learn how
                await process.wait()
            if process.returncode in STOPPED:
                raise WorkerStopped(f"worker {self.number} was stopped by a signal")
            raise WorkerError(f"worker {self.number} exited (code {process.returncode}) "
                              f"during game {sg.index}")
        if answer["type"] == "start_error":
            raise BotStartError(answer["message"])
        return FinishedGame.from_message(answer)

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
