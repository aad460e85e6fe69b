"""A bot whose hello name is rich markup (``[/]`` by default, or argv[1]): it must be
printed literally, never parsed. Plays the first legal action."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from protocol.bot import run_function  # noqa: E402

run_function(lambda observation, legal: legal[0], name=sys.argv[1] if len(sys.argv) > 1 else "[/]",
             version="[bold]1")
