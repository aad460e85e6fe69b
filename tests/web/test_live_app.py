"""The live page's server (``referee/web/live.py``), tested over real HTTP: hypercorn
on a free loopback port, real games played by built-in bots, httpx as the client.

The contract: while a game runs, every byte sent is public information (each view in
the stream is, in order, the table a spectator rebuilds from public events at some
moment, and names no card that is hidden at that moment); a game's omniscient replay exists only
once it has ended; bad requests get 4xx, never a traceback; slow or surplus clients
cannot hold the referee.
"""

from __future__ import annotations

import gc
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from livekit import CARD, classic, expected_views, live_server, play_watched, sse_events
from referee.console.jsonout import strict_loads
from referee.web.live import IDLE_TIMEOUT_S, LiveError, LiveHub, parse_http, serve_live, with_live


async def collect(response: httpx.Response, got: bytearray) -> None:
    """Append every raw byte of an event stream to ``got`` until it ends."""
    async for chunk in response.aiter_raw():
        got.extend(chunk)


async def until_streamed(got: bytearray, ready: Callable[[list[tuple[str, Any]]], bool],
                         what: str, timeout: float = 60) -> None:
    """Wait until the events collected in ``got`` so far satisfy ``ready`` (the stream has
    delivered what the test needs), polling; fail naming ``what`` after ``timeout`` s."""
    with trio.move_on_after(timeout):
        while not ready(sse_events(bytes(got[:got.rfind(b"\n\n") + 2]))):
            await trio.sleep(0.01)
        return
    raise AssertionError(f"the stream did not deliver {what} within {timeout} s")


async def test_the_stream_is_exactly_the_public_table_and_never_names_a_hidden_card() -> None:
    hub = LiveHub("test")
    config = classic()
    got = bytearray()
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        async with client.stream("GET", "/events") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            records = []
            async with trio.open_nursery() as nursery:
                nursery.start_soon(collect, response, got)
                for index in range(3):
                    records.append(await play_watched(hub, config, index))
                await until_streamed(got, lambda events: [n for n, _ in events].count("finished") == 3,
                                     "the 3 games' finished events")
                nursery.cancel_scope.cancel()
    events = sse_events(bytes(got))
    assert events[0] == ("snapshot", {"title": "test", "tables": [], "recent": [], "standings": [],
                                      "standings_error": None})
    for record in records:
        sent = [data for name, data in events if name == "table" and data["game"] == record["game"]]
        expected = expected_views(record, config)
        # Each view sent is the spectator's table at some moment, in order (a client
        # that reads slower than the game is played may skip views), the last one the
        # end; none names a card hidden at its moment.
        position = 0
        for view in sent:
            while position < len(expected) and expected[position][0] != view:
                position += 1
            assert position < len(expected), ("not a public view, or out of order", view)
            assert not set(CARD.findall(json.dumps(view))) & expected[position][1], view
        assert sent[-1] == expected[-1][0] and sent[-1]["end"]["durak"] == record["durak"]
        finished = [data for name, data in events if name == "finished" and data["game"] == record["game"]]
        assert finished == [{"game": record["game"], "names": record["players"],
                             "termination": record["termination"],
                             "durak": None if record["durak"] is None else record["players"][record["durak"]],
                             "bouts": record["bouts"], "replay": f"/game/{record['game']}"}]


async def test_a_game_in_play_has_no_replay_and_a_finished_one_shows_every_hand() -> None:
    hub = LiveHub("test")
    config = classic()
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        record = await play_watched(hub, config, 5)
        assert (await client.get("/game/6")).status_code == 404
        hub.follow({"type": "start", "game": 6, "names": ["a", "b"], "dealer": 1, "trump": "6S",
                    "trump_holder": None, "talon": 24, "hand_sizes": [6, 6], "known": [[], []],
                    "attacker": 0, "defender": 1})
        in_play = await client.get("/game/6")
        assert in_play.status_code == 404 and "has no replay until it ends" in in_play.text
        done = await client.get("/game/5")
        assert done.status_code == 200
        assert done.headers["content-type"] == "text/html; charset=utf-8"
        # The omniscient view: the first hands dealt are all there.
        for card in record["deck"][:12]:
            assert card in done.text
        # Never the run's seed: it keys every deal of the run, those still to come too.
        assert config.seed not in done.text
        state = strict_loads((await client.get("/api/state")).text)
        assert [t["game"] for t in state["tables"]] == [6]
        assert [g["game"] for g in state["recent"]] == [5]


