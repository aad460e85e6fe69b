"""A person at the table: the ``Player`` behind ``durak-ref play``.

The person's seat is played through the same referee code as any bot (``match.play_game``):
the same rules, legal lists, clocks and match log. ``HumanPlayer`` receives exactly the
messages a bot in that seat would (game start, public events, requests, game end), shows
them with ``referee/human/view.py`` and answers a request only with an element of its legal
list: a typo is explained and asked again, never sent, so it can never forfeit a game.

End of input (Ctrl-D) or typing ``quit`` is the person leaving: the game in progress is their forfeit
(``disconnect``, recorded in the log like any game) and the match stops after it. Ctrl-C
interrupts the match like any other (``run_match``): finished games stay in the log.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

import trio

from protocol.codec import decode
from protocol.strategies import greedy_choose

from ..console.printable import printable
from ..seats.players import Ask, BotFailure, BotSpec, Player
from ..table.match import MatchConfig, MatchResult
from ..table.runner import run_match
from . import view


def human_spec(name: str) -> BotSpec:
    """The spec of the person's seat, as logs and headers record it (``kind`` "human")."""
    return BotSpec("human", name, (), "human", named=True)


#: The longest line kept: more without a newline is delivered as a line (a typo), so piped
#: input without newlines cannot grow the buffer without bound.
MAX_LINE = 1 << 16


class LineSource:
    """Lines typed by the person on file descriptor ``fd`` (None: no input at all), read
    by a daemon thread so that waiting for them is a trio checkpoint (Ctrl-C and the move
    clock interrupt it). ``None`` marks end of input. A line typed ahead waits in the
    queue, as it would in the terminal. The thread uses ``os.read``, not a buffered file
    object: it is still blocked in a read when the program exits, and a buffered reader's
    lock held by it would abort the interpreter's shutdown."""

    def __init__(self, fd: int | None) -> None:
        self._fd = fd
        self._send, self._receive = trio.open_memory_channel[str | None](math.inf)
        self._started = False
        self._ended = False

    def _start(self) -> None:
        token = trio.lowlevel.current_trio_token()

        def deliver(line: str | None) -> bool:
            try:
                token.run_sync_soon(self._send.send_nowait, line)
                return True
            except trio.RunFinishedError:
                return False

        def pump() -> None:
            pending = b""
            while True:
                try:
                    chunk = os.read(self._fd, 4096) if self._fd is not None else b""
                except OSError:  # closed or unreadable input: the person is gone
                    chunk = b""
                if not chunk:
                    if pending:
                        deliver(_text(pending))
                    deliver(None)
                    return
                pending += chunk
                while b"\n" in pending:
                    raw, pending = pending.split(b"\n", 1)
                    if not deliver(_text(raw)):
                        return
                if len(pending) > MAX_LINE:  # endless input without a newline: one long typo
                    if not deliver(_text(pending)):
                        return
                    pending = b""

        threading.Thread(target=pump, name="durak-ref-stdin", daemon=True).start()
        self._started = True

    async def read(self) -> str | None:
        """The next line without its newline, or None at end of input."""
        if self._ended:
            return None
        if not self._started:
            self._start()
        line = await self._receive.receive()
        if line is None:
            self._ended = True
        return line


def _text(raw: bytes) -> str:
    """A typed line as text: bytes that are not UTF-8 are a typo like any other (shown
    as replacement characters), not the end of input."""
    return raw[:MAX_LINE].decode("utf-8", errors="replace").rstrip("\r")


