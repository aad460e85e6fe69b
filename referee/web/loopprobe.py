"""The event loop's latency, measured from inside: a task that sleeps a fixed short
interval again and again and records how late it woke (the overshoot). Whatever holds
the loop (a search, a big JSON dump, a slow write) shows as lateness here, and so as
the lateness of every table, stream and TCP bot on that loop.

``serve`` runs one (``LoopProbe.run``); its figures are at ``GET /api/loop`` of the
live page (``?window=S``: the last S seconds, default and at most ``KEEP_S``), in the
line ``serve`` prints when it stops, and in ``durak-ref bench loop``, which compares
an idle server with one whose lobby is full of expert tables.
"""

from __future__ import annotations

import math
import time
from collections import deque
from typing import Any

import trio

INTERVAL_S = 0.01  #: how long the probe sleeps between two wake-ups
KEEP_S = 30.0  #: how far back the figures reach (3000 samples: sorting them is cheap)


class LoopProbe:
    """Overshoots of ``interval`` seconds' sleeps, in ms, kept for ``keep`` seconds."""

    def __init__(self, interval: float = INTERVAL_S, keep: float = KEEP_S) -> None:
        self.interval, self.keep = interval, keep
        #: (when it woke, on time.monotonic; how late, ms), oldest first
        self.samples: deque[tuple[float, float]] = deque(maxlen=int(keep / interval) + 1)

    async def run(self) -> None:
        """Sleep and record, until cancelled."""
        while True:
            asked = time.perf_counter()
            await trio.sleep(self.interval)
            woke = time.perf_counter()
            self.samples.append((time.monotonic(), max(0.0, 1000 * (woke - asked - self.interval))))

    def stats(self, window: float | None = None) -> dict[str, Any]:
        """``{"window_s", "interval_ms", "samples", "p50_ms", "p99_ms", "max_ms"}`` over the
        last ``window`` seconds (None or more than ``keep``: all kept); None figures when
        no sample falls in it."""
        span = self.keep if window is None else min(max(window, 0.0), self.keep)
        since = time.monotonic() - span
        late = sorted(ms for when, ms in self.samples if when >= since)
        return {"window_s": span, "interval_ms": 1000 * self.interval, "samples": len(late),
                "p50_ms": _quantile(late, 0.5), "p99_ms": _quantile(late, 0.99),
                "max_ms": round(late[-1], 3) if late else None}

    def line(self) -> str:
        """The figures of the last ``keep`` seconds as one line for the operator."""
        s = self.stats()
        if not s["samples"]:
            return "event loop: no samples"
        return (f"event loop lateness over the last {s['window_s']:g} s: p50 {s['p50_ms']} ms, "
                f"p99 {s['p99_ms']} ms, max {s['max_ms']} ms ({s['samples']} wake-ups)")


def _quantile(ordered: list[float], q: float) -> float | None:
    """The nearest-rank ``q`` quantile of ``ordered`` (ascending), rounded to µs."""
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)], 3)
