"""The lobby defends itself like the arena (issue 35, item 3): its caps count per address,
per /24 network and in all, so one network cannot take every stream or table; a
seated person's own seat stream is never refused for others' load; a newcomer from
another network is still served; each refusal names its cap.

Against a real ``serve --http`` on 127.0.0.1 over real HTTP/1.1 connections, each bound
to its own source address in 127.0.0.0/8: 24 addresses of 127.0.5.0/24 flood, a person
seated from the same network and a newcomer from 127.0.6.0/24 keep being served."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from test_lobby import GOOD, answer, lobby, request

from livekit import Running
from referee.web.lobby import STREAMS, TABLES, Lobby, LobbyError

FLOOD = [f"127.0.5.{i}" for i in range(1, 25)]  #: 24 addresses of one /24
SEATED = "127.0.5.200"  #: a person of the same network, seated before the flood
NEWCOMER = "127.0.6.2"  #: another network


class Http:
    """One HTTP/1.1 request on its own connection from source address ``local``."""

    def __init__(self, port: int, local: str) -> None:
        self.port, self.local = port, local
        self.stream: trio.SocketStream | None = None
        self.data = b""

    async def send(self, method: str, path: str, body: dict[str, Any] | None = None) -> int:
        """Send the request; the response's status once its head is in."""
        self.stream = await trio.open_tcp_stream("127.0.0.1", self.port, local_address=self.local)
        payload = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n")
        await self.stream.send_all(head.encode() + payload)
        with trio.fail_after(30):
            while b"\r\n\r\n" not in self.data:
                chunk = await self.stream.receive_some(65536)
                assert chunk, f"{self.local}: the server closed {path} without an answer"
                self.data += chunk
        return int(self.data.split(b" ", 2)[1])

    async def text(self, until: bytes) -> str:
        """The response so far, read on until ``until`` is in it (or the end)."""
        assert self.stream is not None
        with trio.move_on_after(30):
            while until not in self.data:
                chunk = await self.stream.receive_some(65536)
                if not chunk:
                    break
                self.data += chunk
        return self.data.decode("utf-8", "replace")

    async def json(self) -> dict[str, Any]:
        body = (await self.text(b"}")).split("\r\n\r\n", 1)[1]  # (perhaps chunked)
        return json.loads(body[body.index("{"):body.rindex("}") + 1])

    async def aclose(self) -> None:
        if self.stream is not None:
            await self.stream.aclose()


async def flood(port: int, tmp_path: Path) -> None:
    held: list[Http] = []
    try:
        # A person of the flooding network sits down first (a table open for a second).
        seated = Http(port, SEATED)
        assert await seated.send("POST", "/api/tables", {"name": "Sam", "seats": ["you", "open"]}) == 200
        token = (await seated.json())["token"]
        await seated.aclose()

        # Every address of the /24 opens 8 lobby streams and creates 3 tables.
        streams, tables, refusals = 0, 0, []
        for address in FLOOD:
            for _ in range(8):
                page = Http(port, address)
                status = await page.send("GET", "/lobby/events")
                if status == 200:
                    streams += 1
                    held.append(page)
                else:
                    refusals.append((status, await page.text(b"reload")))
                    await page.aclose()
            for n in range(3):
                post = Http(port, address)
                status = await post.send("POST", "/api/tables",
                                         {"name": f"F{address.split('.')[-1]}-{n}", "seats": ["you", "open"]})
                if status == 200:
                    tables += 1
                else:
                    refusals.append((status, (await post.json())["error"]))
                await post.aclose()
        assert streams == STREAMS.network and tables == TABLES.network - 1, (streams, tables)
        assert refusals and all(status == 429 and "from one network (127.0.5.0/24)" in text
                                for status, text in refusals), refusals[:3]

        # A newcomer of the full network: refused, saying which cap and what to do.
        late = Http(port, "127.0.5.100")
        assert await late.send("GET", "/lobby/events") == 429
        assert "at most 32 open lobby pages from one network (127.0.5.0/24): close some and " \
            "reload" in await late.text(b"reload")
        await late.aclose()
        late = Http(port, "127.0.5.101")
        assert await late.send("POST", "/api/tables", {"name": "Late", "seats": ["you", "open"]}) == 429
        assert "tables open or in play from one network (127.0.5.0/24)" in (await late.json())["error"]
        await late.aclose()
        # The seated person's own seat stream, from the full network: served.
        seat = Http(port, SEATED)
        assert await seat.send("GET", f"/seat/events?token={token}") == 200
        assert '"name": "Sam"' in await seat.text(b'"name": "Sam"')
        held.append(seat)
        # A newcomer from another network: a lobby stream and a table of their own.
        page = Http(port, NEWCOMER)
        assert await page.send("GET", "/lobby/events") == 200
        held.append(page)
        post = Http(port, NEWCOMER)
        assert await post.send("POST", "/api/tables", {"name": "Nia", "seats": ["you", "open"]}) == 200
        await post.aclose()
    finally:
        for client in held:
            await client.aclose()


