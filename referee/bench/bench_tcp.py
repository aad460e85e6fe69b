"""``durak-ref bench tcp``: what serving bots over TCP costs, next to pipes, in one run.

- Round trips: the same request answered by the same example bot
  (``examples/python/random_bot.py``), once as a subprocess over pipes
  (``ProcessPlayer``) and once connected over loopback TCP to a ``TcpGate`` and played
  through its ``TcpSeat``; the median round trip of each and their ratio.
- Idle connections: the arena (``referee.league.arena.Arena``, pinging as it does in
  ``serve``) with ``idle`` authenticated connections that only answer pings, opened by
  a separate Python process (raw sockets, so neither its memory nor its speed counts);
  the referee's resident memory (VmRSS from /proc/self/status) before and after.

Figures to compare within one run, not verdicts (``referee.bench.bench``).
"""

from __future__ import annotations

import gc
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from .bench import example_bots, machine_info, referee_round_trips, time_decisions, typical_request

#: A client process holding N authenticated connections that answer pings and nothing
#: else (argv: host port name token n). Prints "ready N" once every hello is sent and
#: exits when every connection is closed (the arena says bye when it stops).
_IDLE_CLIENTS = r"""
import resource, select, socket, struct, sys
import msgpack

host, port, name, token, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft != resource.RLIM_INFINITY and soft < n + 64:
    resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64 if hard == resource.RLIM_INFINITY else min(n + 64, hard), hard))

def frame(message):
    body = msgpack.packb(message, use_bin_type=True)
    return struct.pack(">I", len(body)) + body

def messages(buf):
    out = []
    while len(buf) >= 4:
        size = struct.unpack_from(">I", buf)[0]
        if len(buf) < 4 + size:
            break
        out.append(msgpack.unpackb(bytes(buf[4:4 + size]), raw=False))
        del buf[:4 + size]
    return out

hello = frame({"type": "hello", "protocol": 1, "name": name, "version": "idle", "token": token})
socks, bufs = {}, {}
for _ in range(n):
    s = socket.create_connection((host, port))
    buf = bytearray()
    while not messages(buf):  # the referee's hello (or a refusal)
        chunk = s.recv(4096)
        if not chunk:
            sys.exit("refused before the hello")
        buf += chunk
    s.sendall(hello)
    socks[s.fileno()], bufs[s.fileno()] = s, bytearray()
print("ready", len(socks), flush=True)
poller = select.poll()
for fd in socks:
    poller.register(fd, select.POLLIN)
while socks:
    for fd, _ in poller.poll():
        s = socks[fd]
        try:
            chunk = s.recv(65536)
        except OSError:
            chunk = b""
        bufs[fd] += chunk
        done = not chunk
        for m in messages(bufs[fd]):
            if m.get("type") == "ping":
                s.sendall(frame({"type": "pong", "id": m["id"]}))
            elif m.get("type") in ("bye", "error"):
                done = True
        if done:
            poller.unregister(fd)
            s.close()
            del socks[fd], bufs[fd]
"""


def _raise_fd_limit(wanted: int) -> int:
    """Raise this process's open-file limit towards ``wanted``; returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rss_kb() -> int | None:
    """This process's resident set size in kB (VmRSS), or None off Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _tcp_round_trips(bot: list[str], request: dict[str, Any], n: int) -> list[float]:
    """Round trips (seconds each) through a TcpSeat to ``bot --connect`` on loopback."""
    from ..seats.tcp import TcpGate, TcpSeat, TokenBook, new_token

    async def main() -> list[float]:
        token = new_token()
        tokens = TokenBook()
        tokens.add("bench", token)
        seat = TcpSeat("bench", wait_s=30.0)
        gate = TcpGate(tokens, lambda name: None if seat.connected else seat)
        times: list[float] = []
        async with trio.open_nursery() as nursery:
            port = await nursery.start(gate.serve, "127.0.0.1", 0)
            process = await trio.lowlevel.open_process(
                bot + ["--connect", f"127.0.0.1:{port}", "--token", token, "--name", "bench"],
                stdin=subprocess.DEVNULL)
            try:
                await seat.start(nursery)
                times = await time_decisions(seat, request, n)
                await seat.close()
                with trio.move_on_after(10):
                    await process.wait()
            finally:
                if process.returncode is None:
                    process.kill()
                    with trio.CancelScope(shield=True):
                        await process.wait()
            nursery.cancel_scope.cancel()
        return times

    return trio.run(main)


