"""Fail fast: a bot that fails its first start-up stops the run, naming itself.

A bot program that cannot even complete its first handshake in a run (a missing
script, a program that exits at once, a garbage or wrong-version hello, no hello within
the start-up time) is a broken configuration, not a weak bot: playing on would only
turn every one of its games into a forfeit and print a verdict (a rating, an SPRT
decision) about a bot that never played. So match, tournament, sprt and ladder stop
with exit 2 and this message: the bot, its command, why it failed, the tail of its
stderr and where the whole stderr log is.

Failures after a bot has completed a handshake in the run (it crashes in game 3, a
restart fails) stay game results (forfeits). ``--recover`` turns the first start-up
failure into a game result too (its games are forfeits, as before fail-fast).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..seats.players import BotFailure, BotStartError, Player

if TYPE_CHECKING:  # match.py imports this module
    from .match import GameRecord

#: What every fail-fast message ends with: how to go on anyway.
RECOVER_HINT = "fix the bot, or pass --recover to play on and count its games as forfeits"


class BotFirstStartError(BotStartError):
    """A bot program started but failed its first handshake of the run (the bot's or
    the user's configuration is at fault). ``bot``, ``command``, ``kind``, ``stderr_tail``
    and ``stderr_log`` are the facts the message states."""

    hint = "run `durak-ref check-bot` on the bot to see where its start-up goes wrong"

    def __init__(self, bot: str, command: str, failure: BotFailure, stderr_tail: list[str],
                 stderr_log: str | None) -> None:
        self.bot, self.command, self.kind = bot, command, failure.kind
        self.reason = failure.reason
        self.stderr_tail, self.stderr_log = stderr_tail, stderr_log
        tail = (" | ".join(line.strip() for line in stderr_tail if line.strip())
                or "(nothing on stderr)")
        where = f"; stderr log: {stderr_log}" if stderr_log else ""
        super().__init__(f"bot {bot} failed its first start-up ({failure.kind}): {failure.reason}; "
                         f"command: {command}; stderr tail: {tail}{where}; {RECOVER_HINT}")


async def first_start_error(player: Player, failure: BotFailure) -> BotFirstStartError:
    """The fail-fast error for ``player``'s failed first start-up (``failure``). A
    program bot is killed and its stderr read to the end first (ProcessPlayer.last_words),
    so the message quotes its last words whatever order they arrived in."""
    tail = failure.evidence.get("stderr_tail")
    last_words = getattr(player, "last_words", None)
    if callable(last_words):
        tail = await last_words()
    path = getattr(player, "stderr_path", None)
    return BotFirstStartError(player.name, shlex.join(player.spec.argv), failure,
                              [str(x) for x in tail or []],
                              str(path) if isinstance(path, Path) else None)


# -- honest summaries: forfeits by kind, stderr logs, and no silent verdict on a bot
#    that never played a game to its end.

def forfeited_all(games: int, forfeits: dict[str, int]) -> bool:
    """True when a bot played games and forfeited every one of them: its durak %, rating
    or SPRT figures then measure its failure, not its play."""
    return games > 0 and sum(forfeits.values()) >= games


def all_forfeit_warning(name: str, games: int, forfeits: dict[str, int]) -> str:
    """The loud line printed (and put in ``--json`` ``warnings``) for such a bot."""
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(forfeits.items()))
    return (f"WARNING: {name} forfeited every one of its {games} game{'s' if games != 1 else ''} "
            f"({kinds}): the figures below for it (durak %, rating, SPRT decision) say nothing "
            f"about its play; see its forfeits and stderr")


def forfeit_line(name: str, games: int, forfeits: dict[str, int], stderr: str | None) -> str:
    """One summary line: a bot's forfeits by kind and where its stderr log is."""
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(forfeits.items())) or "none"
    return f"{name}: forfeits {kinds} (of {games} games); stderr: {stderr or 'not logged'}"


class ForfeitTally:
    """Games and forfeits by kind per bot name, counted from game records (for runs whose
    results are not a table already: sprt, ladder)."""

    def __init__(self) -> None:
        self.games: dict[str, int] = {}
        self.forfeits: dict[str, dict[str, int]] = {}

    def add(self, record: GameRecord) -> None:
        """Count one finished game."""
        players, forfeit = record.players, record.forfeit
        for name in players:
            self.games[name] = self.games.get(name, 0) + 1
            self.forfeits.setdefault(name, {})
        if forfeit is not None:
            kinds = self.forfeits[players[forfeit["seat"]]]
            kinds[forfeit["kind"]] = kinds.get(forfeit["kind"], 0) + 1

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """``{name: {"games", "forfeits": {kind: n}, "forfeited_all"}}`` (JSON-ready)."""
        return {name: {"games": g, "forfeits": dict(self.forfeits[name]),
                       "forfeited_all": forfeited_all(g, self.forfeits[name])}
                for name, g in self.games.items()}

    def warnings(self) -> list[str]:
        return [all_forfeit_warning(name, g, self.forfeits[name])
                for name, g in self.games.items() if forfeited_all(g, self.forfeits[name])]
