"""A person's seat in the browser: the ``Player`` behind a lobby table's open seat.

The seat is played through the same referee code as any bot (``match.play_game``): it
receives exactly the messages a bot in that seat would, keeps the seat's table with
``referee/human/seatview.py`` (a pure function of those messages) and sends that view,
and nothing else, to the person's browser streams. A request waits for the person's
click; a click is checked against the request's legal list (``seatview.choose_answer``)
and a bad one is refused and asked again, never sent on, so it can never forfeit a game.

Disconnection works as for a TCP bot with a reconnect grace: while no stream of the
seat is open at a decision, the decision is paused (the clock stops; the time used
before still counts) for at most ``grace`` seconds in all of a game; a stream that
opens again (a reload, the same token) gets the view at once and the decision goes on.
Past the grace the game is the seat's ``disconnect`` forfeit. At a table with a bot of
the arena (``wait_s``), one decision of the person's, pauses included, lasts at most
``wait_s`` seconds of wall time: then it is the person's ``timeout``, so a person can
hold a registered bot away from the arena only that long at a time.

The seat token is the only key to the seat: unguessable (``new_seat_token``), one per
seat, kept by the browser; the lobby looks seats up by its hash.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import sys
from typing import Any

import trio

from protocol.codec import decode

from ..console.jsonout import dumps
from ..human.clocks import TableClocks, is_public_request
from ..human.seatview import SeatTable, choose_answer
from ..human.terminal import human_spec
from ..seats.players import Ask, BotFailure, Player
from .live import Client, sse

#: Streams one seat may have open at once (tabs of the same person); more are refused.
STREAMS_PER_SEAT = 4
#: Seat updates waiting for one stream; each update replaces the waiting one, so this
#: bounds only the rare keyless notices.
STREAM_QUEUE = 16


#: Seconds a hint may take (its process is killed then, and the move has no hint).
HINT_SECONDS = 5.0


async def hint_elsewhere(bot: str, request: Any, rules: Any, seed: str) -> dict[str, Any] | None:
    """``hints.hint`` computed in a process of its own (``python -m referee.human.hints``),
    never on the server's event loop nor in a thread of its process (a search holds the
    interpreter's lock: every other table would wait), in a bot's control group where
    the host gives one (memory, processes, a CPU's quota), within ``HINT_SECONDS``: the
    hint, or None when none came in time."""
    from ..seats.cgroups import confinement, default_limits
    from ..seats.confined import CODE_ROOT

    group = confinement(default_limits(), announce=False).open_group()
    job = dumps({"bot": bot, "request": request, "rules": rules, "seed": seed}).encode()
    argv = [*(group.join_argv() if group else ()), sys.executable, "-m", "referee.human.hints"]
    try:
        with trio.move_on_after(HINT_SECONDS):
            done = await trio.run_process(argv, stdin=job, capture_stdout=True,
                                          capture_stderr=True, check=False,
                                          env=dict(os.environ, PYTHONPATH=CODE_ROOT))
            if done.returncode == 0:
                answer: dict[str, Any] = json.loads(done.stdout)
                return answer
        return None
    finally:
        if group is not None:
            group.kill_all()
            group.remove()


def new_seat_token() -> str:
    """A fresh seat token: 192 random bits, URL-safe text."""
    return secrets.token_urlsafe(24)


def token_key(token: str) -> str:
    """What the lobby files a seat under: the token's SHA-256 (the token itself is kept
    only by the browser)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class BrowserSeat(Player):
    """A person playing in a browser. ``grace``: seconds a game waits, paused, for the
    person to come back (all pauses of a game together); ``hint_bot``: a key of
    ``hints.HINT_BOTS`` for a learning game's hints, or None; ``wait_s``: the longest
    one decision may take, pauses included, because a bot of the arena waits on it
    (None: the clock's and the grace's limits only)."""

    def __init__(self, name: str, *, grace: float, hint_bot: str | None = None,
                 wait_s: float | None = None) -> None:
        super().__init__(name, human_spec(name), wants_events=True)
        self.info = {"name": name, "version": "browser", "author": "a person in a browser"}
        self.grace = grace
        self.hint_bot = hint_bot
        self.wait_s = wait_s
        self.streams: set[Client] = set()
        self.table: SeatTable | None = None
        self.paused = False  #: waiting for the person to come back, mid-decision
        self.reconnects = 0  #: streams opened again during a decision's pause
        self.replay: str | None = None  #: the finished game's replay link, once listed
        self.notice: str | None = None  #: why the table ended without a game, once it did
        self.on_event: Any = None  #: callable(str) for operator lines
        #: The table's public clocks (set by whoever seats the game), told of this seat's moves
        self.clocks: TableClocks | None = None
        self._grace_left = grace
        self._wake = trio.Event()
        self._choice: int | None = None
        self._hint: dict[str, Any] | None = None
        self._asked_at = 0.0
        self._paused_s = 0.0

    # ------------------------------------------------------------ the person's streams

    @property
    def connected(self) -> bool:
        return bool(self.streams)

    def attach(self) -> Client | None:
        """A new browser stream of this seat, starting with the view now; None when the
        seat has its STREAMS_PER_SEAT open."""
        if len(self.streams) >= STREAMS_PER_SEAT:
            return None
        client = Client(STREAM_QUEUE)
        client.put(self._frame(), key="seat")
        self.streams.add(client)
        self._wake.set()
        return client

    def detach(self, client: Client) -> None:
        client.close()
        self.streams.discard(client)
        self._wake.set()

    def _frame(self) -> bytes:
        return sse("seat", self.state())

    def state(self) -> dict[str, Any]:
        """What the person's page draws now (JSON-ready): the seat's table (from its own
        messages only), the hint of the open request, the time used on it so far, the
        replay once the game is over and listed."""
        if self.table is None:
            return {"name": self.name, "waiting": self.notice is None, "notice": self.notice}
        data = self.table.view()
        if data["request"] is not None:
            used = trio.current_time() - self._asked_at - self._paused_s
            data["request"]["used_ms"] = max(0, int(1000 * used))
            data["request"]["hint"] = self._hint
        clocks = None if self.clocks is None else self.clocks.view(trio.current_time())
        return {"name": self.name, "waiting": False, "table": data, "replay": self.replay,
                "notice": self.notice, "clocks": clocks}

    def publish(self) -> None:
        """Send the view now to every stream of the seat (a waiting one is replaced)."""
        frame = self._frame()
        for client in list(self.streams):
            if not client.put(frame, key="seat"):
                self.detach(client)

    def table_ended(self, why: str) -> None:
        """The table ended without this seat's game (never filled, or it could not be
        played): the page says ``why`` instead of waiting on."""
        self.notice = why
        self.publish()

    def finished(self, replay: str | None) -> None:
        """The game is recorded; its replay is at ``replay`` (None: none served)."""
        self.replay = replay
        self.publish()

    # ------------------------------------------------------------ the referee's side

    def hear(self, frame: bytes) -> None:
        """Follow the seat's table with a message and show the person the view."""
        message = decode(frame)
        if message.get("type") == "game_start":
            self.table = SeatTable(message)
            self._grace_left = self.grace
            self.replay = None
        elif self.table is not None:
            self.table.follow(message)
        self.publish()

    def submit(self, request_id: Any, choice: Any) -> str | None:
        """The person's answer from the page: None when it is taken, else why not (the
        request stays open and the person is asked again)."""
        request = None if self.table is None else self.table.request
        if request is None or self._choice is not None:
            return "it is not your move"
        index, why = choose_answer(request, request_id, choice)
        if index is None:
            return why
        self._choice = index
        self._wake.set()
        return None

    async def finish(self, ask: Ask) -> dict[str, Any]:
        """Show the request and wait for the person's click (paused while no stream is
        open, within the game's grace): only an element of the legal list is answered."""
        request, timeout = ask.message(), ask.budget
        assert self.table is not None, "game_start comes before any request"
        self._choice, self._paused_s = None, 0.0
        self.table.follow(request)
        self._hint = None
        if self.hint_bot is not None:
            self._hint = await hint_elsewhere(self.hint_bot, request, self.table.rules,
                                              f"{self.name}:{request['game']}")
        # The person's time starts when the request (with its hint) is on the page.
        self._asked_at = trio.current_time()
        if self.clocks is not None and is_public_request(request):
            self.clocks.asked(self.table.seat, self._asked_at)
        self.publish()
        # A bot of the arena waits at most wait_s on this decision, pauses included.
        held_until = math.inf if self.wait_s is None else self._asked_at + self.wait_s
        while self._choice is None:
            if not self.connected:
                await self._pause(request["id"], held_until)
                self.publish()
                continue
            # The clock stops while the person is away: the deadline moves by the pauses.
            deadline = math.inf if timeout is None else self._asked_at + self._paused_s + timeout
            self._wake = trio.Event()
            with trio.move_on_at(min(deadline, held_until)):
                await self._wake.wait()
            if self._choice is None and trio.current_time() >= min(deadline, held_until):
                raise self._timed_out(timeout, held_until < deadline)
        answered = trio.current_time()
        # The person is charged from the request to the click, less the pauses.
        ask.timing = (self._asked_at + self._paused_s, answered)
        legal = request["legal"]
        if self.clocks is not None:
            self.clocks.answered()
        self.table.answered()
        self.publish()
        return legal[self._choice]

    def _timed_out(self, timeout: float | None, held: bool) -> BotFailure:
        """The person's ``timeout``: past the clock's ``timeout`` or, when ``held``, past
        the longest a bot of the arena waits on them (``wait_s``)."""
        assert self.table is not None
        self.table.answered()
        self.publish()
        if held:
            return BotFailure("timeout", f"{self.name} kept a bot of the arena waiting "
                              f"{self.wait_s:g} s on one move (the longest it waits on a "
                              f"person, pauses included)", {"budget_s": self.wait_s})
        return BotFailure("timeout", f"{self.name} did not move within {timeout:g} s",
                          {"budget_s": timeout})

    async def _pause(self, request_id: int, held_until: float = math.inf) -> None:
        """No stream is open: wait for one, within what is left of the game's grace (and
        before ``held_until``, when a bot of the arena waits). Raises the ``disconnect``
        failure when none opens within the grace, the ``timeout`` one at ``held_until``."""
        self._say(f"{self.name}: the browser left at request {request_id}; game paused for up "
                  f"to {self._grace_left:.3g} s")
        began = trio.current_time()
        self.paused = True
        if self.clocks is not None:
            self.clocks.paused(began)
        try:
            with trio.move_on_at(min(began + self._grace_left, held_until)):
                while not self.connected:
                    self._wake = trio.Event()
                    await self._wake.wait()
        finally:
            self.paused = False
            away = trio.current_time() - began
            self._grace_left = max(0.0, self._grace_left - away)
            self._paused_s += away
            if self.clocks is not None:
                self.clocks.resumed(trio.current_time())
        if not self.connected and trio.current_time() >= held_until:
            raise self._timed_out(None, True)
        if not self.connected:
            raise BotFailure("disconnect", f"{self.name} left the table: no browser came back "
                             f"within the grace of {self.grace:g} s (all pauses of a game "
                             f"together)", {"reconnect_grace_s": self.grace})
        self.reconnects += 1
        self._say(f"{self.name} came back after {away:.2f} s; the game goes on")

    def _say(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    async def close(self) -> None:
        """The person's streams end with the seat (each gets what it had queued)."""
        for client in list(self.streams):
            client.close()
