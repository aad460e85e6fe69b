"""SIGTERM handled like Ctrl-C: ``run_interruptible`` is ``trio.run`` for the long jobs.

A tournament stopped by a service manager, ``timeout`` or ``kill`` gets SIGTERM, not
SIGINT; it should end as a Ctrl-C does: every bot and worker closed, the log and the
store intact, the resume hint printed, exit 130. trio turns SIGINT into a
KeyboardInterrupt raised at a checkpoint (``restrict_keyboard_interrupt_to_checkpoints``,
so no store write or log line is cut in half); here SIGTERM is routed to that same
handler, so everything that handles Ctrl-C handles SIGTERM too.

trio installs its SIGINT handler only if SIGINT has Python's default handler. A job
started in the background by a non-interactive shell inherits SIGINT *ignored*; that
wish is kept (SIGINT stays ignored), but SIGTERM still stops the job: SIGINT is given
the default handler just long enough for trio to install its own (blocked meanwhile, so
no SIGINT gets through), then ignored again.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

T = TypeVar("T")


def run_interruptible(fn: Callable[[], Awaitable[T]]) -> T:
    """``trio.run(fn)`` with Ctrl-C delivered only at checkpoints, and SIGTERM delivered
    the same way, as a KeyboardInterrupt. The signal dispositions are restored after."""
    if threading.current_thread() is not threading.main_thread():
        return trio.run(fn, restrict_keyboard_interrupt_to_checkpoints=True)
    int_before = signal.getsignal(signal.SIGINT)
    term_before = signal.getsignal(signal.SIGTERM)
    ignored = int_before == signal.SIG_IGN
    if ignored:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)

    async def main() -> T:
        trio_handler: Any = signal.getsignal(signal.SIGINT)
        # trio replaced Python's default handler (it leaves any other handler alone).
        if callable(trio_handler) and trio_handler not in (signal.default_int_handler, int_before):
            def on_term(signum: int, frame: Any) -> None:
                trio_handler(signal.SIGINT, frame)
            signal.signal(signal.SIGTERM, on_term)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a SIGINT pending now is discarded
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        return await fn()

    try:
        return trio.run(main, restrict_keyboard_interrupt_to_checkpoints=True)
    finally:
        if ignored:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        if int_before is not None:
            signal.signal(signal.SIGINT, int_before)
        if term_before is not None:
            signal.signal(signal.SIGTERM, term_before)
