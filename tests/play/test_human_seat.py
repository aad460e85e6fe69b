"""The human seat in-process: it sees only what its seat may see, answers only with legal
moves, runs on the same clock as a bot, and reads what people type."""

from __future__ import annotations

import re
from typing import Any

import trio

from referee.human.terminal import HumanPlayer, human_spec
from referee.human.view import menu_lines, parse_choice, sort_hand
from referee.rules import make_rules
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table.clock import TimeControl
from referee.table.match import MatchConfig, play_game, play_match

CARD = re.compile(r"\b([2-9TJQKA][CDHS])\b")


class Screen:
    """The terminal: collects lines; ``since_last_read`` is what appeared meanwhile."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.read_at = 0

    def write(self, line: str) -> None:
        self.lines.append(line)

    def since_last_read(self) -> str:
        text = "\n".join(self.lines[self.read_at:])
        self.read_at = len(self.lines)
        return text


class Person:
    """Types a reply to whatever the last menu shows: first a typo, then the last move."""

    def __init__(self, screen: Screen, watch: Watched) -> None:
        self.screen, self.watch = screen, watch
        self.typed: list[str] = []

    async def read(self) -> str | None:
        shown = self.screen.since_last_read()
        self.watch.check(shown)
        moves = re.findall(r"^\s+\d+\) (.+)$", shown, re.M)
        line = "8X" if len(self.typed) % 5 == 0 else str(len(moves)) if moves else "1"
        if not moves:  # after a typo the menu is not shown again: take the first move
            line = "1"
        self.typed.append(line)
        return line


class Watched(HumanPlayer):
    """A HumanPlayer that keeps the last request, so the test can check the screen."""

    request: dict[str, Any] | None = None

    async def finish(self, ask: Any) -> dict[str, Any]:
        self.request = ask.message()
        return await super().finish(ask)

    def check(self, shown: str) -> None:
        """Every card on the screen is one the seat's observation holds."""
        assert self.request is not None
        obs = self.request["observation"]
        visible = set(obs["hand"]) | set(obs["discard"]) | set(obs["shown"]) | {obs["trump"]}
        visible |= {c for pair in obs["table"] for c in pair if c}
        visible |= {c for known in obs["known"] for c in known}
        assert set(CARD.findall(shown)) <= visible, (set(CARD.findall(shown)) - visible, shown)


async def test_the_screen_shows_no_card_the_seat_may_not_see_and_typos_are_never_sent(
        autojump_clock: Any) -> None:
    for deal in range(6):
        screen = Screen()
        person = Watched("you", None, screen.write, hints=True)  # type: ignore[arg-type]
        person._lines = Person(screen, person)  # type: ignore[assignment]
        bots = [BuiltinPlayer(n, parse_bot_spec(f"{n}=builtin:greedy"), 1) for n in ("a", "b")]
        config = MatchConfig(rules=make_rules("perevodnoy", []), games=1, seed=f"hidden-{deal}")
        record = await play_game([bots[0], person, bots[1]], config, index=0, seed="match:0", dealer=2)
        assert record.forfeit is None  # a typo is asked again, never a forfeit
        assert record.termination in ("normal", "draw")
        assert any("is not a card" in line for line in screen.lines)


async def test_the_move_clock_applies_to_the_person_as_to_a_bot(autojump_clock: Any) -> None:
    class Silent:
        async def read(self) -> str | None:
            await trio.sleep_forever()
            return None

    screen = Screen()
    person = HumanPlayer("you", Silent(), screen.write)  # type: ignore[arg-type]
    bot = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), 1)
    config = MatchConfig(rules=make_rules("classic", []), games=1, seed="clock",
                         tc=TimeControl(move=30.0))
    record = await play_game([person, bot], config, index=0, seed="match:0", dealer=1)
    assert (record.termination, record.durak) == ("timeout", 0)
    assert "clock: at most 30 s for this move" in screen.lines
    assert "(out of time)" in screen.lines


async def test_a_person_who_leaves_forfeits_that_game_and_the_match_stops(autojump_clock: Any) -> None:
    class Gone:
        async def read(self) -> str | None:
            return None

    screen = Screen()
    person = HumanPlayer("you", Gone(), screen.write)  # type: ignore[arg-type]
    bot = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), 1)
    config = MatchConfig(rules=make_rules("classic", []), games=5, seed="gone")
    result = await play_match([bot, person], config)
    assert result.played == 1 and result.bots[1].forfeits == {"disconnect": 1}
    assert person.spec == human_spec("you")


LEGAL = [{"type": "cover", "slot": 0, "card": "9H"}, {"type": "cover", "slot": 1, "card": "9H"},
         {"type": "cover", "slot": 0, "card": "JS"}, {"type": "take"}]


def test_typed_moves_are_read_as_numbers_cards_or_words() -> None:
    assert parse_choice("3", LEGAL).index == 2
    assert parse_choice("js", LEGAL).index == 2
    assert parse_choice("  Take ", LEGAL).index == 3
    assert parse_choice("cover 1 9h*", LEGAL).index == 1
    assert parse_choice("cover 1 9H", LEGAL).index == 1


