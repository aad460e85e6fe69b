"""Searching built-ins as confined seats: a built-in whose decision takes milliseconds of
CPU (``SEARCHING``: ismcts, expert, solver) plays as a program bot where it must not
decide on the referee's event loop, or beside a program bot's time.

Why. A built-in in the referee's process decides on the one trio loop: while it
searches (37 ms a decision for the expert, more on a busy machine) nothing else on that
loop runs, so under ``serve`` every other table, stream and TCP bot waits, and a bot's
instant answer is charged the search's time. And the turn logic freezes only program
bots (``cgroups.Turns``): opposite an in-process built-in a program bot kept running,
free to think on the built-in's time.

How. ``ConfinedBuiltin`` is a ``ProcessPlayer`` whose command is
``python -m referee.seats.builtinbot builtin:NAME[:PARAMS]`` (``durak-ref bot``'s code:
the built-in's own decisions, referee/seats/builtinbot.py): the same spawn, sandbox,
cgroup (memory, processes, CPU quota), freezer and clock as any program bot, so the
turn logic freezes whoever is not on move, the built-in included. Its seat's key
(``SEED:NAME``) goes in the environment, so its choices are the in-process built-in's.

Where (``seat_builtin``, ``confine_searching``): every searching built-in under
``serve`` (lobby tables), and every searching built-in of a run that seats a program
bot (command or TCP: match, tournament, sprt, ladder, check-bot, bench strength). A run
of built-ins only (and a person's game at a terminal) keeps them in the process: it
shares its loop with nobody and has no program bot to freeze; ``bench strength``'s
ladder so keeps its CPU-per-decision figures. The cheap built-ins (random, greedy,
gentle: microseconds a decision, ``bench strength``'s CPU per decision) always stay in
the process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import trio

from .builtinbot import KEY_ENV
from .players import BotSpec, BuiltinPlayer, Player
from .process import ProcessPlayer
from .sandbox import Sandbox

#: The built-ins that search (milliseconds of CPU a decision): confined where it matters.
SEARCHING = ("ismcts", "expert", "solver")
#: The directory holding the ``referee`` and ``protocol`` packages the process imports.
CODE_ROOT = str(Path(__file__).resolve().parents[2])


def searching(spec: BotSpec) -> bool:
    """Whether ``spec`` is a built-in that searches (``SEARCHING``)."""
    return spec.kind == "builtin" and spec.argv[0] in SEARCHING


def confine_searching(specs: Sequence[BotSpec]) -> bool:
    """Whether a run of ``specs`` confines its searching built-ins: when it seats a
    program bot (a command or a TCP bot), which must not think on their time."""
    return any(s.kind in ("command", "tcp") for s in specs)


def builtin_text(spec: BotSpec) -> str:
    """``builtin:NAME[:KEY=VALUE,...]`` of a built-in spec (without a ``NAME=``)."""
    kind, *params = spec.argv
    return f"builtin:{kind}" + (f":{','.join(params)}" if params else "")


class ConfinedBuiltin(ProcessPlayer):
    """Built-in ``spec`` run as a confined program (module docstring), as seat ``name``
    of a run seeded ``seed``. ``sandbox``: the run's policy (default: ``auto``,
    silent); the code's directory is added to what it shows. Its spec stays the
    built-in's text (the store and logs name it so); its command is in ``spec.argv``."""

    def __init__(self, name: str, spec: BotSpec, seed: int | str, *, startup_time: float = 10.0,
                 sandbox: Sandbox | None = None, grace: float = 1.0) -> None:
        command = BotSpec("command", name, (sys.executable, "-m", "referee.seats.builtinbot",
                                            builtin_text(spec)), spec.text, named=True)
        policy = sandbox or Sandbox(warn=False)
        # Its view: the code it runs (read-only, as every bound path); no rival's files to
        # hide from it (it is the referee's code), and none of its own to hide from them.
        policy = replace(policy, binds=(*policy.binds, CODE_ROOT), rivals=())
        super().__init__(name, command, startup_time=startup_time, grace=grace, sandbox=policy)
        self.builtin = spec
        self._seed = seed
        #: CPU seconds of its processes from their handshake to their close (its
        #: decisions: what ``BuiltinPlayer.decide_cpu_s`` counts in the referee's process),
        #: and in all (start-up included): ``bench strength`` tells its CPU apart so.
        self.decide_cpu_s = 0.0
        self.process_cpu_s = 0.0
        self._cpu_mark: float | None = None

    async def start(self, nursery: trio.Nursery) -> None:
        # Keyed by the seat's name at the start (a table renames its seats before).
        self.env = {"PYTHONPATH": CODE_ROOT, KEY_ENV: f"{self._seed}:{self.name}"}
        await super().start(nursery)
        self._cpu_mark = self._tree_cpu()

    async def close(self) -> None:
        if self._cpu_mark is not None:  # (read before bye: a reaped process has no /proc)
            spent = self._tree_cpu()
            self.decide_cpu_s += max(0.0, spent - self._cpu_mark)
            self.process_cpu_s += spent
            self._cpu_mark = None
        await super().close()

    def _tree_cpu(self) -> float:
        """User + system CPU seconds of the bot's live processes (its group's, else its
        own; the sandbox's wrappers cost next to nothing)."""
        group, pid = self.group, self.pid
        pids = group.pids() if group is not None else [] if pid is None else [pid]
        return sum(map(_process_cpu, pids))


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS


_TICKS = os.sysconf("SC_CLK_TCK")


_RESOLVED: list[Sandbox] = []


async def resolved_sandbox() -> Sandbox:
    """The default policy of confined built-ins (``auto``, silent) resolved, once per
    process, in a worker thread: resolving runs bwrap and tries the seccomp filter
    (subprocesses: 140 ms the first time) and reads /etc (milliseconds each time), which
    must not happen on an event loop that others share (``serve``'s lobby tables)."""
    if not _RESOLVED:
        _RESOLVED.append(await trio.to_thread.run_sync(Sandbox(warn=False).resolve))
    return _RESOLVED[0]


def seat_builtin(name: str, spec: BotSpec, seed: int | str, *, confine: bool,
                 startup_time: float = 10.0, sandbox: Sandbox | None = None) -> Player:
    """The player of built-in ``spec`` at seat ``name``: a ``ConfinedBuiltin`` when
    ``confine`` and it searches, else a ``BuiltinPlayer`` in the referee's process."""
    if confine and searching(spec):
        return ConfinedBuiltin(name, spec, seed, startup_time=startup_time, sandbox=sandbox)
    return BuiltinPlayer(name, spec, seed)


def confined(players: Sequence[Any]) -> list[ConfinedBuiltin]:
    """The confined built-ins among ``players``."""
    return [p for p in players if isinstance(p, ConfinedBuiltin)]
