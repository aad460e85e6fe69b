"""Tournament worker processes: one referee per core.

One trio process cannot referee faster than one core allows, and a referee spends
about as long per decision as a quick bot does, so a tournament with ``--concurrency
K`` > 1 runs K worker processes (``python -m referee.league.worker``), each playing one game at
a time with its own pool of bot processes. The parent keeps the schedule, the store and
the log; it speaks to each worker over the worker's stdin/stdout with the same framing
as the bot protocol (4-byte length + msgpack map):

    parent -> worker: {"type": "setup", "settings": {...}, "stderr_stem": str or nil,
                       "sandbox": {...} or nil,   (resolved in the parent; see sandbox.py)
                       "recover": bool,           (see referee/table/failfast.py)
                       "watch": bool}             (the live page watches: send "public")
    parent -> worker: {"type": "game", "index", "deal", "rotation", "table", "seed"}
    worker -> parent: {"type": "finished", **FinishedGame.as_message()}  (results.py:
                       the game's log line already encoded, its seat rows, its counts)
    worker -> parent: {"type": "start_error", "message": str}    (a bot cannot start)
    worker -> parent: {"type": "public", "message": {...}}  (only with "watch": each
                       spectator message of the game in play, before its record;
                       referee/table/spectator.py. Public by construction: no hidden card)

The worker plays the games in the order sent and answers each, in that order. The
parent may send several games at once (quick games, see tournament._drive_worker); the
worker then keeps its results until no sent game is left waiting, or the first has
waited HOLD_S (even in the middle of a slow game), and sends them in one write: one
wake-up of the parent per chunk of quick games, not per game.

End of stdin (the parent finished) makes the worker close its bots and exit. SIGTERM,
like Ctrl-C, makes the worker close its bots and exit (143; 130 for Ctrl-C), even in the
middle of a game with a bot that never answers; the parent takes such an exit as the run
being interrupted, not as a bug. The worker lives as long as its parent: it watches the
parent process (``--parent PID``; a pidfd on Linux, else it polls ``getppid``) and when
the parent dies, even by SIGKILL, it closes its bots and exits. Not ``PR_SET_PDEATHSIG``:
that signal fires when the *thread* that spawned the child exits, and trio spawns
processes from its thread cache, whose idle threads exit after about ten seconds.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import trio

from protocol.codec import FrameDecoder, encode

from ..records.matchlog import utc_now
from ..seats.players import BotStartError
from ..seats.sandbox import Sandbox
from .results import FinishedGame
from .tournament import PlayerPool, ScheduledGame, TournamentSettings
from .workerclient import EXIT_INTERRUPTED, EXIT_TERMINATED, MAX_FRAME, read_message

#: A result waits at most about this long (seconds) for the rest of its chunk.
HOLD_S = 0.1


async def _send(stdout: trio.abc.SendStream, frames: list[bytes]) -> bool:
    """Send encoded messages to the parent in one write; False if it no longer reads
    (it is gone)."""
    try:
        await stdout.send_all(b"".join(frames))
    except trio.BrokenResourceError:
        return False
    return True


class _Outbox:
    """The results a worker holds back for the rest of their chunk (see the module
    docstring): ``send`` sends them in one write (the game loop does when no sent game is
    left waiting), and ``run_timer`` does HOLD_S after the first was held, even while a
    slow game is being played. Sends never interleave and keep the order held."""

    def __init__(self, stdout: trio.abc.SendStream) -> None:
        self.stdout = stdout
        self.frames: list[bytes] = []
        self.since = 0.0  #: when the first of ``frames`` was held
        self.waiting = trio.Event()  #: set while frames are held
        self.lock = trio.Lock()
        self.gone = False  #: the parent no longer reads

    def hold(self, frame: bytes) -> None:
        if not self.frames:
            self.since = trio.current_time()
            self.waiting.set()
        self.frames.append(frame)

    async def send(self) -> bool:
        """Send what is held; False if the parent is gone."""
        async with self.lock:
            frames, self.frames = self.frames, []
            self.waiting = trio.Event()
            if frames and not self.gone:
                self.gone = not await _send(self.stdout, frames)
        return not self.gone

    async def run_timer(self) -> None:
        while True:
            await self.waiting.wait()
            await trio.sleep_until(self.since + HOLD_S)
            if self.frames and trio.current_time() >= self.since + HOLD_S:
                await self.send()


async def serve_games(stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream) -> None:
    """The worker's loop: set up, then play each game it is sent and send its record."""
    decoder = FrameDecoder(MAX_FRAME, strict=False)
    setup = await read_message(stdin, decoder)
    if setup is None:
        return
    settings = TournamentSettings.from_dict(setup["settings"])
    config = settings.validate()
    stem = Path(setup["stderr_stem"]) if setup.get("stderr_stem") else None
    # The parent resolved the sandbox (and warned); None: it had no program bots.
    sandbox = Sandbox.from_dict(setup["sandbox"]) if setup.get("sandbox") else None

    outbox = _Outbox(stdout)

    async def forward(message: dict[str, Any]) -> None:
        # Through the outbox, so that spectator messages never interleave with a held
        # chunk's write and keep their order relative to the results.
        outbox.hold(encode({"type": "public", "message": message}))
        await outbox.send()

    watch = forward if setup.get("watch") else None
    async with trio.open_nursery() as nursery:
        pool = PlayerPool(settings, config, nursery, stem, sandbox, bool(setup.get("recover")))
        cpu = time.process_time()
        nursery.start_soon(outbox.run_timer)
        try:
            while True:
                message = decoder.next_message()
                if message is None:  # no game waiting: the parent gets what we have
                    if not await outbox.send():
                        break
                    message = await read_message(stdin, decoder)
                    if message is None:
                        break
                sg = ScheduledGame(message["index"], message["deal"], message["rotation"],
                                   tuple(message["table"]), message["seed"])
                try:
                    record, started = await pool.play(sg, settings.fresh_bots, watch)
                except BotStartError as exc:
                    outbox.hold(encode({"type": "start_error", "message": str(exc)}))
                    await outbox.send()
                    break
                ended = utc_now()
                # Encoded here, not in the parent: the parent only writes the bytes and
                # rows, so it stays cheap however many workers feed it (results.py).
                game = FinishedGame.from_record(record, started, ended, 0.0)
                # This worker's CPU since its last game is the referee's cost of this one.
                now = time.process_time()
                spent, cpu = now - cpu, now
                game.cpu_s = max(0.0, spent - record.inprocess_cpu_s)
                outbox.hold(encode({"type": "finished", **game.as_message()}, max_frame=MAX_FRAME))
        finally:
            await pool.close()
            nursery.cancel_scope.cancel()