def test_what_cannot_be_a_move_gets_a_message_that_says_why() -> None:
    def error(text: str) -> str:
        choice = parse_choice(text, LEGAL)
        assert choice.index is None and choice.error
        return choice.error

    assert "more than one way: 1) cover 0 9H, 2) cover 1 9H; type the number" in error("9H")
    assert "there is no action 5; choose 1 to 4" in error("5")
    assert "there is no action 0" in error("0")
    assert "'pass' is not possible now; possible: cover, take" in error("pass")
    assert "'x9' is not a card" in error("x9")
    assert "AS is not a legal move now" in error("AS")
    assert "nothing typed" in error("   ")
    assert "not understood" in error("cover the nine please")
    assert "'cover' needs a card" in error("cover")


def test_the_hand_is_sorted_by_suit_with_trumps_last_and_marked() -> None:
    assert sort_hand(["AH", "6S", "TC", "7H", "6C", "QD"], "H") == ["6C", "TC", "QD", "6S", "7H", "AH"]
    assert menu_lines(LEGAL, "H") == ["  1) cover 0 9H*", "  2) cover 1 9H*", "  3) cover 0 JS",
                                      "  4) take"]


def test_hostile_typing_is_a_message_never_a_crash() -> None:
    for text in ["²", "cover ² 9H", "\x00\x1b[2J", "9" * 5000, "cover 99999999999999999999 9H",
                 "ſ", "9\u0336H", "take take", "-1", "1.5", "１"]:
        choice = parse_choice(text, LEGAL)
        assert (choice.index is None) != (choice.error is None), text
    assert parse_choice("１", LEGAL).index == 0  # a full-width digit is still a digit


def test_a_seat_name_with_terminal_escapes_cannot_drive_the_persons_terminal() -> None:
    from referee.human.view import end_lines, event_line, start_lines, table_lines
    from support import ATTACK_OBSERVATION

    names = ["you", "\x1b]0;pwned\x07\x1b[2J"]
    start = {"type": "game_start", "game": 0, "seat": 0, "players": 2, "names": names, "dealer": 1,
             "trump": "TH", "trump_suit": "H", "hand": [], "attacker": 1}
    shown = (start_lines(start) + [event_line({"type": "attack", "seat": 1, "card": "7S"}, names, 0, "H") or ""]
             + table_lines(ATTACK_OBSERVATION, names)
             + end_lines({"game": 0, "durak": 1, "termination": "normal", "reason": "\x1b[31m"}, names, 0))
    assert not any(c in line for line in shown for c in "\x1b\x07")
    assert "?]0;pwned??[2J (seat 1)" in "\n".join(shown)


def test_the_menu_lists_moves_in_hand_order_with_take_and_pass_last() -> None:
    from referee.human.view import menu_order

    legal = [{"type": "take"}, {"type": "cover", "slot": 1, "card": "9H"},
             {"type": "cover", "slot": 0, "card": "9H"}, {"type": "cover", "slot": 0, "card": "JS"},
             {"type": "transfer", "card": "6D"}]
    assert menu_order(legal, "H") == [legal[4], legal[3], legal[2], legal[1], legal[0]]


async def test_typed_lines_arrive_whole_and_endless_input_is_cut_into_typos(tmp_path: Any) -> None:
    import os

    from referee.human.terminal import MAX_LINE, LineSource

    typed = tmp_path / "typed"
    typed.write_bytes(b"12\ntake\r\n\xff\n" + b"x" * (2 * MAX_LINE + 10))  # no final newline
    fd = os.open(typed, os.O_RDONLY)
    try:
        lines = LineSource(fd)
        got = [await lines.read() for _ in range(5)]
        rest = [await lines.read() for _ in range(3)]
    finally:
        os.close(fd)
    assert got[:3] == ["12", "take", "\ufffd"]
    assert all(line is not None and 0 < len(line) <= MAX_LINE and set(line) == {"x"} for line in got[3:])
    assert rest[-1] is None  # then the end of input, for good


async def test_a_screen_that_is_gone_is_the_person_gone_not_a_crash(autojump_clock: Any) -> None:
    class Typing:
        async def read(self) -> str | None:
            return "1"

    def broken(line: str) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    person = HumanPlayer("you", Typing(), broken)  # type: ignore[arg-type]
    bot = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"), 1)
    config = MatchConfig(rules=make_rules("classic", []), games=4, seed="pipe")
    result = await play_match([person, bot], config)
    assert result.played == 1 and result.bots[0].forfeits == {"disconnect": 1}
    assert "output closed: Broken pipe" in result.forfeit_details[0]["reason"]


def test_the_trump_exchange_offer_says_what_each_choice_does() -> None:
    offer = [{"type": "exchange"}, {"type": "pass"}]
    assert menu_lines(offer, "H", "exchange") == [
        "  1) exchange (swap the deck's lowest trump, which you hold, for the face-up trump)",
        "  2) pass (keep your cards)"]
    assert parse_choice("exchange", offer).index == 0 and parse_choice("pass", offer).index == 1


def test_a_move_the_referee_made_for_the_person_says_so() -> None:
    from referee.human.view import event_line

    assert event_line({"type": "take", "seat": 0, "forced": True}, ["you", "b"], 0, "H") == \
        "  you: take (your only move: played for you)"
    assert event_line({"type": "take", "seat": 1}, ["you", "b"], 0, "H") == "  b (seat 1): take"
