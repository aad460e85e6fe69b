"""Time controls and the per-seat game clock. Pure arithmetic: callers pass ``now``.

A time control has three optional parts, all in seconds:

- ``base`` + ``increment`` (Fischer, written ``60+0.5``): each seat's clock starts the
  game at ``base``; a decision's time is subtracted, then ``increment`` is added;
- ``move``: a fixed limit for every single decision;
- ``startup``: how long a bot may take to start and answer the handshake.

Which time a decision is charged (``clock``): ``wall``, the time on the run's clock
(default); or ``cpu``, the CPU time the seat itself spent on the decision, as the seat
measures it (a program bot: its control group's CPU counter, read when its request is
written and when its answer is complete; a built-in in the referee's process: the CPU
time of the thread that decided), so a host loaded by other work does not change the
result. Under ``cpu`` every budget the bot is told (``move_ms``, ``remaining_ms``) is CPU
time, and the referee still waits at most ``backstop`` times the decision's budget of
wall time (``Clock.wait``): a bot that sleeps or blocks forever still forfeits on time.

The time of a decision (the bot's time) runs from the moment the request is fully
written to the bot to the moment its answer's frame is complete: encoding, writing,
scheduling and decoding are the referee's time, not the bot's. The deadline of a
decision is the earlier of the clock running out and the per-decision limit. Every decision has a deadline: with neither set, ``move`` is
DEFAULT_MOVE_TIME, so a mute bot cannot hang a run. Every value is at most
MAX_SECONDS, so deadlines and the milliseconds sent to bots stay bounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import UserError

#: The per-decision limit when the user sets neither a game clock nor a move time.
DEFAULT_MOVE_TIME = 10.0
#: The largest number of seconds any part of a time control may have (a week).
MAX_SECONDS = 7 * 24 * 3600.0
#: The clocks a decision may be charged on (see the module docstring).
CLOCKS = ("wall", "cpu")
#: Under the cpu clock: the wall time the referee waits for a decision, as a multiple of
#: its CPU budget (``--backstop``).
DEFAULT_BACKSTOP = 5.0
#: The largest backstop factor.
MAX_BACKSTOP = 1000.0


class TimeControlError(UserError, ValueError):
    """The user's time control text cannot be parsed (e.g. ``--tc 60+x``)."""

    hint = "write the clock as BASE+INC in seconds (--tc 60+1) and --move-time in seconds"


def _seconds_ok(x: float, *, zero: bool = False) -> bool:
    return math.isfinite(x) and (x >= 0 if zero else x > 0) and x <= MAX_SECONDS


@dataclass(frozen=True)
class TimeControl:
    base: float | None = None
    increment: float = 0.0
    move: float | None = None
    startup: float = 10.0
    clock: str = "wall"  #: what a decision is charged: ``CLOCKS`` (module docstring)
    backstop: float = DEFAULT_BACKSTOP  #: under ``cpu``: wall time waited, per budget

    def __post_init__(self) -> None:
        if self.base is None and self.move is None:
            object.__setattr__(self, "move", DEFAULT_MOVE_TIME)

    @property
    def cpu(self) -> bool:
        """Whether decisions are charged their CPU time (``--clock cpu``)."""
        return self.clock == "cpu"

    @classmethod
    def parse(cls, tc: str | None = None, move: float | None = None,
              startup: float = 10.0, clock: str = "wall",
              backstop: float = DEFAULT_BACKSTOP) -> TimeControl:
        """From ``--tc BASE[+INC]`` text (seconds), ``--move-time``, ``--startup-time``,
        ``--clock`` and ``--backstop``."""
        base, inc = None, 0.0
        if tc:
            head, sep, tail = tc.strip().partition("+")
            try:
                base = float(head)
                inc = float(tail) if sep else 0.0
            except ValueError:
                raise TimeControlError(
                    f"time control {tc!r}: expected BASE or BASE+INCREMENT in seconds, "
                    f"like 60+0.5") from None
            if not (_seconds_ok(base) and _seconds_ok(inc, zero=True)):
                raise TimeControlError(f"time control {tc!r}: base must be > 0 and increment >= 0 "
                                       f"seconds, each at most {MAX_SECONDS:g}")
        if move is not None and not _seconds_ok(move):
            raise TimeControlError(f"--move-time {move}: must be a positive number of seconds, "
                                   f"at most {MAX_SECONDS:g} (a week; default: {DEFAULT_MOVE_TIME:g} s "
                                   f"without --tc; there is no unlimited setting)")
        if not _seconds_ok(startup):
            raise TimeControlError(f"--startup-time {startup}: must be a positive number of seconds, "
                                   f"at most {MAX_SECONDS:g}")
        if clock not in CLOCKS:
            raise TimeControlError(f"--clock {clock!r}: expected {' or '.join(CLOCKS)}")
        if not (math.isfinite(backstop) and 1.0 <= backstop <= MAX_BACKSTOP):
            raise TimeControlError(f"--backstop {backstop}: must be a factor from 1 to "
                                   f"{MAX_BACKSTOP:g} (the wall time waited per second of CPU "
                                   f"budget under --clock cpu; default {DEFAULT_BACKSTOP:g})")
        return cls(base, inc, move, startup, clock, backstop)

    def describe(self) -> str:
        parts = []
        if self.base is not None:
            parts.append(f"{self.base:g}+{self.increment:g}")
        if self.move is not None:
            parts.append(f"{self.move:g} s/decision")
        if self.cpu:
            parts.append(f"cpu clock (wall backstop {self.backstop:g}x)")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """The log header's ``time_control`` (``clock`` and ``backstop_x`` since the cpu
        clock: a log without them ran on the wall clock)."""
        return {"base_s": self.base, "increment_s": self.increment, "move_s": self.move,
                "startup_s": self.startup, "clock": self.clock,
                "backstop_x": self.backstop if self.cpu else None}