async def test_names_and_strings_are_escaped_in_every_page() -> None:
    hub = LiveHub("<script>alert(1)</script>")
    config = classic()
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        await play_watched(hub, config, 0, names=("<img src=x onerror=alert(1)>", "b&b"))
        page = (await client.get("/game/0")).text
        # The replay viewer gets its data as JSON with <, > and & escaped (replay_html).
        assert "<img src=x" not in page and "\\u003cimg src=x onerror=alert(1)\\u003e" in page
        assert "b&b" not in page and "b\\u0026b" in page
        # The page itself holds no data: the script sets every string with textContent.
        index = await client.get("/")
        assert "<script>alert" not in index.text
        state = (await client.get("/api/state")).json()
        assert state["title"] == "<script>alert(1)</script>"  # data, served as JSON only
        script = (await client.get("/assets/live.js")).text
        assert "innerHTML" not in script and "insertAdjacentHTML" not in script


@pytest.mark.parametrize("method,path,status", [
    ("GET", "/", 200), ("GET", "/assets/live.js", 200), ("GET", "/assets/live.css", 200),
    ("GET", "/api/state", 200), ("GET", "/nope", 404), ("GET", "/assets/../live.py", 404),
    ("GET", "/game/abc", 400), ("GET", "/game/-1", 400), ("GET", "/game/1e3", 400),
    ("GET", "/game/99999999999999999999", 400), ("GET", "/game/12", 404), ("GET", "/game/", 400),
    ("POST", "/", 405), ("PUT", "/api/state", 405), ("DELETE", "/game/1", 405),
])
async def test_every_request_gets_a_clear_status(method: str, path: str, status: int) -> None:
    async with live_server(LiveHub("t")) as url, httpx.AsyncClient(base_url=url) as client:
        response = await client.request(method, path)
        assert response.status_code == status, response.text
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["cache-control"] == "no-store"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        if status >= 400:
            assert response.text.strip() and "Traceback" not in response.text


@pytest.mark.parametrize("host,ok", [("localhost", True), ("127.0.0.1", True), ("evil.example", False),
                                     ("127.0.0.1.evil.example", False), ("", False)])
async def test_a_loopback_server_answers_only_to_loopback_host_names(host: str, ok: bool) -> None:
    """A web page elsewhere cannot read the server through a DNS name rebound to 127.0.0.1."""
    async with live_server(LiveHub("t")) as url, httpx.AsyncClient(base_url=url) as client:
        port = url.rpartition(":")[2]
        response = await client.get("/api/state", headers={"host": f"{host}:{port}" if host else ""})
        assert response.status_code == (200 if ok else 400)