async def wait_parent_exit(parent: int) -> None:
    """Return once process ``parent``, which spawned this one, has exited (at once if it
    already has). Linux: waits on a pidfd; elsewhere polls ``getppid`` twice a second."""
    try:
        fd: int | None = os.pidfd_open(parent)
    except (AttributeError, OSError):  # not Linux >= 5.3, or already gone (ESRCH)
        fd = None
    try:
        # The pidfd was opened first: if ``parent`` is still our parent now, the pidfd is
        # that process (its pid cannot be reused while we are its child).
        if os.getppid() != parent:
            return
        if fd is not None:
            await trio.lowlevel.wait_readable(fd)
            return
        while os.getppid() == parent:  # pragma: no cover - no pidfd (not Linux)
            await trio.sleep(0.5)
    finally:
        if fd is not None:
            os.close(fd)


def _parent_from_argv(argv: list[str]) -> int:
    """``--parent PID`` as the parent gives it; without it, our parent now."""
    if len(argv) == 2 and argv[0] == "--parent" and argv[1].isdigit():
        return int(argv[1])
    return os.getppid()


def main() -> None:
    parent = _parent_from_argv(sys.argv[1:])
    stopped_by: list[int] = []

    async def run() -> None:
        stdin = trio.lowlevel.FdStream(sys.stdin.fileno())
        stdout = trio.lowlevel.FdStream(sys.stdout.fileno())
        # Open until the bots are closed: a second SIGTERM must not kill us half-way.
        with trio.open_signal_receiver(signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                async def on_term() -> None:
                    async for _ in signals:
                        stopped_by.append(EXIT_TERMINATED)
                        nursery.cancel_scope.cancel()  # the pool closes its bots, shielded

                async def on_parent_exit() -> None:
                    await wait_parent_exit(parent)
                    nursery.cancel_scope.cancel()  # nobody to play for: close the bots, exit

                async def games() -> None:
                    await serve_games(stdin, stdout)
                    nursery.cancel_scope.cancel()

                nursery.start_soon(on_term)
                nursery.start_soon(on_parent_exit)
                nursery.start_soon(games)

    try:
        trio.run(run, restrict_keyboard_interrupt_to_checkpoints=True)
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
    except BaseExceptionGroup as group:  # Ctrl-C inside a nursery arrives grouped
        if group.subgroup(KeyboardInterrupt) is not None:
            sys.exit(EXIT_INTERRUPTED)
        raise
    if stopped_by:
        sys.exit(stopped_by[0])


if __name__ == "__main__":
    main()
