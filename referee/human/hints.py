"""Hints for a learning game: what a built-in bot would play in the person's seat, and why,
in one line.

A hint is computed from the request alone (the seat's observation and legal list, and
for ``ismcts`` the table rules the seat got in ``game_start``), exactly as the bot would
decide in that seat, so it can tell the person nothing their seat may not know.

A server computes it in a process of its own (``python -m referee.human.hints``: the job
as JSON on stdin, the hint as JSON on stdout; ``web/seat.py`` ``hint_elsewhere``): a
search takes milliseconds of CPU, which on the server's event loop (or in a thread of
its process, which holds the interpreter's lock) would stall every other table.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from protocol.strategies import gentle_choose

from . import view

#: The bots a learning game may take hints from, and what each is like.
HINT_BOTS = {"gentle": "a patient player: one card at a time, covers low and keeps its trumps for high cards",
             "ismcts": "a search over the deals your seat cannot rule out (150 per move)"}


def gentle_reason(action: Mapping[str, Any], obs: Mapping[str, Any]) -> str:
    """Why ``gentle_choose`` plays ``action`` (one of its answers) in ``obs``."""
    kind = action["type"]
    talon = obs.get("talon") or 0
    if kind == "exchange":
        return "the face-up trump is higher than your lowest trump: swap them"
    if kind == "attack":
        return "lead your cheapest card and keep trumps and high cards for later"
    if kind == "cover":
        if talon == 0:
            return "the talon is empty: cover to shed cards, the cheapest card that beats it"
        return "a cheap card covers it, or a trump is worth spending on a card that high"
    if kind == "throw_in":
        return "heads-up with the talon gone: load the defender with every card that fits"
    if kind == "pass":
        return "no throwing in while others are still in or the talon lasts: let the defender off"
    if kind == "take":
        return ("covering would cost a trump or a high card while the talon lasts: take"
                if talon else "no card you would spend covers it (keep the last trump): take")
    return "the only sensible move"


def hint(bot: str, request: Mapping[str, Any], rules: Mapping[str, Any] | None = None,
         seed: str = "") -> dict[str, Any]:
    """``{"bot", "index", "text", "why"}``: which element of ``request["legal"]`` built-in
    ``bot`` (a key of HINT_BOTS) would answer with, that move as text and the reason.
    ``rules``: the table rules (``game_start``'s map; ismcts needs them); ``seed``: keys
    the search's generator (a hint is the same each time it is asked). ValueError for an
    unknown bot."""
    obs, legal = request["observation"], request["legal"]
    if bot == "gentle":
        choice = gentle_choose(dict(obs), list(legal))
        why = gentle_reason(choice, obs)
    elif bot == "ismcts":
        from ..bots.ismcts import IsmctsParams, IsmctsStrategy
        from ..rules.options import rules_from_dict

        search = IsmctsStrategy(rules_from_dict(dict(rules or {})), IsmctsParams())
        choice = search.choose(dict(obs), list(legal), random.Random(f"{seed}:{request['id']}"))
        if search.last_search is None:
            why = "the only sensible move"
        else:
            deals, safe = search.last_search
            why = f"not the durak in {round(100 * safe)}% of {deals} simulated deals after this move"
    else:
        raise ValueError(f"no hints from {bot!r}; hints come from {', '.join(HINT_BOTS)}")
    index = _index(legal, choice)
    return {"bot": bot, "index": index,
            "text": view.action_text(legal[index], obs["trump_suit"]), "why": why}


def _index(legal: Sequence[Mapping[str, Any]], choice: Mapping[str, Any]) -> int:
    """The position of ``choice`` (the strategy's answer: an element, or an equal map)."""
    for i, action in enumerate(legal):
        if action is choice:
            return i
    return [dict(a) for a in legal].index(dict(choice))


def main() -> None:
    """One hint: ``{"bot", "request", "rules", "seed"}`` as JSON on stdin, the hint's map
    (``hint``) as JSON on stdout."""
    job = json.load(sys.stdin)
    json.dump(hint(job["bot"], job["request"], job.get("rules"), job.get("seed", "")), sys.stdout)


if __name__ == "__main__":
    main()