@pytest.mark.process
def test_one_network_cannot_take_every_stream_or_table_and_others_are_served(tmp_path: Path) -> None:
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", tmp_path / "arena.sqlite",
                    "--http", "127.0.0.1:0")
    try:
        port = int(serve.wait_for(r"^lobby: http://127\.0\.0\.1:(\d+)/play$")[1])
        trio.run(flood, port, tmp_path)
    finally:
        serve.close()


NOFILE = 1276  #: the fd limit the sized serve runs under (soft and hard)


async def fill_to_the_cap(port: int, cap: int) -> None:
    """A seated person, then ``cap`` lobby pages from as many networks as it takes (8 per
    address, 32 per network); the next page, from yet another network: 503 naming the
    cap in all; the seated person's own seat stream: still served."""
    held: list[Http] = []
    try:
        seated = Http(port, "127.0.9.1")
        assert await seated.send("POST", "/api/tables", {"name": "Sam", "seats": ["you", "open"]}) == 200
        token = (await seated.json())["token"]
        await seated.aclose()
        for n in range(cap):
            page = Http(port, f"127.0.{20 + n // STREAMS.network}.{1 + n % STREAMS.network // STREAMS.address}")
            assert await page.send("GET", "/lobby/events") == 200, n
            held.append(page)
        page = Http(port, "127.0.99.1")
        assert await page.send("GET", "/lobby/events") == 503
        assert f"the lobby is full: at most {cap} open lobby pages in all" in await page.text(b"reload")
        await page.aclose()
        seat = Http(port, "127.0.9.1")
        assert await seat.send("GET", f"/seat/events?token={token}") == 200
        assert '"name": "Sam"' in await seat.text(b'"name": "Sam"')
        held.append(seat)
    finally:
        for client in held:
            await client.aclose()


@pytest.mark.process
def test_the_lobby_pages_cap_in_all_is_sized_by_the_fd_limit_like_the_arenas_pool(tmp_path: Path) -> None:
    """Under an fd limit of NOFILE, the lobby pages' cap is what is left of it once the
    arena's bots and pending pool, every lobby seat's streams and the reserve are set
    aside (``seats.tcp.fd_room``, the function that sizes the arena's pending pool), and
    a real serve refuses the page past it while a seated person is served."""
    import os
    import resource

    from referee.seats.tcp import FD_RESERVE
    from referee.web.lobby import seat_streams_reserved

    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < NOFILE and os.geteuid() != 0:
        pytest.skip(f"the fd limit's hard cap is below {NOFILE} and only root may raise it")
    bots, pending = 20, 200
    cap = NOFILE - bots - pending - seat_streams_reserved() - FD_RESERVE
    assert 32 < cap < 128  # above the floor, below the old fixed cap (a test that can fail)
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", tmp_path / "arena.sqlite",
                    "--http", "127.0.0.1:0", "--max-connections", str(bots), "--max-pending",
                    str(pending), nofile=NOFILE)
    try:
        port = int(serve.wait_for(r"^lobby: http://127\.0\.0\.1:(\d+)/play$")[1])
        shown = serve.wait_for(r"^lobby: room for (\d+) open lobby pages in all")
        assert int(shown[1]) == cap, shown[0]
        trio.run(fill_to_the_cap, port, cap)
    finally:
        serve.close()


