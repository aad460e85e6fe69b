"""Run seeds: secret by default, shown only when the run is over.

A run without ``--seed`` draws its seed from the operating system (``secrets``: 128
bits, 32 hex digits). The seed keys every deck of the run (``rules.deal``), so it goes
only where bots cannot look while they play: the referee's memory, the settings sent to
worker processes over a pipe, the log header and the store (which the sandbox hides).
It is never put on a bot's command line or in a bot's environment. When the run ends
the CLI prints it with the command line that plays the same deals again.
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Sequence

from ..records.storedb import redact
from ..rules.deal import SeedError, check_seed

__all__ = ["SeedError", "check_seed", "new_seed", "reproduce_command", "seed_fields", "seed_lines",
           "seed_or_new"]


def new_seed() -> str:
    """A fresh secret seed: 128 random bits as 32 hex digits."""
    return secrets.token_hex(16)


def seed_or_new(value: str | int | None) -> str:
    """The user's seed, checked (raises SeedError), or a fresh secret one for None."""
    return new_seed() if value is None else check_seed(value)


def reproduce_command(argv: Sequence[str], seed: str, program: str = "durak-ref") -> str:
    """The command line ``argv`` (without the program name) with ``--seed SEED`` in place
    of any seed it gave, quoted for a POSIX shell: running it deals the same decks. A
    store URL's password is shown as ``***``."""
    args: list[str] = []
    skip = secret = False
    for arg in argv:
        if skip:
            skip = False
        elif secret:  # a tcp seat's token stays secret: the command names its seat only
            secret = False
            args.append(_hide_token(arg))
        elif arg == "--seed":
            skip = True
        elif arg == "--token":
            secret = True
            args.append(arg)
        elif arg.startswith("--token="):
            args.append("--token=" + _hide_token(arg[len("--token="):]))
        elif not arg.startswith("--seed="):
            args.append(redact(arg) if "://" in arg else arg)  # a --db URL's password stays secret
    return shlex.join([program, *args, "--seed", seed])


def _hide_token(pair: str) -> str:
    """``NAME=SECRET`` as ``NAME=***``."""
    name, sep, _ = pair.partition("=")
    return f"{name}=***" if sep else "***"


def seed_fields(seed: str, argv: Sequence[str], resumed: str | None = None) -> dict[str, str | None]:
    """The ``seed`` and ``reproduce`` entries of a run's --json result: the command line
    (``argv``, without the program name) that deals the same decks again; None for a
    tournament ``resumed`` (its first run's command with ``--seed SEED`` does)."""
    return {"seed": seed, "reproduce": None if resumed else reproduce_command(argv, seed)}


def seed_lines(seed: str, argv: Sequence[str], resumed: str | None = None) -> str:
    """The last lines of a run's text output: its seed and how to play the same deals."""
    again = (reproduce_command(argv, seed) if resumed is None else
             f"the command that started tournament {resumed}, with --seed {seed}")
    return f"seed: {seed}\nsame deals again: {again}"
