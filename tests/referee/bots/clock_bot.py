"""A bot for the cpu clock's tests: at each request it sleeps (uses no CPU) or spins
(uses CPU) for the seconds given, then answers the first legal action.

    clock_bot.py sleep SECONDS     time.sleep, then answer
    clock_bot.py spin SECONDS      busy loop until its own CPU time grew that much
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from protocol.bot import run_function  # noqa: E402

MODE, SECONDS = sys.argv[1], float(sys.argv[2])


def choose(observation, legal):
    if MODE == "sleep":
        time.sleep(SECONDS)
    else:
        end = time.process_time() + SECONDS
        while time.process_time() < end:
            pass
    return legal[0]


run_function(choose, name=f"{MODE}er")
