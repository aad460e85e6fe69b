"""Checked ``apply``: MalformedAction for what is not an action, IllegalAction (with the
reason) for a well-formed action the rules do not allow; in both cases nothing changes.
Also the text and wire forms of actions."""

import re

import pytest
from rules_testkit import deck_for, legal, play, snapshot, views

from referee.rules import (
    ATTACK,
    COVER,
    EXCHANGE,
    PASS,
    TAKE,
    THROW_IN,
    Game,
    IllegalAction,
    MalformedAction,
    action_from_wire,
    action_str,
    action_to_wire,
    make_rules,
    parse_action,
    parse_card,
)
from referee.rules.actions import attack, cover, show_trump, throw_in, transfer

CLASSIC = make_rules()


def assert_refused(g: Game, action, error, match: str):
    before, seen, hist = snapshot(g), views(g), list(g.history)
    with pytest.raises(error, match=match):
        g.apply(action)
    assert snapshot(g) == before and views(g) == seen and g.history == hist


def defend_position() -> Game:
    return Game.from_position(CLASSIC, ["6S 6D 9C", "8S 9H AH 7D", "6C KD"], trump="TH",
                              talon="QC TH", table="7S/--")


def throw_position() -> Game:
    return Game.from_position(CLASSIC, ["6D 9C 8D", "9H AH 7D", "6C KD"], trump="TH",
                              talon="QC TH", table="6S/8S")


@pytest.mark.parametrize("action", [
    -1, 8, 15, 1 << 40 | 9, "attack 6S", 1.0, True, None, [1],
    PASS | 3 << 4,                       # pass takes no card
    TAKE | 1 << 10,
    EXCHANGE | 5 << 4,
    ATTACK | 60 << 4,                    # card index out of range
    THROW_IN | 52 << 4,
    ATTACK | 1 << 10 | 16 << 4,          # only cover takes a slot
    COVER | 20 << 4 | 64 << 10,          # slot out of range
])
def test_malformed_actions(action):
    g = defend_position()
    assert_refused(g, action, MalformedAction, "action")


@pytest.mark.parametrize("text, reason", [
    ("cover 0 7S", "does not hold"),
    ("cover 0 7D", "7D does not beat 7S"),
    ("cover 1 8S", "no table slot 1"),
    ("throw_in 6S", "not an option in phase defend"),
    ("pass", "not an option in phase defend"),
    ("attack 8S", "not an option in phase defend"),
    ("exchange", "not an option"),
    ("cover 0 2C", "does not hold"),     # a card outside the 36-card deck
    ("transfer 7D", "transfer=off"),
])
def test_illegal_while_defending(text, reason):
    g = defend_position()
    assert "cover 0 8S" in legal(g)
    assert_refused(g, parse_action(text), IllegalAction, reason)


@pytest.mark.parametrize("text, reason", [
    ("throw_in 9C", "no card of rank 9 lies on the table"),
    ("throw_in 6C", "does not hold"),
    ("cover 0 9C", "not an option in phase throw_in"),
    ("take", "not an option in phase throw_in"),
])
def test_illegal_while_throwing_in(text, reason):
    g = throw_position()
    assert legal(g) == {"throw_in 6D", "throw_in 8D", "pass"}
    assert_refused(g, parse_action(text), IllegalAction, reason)


def test_illegal_cover_of_a_covered_slot():
    g = Game.from_position(make_rules("perevodnoy"), ["9C", "7S 7D AH", "8C 9D"], trump="TH",
                           talon="QC TH", table="6S/8S 6D/--")
    assert_refused(g, parse_action("cover 0 AH"), IllegalAction, "already covered")


def test_illegal_throw_in_over_the_limit():
    g = Game.from_position(make_rules("classic", ["max_attacks=1"]), ["6D 7C", "9H 7D", "8C"],
                           trump="TH", table="6S/8S")
    assert legal(g) == {"pass"}
    assert_refused(g, parse_action("throw_in 6D"), IllegalAction, "limit of 1")


