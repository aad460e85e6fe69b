"""The options table: presets, overrides, validation, and impossible tables."""

import pytest

from referee.rules import OPTIONS, PRESETS, Game, Rules, RulesError, make_rules
from referee.rules.options import rules_from_dict

DEFAULTS = {
    "deck": 36, "first_attacker": "lowest_trump", "trump_exchange": False, "throw_in_ranks": "all",
    "max_attacks": 6, "first_bout_limit": False, "ask_forced": True, "last_two_out": "draw",
    "pickup_draw_limit": 40, "action_cap": 5000, "transfer": "off", "transfer_limit": None,
}


def test_classic_is_every_default():
    assert make_rules().as_dict() == DEFAULTS
    assert make_rules("classic") == Rules()
    assert make_rules().preset == "classic"


#: Options added after logs and bots existed: left out of as_dict while at their default.
QUIET = {"draw_others": "clockwise", "defender_fairness": False, "lead": "one",
         "throw_in_timing": "covered", "throw_in_order": "clockwise", "exchange_rank": "lowest"}


def test_as_dict_has_every_option_but_quiet_ones_at_their_default():
    assert set(make_rules().as_dict()) == {o.name for o in OPTIONS if not o.quiet} == set(DEFAULTS)
    assert {o.name: o.default for o in OPTIONS if o.quiet} == QUIET


@pytest.mark.parametrize("name, text, value", [("draw_others", "counter_clockwise", "counter_clockwise"),
                                              ("defender_fairness", "on", True),
                                              ("lead", "same_rank", "same_rank"),
                                              ("throw_in_timing", "any", "any"),
                                              ("throw_in_order", "counter_clockwise", "counter_clockwise"),
                                              ("exchange_rank", "Q", "Q")])
def test_a_quiet_option_away_from_its_default_is_logged_and_round_trips(name, text, value):
    r = make_rules("classic", {name: text})
    assert r.as_dict() == {**DEFAULTS, name: value}
    assert rules_from_dict(r.as_dict()) == r
    # absent from a header: its default
    assert rules_from_dict(DEFAULTS) == make_rules()


@pytest.mark.parametrize("preset, diff", [
    ("classic", {}),
    ("perevodnoy", {"transfer": "on"}),
    ("perevodnoy_trump", {"transfer": "trump_show"}),
    ("deflection", {"transfer": "on", "transfer_limit": 1}),
])
def test_presets(preset, diff):
    assert make_rules(preset).as_dict() == {**DEFAULTS, **diff}
    assert make_rules(preset).preset == preset


def test_presets_are_exactly_these():
    assert set(PRESETS) == {"classic", "perevodnoy", "perevodnoy_trump", "deflection"}


@pytest.mark.parametrize("name, text, value", [
    ("deck", "24", 24), ("deck", "52", 52), ("deck", "36", 36),
    ("first_attacker", "dealer_next", "dealer_next"), ("first_attacker", "seat:3", "seat:3"),
    ("first_attacker", "lowest_trump", "lowest_trump"),
    ("trump_exchange", "on", True), ("trump_exchange", "off", False), ("trump_exchange", "yes", True),
    ("throw_in_ranks", "attacks", "attacks"), ("throw_in_ranks", "all", "all"),
    ("max_attacks", "4", 4), ("max_attacks", "none", None), ("max_attacks", "1", 1),
    ("first_bout_limit", "on", True),
    ("ask_forced", "off", False),
    ("last_two_out", "defender_loses", "defender_loses"),
    ("pickup_draw_limit", "3", 3), ("pickup_draw_limit", "none", None),
    ("action_cap", "10", 10),
    ("transfer", "on", "on"), ("transfer", "trump_show", "trump_show"), ("transfer", "off", "off"),
    ("transfer_limit", "1", 1), ("transfer_limit", "none", None),
])
def test_override_as_key_value_string_and_as_dict(name, text, value):
    assert getattr(make_rules("classic", [f"{name}={text}"]), name) == value
    assert getattr(make_rules("classic", {name: text}), name) == value


def test_overrides_apply_on_top_of_the_preset():
    r = make_rules("deflection", ["transfer_limit=2", "deck=52"])
    assert (r.transfer, r.transfer_limit, r.deck) == ("on", 2, 52)
    assert r.describe() == "deflection deck=52 transfer_limit=2"
    assert make_rules("perevodnoy").describe() == "perevodnoy"


