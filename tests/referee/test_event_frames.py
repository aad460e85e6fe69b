"""Event frames joined from cached parts are the frames ``encode`` would give.

The referee packs an event that reads the same for every seat once per process (per
rules) and joins it to the packed head of the game it is sent in
(``referee/table/framelane.py``, ``protocol.codec.pack``). Played here: several matches in
one process, under rule sets whose events differ, so that later games are served
from the cache filled by earlier ones. Each frame a seat receives must be the
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
from referee.seats.players import BotSpec, Player
from referee.table import framelane
from referee.table.match import MatchConfig, play_match


class FrameRecorder(Player):
    """Takes events, keeps every event frame as received, answers like greedy."""

    def __init__(self, name: str) -> None:
        super().__init__(name, BotSpec("command", name, ("recorder",), name, named=True))
        self.frames: list[bytes] = []
        self.seat = -1

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "game_start":
            self.seat = message["seat"]

    async def send_frame(self, frame: bytes) -> None:
        self.frames.append(frame)

    async def decide(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
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
    """Play a short match under each rules in turn (in one process, so later matches
    meet the packed events cache as earlier ones left it) and check every event frame:
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
            for message, frame in zip(got, seat.frames):
                assert encode(message) == frame, f"not the canonical bytes of {message}"
                assert message == msg.event_msg(message["game"], message["event"])
                assert 0 <= message["game"] < config.games
            for index, game in enumerate(played):
                mine = [m["event"] for m in got if m["game"] == index]
                assert mine and all(e.get("forced", True) is True for e in mine)
                for event in mine:
                    event.pop("forced", None)
                assert mine == _seen_by(game, seat.seat)


async def test_past_the_per_rules_cap_events_are_packed_anew_and_still_exact(
        monkeypatch: pytest.MonkeyPatch, dealt_games: list[Game]) -> None:
    """EVENT_BODIES_MAX bounds the packed events kept per rules; events beyond it are
    packed for each frame, with the same bytes."""
    # (Each test starts with no packed events: tests/referee/conftest.py.)
    monkeypatch.setattr(framelane, "EVENT_BODIES_MAX", 5)
    rules = make_rules("perevodnoy", ("trump_exchange=on",))
    await _play_checked(dealt_games, [rules, rules], "cap")
    assert len(framelane._EVENT_BODIES[rules]) == 5  # full, and not past the cap


async def test_only_the_most_recently_used_rules_keep_their_packed_events(
        monkeypatch: pytest.MonkeyPatch, dealt_games: list[Game]) -> None:
    """A process that plays under many rule sets keeps the packed events of at most
    EVENT_BODIES_RULES of them, the most recently used; a rule set played again after
    its map was dropped is served exactly, from a fresh map."""
    # (Each test starts with no packed events: tests/referee/conftest.py.)
    monkeypatch.setattr(framelane, "EVENT_BODIES_RULES", 2)
    a, b, c = (make_rules(p) for p in ("classic", "perevodnoy", "deflection"))
    await _play_checked(dealt_games, [a, b, a, c], "lru")
    assert list(framelane._EVENT_BODIES) == [a, c]  # b was the least recently used
    await _play_checked(dealt_games, [b], "lru-again")
    assert list(framelane._EVENT_BODIES) == [c, b]
    assert all(framelane._EVENT_BODIES.values())  # each map in use holds packed events


@pytest.mark.parametrize("index", [0, 1, 127, 128, 255, 1023, 1024, 65535, 65536, 2**32 - 1, 2**32, 2**40])
def test_the_event_head_of_a_game_is_the_one_event_msg_packs(index: int) -> None:
    """The head an event frame of game ``index`` starts with, joined from packed parts,
    is ``messages.event_head``'s, whatever size of int msgpack writes the index in."""
    assert framelane.EventFrames(make_rules(), index, [0]).head == msg.event_head(index)