def test_illegal_in_the_attack_phase():
    g = Game.from_position(CLASSIC, ["6S 7S", "8S 9H"], trump="TH", talon="QC TH")
    assert_refused(g, parse_action("pass"), IllegalAction, "not an option in phase attack")
    assert_refused(g, parse_action("take"), IllegalAction, "seat 0 may: attack")
    assert_refused(g, parse_action("attack 8S"), IllegalAction, "seat 0 does not hold 8S")


def test_illegal_after_the_game_is_over():
    g = Game.from_position(CLASSIC, ["6S", "7S 8S"], trump="TH")
    play(g, "attack 6S", "cover 0 7S")
    assert g.is_over
    assert_refused(g, parse_action("attack 8S"), IllegalAction, "the game is over")
    assert_refused(g, PASS, IllegalAction, "^pass: the game is over$")
    assert g.illegal_reason(PASS) == "the game is over"
    assert g.current_seat is None
    with pytest.raises(AssertionError) as nobody:   # a caller's bug, said plainly
        g.seat_to_move()
    assert str(nobody.value) == "no seat is to move: the game is over"


def test_a_finished_game_names_no_seat_to_move_even_after_a_trump_exchange_was_offered():
    """The seat offered the trump exchange is remembered for the whole game (only the
    exchange phase reads it); once the game is over, neither ``seat_to_move`` nor the
    unchecked ``apply_legal`` may take it for the seat to move: both refuse, as a
    caller's bug, and ``apply_legal`` records and changes nothing."""
    rules = make_rules("classic", ["trump_exchange=on"])
    # Seat 1 holds 6H, the lowest trump of the 36-card deck, under the face-up AH.
    g = Game.new(rules, 2, deck=deck_for(36, ["7H 6C 7C 8C 9C TC", "6H 6D 7D 8D 9D TD"], "AH"))
    assert g.current_seat == 1 and legal(g) == {"exchange", "pass"}
    play(g, "exchange")
    while not g.is_over:  # play it out: every seat plays its first legal action
        g.apply(g.legal_actions()[0])
    assert g.current_seat is None
    with pytest.raises(AssertionError) as nobody:
        g.seat_to_move()
    assert str(nobody.value) == "no seat is to move: the game is over"
    before, hist = snapshot(g), list(g.history)
    for action in (PASS, EXCHANGE, TAKE):
        with pytest.raises(AssertionError) as unchecked:
            g.apply_legal(action)
        assert str(unchecked.value) == "no seat is to move: the game is over"
    assert snapshot(g) == before and g.history == hist


@pytest.mark.parametrize("lookalike", [float(PASS), PASS + 0j])
def test_a_non_int_equal_to_a_legal_action_is_malformed_even_just_after_legal_actions(lookalike):
    g = throw_position()
    assert PASS in g.legal_actions() and lookalike == PASS
    assert_refused(g, lookalike, MalformedAction,
                   "^" + re.escape(f"an action is a non-negative int, got {lookalike!r}") + "$")


def test_an_action_legal_in_an_earlier_position_is_checked_against_the_current_one():
    """``apply`` may answer from the last ``legal_actions()`` only while nothing has moved since."""
    g = Game.from_position(CLASSIC, ["6S 7S", "8S 9H"], trump="TH", talon="QC TH")
    assert legal(g) == {"attack 6S", "attack 7S"}
    g.apply(parse_action("attack 6S"))
    assert_refused(g, parse_action("attack 7S"), IllegalAction,
                   "^attack 7S: attack is not an option in phase defend")
    assert legal(g) == {"cover 0 8S", "cover 0 9H", "take"}   # 9H: a trump


def test_illegal_reason_is_none_for_legal_actions():
    g = defend_position()
    for a in g.legal_actions():
        assert g.illegal_reason(a) is None


def test_both_errors_are_value_errors():
    assert issubclass(MalformedAction, ValueError) and issubclass(IllegalAction, ValueError)
    assert not issubclass(MalformedAction, IllegalAction)
    assert not issubclass(IllegalAction, MalformedAction)