def test_dict_overrides_accept_python_values():
    r = make_rules("classic", {"deck": 52, "trump_exchange": True, "max_attacks": None})
    assert (r.deck, r.trump_exchange, r.max_attacks) == (52, True, None)


def test_as_dict_round_trips():
    r = make_rules("perevodnoy", ["max_attacks=none", "trump_exchange=on", "first_attacker=seat:1"])
    assert rules_from_dict(r.as_dict(), preset="perevodnoy") == r


def test_unknown_preset_lists_the_presets():
    with pytest.raises(RulesError) as e:
        make_rules("podkidnoy_plus")
    for name in PRESETS:
        assert name in str(e.value)
    assert "podkidnoy_plus" in str(e.value)


def test_unknown_option_lists_the_options():
    for overrides in (["colour=red"], {"colour": "red"}):
        with pytest.raises(RulesError) as e:
            make_rules("classic", overrides)
        assert "colour" in str(e.value)
        for o in OPTIONS:
            assert o.name in str(e.value)


def test_override_without_equals_sign():
    with pytest.raises(RulesError, match="name=value"):
        make_rules("classic", ["deck"])


@pytest.mark.parametrize("name, text, hint", [
    ("deck", "40", "24, 36 or 52"),
    ("first_attacker", "youngest", "lowest_trump, dealer_next, two_of_clubs or seat:N"),
    ("first_attacker", "seat:6", "seat:N"),
    ("first_attacker", "seat:x", "seat:N"),
    ("trump_exchange", "maybe", "off (nobody), or seats:N,M"),
    ("throw_in_ranks", "covers", "all, attacks"),
    ("max_attacks", "0", ">= 1"),
    ("max_attacks", "-1", ">= 1"),
    ("max_attacks", "six", ">= 1"),
    ("last_two_out", "both", "draw, defender_loses"),
    ("pickup_draw_limit", "0", ">= 1"),
    ("action_cap", "9", ">= 10"),
    ("action_cap", "none", ">= 10"),
    ("transfer", "reflection", "off, on, trump_show, reflect"),
    ("transfer_limit", "0", ">= 1"),
])
def test_bad_value_names_the_option_and_the_valid_values(name, text, hint):
    with pytest.raises(RulesError) as e:
        make_rules("classic", [f"{name}={text}"])
    msg = str(e.value)
    assert name in msg and repr(text) in msg and hint in msg


def test_rules_error_is_a_value_error():
    assert issubclass(RulesError, ValueError)


# --- who may sit at a table -------------------------------------------------------------

FITS = [(24, 2), (24, 3), (24, 4), (36, 2), (36, 3), (36, 4), (36, 5), (36, 6),
        (52, 2), (52, 3), (52, 4), (52, 5), (52, 6)]


@pytest.mark.parametrize("deck, players", FITS)
def test_tables_that_fit(deck, players):
    rules = make_rules("classic", {"deck": str(deck)})
    rules.check_table(players)
    g = Game.new(rules, players, seed=1)
    assert g.players == players


@pytest.mark.parametrize("deck, players", [(24, 5), (24, 6)])
def test_players_times_six_over_deck_is_refused(deck, players):
    rules = make_rules("classic", {"deck": str(deck)})
    with pytest.raises(RulesError) as e:
        rules.check_table(players)
    assert f"{players * 6} cards" in str(e.value) and str(deck) in str(e.value)
    with pytest.raises(RulesError):
        Game.new(rules, players, seed=1)


@pytest.mark.parametrize("players", [0, 1, 7, 8])
def test_two_to_six_players(players):
    for deck in ("36", "52"):
        with pytest.raises(RulesError, match="2 to 6 players"):
            Game.new(make_rules("classic", {"deck": deck}), players, seed=1)


@pytest.mark.parametrize("seat, players", [(2, 2), (3, 3), (5, 5)])
def test_first_attacker_seat_must_exist(seat, players):
    rules = make_rules("classic", [f"first_attacker=seat:{seat}", "deck=52"])
    with pytest.raises(RulesError, match=f"seat:{seat}"):
        rules.check_table(players)
    with pytest.raises(RulesError):
        Game.new(rules, players, seed=1)
    rules.check_table(seat + 1)