# ---------------------------------------------------------------- the caps in all (ASGI)

def test_a_full_lobby_still_serves_a_seated_persons_own_stream() -> None:
    """With every lobby stream taken by many networks (a cap of 4 here), a seat's own
    stream is still served: it counts against none of the shared caps. A new lobby page
    is refused with 503 naming the cap in all."""
    room = Lobby(lobby()._play, lambda: ["builtin:greedy"], max_streams=4)

    async def main() -> None:
        table, _, token, _ = room.create({**GOOD, "seats": ["you", "open"]}, "10.9.0.1")
        leave = trio.Event()

        async def held_open(path: str, address: str, query: bytes = b"") -> None:
            async def receive() -> dict[str, Any]:
                await leave.wait()
                return {"type": "http.disconnect"}

            async def send(message: dict[str, Any]) -> None:
                pass

            await room.handle(request("GET", path, client=address, query=query), receive, send)

        async with trio.open_nursery() as nursery:
            for n in range(4):
                nursery.start_soon(held_open, "/lobby/events", f"10.{n}.0.1")
            await trio.testing.wait_all_tasks_blocked()
            status, body = await answer(room, request("GET", "/lobby/events", client="10.8.0.1"))
            assert status == 503 and b"at most 4 open lobby pages in all" in body, body
            nursery.start_soon(held_open, "/seat/events", "10.9.0.1", f"token={token}".encode())
            await trio.testing.wait_all_tasks_blocked()
            assert table.people[0].connected and room.streams == 4
            leave.set()

    trio.run(main)


#: (an address of a network by number, the network's name, an address of another network)
NETWORKS = [pytest.param(lambda i: f"10.1.2.{i}", "10.1.2.0/24", "10.1.3.1", id="IPv4 /24"),
            pytest.param(lambda i: f"2001:db8:1:2::{i:x}", "2001:db8:1:2::/64", "2001:db8:1:3::1",
                         id="IPv6 /64")]


@pytest.mark.parametrize("address, network, other", NETWORKS)
def test_tables_are_capped_per_network_and_the_refusal_names_the_cap(
        address: Any, network: str, other: str) -> None:
    room = lobby()

    async def main() -> None:
        made = 0
        for i in range(1, 30):  # 29 addresses of one network, one table each
            try:
                room.create({**GOOD, "name": f"P{i}", "seats": ["you", "open"]}, address(i))
                made += 1
            except LobbyError as exc:
                assert exc.status == 429 and "tables open or in play from one network " \
                    f"({network})" in exc.message, exc.message
        assert made == TABLES.network
        room.create({**GOOD, "name": "Q", "seats": ["you", "open"]}, other)  # another network

    trio.run(main)


