"""A bot for the cpu clock's tests: at each of its first N requests (default: every one)
it sleeps (uses no CPU) or spins (uses CPU) for the seconds given, then answers the first
legal action; later requests it answers at once.

    clock_bot.py sleep SECONDS [N]     time.sleep, then answer
    clock_bot.py spin SECONDS [N]      busy loop until its own CPU time grew that much
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from protocol.bot import run_function  # noqa: E402

MODE, SECONDS = sys.argv[1], float(sys.argv[2])
FIRST = int(sys.argv[3]) if len(sys.argv) > 3 else None
asked = 0


def choose(observation, legal):
    global asked
    asked += 1
    if FIRST is None or asked <= FIRST:
        if MODE == "sleep":
            time.sleep(SECONDS)
        else:
            end = time.process_time() + SECONDS
            while time.process_time() < end:
                pass
    return legal[0]


run_function(choose, name=f"{MODE}er")