def _idle_memory(idle: int, ping_interval: float) -> dict[str, Any]:
    """The arena's RSS before and after ``idle`` authenticated idle connections."""
    from ..league.arena import Arena, register
    from ..records.store import Store
    from ..rules import make_rules
    from ..seats.tcp import TcpLimits
    from ..table.match import MatchConfig

    _raise_fd_limit(idle + 256)

    async def main(store: Store, token: str) -> dict[str, Any]:
        limits = TcpLimits(max_connections=idle + 16, max_per_address=idle + 16,
                           ping_interval=ping_interval, ping_timeout=5.0, handshake_s=30.0)
        arena = Arena(store, MatchConfig(rules=make_rules("classic")), limits,
                      max_games_per_bot=idle + 1)
        async with trio.open_nursery() as nursery:
            port = await nursery.start(arena.run, "127.0.0.1", 0)
            await trio.sleep(0.2)
            gc.collect()
            before = rss_kb()
            clients = await trio.lowlevel.open_process(
                [sys.executable, "-c", _IDLE_CLIENTS, "127.0.0.1", str(port), "idle", token,
                 str(idle)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            try:
                t0 = time.perf_counter()
                with trio.fail_after(120):
                    while arena.status()["connected"].get("idle", 0) < idle:
                        if clients.poll() is not None:
                            raise RuntimeError(f"the idle clients exited ({clients.returncode}) "
                                               f"after {arena.status()['connected']} connections")
                        await trio.sleep(0.05)
                connect_s = time.perf_counter() - t0
                # Two ping rounds: every connection pinged and answering, steady state.
                await trio.sleep(2.5 * ping_interval)
                gc.collect()
                after = rss_kb()
                connected = arena.status()["connected"].get("idle", 0)
                gate = arena.gate
                open_connections = gate.open_connections if gate else None
            finally:
                arena.stop()  # bye to every connection; the client process then exits
                with trio.move_on_after(30):
                    await clients.wait()
                if clients.returncode is None:
                    clients.kill()
                    with trio.CancelScope(shield=True):
                        await clients.wait()
        per = None if before is None or after is None or not idle else (after - before) / idle
        return {"idle_connections": idle, "idle_still_connected": connected,
                "open_connections": open_connections, "connect_s": round(connect_s, 3),
                "ping_interval_s": ping_interval,
                "rss_kb": {"before": before, "after": after},
                "rss_kb_per_idle_connection": None if per is None else round(per, 2)}

    with tempfile.TemporaryDirectory(prefix="durak-bench-tcp-") as tmp:
        with Store(Path(tmp) / "bench.sqlite") as store:
            token = register(store, "idle")
            return trio.run(main, store, token)


def bench_tcp(round_trips: int = 2000, idle: int = 1000, *, ping_interval: float = 1.0,
              bot: list[str] | None = None) -> dict[str, Any]:
    """Round trip per decision over loopback TCP next to pipes (same bot, same request,
    same run: medians and their ratio), and the referee's memory with ``idle`` idle
    authenticated connections (``idle=0`` skips that part)."""
    from protocol.codec import encode

    request = typical_request()
    bot = bot or [sys.executable, str(example_bots() / "python" / "random_bot.py"), "1"]
    pipes = referee_round_trips(bot, request, round_trips)
    tcp = _tcp_round_trips(bot, request, round_trips)
    med = {"pipes": statistics.median(pipes) * 1e6, "tcp": statistics.median(tcp) * 1e6}
    p90 = {k: statistics.quantiles(v, n=10)[-1] * 1e6 for k, v in (("pipes", pipes), ("tcp", tcp))}
    result: dict[str, Any] = {
        "benchmark": "tcp",
        "request_frame_bytes": len(encode(request)),
        "round_trips": round_trips,
        "round_trip_us_median": {k: round(v, 1) for k, v in med.items()},
        "round_trip_us_p90": {k: round(v, 1) for k, v in p90.items()},
        "ratio_tcp_vs_pipes": round(med["tcp"] / med["pipes"], 3),
        "tcp_overhead_us": round(med["tcp"] - med["pipes"], 1),
        "bot": bot,
    }
    if idle > 0:
        result["idle"] = _idle_memory(idle, ping_interval)
    result["machine"] = machine_info()
    return result