class HumanPlayer(Player):
    """A person at a terminal. ``write`` prints one line; ``lines`` supplies typed lines;
    ``hints`` adds what the built-in greedy bot would play to every request."""

    def __init__(self, name: str, lines: LineSource, write: Callable[[str], None],
                 hints: bool = False) -> None:
        super().__init__(name, human_spec(name), wants_events=True)
        self.info = {"name": name, "version": "human", "author": "a person at the terminal"}
        self._lines, self._write, self._hints = lines, write, hints
        self._names: list[str] = []
        self._seat = 0
        self._trump_suit = ""

    def _say(self, line: str) -> None:
        """Show one line. A screen that is gone (output closed: a broken pipe, a closed
        terminal) is the person gone: BotFailure, and the match ends after this game."""
        try:
            self._write(line)
        except OSError as exc:
            self.left = True
            raise BotFailure("disconnect", f"{self.name} left the table (output closed: "
                             f"{exc.strerror or exc})") from None

    def _show(self, lines: list[str]) -> None:
        for line in lines:
            self._say(line)

    def hear(self, frame: bytes) -> None:
        """Show a message at once: the start of a game, an event, an error, the end."""
        message = decode(frame)
        kind = message.get("type")
        if kind == "game_start":
            self._names, self._seat = list(message["names"]), message["seat"]
            self._trump_suit = message["trump_suit"]
            self._show(view.start_lines(message))
        elif kind == "event":
            line = view.event_line(message["event"], self._names, self._seat, self._trump_suit)
            if line is not None:
                self._say(line)
        elif kind == "game_end":
            self._show(view.end_lines(message, self._names, self._seat))
        elif kind == "error":
            self._say(f"referee: {message.get('message')}")

    async def finish(self, ask: Ask) -> dict[str, Any]:
        """Show the table and the menu, then wait for the person to choose (within the
        budget): only an element of the legal list is ever answered."""
        request, timeout = ask.message(), ask.budget
        obs = request["observation"]
        legal = view.menu_order(request["legal"], obs["trump_suit"])  # the same maps, in menu order
        self._show(view.table_lines(obs, self._names))
        clock = view.clock_line(request.get("clock"))
        if clock:
            self._say(clock)
        self._say(f"your move: {view.PROMPT_HINT}")
        self._show(view.menu_lines(legal, obs["trump_suit"], obs.get("phase", "")))
        if self._hints:
            hint = legal.index(greedy_choose(obs, request["legal"]))  # as the bot would see it
            self._say(f"hint: greedy would play {hint + 1}) "
                        f"{view.action_text(legal[hint], obs['trump_suit'])}")
        deadline = math.inf if timeout is None else trio.current_time() + timeout
        while True:
            self._say("> ")
            with trio.move_on_at(deadline) as scope:
                line = await self._lines.read()
            if scope.cancelled_caught:
                self._say("(out of time)")
                raise BotFailure("timeout", f"{self.name} did not move within {timeout:g} s",
                                 {"budget_s": timeout})
            if line is None:
                self.left = True
                self._say("(end of input: you leave the table; this game is lost)")
                raise BotFailure("disconnect", f"{self.name} left the table (end of input)")
            command = view.command_of(line)
            if command == "quit":
                self.left = True
                self._say("(quit: you leave the table; this game is lost)")
                raise BotFailure("disconnect", f"{self.name} left the table (quit)")
            if command == "help":
                self._show(view.help_lines())
                continue
            if command == "discard":
                self._say(view.discard_line(obs["discard"], obs["trump_suit"]))
                continue
            choice = view.parse_choice(line, legal)
            if choice.index is not None:
                return legal[choice.index]
            self._say(f"  {choice.error}")


def stdout_writer(stream: TextIO = sys.stdout) -> Callable[[str], None]:
    """Print one line and flush it (the person is watching), as ``printable`` text."""
    def write(line: str) -> None:
        stream.write(line if line == "> " else printable(line) + "\n")
        stream.flush()
    return write


def run_play(specs: list[BotSpec], seat: int, name: str, config: MatchConfig, *, hints: bool = False,
             write: Callable[[str], None] | None = None, stdin_fd: int | None = 0,
             **kwargs: Any) -> MatchResult:
    """``durak-ref play``: a match with the person at ``seat`` (0-based) and ``specs`` in
    the other seats, in order; the person types on ``stdin_fd``. ``kwargs`` go to
    ``runner.run_match`` (log_dir, options). Returns the result (``interrupted`` after
    Ctrl-C); raises what ``run_match`` raises (a bot program that cannot start, ...)."""

    person = HumanPlayer(name, LineSource(stdin_fd), write or stdout_writer(), hints)
    seats = list(specs)
    seats.insert(seat, person.spec)
    return run_match(seats, config, human=person, **kwargs)
