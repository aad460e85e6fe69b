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

from pathlib import Path

from .players import BotFailure, BotStartError, Player

#: What every fail-fast message ends with: how to go on anyway.
RECOVER_HINT = "fix the bot, or pass --recover to play on and count its games as forfeits"


class BotFirstStartError(BotStartError):
    """A bot program started but failed its first handshake of the run (the bot's or
    the user's configuration is at fault). ``bot``, ``command``, ``kind``, ``stderr_tail``
    and ``stderr_log`` are the facts the message states."""

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


def first_start_error(player: Player, failure: BotFailure) -> BotFirstStartError:
    """The fail-fast error for ``player``'s failed first start-up (``failure``)."""
    tail = failure.evidence.get("stderr_tail")
    stderr_tail = getattr(player, "stderr_tail", None)
    if not tail and callable(stderr_tail):
        tail = stderr_tail()
    path = getattr(player, "stderr_path", None)
    return BotFirstStartError(player.name, player.spec.text or " ".join(player.spec.argv), failure,
                              [str(x) for x in tail or []],
                              str(path) if isinstance(path, Path) else None)
