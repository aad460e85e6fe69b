"""The lobby's refusals (referee/web/lobby.py): every bad request is the user's, answered
with a status and what to do, and one address cannot take the room of others."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from referee.web.lobby import TABLES_PER_ADDRESS, Lobby, LobbyError, display_name


def lobby() -> Lobby:
    async def play(table: Any) -> None:
        await trio.sleep_forever()

    return Lobby(play, lambda: ["builtin:greedy", "builtin:random"],
                 name_taken=lambda name: name == "alice")


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
], ids=lambda v: str(v)[:40])
def test_a_bad_table_is_refused_with_a_reason(body: Any, status: int) -> None:
    error = refused(lobby().create, body, "10.0.0.1")
    assert error.status == status and error.message


def test_one_address_holds_at_most_its_share_of_tables() -> None:
    room = lobby()

    async def main() -> None:
        for _ in range(TABLES_PER_ADDRESS):
            room.create({**GOOD, "seats": ["you", "open"]}, "10.0.0.1")
        with pytest.raises(LobbyError) as caught:
            room.create(GOOD, "10.0.0.1")
        assert caught.value.status == 429
        room.create(GOOD | {"seats": ["you", "open"]}, "10.0.0.2")  # another address: room

    trio.run(main)


def test_a_seat_is_taken_once_and_a_full_table_has_no_open_seat() -> None:
    room = lobby()

    async def main() -> None:
        table, seat, token = room.create({**GOOD, "seats": ["you", "open"]}, "10.0.0.1")
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
