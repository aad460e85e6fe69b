"""The spectator's view of a game in play: built from public events only, and exactly
the public part of the engine's state.

A spectator rebuilds the table (``PublicTable``) from the messages of
``referee/table/spectator.py`` alone. These tests play whole games with the engine and
check, after every action, that the rebuilt table equals the public facts of the true
state (hand sizes, talon, table, discard count, roles, who is out, the trump) and that no
message ever names a card the engine says the spectator cannot see.
"""

from __future__ import annotations

import json
import random

import pytest

from livekit import hidden_from_spectator
from referee.rules import Game, make_rules
from referee.rules.cards import parse_card
from referee.table.spectator import PublicTable, public_message, start_message

RULES = [("classic", []), ("perevodnoy", []), ("perevodnoy_trump", ["trump_exchange=on"]),
         ("classic", ["deck=24"]), ("deflection", ["deck=52"])]


def cards_named(message: dict) -> set[str]:
    """Every card-like string anywhere in a message."""
    found = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            try:
                parse_card(value)
            except Exception:
                return
            found.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
    walk(message)
    return found


def public_facts(game: Game) -> dict:
    o = game.observe(0)
    return {"hand_sizes": o["hand_sizes"], "talon": o["talon"], "table": o["table"],
            "discard": len(o["discard"]), "out": o["out"], "trump": o["trump"],
            "trump_holder": o["trump_holder"],
            "known": [sorted(k) for k in o["known"]]}


@pytest.mark.parametrize("preset,sets,players", [
    (preset, sets, players) for preset, sets in RULES for players in (2, 3, 4, 6)
    if players * 6 <= make_rules(preset, sets).deck])
def test_the_spectator_table_is_exactly_the_public_state_and_never_names_a_hidden_card(
        preset: str, sets: list[str], players: int) -> None:
    rules = make_rules(preset, sets)
    for seed in range(12):
        rng = random.Random(seed)
        game = Game.new(rules, players, seed=f"spectator-{seed}", record_events=True,
                        dealer=seed % players)
        start = start_message(game, seed, [f"bot{i}" for i in range(players)])
        assert not cards_named(start) & hidden_from_spectator(game)
        view = PublicTable(json.loads(json.dumps(start)))
        while not game.is_over:
            game.apply_legal(rng.choice(game.legal_actions()))
            for ev in game.events or []:
                message = public_message(game, seed, ev)
                if message is None:
                    continue
                # Only cards the event itself made public (laid, shown, exchanged) are
                # named: none of them is hidden once the event happened; a draw names none.
                named = cards_named(message)
                assert not named & hidden_from_spectator(game), message
                if message["event"]["type"] == "draw":
                    assert named == set(), message
                view.apply(json.loads(json.dumps(message)))
            game.events.clear()  # type: ignore[union-attr]
            seen = view.view()
            facts = public_facts(game)
            assert {k: seen[k] for k in facts} == facts, (seed, game)
            if not game.is_over:
                assert ((seen["attacker"], seen["defender"], seen["taking"])
                        == (game.attacker, game.defender, game.taking)), game


def test_a_declined_exchange_and_a_draws_cards_never_reach_the_spectator() -> None:
    rules = make_rules("classic", ["trump_exchange=on"])
    for seed in range(200):
        game = Game.new(rules, 2, seed=f"decline-{seed}", record_events=True)
        if game.exchange_seat is None:
            continue
        from referee.rules import PASS
        game.apply_legal(PASS)  # decline
        assert [public_message(game, 0, ev) for ev in game.events or []] == [None]
        return
    pytest.fail("no deal offered an exchange")
