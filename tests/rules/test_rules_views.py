"""What a seat may see: ``observe``, ``hidden_from`` and independent ``copy``."""

from referee.rules import Game, make_rules, parse_card

from rules_testkit import hand, play, snapshot

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
