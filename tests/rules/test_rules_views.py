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
