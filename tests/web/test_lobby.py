"""The lobby's refusals (referee/web/lobby.py): every bad request is the user's, answered
with a status and what to do, and one address cannot take the room of others."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from referee.web.lobby import TABLES, Lobby, LobbyError, display_name


def lobby() -> Lobby:
    async def play(table: Any) -> None:
        await trio.sleep_forever()

    return Lobby(play, lambda: ["builtin:greedy", "builtin:random"],
                 claim=lambda name, key: "a bot's name" if name == "alice" else None)


def refused(call: Any, *args: Any) -> LobbyError:
    with pytest.raises(LobbyError) as caught:
        trio.run(_call, call, *args)
    return caught.value


async def _call(call: Any, *args: Any) -> Any:
    return call(*args)


GOOD = {"name": "Ann", "seats": ["you", "builtin:greedy"]}


@pytest.mark.parametrize("body, status", [
    ([], 400), ({**GOOD, "seats": ["you"]}, 400), ({**GOOD, "seats": ["open", "builtin:greedy"]}, 400),
    ({**GOOD, "seats": ["you", "you"]}, 400), ({**GOOD, "seats": ["you", "./evil.sh"]}, 400),
    ({**GOOD, "seats": ["you", "tcp:nobody"]}, 400), ({**GOOD, "preset": "nope"}, 400),
    ({**GOOD, "options": ["transfer=sideways"]}, 400), ({**GOOD, "move_time": 0}, 400),
    ({**GOOD, "move_time": True}, 400), ({**GOOD, "clock": "forever"}, 400),
    ({**GOOD, "hints": "greedy"}, 400), ({**GOOD, "name": ""}, 400), ({**GOOD, "name": 7}, 400),
    ({**GOOD, "name": "x" * 25}, 400), ({**GOOD, "name": "alice"}, 409),
    ({**GOOD, "name": "greedy"}, 409), ({**GOOD, "name": "ISMCTS"}, 409),
    ({**GOOD, "name": "builtin:greedy"}, 409), ({**GOOD, "name": "tcp:alice"}, 409),
], ids=lambda v: str(v)[:40])
def test_a_bad_table_is_refused_with_a_reason(body: Any, status: int) -> None:
    error = refused(lobby().create, body, "10.0.0.1")
    assert error.status == status and error.message


def test_one_address_holds_at_most_its_share_of_tables() -> None:
    room = lobby()

    async def main() -> None:
        for _ in range(TABLES.address):
            room.create({**GOOD, "seats": ["you", "open"]}, "10.0.0.1")
        with pytest.raises(LobbyError) as caught:
            room.create(GOOD, "10.0.0.1")
        assert caught.value.status == 429
        room.create(GOOD | {"seats": ["you", "open"]}, "10.0.0.2")  # another address: room

    trio.run(main)


def test_a_seat_is_taken_once_and_a_full_table_has_no_open_seat() -> None:
    room = lobby()

    async def main() -> None:
        table, seat, token, _ = room.create({**GOOD, "seats": ["you", "open"]}, "10.0.0.1")
        assert seat == 0 and len(token) >= 32
        with pytest.raises(LobbyError) as caught:
            room.join(table.number, {"name": "Bo", "seat": 0}, "10.0.0.2")
        assert caught.value.status == 409
        assert room.join(table.number, {"name": "Bo"}, "10.0.0.2")[0] == 1
        with pytest.raises(LobbyError) as caught:
            room.join(table.number, {"name": "Cy"}, "10.0.0.3")
        assert caught.value.status == 404
        assert "token" not in str(room.snapshot())

    trio.run(main)


def test_display_names_are_printable_text_of_at_most_24_characters() -> None:
    assert display_name("  Ann \x1b[31m  Lee\n") == "Ann [31m Lee"
    assert display_name("<script>x</script>") == "<script>x</script>"  # text: pages never parse it


# ---------------------------------------------------------------- a hostile client over HTTP

def request(method: str, path: str, *, client: str = "10.0.0.1", body: bytes = b"",
            headers: dict[str, str] | None = None, query: bytes = b"") -> dict[str, Any]:
    """An ASGI http scope as the server hands it to the lobby (host 127.0.0.1:8000)."""
    given = {"host": "127.0.0.1:8000", **(headers or {})}
    return {"type": "http", "method": method, "path": path, "query_string": query,
            "client": (client, 5000), "headers": [(k.encode(), v.encode()) for k, v in given.items()],
            "_body": body}


async def answer(room: Lobby, scope: dict[str, Any]) -> tuple[int, bytes]:
    """The lobby's status and body for one whole request (the body sent in 1 KB chunks)."""
    body = scope.pop("_body")
    chunks = [body[i:i + 1024] for i in range(0, len(body), 1024)] or [b""]
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
                for i, c in enumerate(chunks)]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    assert await room.handle(scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


JSON = {"content-type": "application/json"}
TABLE = b'{"name": "Ann", "seats": ["you", "builtin:greedy"]}'


@pytest.mark.parametrize("scope, status", [
    (request("GET", "/api/tables"), 405),
    (request("POST", "/api/tables", body=TABLE), 415),
    (request("POST", "/api/tables", body=TABLE, headers={"content-type": "text/plain"}), 415),
    (request("POST", "/api/tables", body=TABLE, headers={**JSON, "origin": "http://evil.example"}), 403),
    (request("POST", "/api/tables", body=b'{"name": "' + b"x" * 5000 + b'"}', headers=JSON), 413),
    (request("POST", "/api/tables", body=b"{not json", headers=JSON), 400),
    (request("POST", "/api/tables", body=b"\xff\xfe", headers=JSON), 400),
    (request("POST", "/api/act", body=b'{"token": "guess", "request": 0, "choice": 0}', headers=JSON), 403),
    (request("POST", "/api/act", body=b"[]", headers=JSON), 400),
    (request("POST", "/lobby/events"), 405),
    (request("GET", "/seat/events", query=b"token=guess"), 403),
], ids=["get-a-post", "no-type", "text-type", "foreign-origin", "too-big", "not-json",
        "not-utf8", "guessed-token", "act-not-a-map", "post-a-stream", "stream-guessed-token"])
def test_a_hostile_request_is_refused_with_a_status_and_a_reason(scope: dict[str, Any],
                                                                  status: int) -> None:
    room = lobby()
    got, body = trio.run(answer, room, scope)
    assert got == status and body.strip()
    assert room.tables == {}  # nothing was created by a refused post


def test_the_sites_own_page_may_post_and_gets_a_seat_token() -> None:
    room = lobby()
    got, body = trio.run(answer, room, request("POST", "/api/tables", body=TABLE, headers={
        **JSON, "origin": "http://127.0.0.1:8000"}))
    assert got == 200 and b'"token"' in body and len(room.tables) == 1


def test_one_address_holds_at_most_its_share_of_streams_and_leaving_frees_them() -> None:
    from referee.web.lobby import STREAMS

    room = lobby()

    async def main() -> None:
        leave = trio.Event()

        async def held_open(address: str) -> None:
            sent: list[dict[str, Any]] = []

            async def receive() -> dict[str, Any]:
                await leave.wait()
                return {"type": "http.disconnect"}

            async def send(message: dict[str, Any]) -> None:
                sent.append(message)

            await room.handle(request("GET", "/lobby/events", client=address), receive, send)

        async with trio.open_nursery() as nursery:
            for _ in range(STREAMS.address):
                nursery.start_soon(held_open, "10.0.0.1")
            await trio.testing.wait_all_tasks_blocked()
            assert room.streams == STREAMS.address
            status, _ = await answer(room, request("GET", "/lobby/events", client="10.0.0.1"))
            assert status == 429  # the flooding address is refused ...
            nursery.start_soon(held_open, "10.0.0.2")  # ... another address is not
            await trio.testing.wait_all_tasks_blocked()
            assert room.streams == STREAMS.address + 1
            leave.set()
        assert room.streams == 0 and room.addresses["10.0.0.1"].streams == 0

    trio.run(main)


def test_a_table_left_open_past_its_time_is_closed_and_its_person_told() -> None:
    """The lobby's long run, on trio's virtual clock: a table whose seats are not all
    taken within OPEN_FOR_S is closed (its seat's page learns it; its seat token then
    leads nowhere once the table is forgotten), while the lobby goes on serving."""
    from referee.web.lobby import OPEN_FOR_S
    from referee.web.seat import token_key

    room = lobby()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(room.run)
            await trio.testing.wait_all_tasks_blocked()
            table, _, token, _ = room.create({**GOOD, "seats": ["you", "open"]}, "10.0.0.1")
            client = table.people[0].attach()
            assert client is not None and table.state == "open"
            await trio.sleep(OPEN_FOR_S - 5)
            assert table.state == "open"  # not before its time
            await trio.sleep(10)
            assert table.state == "closed" and "closed" in table.result["error"]
            chunk = await client.take()  # every update waiting, as one chunk
            assert chunk is not None and b"closed" in chunk
            assert token_key(token) in room.seats  # kept while the finished tables are shown
            # The lobby still serves: a new table opens after the long idle time.
            room.create({**GOOD, "seats": ["you", "open"]}, "10.0.0.2")
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.mark.parametrize("arena_move_s, form, status, says", [
    (10.0, {"move_time": 60}, 400, "arena's time limit of 10 s per move: set seconds per move to at most 10"),
    (10.0, {"clock": "300+5"}, 400, "at most 10"),  # the form's 60 s a move beside the clock
    (0.5, {"move_time": 1}, 400, "less than a person gets here (1 s): pick a built-in bot"),
    (10.0, {"move_time": 10}, 200, ""),
])
def test_a_registered_bot_plays_only_within_the_arenas_time_per_move(
        arena_move_s: float, form: dict[str, Any], status: int, says: str) -> None:
    """A table seating a registered bot gets no more time per move than the arena gives
    it; when the arena's is below the least a person gets, the refusal says so rather
    than asking for a time the form cannot take."""
    from referee.web.lobby import RegisteredBots

    async def play(table: Any) -> None:
        await trio.sleep_forever()

    room = Lobby(play, lambda: ["builtin:greedy", "tcp:gamma"],
                 registered=RegisteredBots(lambda spec: (403, "not allowed"), arena_move_s, 20.0))
    body = {"name": "Ann", "seats": ["you", "tcp:gamma"], **form}
    if status == 200:
        table = trio.run(_call, room.create, body, "10.0.0.1")[0]
        assert table.config.tc.move == 10 and table.wait_s == 20.0
        return
    error = refused(room.create, body, "10.0.0.1")
    assert error.status == status and says in error.message, error.message
