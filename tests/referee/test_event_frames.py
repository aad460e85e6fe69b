"""Event frames joined from packed parts are the frames ``encode`` would give.

The referee joins each event frame from packed parts of the event's declaration
(``referee/table/requests.py``, ``protocol.codec.pack``), once for the table when it reads
the same for every seat. Played here: several matches in one process, under rule
sets whose events differ. Each frame a seat receives must be the
canonical encoding of exactly the message it decodes to, name the game being played,
and show the events of that game as the engine reports them to that seat.
(Hidden information for every message: tests/referee/test_protocol_leaks.py.)
"""

from __future__ import annotations

from typing import Any

import pytest

from protocol import messages as msg
from protocol.codec import decode, encode
from protocol.strategies import greedy_choose
from referee.rules import Game, make_rules
from referee.seats.players import Ask, BotSpec, Player
from referee.table import requests
from referee.table.match import MatchConfig, play_match


class FrameRecorder(Player):
    """Takes events, keeps every event frame as received, answers like greedy."""

    def __init__(self, name: str) -> None:
        super().__init__(name, BotSpec("command", name, ("recorder",), name, named=True))
        self.frames: list[bytes] = []
        self.seat = -1

    def hear(self, frame: bytes) -> None:
        kind = decode(frame)["type"]
        if kind == "game_start":
            self.seat = decode(frame)["seat"]
        elif kind == "event":
            self.frames.append(frame)

    async def finish(self, ask: Ask) -> dict[str, Any]:
        request = ask.message()
        return greedy_choose(request["observation"], request["legal"])


@pytest.mark.parametrize("order", [("classic", "perevodnoy", "classic"),
                                   ("perevodnoy", "classic", "perevodnoy")])
async def test_every_event_frame_is_the_canonical_encoding_of_its_own_game_event(
        dealt_games: list[Game], order: tuple[str, ...]) -> None:
    await _play_checked(dealt_games, [make_rules(preset, ("trump_exchange=on",)) for preset in order],
                        "frames", games=3)


def _seen_by(game: Game, seat: int) -> list[dict[str, Any]]:
    """The events of a finished game as ``seat`` sees them, replayed from its history."""
    replay = Game.new(game.rules, game.players, deck=list(game.deck), dealer=game.dealer,
                      record_events=True)
    seen = [game_event for ev in replay.events
            if (game_event := replay.public_event(ev, seat)) is not None]
    replay.events.clear()
    for action in game.history:
        replay.apply_legal(action)
        seen += [e for ev in replay.events if (e := replay.public_event(ev, seat)) is not None]
        replay.events.clear()
    return seen


async def _play_checked(dealt_games: list[Game], rules_list: list[Any], seed: str,
                        games: int = 2) -> None:
    """Play a short match under each rules in turn (in one process) and check every event frame:
    the canonical bytes of a valid event message of one of the match's games, and the
    events the engine shows the receiving seat (forced moves marked for the mover only).
    ``dealt_games``: the fixture's list of every game dealt."""
    for round_, rules in enumerate(rules_list):
        seats = [FrameRecorder(f"r{i}") for i in range(3)]
        config = MatchConfig(rules=rules, games=games, seed=f"{seed}-{round_}")
        await play_match(seats, config)
        played = dealt_games[-config.games:]
        for seat in seats:
            assert seat.frames, "a seat that takes events got none"
            got = [decode(frame) for frame in seat.frames]
            for message, frame in zip(got, seat.frames, strict=True):
                assert encode(message) == frame, f"not the canonical bytes of {message}"
                assert message == msg.event_msg(message["game"], message["event"])
                assert 0 <= message["game"] < config.games
            for index, game in enumerate(played):
                mine = [m["event"] for m in got if m["game"] == index]
                assert mine and all(e.get("forced", True) is True for e in mine)
                for event in mine:
                    event.pop("forced", None)
                assert mine == _seen_by(game, seat.seat)


async def test_games_played_one_after_another_share_no_packed_state(
        dealt_games: list[Game]) -> None:
    """Event frames keep nothing from one game to the next (every part is a table of
    the declaration or the game's own): matches under rule sets whose events differ,
    played in turn in one process, each frame exactly the engine's events."""
    a, b, c = (make_rules(p, ("trump_exchange=on",)) for p in ("classic", "perevodnoy", "deflection"))
    await _play_checked(dealt_games, [a, b, a, c, b], "turns")


@pytest.mark.parametrize("index", [0, 1, 127, 128, 255, 1023, 1024, 65535, 65536, 2**32 - 1, 2**32, 2**40])
def test_the_event_head_of_a_game_is_the_one_event_msg_packs(index: int) -> None:
    """The head an event frame of game ``index`` starts with, joined from packed parts,
    is ``messages.event_head``'s, whatever size of int msgpack writes the index in."""
    assert requests.EventFrames(make_rules(), index, [0]).head == msg.event_head(index)
