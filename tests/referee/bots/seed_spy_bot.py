"""A bot that looks for the run's seed where a bot without a sandbox can look: its own
command line and environment, and those of every ancestor process (the referee, a
tournament worker). It appends what it saw to the file named by its first argument,
then plays the first legal action of every request."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from protocol.bot import run_function  # noqa: E402


def seen() -> bytes:
    out = []
    pid = os.getpid()
    while pid > 1:
        proc = Path(f"/proc/{pid}")
        for name in ("cmdline", "environ"):
            try:
                out.append((proc / name).read_bytes())
            except OSError:
                pass
        try:
            pid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    return b"\n".join(out)


with open(sys.argv[1], "ab") as f:
    f.write(seen() + b"\n--\n")

run_function(lambda observation, legal: legal[0], name="spy")