@pytest.mark.parametrize("address, network, other", NETWORKS)
def test_tables_created_an_hour_are_capped_per_network_though_each_game_is_over(
        address: Any, network: str, other: str) -> None:
    """Each table plays at once and is over (so the open tables' cap never bites): one
    network still creates at most CREATES.network an hour, from however many addresses."""
    from referee.web.lobby import CREATES

    async def over(table: Any) -> None:
        table.result = {"durak": None}

    room = Lobby(over, lambda: ["builtin:greedy"])

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(room.run)
            await trio.testing.wait_all_tasks_blocked()
            for i in range(CREATES.network):
                room.create({**GOOD, "name": f"P{i}"}, address(1 + i // 10))
                await trio.testing.wait_all_tasks_blocked()
            assert not [t for t in room.tables.values() if t.state != "over"]
            with pytest.raises(LobbyError) as refused:
                room.create({**GOOD, "name": "One more"}, address(200))  # a new address
            assert refused.value.status == 429 and f"at most {CREATES.network} tables created " \
                f"an hour from one network ({network})" in refused.value.message
            room.create({**GOOD, "name": "Q"}, other)
            nursery.cancel_scope.cancel()

    trio.run(main)


@pytest.mark.parametrize("address, network, other", NETWORKS)
def test_new_display_names_are_capped_per_network(address: Any, network: str, other: str) -> None:
    """Each new name is a row kept in the store for good: one network claims at most
    CLAIMS.network new names an hour, from however many addresses."""
    from referee.web.lobby import CLAIMS

    room = lobby()

    async def main() -> None:
        seats = [t.number for n in range(CLAIMS.network // 3 + 1)
                 for t in [room.create({**GOOD, "name": f"Host{n}", "seats": ["you", "open", "open", "open"]},
                                       f"10.{100 + n}.0.1")[0]] for _ in range(3)]
        for i in range(CLAIMS.network):
            room.join(seats.pop(0), {"name": f"N{i}"}, address(1 + i // 10))
        with pytest.raises(LobbyError) as refused:
            room.join(seats[0], {"name": "One more"}, address(200))
        assert refused.value.status == 429 and f"at most {CLAIMS.network} new display names " \
            f"an hour from one network ({network})" in refused.value.message
        room.join(seats[0], {"name": "Q"}, other)

    trio.run(main)


@pytest.mark.parametrize("address, network, other", NETWORKS)
def test_lobby_pages_are_capped_per_network(address: Any, network: str, other: str) -> None:
    room = lobby()

    async def main() -> None:
        leave = trio.Event()

        async def held_open(client: str) -> None:
            async def receive() -> dict[str, Any]:
                await leave.wait()
                return {"type": "http.disconnect"}

            async def send(message: dict[str, Any]) -> None:
                pass

            await room.handle(request("GET", "/lobby/events", client=client), receive, send)

        async with trio.open_nursery() as nursery:
            for n in range(STREAMS.network):
                nursery.start_soon(held_open, address(1 + n // STREAMS.address))
            await trio.testing.wait_all_tasks_blocked()
            status, body = await answer(room, request("GET", "/lobby/events", client=address(200)))
            assert status == 429 and f"at most {STREAMS.network} open lobby pages from one " \
                f"network ({network})".encode() in body, body
            nursery.start_soon(held_open, other)
            await trio.testing.wait_all_tasks_blocked()
            assert room.streams == STREAMS.network + 1
            leave.set()

    trio.run(main)


def test_new_display_names_are_capped_but_a_name_used_again_is_no_new_claim() -> None:
    """One address claims at most CLAIMS.address new names an hour (each new name is a
    row kept in the store for good); the same browser under a name it took is not
    counted again."""
    from referee.web.lobby import CLAIMS

    room = lobby()

    async def main() -> None:
        tables = [room.create({**GOOD, "name": f"Host{n}", "seats": ["you", "open", "open", "open"]},
                              f"10.{n}.0.1")[0].number for n in range(8)]
        seats = [t for t in tables for _ in range(3)]  # 24 open seats
        _, _, person = room.join(seats.pop(0), {"name": "N0"}, "10.99.0.1")
        for i in range(1, CLAIMS.address):
            room.join(seats.pop(0), {"name": f"N{i}", "person": person}, "10.99.0.1")
        try:
            room.join(seats[0], {"name": "One too many", "person": person}, "10.99.0.1")
            raise AssertionError("a new name past the cap was taken")
        except LobbyError as exc:
            assert exc.status == 429 and f"at most {CLAIMS.address} new display names an hour " \
                "from one address" in exc.message, exc.message
        room.join(seats[0], {"name": "N0", "person": person}, "10.99.0.1")  # theirs already

    trio.run(main)


def test_the_lobby_forgets_quiet_addresses_but_not_a_busy_networks_count() -> None:
    """Past 4096 addresses (or networks) remembered, the quiet ones are forgotten; a
    network that created tables this hour keeps its count, so requests from thousands of
    other addresses cannot wash it out."""
    room = lobby()

    async def main() -> None:
        for i in range(1, 4):
            room.create({**GOOD, "name": f"P{i}", "seats": ["you", "open"]}, f"10.1.2.{i}")
        for n in range(5000):  # bad creates (400) from 5000 addresses in 5000 networks
            with pytest.raises(LobbyError):
                room.create({"name": "X", "seats": []}, f"11.{n // 250}.{n % 250}.1")
        assert len(room.addresses) <= 4097 and len(room.networks) <= 4097
        assert len(room.networks["10.1.2.0/24"].creates) == 3
        assert len(room.addresses["10.1.2.1"].creates) == 1

    trio.run(main)
