"""The hot path: the modules ``setup.py`` compiles with mypyc, the one declaration of them.

Each is ordinary, fully typed, trio-free Python; mypyc turns it into a C extension that
sits next to its ``.py`` (README "Benchmarks"). They are listed in dependency order, and
compiled as one group that calls across modules natively. ``setup.py`` reads this file
without importing the package; ``loader.status()`` reports each of them as compiled or
Python; tests/app/test_compiled.py fails on CI when any of them runs as Python.
An argument of theirs that may hold a bot's data is typed ``object``: mypyc checks
annotations at run time, and a wrong type from a bot must be our error message, not a
``TypeError`` from the compiled code.
"""

COMPILED = (
    "referee.rules.cards",
    "referee.rules.actions",
    "referee.rules.deal",
    "referee.rules.game",
    "referee.bots.fastchoice",
    "referee.table.clock",
    "referee.table.requests",
    "referee.seats.pipelane",
    "referee.table.framelane",
)
