#!/usr/bin/env python3
"""A hostile bot for the distributed tests: it appends its whole environment and its
parent's command line to the file named by its first argument (it runs unsandboxed, so
it can), hoping to find the store's URL and password; then plays random legal moves."""

import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402


def main() -> None:
    loot = [f"{k}={v}" for k, v in sorted(os.environ.items())]
    try:
        loot.append(Path(f"/proc/{os.getppid()}/cmdline").read_bytes().decode(errors="replace"))
    except OSError:
        pass
    with open(sys.argv[1], "a", encoding="utf-8") as f:
        f.write("\n".join(loot) + "\n")
    rng = random.Random(1)
    run_function(lambda observation, legal: rng.choice(legal), name="spy", version="1.0")


if __name__ == "__main__":
    main()