class Clock:
    """One seat's clock for one game.

    A clock is public at a real table, but not every decision is: a declined trump
    exchange is seen by nobody but the seat that declined (protocol/SPEC.md, Events), so
    a clock that ran, or gained its increment, during that decision would tell everyone
    who holds the deck's lowest trump. ``hide`` keeps what such decisions did to this
    clock; ``public_remaining_ms`` is the clock as the other seats and spectators see it."""

    __slots__ = ("tc", "remaining", "hidden", "_started", "increment_ms", "move_ms", "cpu")

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.remaining = tc.base  # seconds, or None without a game clock
        #: Seconds the hidden decisions took off ``remaining`` (their time less their
        #: increments; negative when the increments were more).
        self.hidden = 0.0
        self._started: float | None = None
        #: The parts of ``wire`` that never change for this clock (read for every request).
        self.increment_ms = _ms(tc.increment) if tc.base is not None else None
        self.move_ms = _ms(tc.move)
        self.cpu = tc.cpu  #: charged CPU time (``charge``'s ``cpu``), not wall time

    def budget(self) -> float | None:
        """Seconds the next decision may take (None: unlimited)."""
        remaining, move = self.remaining, self.tc.move  # asked several times per decision
        if remaining is None or move is None:
            return move if remaining is None else remaining
        return remaining if remaining < move else move

    def wait(self) -> float | None:
        """Seconds of wall time the referee waits for the next decision (None: no limit):
        its ``budget``, or under the cpu clock ``backstop`` times that."""
        budget = self.budget()
        if budget is None or not self.cpu:
            return budget
        return min(budget * self.tc.backstop, MAX_SECONDS)

    def start(self, now: float) -> float | None:
        """The request was fully written at ``now``; returns the absolute deadline or None."""
        self._started = now
        b = self.wait()
        return None if b is None else now + b

    def stop(self, now: float) -> tuple[float, bool]:
        """The answer's frame was complete at ``now``. Returns (seconds used, in time?).
        The clock is charged the time used and, if in time, credited the increment."""
        assert self._started is not None, "stop() without start()"
        used = max(0.0, now - self._started)
        self._started = None
        return used, self.charge(used) is None

    def charge(self, used: float, cpu: float = -1.0) -> float | None:
        """Charge a decision that took ``used`` seconds (>= 0) of wall time and ``cpu``
        seconds of the seat's CPU (-1: not measured): ``ruling`` of them. If it was in
        time, credit the increment and return None, else return the budget it overran
        (under the cpu clock, past the backstop: the wall time waited, ``wait``). ``stop``
        for a caller that timed the decision itself."""
        if self.cpu and cpu >= 0.0:
            wait = self.wait()
            if wait is not None and used > wait:
                return wait
            used = cpu
        return self.charged(used)

    def ruling(self, used: float, cpu: float = -1.0) -> float:
        """The seconds ``charge`` charges a decision of ``used`` s wall and ``cpu`` s CPU:
        under the cpu clock its CPU (its wall time when the seat's CPU could not be read,
        never more lenient than the wall clock, or when it passed the backstop), else its
        wall time."""
        if not self.cpu or cpu < 0.0:
            return used
        wait = self.wait()
        return used if wait is not None and used > wait else cpu

    def charged(self, used: float) -> float | None:
        """``charge`` of ``used`` seconds on the clock that rules."""
        if self.remaining is None:  # no game clock: only the move time (if any) limits it
            move = self.tc.move
            return None if move is None or used <= move else move
        budget = self.budget()
        in_time = budget is None or used <= budget
        self.remaining -= used
        if in_time:
            self.remaining += self.tc.increment
        return None if in_time else budget

    def wire(self) -> dict[str, int | None]:
        """The ``clock`` map of a request, in whole milliseconds (floored)."""
        return {"remaining_ms": self.remaining_ms(), "increment_ms": self.increment_ms,
                "move_ms": self.move_ms}

    def remaining_ms(self) -> int | None:
        """``remaining`` in whole milliseconds (floored, never negative), None without a
        game clock: the map's only part that changes (``RequestFrames`` packs it alone)."""
        return _ms(self.remaining)

    def hide(self, used: float, charges: int) -> None:
        """The decision just charged was hidden from the other seats: it took ``used``
        seconds over ``charges`` in-time charges (the answer and its illegal retries),
        each credited the increment. The public clock leaves all of it out."""
        if self.remaining is not None:
            self.hidden += used - charges * self.tc.increment

    def public_remaining_ms(self) -> int | None:
        """``remaining_ms`` as the other seats and spectators see it: without what the
        hidden decisions did (``hide``)."""
        remaining = self.remaining
        return None if remaining is None else _ms(remaining + self.hidden)


def _ms(x: float | None) -> int | None:
    """Seconds (or None) as whole milliseconds, floored, never negative (``Clock.wire``)."""
    return None if x is None else max(0, int(x * 1000))
