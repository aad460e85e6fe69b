"""No view ever gets the bytes of a card it may not see: the hidden-information contract
checked on the frames themselves, for every view kind, over thousands of seeded games.

At every step of each game (the deal, every decision, the events every action records)
the test takes the true position and, for each seat, the cards hidden from it
(``Game.hidden_from``: the others' cards not publicly known, the talon under the face-up
trump), and searches the bytes that seat is sent (its ``game_start`` frame, its request
frames, its event frames, as the referee joins them) for each hidden card's packed text.
The spectator's messages (start, events, observation) are searched the same way for the
cards hidden from no seat at all; the omniscient view must show every hand whole. The
events are framed with ``ask_forced`` off too, so the forced mark's private copy is
covered. Cheating bots read bytes, not maps: a card in a frame is a card leaked.
"""

from __future__ import annotations

import random

import pytest

from protocol.codec import pack
from referee.rules import PRESETS, Game, make_rules
from referee.rules.cards import CARD_TEXT, mask_str
from referee.table import observer
from referee.table.clock import Clock, TimeControl
from referee.table.observer import OMNISCIENT, SPECTATOR
from referee.table.requests import EventFrames, RequestFrames, game_start_frame
from referee.table.spectator import public_message, start_message
from support import scaled

#: Each card's packed text (a msgpack fixstr: 0xa2 and the two letters), as it sits in a frame.
PACKED = [pack(text) for text in CARD_TEXT]
NAMES = ["p0", "p1", "p2", "p3", "p4", "p5"]  # (no name holds a card's text)


def leaked(data: bytes, hidden: int) -> list[str]:
    """The cards of mask ``hidden`` whose packed text is in ``data``."""
    found = []
    while hidden:
        card = (hidden & -hidden).bit_length() - 1
        hidden &= hidden - 1
        if PACKED[card] in data:
            found.append(CARD_TEXT[card])
    return found


def _rules(rng: random.Random, players: int) -> object:
    options = [rng.choice(["", "trump_exchange=on", "ask_forced=off", "transfer=reflect"])]
    if players * 6 > 36:
        options.append("deck=52")
    return make_rules(rng.choice(sorted(PRESETS)), tuple(o for o in options if o))


def _check_deal(game: Game, index: int) -> None:
    names = NAMES[:game.players]
    for seat in range(game.players):
        frame = game_start_frame(index, seat, names, game.rules, game.dealer, game.trump_card,
                                 game.hands[seat], game.attacker)
        assert not leaked(frame, game.hidden_from(seat)), (seat, game)
    start = pack(start_message(game, index, names))
    assert not leaked(start, game.hidden_from(SPECTATOR)), game


def _check_request(game: Game, frames: RequestFrames, request_id: int) -> None:
    seat, legal = game.seat_to_move(), game.legal_actions()
    frame = frames.frame(seat, request_id, legal, Clock(TimeControl()))
    assert not leaked(frame, game.hidden_from(seat)), (seat, game)
    spectator = pack(observer.observation(game, SPECTATOR))
    assert not leaked(spectator, game.hidden_from(SPECTATOR)), game
    full = observer.observation(game, OMNISCIENT)
    assert full["hands"] == [mask_str(h) for h in game.hands]


def _check_events(game: Game, events: EventFrames, index: int, forced: bool) -> None:
    for seat, frame in events.frames(game, forced):
        assert not leaked(frame, game.hidden_from(seat)), (seat, game.events, game)
    for ev in game.events or ():
        message = public_message(game, index, ev)
        if message is not None:
            assert not leaked(pack(message), game.hidden_from(SPECTATOR)), (ev, game)
    assert game.events is not None
    game.events.clear()


@pytest.mark.slow
def test_no_frame_of_any_view_holds_a_card_hidden_from_it() -> None:
    checked = 0
    for game_no in range(scaled(2000)):
        rng = random.Random(f"view-leaks-{game_no}")
        players = rng.randint(2, 6)
        rules = _rules(rng, players)
        game = Game.new(rules, players, seed=rng.randrange(2**32), dealer=game_no % players,
                        record_events=True)
        index = game_no
        _check_deal(game, index)
        requests = RequestFrames(game, index)
        events = EventFrames(game.rules, index, list(range(players)))
        _check_events(game, events, index, False)
        request_id = 0
        while not game.is_over:
            legal = game.legal_actions()
            forced = game.forced_action(legal)
            if forced is None:
                request_id += 1
                _check_request(game, requests, request_id)
                checked += 1
            game.apply_legal(rng.choice(legal) if forced is None else forced)
            _check_events(game, events, index, forced is not None)
    assert checked > scaled(2000) * 20  # the games were played, not cut short


@pytest.mark.slow
def test_every_view_of_an_event_is_the_engines_view_for_a_seat_of_that_kind() -> None:
    """The observer's views of each event agree with the engine's ``public_event``: a
    seat's own view and the omniscient one are the event's seat's; every other seat's,
    and the spectator's, the view of no seat."""
    for game_no in range(scaled(200)):
        rng = random.Random(f"views-agree-{game_no}")
        players = rng.randint(2, 6)
        game = Game.new(_rules(rng, players), players, seed=rng.randrange(2**32),
                        record_events=True)
        while True:
            for ev in game.events or ():
                for view in (*range(players), SPECTATOR):
                    assert observer.event(game, ev, view) == game.public_event(ev, view)
                assert observer.event(game, ev, OMNISCIENT) == game.public_event(ev, ev[1])
            assert game.events is not None
            game.events.clear()
            if game.is_over:
                break
            game.apply_legal(rng.choice(game.legal_actions()))