def test_apply_legal_is_the_unchecked_fast_path_with_the_same_effect():
    a, b = defend_position(), defend_position()
    for text in ("cover 0 8S", "attack 9H"):
        a.apply(parse_action(text))
        b.apply_legal(parse_action(text))
    assert snapshot(a) == snapshot(b)


# --- text and wire forms ------------------------------------------------------------------

ALL_KINDS = [attack(parse_card("6S")), cover(3, parse_card("TH")), throw_in(parse_card("QD")),
             transfer(parse_card("6D")), show_trump(parse_card("6H")), TAKE, PASS, EXCHANGE]
TEXTS = ["attack 6S", "cover 3 TH", "throw_in QD", "transfer 6D", "show_trump 6H", "take", "pass",
         "exchange"]


def test_action_text_forms():
    assert [action_str(a) for a in ALL_KINDS] == TEXTS
    assert [parse_action(t) for t in TEXTS] == ALL_KINDS
    assert parse_action("cover 0 10h") == cover(0, parse_card("TH"))


def test_action_wire_forms():
    assert action_to_wire(ALL_KINDS[1]) == {"type": "cover", "slot": 3, "card": "TH"}
    assert action_to_wire(ALL_KINDS[0]) == {"type": "attack", "card": "6S"}
    assert action_to_wire(TAKE) == {"type": "take"}
    assert [action_from_wire(action_to_wire(a)) for a in ALL_KINDS] == ALL_KINDS


@pytest.mark.parametrize("text", ["", "dance", "attack", "attack 6S 7S", "cover 6S", "cover x 6S",
                                  "cover 0 6X", "take 6S", "attack 1S", "Attack 6S"])
def test_malformed_text(text):
    with pytest.raises(MalformedAction):
        parse_action(text)


@pytest.mark.parametrize("data", [
    None, "take", [], {}, {"type": "dance"}, {"type": "attack"}, {"type": "attack", "card": "6X"},
    {"type": "attack", "card": 6}, {"type": "cover", "card": "6S"},
    {"type": "cover", "card": "6S", "slot": "0"}, {"type": "cover", "card": "6S", "slot": -1},
    {"type": "cover", "card": "6S", "slot": 64}, {"type": "cover", "card": "6S", "slot": True},
])
def test_malformed_wire(data):
    with pytest.raises(MalformedAction):
        action_from_wire(data)


# --- every reason, word for word (what a bot is told after an illegal action) ---------------

PEREV = make_rules("perevodnoy")
SAME_RANK_LEAD = make_rules("classic", ["lead=same_rank"])


def same_rank_lead_started() -> Game:
    return play(Game.from_position(SAME_RANK_LEAD, ["6S 6D 7S", "8S 9H AH", "9C"], trump="TH"), "attack 6S")


def perevodnoy(table: str, next_hand: str = "8C 9D TD JD", rules=PEREV) -> Game:
    return Game.from_position(rules, ["9C", "6H 6D 7D", next_hand], trump="AH", table=table)


