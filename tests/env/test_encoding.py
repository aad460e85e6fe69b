"""The fixed action space and the observation tensor (referee/env/encoding.py).

- explicit positions: the exact legal indices and the named parts of the tensor;
- over thousands of seeded games of every preset, table size and deck (random options
  too), at every step: the AEC env's mask is exactly the engine's legal list, each index
  maps back to its engine action; every seat's tensor from the game equals the tensor
  read back from its protocol observation (``Game.observe``: what a bot's request holds);
- a seat's tensor does not change when the cards hidden from it are permuted, and never
  holds a card the seat may not see.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rules_testkit import random_rules
from test_rules_properties import TABLES, permute_hidden

from referee.env.durak_v0 import raw_env
from referee.env.encoding import (
    ACTION_SIZE,
    COVER_BASE,
    EXCHANGE_INDEX,
    OBSERVATION_FIELDS,
    OBSERVATION_SIZE,
    OFFSETS,
    PASS_INDEX,
    TAKE_INDEX,
    THROW_IN_BASE,
    TRANSFER_BASE,
    Encoder,
    action_index,
    engine_action,
    index_name,
    legal_mask,
    view_cards,
    wire_indices,
)
from referee.rules import PRESETS, Game, make_rules
from referee.rules.actions import action_to_wire
from referee.rules.cards import parse_card
from support import scaled

CONFIGS = [(preset, deck, n) for preset in PRESETS for deck, n in TABLES]


def part(obs: np.ndarray, name: str) -> list[int]:
    size = dict(OBSERVATION_FIELDS)[name]
    return obs[OFFSETS[name]:OFFSETS[name] + size].tolist()


def cards_of(obs: np.ndarray, name: str) -> set[str]:
    from referee.rules.cards import CARD_TEXT
    return {CARD_TEXT[c] for c, bit in enumerate(part(obs, name)) if bit}


def names(indices: list[int]) -> list[str]:
    return sorted(index_name(i) for i in indices)


def test_the_action_space_has_one_index_per_action_of_every_variant() -> None:
    assert ACTION_SIZE == 2915
    assert (TAKE_INDEX, PASS_INDEX, EXCHANGE_INDEX) == (2912, 2913, 2914)
    assert index_name(0) == "attack 2C" and index_name(THROW_IN_BASE + 51) == "throw_in AS"
    assert index_name(TRANSFER_BASE + parse_card("6H")) == "transfer 6H"
    assert index_name(COVER_BASE + 52 * parse_card("6S") + parse_card("7S")) == "cover 6S with 7S"
    assert len({index_name(i) for i in range(ACTION_SIZE)}) == ACTION_SIZE


def test_a_cover_names_the_attack_card_not_its_slot() -> None:
    # Seat 1 defends against 6D (covered) and 8D in slot 1; trump hearts: only 9H beats 8D.
    g = Game.from_position(make_rules("classic"), ["6S 7S", "8S 9S 9H"], trump="AH",
                           table="6D/7D 8D/--", attacker=0)
    legal = [action_index(a, g.attacks) for a in g.legal_actions()]
    assert names(legal) == ["cover 8D with 9H", "take"]
    cover = COVER_BASE + 52 * parse_card("8D") + parse_card("9H")
    assert engine_action(cover, g.attacks) == g.legal_actions()[0]  # slot 1
    assert engine_action(COVER_BASE + 52 * parse_card("6C") + parse_card("9H"), g.attacks) is None


@pytest.mark.parametrize("bad", [-1, ACTION_SIZE, 10**9, 1.5, "take", None])
def test_an_index_out_of_the_space_names_no_action(bad: object) -> None:
    assert engine_action(bad, []) is None  # type: ignore[arg-type]


def test_an_explicit_position_encodes_each_named_part() -> None:
    rules = make_rules("perevodnoy")
    g = Game.from_position(rules, ["8S 9H", "6S 7S KD", "TC JC QC"], trump="AH",
                           talon="7D AH", table="6H/7H 8D/--", attacker=2)
    enc = Encoder(rules, 3)
    obs = enc.game_observation(g, 0)  # seat 0 defends against seat 2
    assert obs.dtype == np.int8 and obs.shape == (OBSERVATION_SIZE,)
    assert cards_of(obs, "hand") == {"8S", "9H"}
    assert cards_of(obs, "table_uncovered") == {"8D"}
    assert cards_of(obs, "table_covered") == {"6H"} and cards_of(obs, "table_covers") == {"7H"}
    assert cards_of(obs, "trump_card") == {"AH"}
    assert cards_of(obs, "discard") == {c for c in _deck36() if c not in
                                        "6S 7S KD 8S 9H TC JC QC 7D AH 6H 7H 8D".split()}
    assert part(obs, "hand_sizes") == [2, 3, 3, 0, 0, 0]  # me, seat 1, seat 2
    assert part(obs, "attacker") == [0, 0, 1, 0, 0, 0] and part(obs, "defender") == [1, 0, 0, 0, 0, 0]
    assert part(obs, "dealer") == [0, 0, 1, 0, 0, 0]  # the last seat, seat 2
    assert part(obs, "trump_holder") == [0] * 6 + [1]  # the talon is not drawn out yet
    assert part(obs, "talon") == [2] and part(obs, "phase") == [0, 0, 1, 0, 0]
    assert part(obs, "trump_suit") == [0, 0, 1, 0] and part(obs, "players") == [0, 1, 0, 0, 0]
    assert part(obs, "transfer_mode") == [0, 1, 0, 0] and part(obs, "max_attacks") == [6]
    legal = [action_index(a, g.attacks) for a in g.legal_actions()]
    assert names(legal) == ["cover 8D with 9H", "take"]


def test_taking_the_limit_and_a_reflected_direction_are_encoded() -> None:
    rules = make_rules("classic", ["transfer=reflect", "max_attacks=none"])
    g = Game.from_position(rules, ["6S 7S", "8S 9H 9S", "TC JC"], trump="AH", talon="AH",
                           table="6H/-- 6D/--", attacker=0, taking=True, counter_clockwise=True)
    obs = Encoder(rules, 3).game_observation(g, 1)
    assert part(obs, "phase") == [0, 0, 0, 1, 0] and part(obs, "taking") == [1]
    assert part(obs, "counter_clockwise") == [1] and g.defender == 2
    assert part(obs, "attack_limit") == [g.limit] and part(obs, "transfers") == [0]
    assert part(obs, "transfer_mode") == [0, 0, 0, 1] and part(obs, "max_attacks") == [0]
    assert part(obs, "deck") == [0, 1, 0] and part(obs, "trump_exchange") == [0]


def _deck36() -> list[str]:
    from referee.rules.cards import CARD_TEXT, deck_cards
    return [CARD_TEXT[c] for c in deck_cards(36)]


def test_known_cards_are_counted_from_the_observing_seat() -> None:
    g = Game.new(make_rules("classic"), 3, seed=5)
    g.known[2] = 1 << parse_card("AS")
    g.hands[2] |= 1 << parse_card("AS")
    obs = Encoder(make_rules("classic"), 3).game_observation(g, 0)
    assert cards_of(obs, "known_seat+2") == {"AS"} and not cards_of(obs, "known_seat+1")
    obs = Encoder(make_rules("classic"), 3).game_observation(g, 1)
    assert cards_of(obs, "known_seat+1") == {"AS"}


def step_through(rules, players: int, seed: int, rng: random.Random, *, views: bool) -> int:
    """Play one seeded game through the AEC env, checking at every step the mask against
    the engine's legal list and (with ``views``) every seat's tensor against its protocol
    observation and against the game with the cards hidden from it permuted."""
    env = raw_env(players=players, rules=rules)
    env.reset(seed=seed)
    game = env.game
    enc = Encoder(rules, players)
    steps = 0
    while not game.is_over:
        seat = game.seat_to_move()
        agent = env.agent_selection
        assert agent == f"player_{seat}"
        legal = game.legal_actions()
        obs = env.observe(agent)
        mask = obs["action_mask"]
        expected = [action_index(a, game.attacks) for a in legal]
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(expected)
        assert [engine_action(i, game.attacks) for i in expected] == legal
        assert np.array_equal(obs["observation"], enc.game_observation(game, seat))
        for s in range(players) if views else ():
            view = game.observe(s)
            if s == seat:
                assert wire_indices([action_to_wire(a) for a in legal], view_cards(view)[0]) == expected
            tensor = enc.game_observation(game, s)
            assert np.array_equal(tensor, enc.view_observation(view))
            shuffled = permute_hidden(game, s, rng)
            assert np.array_equal(enc.game_observation(shuffled, s), tensor)
            visible = tensor[:52].astype(bool)
            for name in ("table_uncovered", "table_covered", "table_covers", "discard",
                         "shown", "trump_card", *(f"known_seat+{r}" for r in range(1, 6))):
                visible |= np.array(part(tensor, name), bool)
            seen = {c for c in range(52) if visible[c]}
            assert not seen & {c for c in range(52) if game.hidden_from(s) >> c & 1}
        index = expected[rng.randrange(len(expected))]
        env.step(index)
        steps += 1
    assert np.array_equal(legal_mask([]), np.zeros(ACTION_SIZE, np.int8))
    return steps


@pytest.mark.slow
def test_the_mask_is_the_engines_legal_list_in_thousands_of_games() -> None:
    """Every preset x table x deck, default and random options, 2,000+ games."""
    rng = random.Random(0)
    games = 0
    for preset, deck, players in CONFIGS:
        for seed in range(scaled(40)):
            rules = (random_rules(random.Random(seed), preset, deck, players) if seed % 2
                     else make_rules(preset, {"deck": str(deck)}))
            step_through(rules, players, seed, rng, views=False)
            games += 1
    assert games >= scaled(40) * len(CONFIGS) >= min(2000, scaled(2000))


@pytest.mark.slow
@settings(max_examples=scaled(150), deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1), config=st.sampled_from(CONFIGS))
def test_the_observation_holds_only_what_the_seat_may_see(seed: int, config: tuple[str, int, int]) -> None:
    preset, deck, players = config
    rules = random_rules(random.Random(seed), preset, deck, players)
    step_through(rules, players, seed, random.Random(seed), views=True)
