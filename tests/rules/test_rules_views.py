"""What a seat may see: ``observe``, ``hidden_from`` and independent ``copy``."""

from rules_testkit import hand, play, snapshot

from referee.rules import Game, make_rules, parse_card

CLASSIC = make_rules()


def mask(text: str) -> int:
    m = 0
    for c in text.split():
        m |= 1 << parse_card(c)
    return m


def position() -> Game:
    g = Game.from_position(CLASSIC, ["6S 6D 9C", "7D 8D 9D", "TS JS"], trump="AH",
                           talon="QC KC QS KS 7H 8H TH JH QH KH 9H AH")
    play(g, "attack 6S", "take", "pass", "pass")   # seat 1 picks up 6S: publicly known
    return g


def test_observe_shows_own_hand_and_public_facts_only():
    g = position()
    o = g.observe(2)
    assert o["seat"] == 2 and o["players"] == 3
    assert o["hand"] == sorted(o["hand"], key=parse_card) and set(o["hand"]) == hand(g, 2)
    assert o["hand_sizes"] == [6, 6, 6] and o["talon"] == 2
    assert o["known"] == [[], ["6S"], []]
    assert o["trump"] == "AH" and o["trump_holder"] is None
    text = repr(o)
    for s in (0, 1):
        for c in hand(g, s) - {"6S"}:
            assert c not in text


def test_hidden_from_is_other_unknown_cards_and_the_talon_but_the_face_up_trump():
    g = position()
    # the talon holds 9H (hidden) above the face-up AH (not hidden)
    talon_hidden = mask("9H")
    assert g.hidden_from(0) == (g.hands[1] & ~mask("6S")) | g.hands[2] | talon_hidden
    assert g.hidden_from(1) == g.hands[0] | g.hands[2] | talon_hidden
    assert not g.hidden_from(2) >> parse_card("AH") & 1
    assert not g.hidden_from(2) >> parse_card("6S") & 1


def test_copy_is_independent():
    g = position()
    before = snapshot(g)
    c = g.copy()
    assert snapshot(c) == before
    c.apply(c.legal_actions()[0])
    assert snapshot(g) == before and snapshot(c) != before


def test_public_events_of_a_bout_as_each_seat_sees_them():
    """Covers name their table slot; a draw's cards are shown only to the drawing seat."""
    g = Game.from_position(CLASSIC, ["6S 6D 7C", "7S 7D 8C", "9C 9D"], trump="TH",
                           talon="JH QH TH", record_events=True)
    play(g, "attack 6S", "cover 0 7S", "throw_in 6D", "cover 1 7D", "pass", "pass")
    public = [
        {"type": "attack", "seat": 0, "card": "6S"},
        {"type": "cover", "seat": 1, "slot": 0, "card": "7S"},
        {"type": "throw_in", "seat": 0, "card": "6D"},
        {"type": "cover", "seat": 1, "slot": 1, "card": "7D"},
        {"type": "pass", "seat": 0},
        {"type": "pass", "seat": 2},
        {"type": "bout_end", "result": "beaten", "defender": 1},
    ]
    drawn = {"type": "draw", "seat": 0, "count": 3}
    assert [g.public_event(e, 0) for e in g.events] == [*public, {**drawn, "cards": ["JH", "QH", "TH"]}]
    for seat in (1, 2):
        assert [g.public_event(e, seat) for e in g.events] == [*public, drawn]


def test_public_events_of_a_take_and_of_going_out():
    g = Game.from_position(CLASSIC, ["6S", "7S 8S", "9C"], trump="TH", record_events=True)
    play(g, "attack 6S", "cover 0 7S")
    beaten = [{"type": "attack", "seat": 0, "card": "6S"},
              {"type": "cover", "seat": 1, "slot": 0, "card": "7S"},
              {"type": "bout_end", "result": "beaten", "defender": 1},
              {"type": "out", "seat": 0}]
    assert [g.public_event(e, 2) for e in g.events] == beaten
    play(g, "attack 8S", "take")   # seat 1 leads against seat 2, who takes
    assert [g.public_event(e, 0) for e in g.events[4:]] == [
        {"type": "attack", "seat": 1, "card": "8S"},
        {"type": "take", "seat": 2},
        {"type": "bout_end", "result": "taken", "defender": 2},
        {"type": "out", "seat": 1}]
    assert g.outcome.durak == 2


def test_the_whole_observation_after_a_bout_word_for_word():
    g = position()   # seat 0 led 6S, seat 1 took it, both attackers passed; seat 2 attacks now
    assert g.observe(2) == {
        "seat": 2, "players": 3, "dealer": 2, "hand": ["7H", "8H", "TH", "TS", "JH", "JS"],
        "trump": "AH", "trump_suit": "H", "trump_holder": None, "talon": 2, "table": [],
        "discard": ["6C", "6H", "7C", "7S", "8C", "8S", "9S", "TC", "TD", "JC", "JD", "QD", "KD",
                    "AC", "AD", "AS"],
        "hand_sizes": [6, 6, 6], "out": [False, False, False], "attacker": 2, "defender": 0,
        "phase": "attack", "taking": False, "bout": 2, "transfers": 0, "attack_limit": 6,
        "known": [[], ["6S"], []], "shown": [],
    }


def test_the_whole_observation_mid_bout_after_a_shown_trump_and_a_take():
    rules = make_rules("perevodnoy_trump")
    g = Game.from_position(rules, ["6S 6C 9C", "6H 7S KD", ""], trump="AH", talon="QC KC AH",
                           out=(2,), dealer=1)
    play(g, "attack 6S", "show_trump 6H", "take")
    assert g.observe(0) == {
        "seat": 0, "players": 3, "dealer": 1, "hand": ["6C", "9C"],
        "trump": "AH", "trump_suit": "H", "trump_holder": None, "talon": 3, "table": [["6S", None]],
        "discard": ["6D", "7C", "7D", "7H", "8C", "8D", "8H", "8S", "9D", "9H", "9S", "TC", "TD",
                    "TH", "TS", "JC", "JD", "JH", "JS", "QD", "QH", "QS", "KH", "KS", "AC", "AD", "AS"],
        "hand_sizes": [2, 3, 0], "out": [False, False, True], "attacker": 1, "defender": 0,
        "phase": "throw_in", "taking": True, "bout": 1, "transfers": 1, "attack_limit": 2,
        "known": [[], ["6H"], []], "shown": ["6H"],
    }


def test_the_direction_of_play_is_observed_only_where_reflections_can_change_it():
    reflect = make_rules("classic", ["transfer=reflect"])
    hands = ["6S 7S", "6D 8D", "9C TC"]
    assert "direction" not in Game.from_position(CLASSIC, hands, trump="AH").observe(0)
    assert Game.from_position(reflect, hands, trump="AH").observe(0)["direction"] == "clockwise"
    g = Game.from_position(reflect, hands, trump="AH", counter_clockwise=True)
    assert [g.observe(s)["direction"] for s in range(3)] == ["counter_clockwise"] * 3
    assert (g.attacker, g.defender) == (0, 2)