@pytest.mark.parametrize(("position", "text", "reason"), [
    # "may:" names the kinds of the legal list the seat was offered, not every kind of the
    # phase: transfer and show_trump are off in classic, cover impossible with no beater.
    (defend_position, "pass", "pass is not an option in phase defend (seat 1 may: cover, take)"),
    (lambda: perevodnoy("6S/--"), "pass",
     "pass is not an option in phase defend (seat 1 may: cover, transfer, take)"),
    (lambda: Game.from_position(make_rules("perevodnoy_trump"), ["9C", "7C 8D", "8C 9D TD JD"],
                                trump="AH", table="KS/--"), "pass",
     "pass is not an option in phase defend (seat 1 may: take)"),
    (throw_position, "take", "take is not an option in phase throw_in (seat 0 may: throw_in, pass)"),
    (lambda: Game.from_position(CLASSIC, ["6S 7S", "8S 9H"], trump="TH", talon="QC TH"), "pass",
     "pass is not an option in phase attack (seat 0 may: attack)"),
    (same_rank_lead_started, "take", "take is not an option in phase attack (seat 0 may: attack, pass)"),
    (same_rank_lead_started, "attack 7S", "a lead of several cards is of one rank: 7S is not of rank 6"),
    (defend_position, "cover 0 6C", "seat 1 does not hold 6C"),
    (defend_position, "cover 1 8S", "there is no table slot 1 (slots 0..0)"),
    (lambda: Game.from_position(PEREV, ["9C", "7S 7D AH", "8C 9D"], trump="TH", table="6S/8S 6D/--"),
     "cover 2 AH", "there is no table slot 2 (slots 0..1)"),
    (lambda: Game.from_position(PEREV, ["9C", "7S 7D AH", "8C 9D"], trump="TH", table="6S/8S 6D/--"),
     "cover 0 AH", "slot 0 (6S) is already covered"),
    (lambda: Game.from_position(make_rules("classic", {"deck": "52"}), ["9D", "6D 7C"], trump="AC",
                                table="3D/2C 5D/--"),
     "cover 0 6D", "slot 0 (3D) is already covered"),   # by 2C, card 0 of the 52-card deck
    (defend_position, "cover 0 7D", "7D does not beat 7S (trump H)"),
    (lambda: Game.from_position(make_rules("classic", ["max_attacks=1"]), ["6D 7C", "9H 7D", "8C"],
                                trump="TH", table="6S/8S"),
     "throw_in 6D", "the bout already holds its limit of 1 attack cards"),
    (throw_position, "throw_in 9C", "no card of rank 9 lies on the table"),
    (defend_position, "transfer 7D", "transfer is not allowed by these rules (transfer=off)"),
    (lambda: perevodnoy("6S/--"), "show_trump 6H", "show_trump is not allowed by these rules (transfer=on)"),
    (lambda: Game.from_position(PEREV, ["9C", "7S 7D AH 6H", "8C 9D"], trump="TH", table="6S/8S 6D/--"),
     "transfer 6H", "a card on the table is already covered"),
    (lambda: Game.from_position(make_rules("perevodnoy", {"deck": "52"}), ["9D", "3H 7C", "8D 9H TD"],
                                trump="AC", table="3D/2C 3S/--"),
     "transfer 3H", "a card on the table is already covered"),   # by 2C, card 0
    (lambda: perevodnoy("6S/-- 7S/--"), "transfer 6D", "the attack cards are not all of one rank"),
    (lambda: perevodnoy("6S/--"), "transfer 7D", "7D is not of the attacked rank"),
    (lambda: perevodnoy("6S/--", rules=make_rules("perevodnoy_trump")), "show_trump 6D", "6D is not a trump"),
    (lambda: play(Game.from_position(make_rules("perevodnoy", ["transfer_limit=1"]),
                                     ["9C", "6H 7D 8D", "6D 9D TD JD"], trump="AH", table="6S/--"),
                  "transfer 6H"),
     "transfer 6D", "this bout has used its 1 transfer(s)"),
    (lambda: perevodnoy("6S/--", next_hand="8C"), "transfer 6D",
     "the next defender holds too few cards, or the attack limit would be exceeded"),
    (lambda: perevodnoy("6S/--", next_hand="8C", rules=make_rules("deflection")), "transfer 6D",
     "the next defender holds too few cards, or the attack limit would be exceeded"),
    (lambda: perevodnoy("6S/--", next_hand="8C", rules=make_rules("deflection", ["transfer=trump_show"])),
     "show_trump 6H", "with transfer_limit=1 (deflection) a bout is never passed onto a player with one card"),
])
def test_every_reason_for_refusing_an_action_word_for_word(position, text: str, reason: str):
    g = position()
    assert g.illegal_reason(parse_action(text)) == reason
    assert_refused(g, parse_action(text), IllegalAction, "^" + re.escape(f"{text}: {reason}") + "$")