async def test_a_client_that_stops_reading_is_dropped_and_never_holds_the_referee() -> None:
    """A client that never reads its stream fills the sockets, then its own bounded
    queue, and is dropped; feeding the hub never waits for it, and a client that keeps
    up misses no finished game meanwhile."""
    hub = LiveHub("t", client_queue=64)
    played = 0
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        port = int(url.rpartition(":")[2])
        stalled = trio.socket.socket()
        stalled.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_RCVBUF, 4096)
        await stalled.connect(("127.0.0.1", port))
        await stalled.send(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n")
        got = bytearray()
        async with client.stream("GET", "/events") as response:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(collect, response, got)
                while len(hub.clients) < 2:
                    await trio.sleep(0.01)
                with trio.fail_after(120):
                    while hub.dropped == 0:
                        await play_watched(hub, classic(), played)
                        played += 1
                        await trio.sleep(0)  # as a referee does between games
                    await play_watched(hub, classic(), played)
                    played += 1
                    while got.count(b"event: finished") < played:
                        await trio.sleep(0.01)
                nursery.cancel_scope.cancel()
        stalled.close()
    assert hub.dropped == 1 and len(hub.clients) == 0
    assert [data["game"] for name, data in sse_events(bytes(got)) if name == "finished"] == \
        list(range(played))


async def test_clients_beyond_the_cap_get_503() -> None:
    hub = LiveHub("t", max_clients=2)
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        async with client.stream("GET", "/events"), client.stream("GET", "/events"):
            third = await client.get("/events")
            assert third.status_code == 503 and "too many live viewers" in third.text
            assert third.headers["retry-after"] == "30"


async def test_closing_the_hub_ends_every_stream_and_the_server() -> None:
    hub = LiveHub("t")
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(serve_live, hub, "127.0.0.1", 0)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                async with client.stream("GET", "/events") as response:
                    hub.close()
                    body = b"".join([chunk async for chunk in response.aiter_raw()])
                    assert body.startswith(b"event: snapshot")
        # serve_live returned by itself: the nursery was not cancelled.
    with pytest.raises(OSError):
        await trio.open_tcp_stream("127.0.0.1", port)


async def test_a_silent_viewer_outlives_every_server_timeout_and_still_gets_the_next_game(
        autojump_clock: trio.abc.Clock) -> None:
    """The long-run rule: an event stream is one response during which the browser sends
    nothing. It must stay open past every timeout of the server beneath it (hypercorn's
    idle timer; its read timeout, which would cut the stream, is off) and then deliver.
    Virtual time: hypercorn's timers, the client and the sockets (loopback, so a byte
    sent is readable at once) all live in this trio run, so the clock jumps only when
    every task waits, and the silence lasts twice the real idle timeout in an instant."""
    hub = LiveHub("t")
    got = bytearray()
    with trio.fail_after(IDLE_TIMEOUT_S + 30):
        async with live_server(hub) as url, httpx.AsyncClient(base_url=url, timeout=None) as client:
            async with client.stream("GET", "/events") as response:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(collect, response, got)
                    await trio.sleep(2 * IDLE_TIMEOUT_S + 1)
                    record = await play_watched(hub, classic(), 0)
                    await trio.sleep(0.5)
                    nursery.cancel_scope.cancel()
    names = [name for name, data in sse_events(bytes(got))]
    assert names[0] == "snapshot" and names.count("snapshot") == 1  # one connection throughout
    assert ("finished", record["game"]) in [(n, d.get("game")) for n, d in sse_events(bytes(got))]


async def test_a_client_that_never_finishes_its_request_is_closed_after_the_idle_time(
        autojump_clock: trio.abc.Clock) -> None:
    """Slow request heads (slowloris) are cut by the idle timer, not by a read timeout.
    Virtual time, as the silent viewer's test: the wait is the real idle timeout."""
    hub = LiveHub("t")
    with trio.fail_after(IDLE_TIMEOUT_S + 30):
        async with live_server(hub) as url:
            port = int(url.rpartition(":")[2])
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends
            start = trio.current_time()
            assert await stream.receive_some(1024) == b""  # closed by the server
            assert trio.current_time() - start >= IDLE_TIMEOUT_S - 0.5
            await stream.aclose()


async def test_a_port_in_use_is_the_users_error() -> None:
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    job_ran = []

    async def job() -> None:
        job_ran.append(True)

    with warnings.catch_warnings():
        # hypercorn leaves the socket it failed to bind for the garbage collector.
        warnings.simplefilter("ignore", ResourceWarning)
        with pytest.raises(LiveError, match=f"--http 127.0.0.1:{port}: cannot listen there: "
                           "Address already in use"):
            await with_live(LiveHub("t"), "127.0.0.1", port, job)
        gc.collect()
    assert job_ran == []  # refused before the run starts
    await listener.aclose()


@pytest.mark.parametrize("text,expected", [("127.0.0.1:8080", ("127.0.0.1", 8080)),
                                           (":0", ("127.0.0.1", 0)), ("[::1]:80", ("::1", 80))])
def test_http_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_http(text) == expected


@pytest.mark.parametrize("text", ["8080", "host:", "host:http", "h:70000", ""])
def test_bad_http_addresses_are_refused(text: str) -> None:
    with pytest.raises(LiveError, match="--http"):
        parse_http(text)


async def test_hostile_requests_get_an_error_and_the_server_keeps_serving() -> None:
    """Oversized headers, garbage instead of HTTP, a websocket upgrade, a client that
    sends half a request and stalls: each gets an error or is cut off, and the page
    still answers everyone else."""
    async with live_server(LiveHub("t")) as url, httpx.AsyncClient(base_url=url) as client:
        port = int(url.rpartition(":")[2])

        async def raw(data: bytes) -> bytes:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            try:
                await stream.send_all(data)
                got = b""
                with trio.move_on_after(15):
                    while chunk := await stream.receive_some(65536):
                        got += chunk
                        if b"\r\n\r\n" in got:
                            break
                return got
            except trio.BrokenResourceError:
                return b""  # cut off while sending: refused
            finally:
                await stream.aclose()

        huge = b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Fill: " + b"a" * 100_000 + b"\r\n\r\n"
        assert (await raw(huge))[:12] in (b"HTTP/1.1 431", b"HTTP/1.1 400", b"")
        assert (await raw(b"\x16\x03\x01garbage\r\n\r\n"))[:12] in (b"HTTP/1.1 400", b"")
        upgrade = (b"GET /events HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                   b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   b"Sec-WebSocket-Version: 13\r\n\r\n")
        assert (await raw(upgrade))[:12] == b"HTTP/1.1 403"
        half = await trio.open_tcp_stream("127.0.0.1", port)
        await half.send_all(b"GET / HTTP/1.1\r\nHost: loc")
        assert (await client.get("/")).status_code == 200  # others are served meanwhile
        await half.aclose()


async def test_standings_follow_finished_games_and_a_failing_source_is_shown_not_fatal(
        autojump_clock: trio.abc.Clock) -> None:
    results: list[Any] = [
        {"table": [{"rank": 1, "bot": "a", "games": 2, "durak": 0, "draws": 0, "durak_rate": 0.0,
                    "rating": 50.0, "error95": 120.5, "los_next": 0.9}], "rating_error": None},
        RuntimeError("database is locked"),
    ]

    def source() -> dict[str, Any]:
        result = results.pop(0)
        if isinstance(result, Exception):
            raise result
        return result

    hub = LiveHub("t", standings=source)
    client = hub.subscribe()
    assert client is not None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hub.run_standings)
        first = sse_events(await client.take() or b"")
        if len(first) == 1:  # the snapshot came alone; the standings follow
            first += sse_events(await client.take() or b"")
        assert first[-1] == ("standings", {"standings": [
            {"rank": 1, "bot": "a", "games": 2, "durak": 0, "draws": 0, "durak_rate": 0.0,
             "rating": 50.0, "error95": 120.5}], "error": None})
        hub.finished({"rules": {}}, {"game": 0, "players": ["a", "b"], "termination": "normal",
                                     "durak": 1, "bouts": 3})
        events = []
        while len(events) < 2:
            events += sse_events(await client.take() or b"")
        assert events[1][0] == "standings"
        assert events[1][1]["error"] == "standings unavailable: RuntimeError: database is locked"
        assert events[1][1]["standings"] == first[-1][1]["standings"]  # the last good ones stay
        hub.close()
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("path", ["/", "/assets/live.js", "/assets/live.css", "/assets/cards.js",
                                  "/assets/cards.css"])
async def test_the_page_and_its_assets_name_no_card(path: str) -> None:
    """Every card a browser holds came from the stream, so checking the stream suffices."""
    async with live_server(LiveHub("t")) as url, httpx.AsyncClient(base_url=url) as client:
        response = await client.get(path)
        assert response.status_code == 200
        assert CARD.findall(response.text) == []


@pytest.mark.process
async def test_a_forfeit_detail_naming_a_hidden_card_never_reaches_a_spectator(tmp_path: Path) -> None:
    """A cheating bot's illegal action names a card in its hand; the log keeps that
    evidence, the spectator stream only ``cheat forfeited (illegal)``."""
    import sys

    from referee.seats.players import parse_bot_spec
    from referee.table.match import play_game
    from referee.table.runner import SeatOptions, make_players
    from referee.web.live import replay_header

    config = classic()
    bot = f"cheat={sys.executable} {Path(__file__).parent / 'bots' / 'cheat_bot.py'}"
    hub = LiveHub("t")
    got = bytearray()
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        async with client.stream("GET", "/events") as response, trio.open_nursery() as nursery:
            nursery.start_soon(collect, response, got)
            players = make_players([parse_bot_spec(bot), parse_bot_spec("builtin:greedy")], config,
                                   stderr_stem=None, options=SeatOptions(sandbox="none"))
            async with trio.open_nursery() as bots:
                for p in players:
                    await p.start(bots)
                try:
                    for index in range(6):  # until the cheat has had to defend once
                        record = await play_game(players, config, index=index, seed=f"c{index}",
                                                 dealer=1, watch=hub.watch)
                        if record.forfeit is not None:
                            break
                finally:
                    for p in players:
                        await p.close()
                    bots.cancel_scope.cancel()
            assert record.forfeit is not None and record.forfeit["kind"] == "illegal"
            secret = record.forfeit["evidence"]["received"]["card"]
            assert secret in record.reason  # the log's reason names it
            await until_streamed(got, lambda events: any(
                n == "table" and d["game"] == record.index and d.get("end") for n, d in events),
                "the forfeited game's end view")
            before_end = bytes(got)
            hub.finished(replay_header(config), record.as_dict())
            await until_streamed(got, lambda events: ("finished", record.index) in
                                 [(n, d.get("game")) for n, d in events], "its finished event")
            nursery.cancel_scope.cancel()
    views = [data for name, data in sse_events(before_end)
             if name == "table" and data["game"] == record.index]
    assert views[-1]["end"] == {"durak": 0, "termination": "illegal",
                                "reason": "cheat forfeited (illegal)"}
    assert all(secret not in json.dumps(v) for v in views)


async def twin_game(hub: LiveHub, config: Any, index: int, names: tuple[str, str]) -> dict[str, Any]:
    """Game ``index`` of deal "live:twins" (a duplicate twin of every other such game)."""
    from livekit import builtin_players
    from referee.table.match import play_game
    from referee.web.live import replay_header

    record = await play_game(builtin_players(*names), config, index=index, seed="live:twins",
                             dealer=1, watch=hub.watch)
    hub.finished(replay_header(config), record.as_dict())
    return record.as_dict()


async def test_a_finished_game_is_shown_only_once_its_duplicate_twin_has_ended_too() -> None:
    """The twin of game 0 deals the same cards with the seats swapped: while it plays, game
    0's replay would show every card hidden in it. So neither the replay nor the JSON
    (the list of recent games, the finished event) shows game 0 until its twin has ended."""
    hub = LiveHub("test", deal_games=2)
    config = classic()
    got = bytearray()
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        async with client.stream("GET", "/events") as response, trio.open_nursery() as nursery:
            nursery.start_soon(collect, response, got)
            first = await twin_game(hub, config, 0, ("alice", "bob"))
            # Game 1, the twin, starts: it is in play, game 0 has ended.
            hub.follow({"type": "start", "game": 1, "names": ["bob", "alice"], "dealer": 1,
                        "trump": first["deck"][-1], "trump_holder": None, "talon": 24,
                        "hand_sizes": [6, 6], "known": [[], []], "attacker": 0, "defender": 1})
            held = await client.get("/game/0")
            assert held.status_code == 404 and "every duplicate game of its deal has ended" in held.text
            state = strict_loads((await client.get("/api/state")).text)
            assert [t["game"] for t in state["tables"]] == [1] and state["recent"] == []
            assert "deck" not in json.dumps(state)
            await twin_game(hub, config, 1, ("bob", "alice"))
            await until_streamed(got, lambda events: [n for n, _ in events].count("finished") == 2,
                                 "both twins' finished events")
            nursery.cancel_scope.cancel()
        for number in (0, 1):
            shown = await client.get(f"/game/{number}")
            assert shown.status_code == 200 and all(c in shown.text for c in first["deck"][:12])
        state = strict_loads((await client.get("/api/state")).text)
        assert sorted(g["game"] for g in state["recent"]) == [0, 1]
    # Nothing of game 0 was streamed before its twin's end.
    events = sse_events(bytes(got))
    finished_at = [i for i, (name, _) in enumerate(events) if name == "finished"]
    twin_end = max(i for i, (name, data) in enumerate(events)
                   if name == "table" and data["game"] == 1)
    assert min(finished_at) > twin_end


async def test_a_deal_whose_twin_is_never_played_is_shown_when_its_run_says_so() -> None:
    hub = LiveHub("test", deal_games=2)
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        await twin_game(hub, classic(), 0, ("alice", "bob"))
        assert (await client.get("/game/0")).status_code == 404
        hub.deal_over("live:twins")  # e.g. the arena stopped the pair after one game
        assert (await client.get("/game/0")).status_code == 200


async def test_a_live_replay_says_its_game_ended_not_that_the_match_did_not_finish() -> None:
    """The replay of a listed game is of a finished game: its data carries an ending of its
    own (the run's log has no footer while the run goes on), so the viewer does not say
    "no footer: the match did not finish"."""
    hub = LiveHub("run")
    async with live_server(hub) as url, httpx.AsyncClient(base_url=url) as client:
        await play_watched(hub, classic(), 0)
        page = (await client.get("/game/0")).text
        assert '"interrupted":false' in page.replace(" ", "") and '"interrupted":null' not in page.replace(" ", "")
