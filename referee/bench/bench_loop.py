"""``durak-ref bench loop``: the server's event-loop latency, idle and with a lobby full of
expert tables, side by side.

It starts a real ``serve --http`` (a child process: its own interpreter and loop), reads
the loop probe (referee/web/loopprobe.py, ``GET /api/loop``) over an idle stretch, then
has one visitor open its lobby tables (``TABLES_PER_ADDRESS``: "you + 3 x
builtin:expert") and click along (``Visitor``: each request answered at once with its
first move, a finished table replaced by a new one) for as long again, and reads the
probe over that stretch. Figures to compare within one run, not verdicts
(``referee.bench.bench``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .bench import machine_info

#: The table the visitor opens: a person and three experts (the searching built-in).
EXPERT_TABLE = ["you", "builtin:expert", "builtin:expert", "builtin:expert"]


def start_serve(workdir: Path, *extra: str) -> tuple[subprocess.Popen[str], str, str]:
    """A real ``durak-ref serve --http`` on free loopback ports (store and logs in
    ``workdir``): the process, its lobby's base URL and its arena's HOST:PORT, once it
    listens. ``extra``: more options. The caller ends it (``stop_serve``).
    RuntimeError when it does not come up."""
    serve = subprocess.Popen(
        [sys.executable, "-m", "referee", "serve", "--listen", "127.0.0.1:0", "--db",
         str(workdir / "arena.sqlite"), "--log-dir", str(workdir / "logs"), "--http",
         "127.0.0.1:0", *extra], cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    assert serve.stdout is not None
    seen: list[str] = []
    found: dict[str, str] = {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(found) < 2:
        line = serve.stdout.readline()
        if not line:
            break
        seen.append(line)
        for key, pattern in (("lobby", r"^lobby: (http://127\.0\.0\.1:\d+)/play$"),
                             ("arena", r"^arena listening on (127\.0\.0\.1:\d+)\b")):
            match = re.match(pattern, line.strip())
            if match:
                found[key] = match[1]
    if len(found) < 2:
        serve.kill()
        serve.wait()
        raise RuntimeError("serve did not start: " + "".join(seen[-5:]))
    threading.Thread(target=_drain, args=(serve.stdout,), daemon=True).start()
    return serve, found["lobby"], found["arena"]


def _drain(stream: Any) -> None:
    """Read the server's output to its end (so it never blocks on a full pipe)."""
    with stream:
        for _ in stream:
            pass


def stop_serve(serve: subprocess.Popen[str]) -> None:
    """Interrupt the server twice (stop, then abort the games in flight) and reap it."""
    import signal

    for _ in range(2):
        if serve.poll() is None:
            serve.send_signal(signal.SIGINT)
            try:
                serve.wait(5)
            except subprocess.TimeoutExpired:
                continue
    if serve.poll() is None:
        serve.kill()
        serve.wait()
    time.sleep(0.1)  # (the drain reads the last lines and closes the pipe)


def loop_figures(base: str, window: float) -> dict[str, Any]:
    """The serve's loop probe over the last ``window`` seconds (at most
    ``loopprobe.KEEP_S``). RuntimeError when it does not answer."""
    import httpx

    try:
        answer = httpx.get(f"{base}/api/loop", params={"window": f"{window:g}"}, timeout=30)
        answer.raise_for_status()
    except httpx.HTTPError as exc:
        raise RuntimeError(f"serve's loop probe did not answer: {exc}") from exc
    figures: dict[str, Any] = answer.json()
    return figures


class Visitor:
    """One visitor at one address keeping ``tables`` lobby tables of ``seats`` in play,
    answering every request of theirs at once (its first move), until ``stop``. Each
    table runs in a thread of its own (a blocking HTTP client: none of its time is the
    server's). ``games`` counts the finished tables; ``errors`` what went wrong (a table
refused for now by the lobby's cap, while the last one ends, is a ``wait``, retried)."""

    def __init__(self, base: str, seats: list[str], tables: int = 3, name: str = "Visitor") -> None:
        self.base, self.seats, self.name = base, seats, name
        self.person: str | None = None
        self.games = 0
        self.moves = 0
        self.errors: list[str] = []
        self.waits = 0  #: tables refused for now by the lobby's cap per address (429)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._first: list[str] = []  #: the seat token of the table ``start`` opened
        self._threads = [threading.Thread(target=self._keep_playing, daemon=True)
                         for _ in range(tables)]

    def start(self) -> None:
        # The first table claims the name; the others come with its person token.
        first = self._open_table()
        if first is not None:
            self._first.append(first)
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(30)

    def _open_table(self) -> str | None:
        import httpx

        body: dict[str, Any] = {"name": self.name, "seats": self.seats, "move_time": 60}
        with self._lock:
            if self.person is not None:
                body["person"] = self.person
            answer = httpx.post(f"{self.base}/api/tables", json=body, timeout=30)
            data = answer.json()
            if answer.status_code == 429:
                # Its last table is seen over before the server has let it go (a moment
                # later): the lobby's cap per address, not a fault; try again shortly.
                self.waits += 1
                return None
            if answer.status_code != 200:
                self.errors.append(f"create: {answer.status_code} {data}")
                return None
            self.person = data["person"]
        token: str = data["token"]
        return token

    def _keep_playing(self) -> None:
        with self._lock:
            token = self._first.pop() if self._first else None
        while not self._stop.is_set():
            token = token or self._open_table()
            if token is None:
                self._stop.wait(1)
                continue
            if self._play(token):
                with self._lock:
                    self.games += 1
            token = None

    def _play(self, token: str) -> bool:
        """Follow one seat's stream and answer each request at once until the game ends
        (True) or the visitor stops (False)."""
        import httpx

        answered = None
        with httpx.Client(timeout=httpx.Timeout(30, read=120)) as client, \
                client.stream("GET", f"{self.base}/seat/events", params={"token": token}) as stream:
            event = None
            for line in stream.iter_lines():
                if self._stop.is_set():
                    return False
                if line.startswith("event:"):
                    event = line[6:].strip()
                if not line.startswith("data:") or event != "seat":
                    continue
                state = json.loads(line[5:])
                table = state.get("table") or {}
                if state.get("replay") or state.get("notice") or table.get("end"):
                    return True
                request = table.get("request")
                if request is not None and request["id"] != answered:
                    answered = request["id"]
                    client.post(f"{self.base}/api/act", json={
                        "token": token, "request": request["id"], "choice": 0})
                    with self._lock:
                        self.moves += 1
        return True


def bench_loop(seconds: float, tables: int = 3) -> dict[str, Any]:
    """Serve, measure the loop idle for ``seconds``, then with one visitor's ``tables``
    expert tables for ``seconds``; both sets of figures side by side."""
    with tempfile.TemporaryDirectory(prefix="durak-bench-loop-") as work:
        serve, base, _ = start_serve(Path(work))
        try:
            time.sleep(seconds)
            idle = loop_figures(base, seconds)
            visitor = Visitor(base, EXPERT_TABLE, tables)
            visitor.start()
            try:
                time.sleep(seconds)
                busy = loop_figures(base, seconds)
            finally:
                visitor.stop()
        finally:
            stop_serve(serve)
    return {"seconds": seconds, "idle": idle, "lobby_full": busy, "tables": tables,
            "table_seats": EXPERT_TABLE, "visitor_moves": visitor.moves,
            "visitor_games": visitor.games, "visitor_errors": visitor.errors[:5],
            "machine": machine_info()}
