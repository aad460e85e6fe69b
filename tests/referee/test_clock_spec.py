"""The game clock and time controls as a bot and a user see them: what ``--tc``,
``--move-time`` and ``--startup-time`` accept (both sides of every bound), how a
decision is charged and credited, and the clock's wire fields (whole milliseconds,
floored; ``increment_ms`` only with a game clock). Pure arithmetic: times are given."""

from __future__ import annotations

import math

import pytest

from referee.table.clock import DEFAULT_MOVE_TIME, MAX_SECONDS, Clock, TimeControl, TimeControlError


@pytest.mark.parametrize("tc,base,inc", [("60", 60.0, 0.0), ("60+0.5", 60.0, 0.5), (" 1+0 ", 1.0, 0.0),
                                         ("0.001+0", 0.001, 0.0), (f"{MAX_SECONDS:g}+{MAX_SECONDS:g}",
                                                                   MAX_SECONDS, MAX_SECONDS)])
def test_accepted_game_clocks(tc: str, base: float, inc: float) -> None:
    t = TimeControl.parse(tc)
    assert (t.base, t.increment, t.move) == (base, inc, None)


@pytest.mark.parametrize("tc", ["0", "0+1", "-5", "60+-1", "nan", "inf", "60+inf", "60+nan",
                                f"{MAX_SECONDS * 2:g}", f"60+{MAX_SECONDS * 2:g}", "x", "60+x", "+1"])
def test_refused_game_clocks(tc: str) -> None:
    with pytest.raises(TimeControlError, match="time control"):
        TimeControl.parse(tc)


@pytest.mark.parametrize("option,kwargs", [
    ("--move-time", {"move": 0.0}), ("--move-time", {"move": -1.0}), ("--move-time", {"move": math.nan}),
    ("--move-time", {"move": math.inf}), ("--move-time", {"move": MAX_SECONDS * 1.5}),
    ("--startup-time", {"startup": 0.0}), ("--startup-time", {"startup": -2.0}),
    ("--startup-time", {"startup": math.inf}), ("--startup-time", {"startup": MAX_SECONDS + 1}),
])
def test_refused_move_and_startup_times_name_their_option(option: str, kwargs: dict[str, float]) -> None:
    with pytest.raises(TimeControlError, match=option):
        TimeControl.parse(None, **kwargs)


def test_move_and_startup_times_up_to_a_week_are_accepted() -> None:
    t = TimeControl.parse(None, move=MAX_SECONDS, startup=MAX_SECONDS)
    assert (t.move, t.startup) == (MAX_SECONDS, MAX_SECONDS)
    assert TimeControl.parse(None, move=0.001).move == 0.001


def test_without_any_limit_every_decision_still_has_the_default_move_time() -> None:
    t = TimeControl.parse()
    assert (t.base, t.move, t.startup) == (None, DEFAULT_MOVE_TIME, 10.0)
    assert TimeControl.parse("60").move is None  # a game clock is a limit already
    assert TimeControl(base=None, move=None).move == DEFAULT_MOVE_TIME


def test_a_fischer_clock_charges_the_time_used_and_credits_the_increment_when_in_time() -> None:
    clock = Clock(TimeControl.parse("10+2"))
    assert clock.start(100.0) == 110.0
    assert clock.stop(103.0) == (3.0, True)
    assert clock.remaining == 9.0  # 10 - 3 + 2
    assert clock.start(200.0) == 209.0
    used, in_time = clock.stop(209.5)  # over its budget: charged, not credited
    assert (used, in_time) == (9.5, False) and clock.remaining == pytest.approx(-0.5)


def test_charging_a_decision_timed_by_the_caller_is_what_start_and_stop_charge() -> None:
    """``charge(used)``: the referee's loop for in-process bots times a decision itself.
    None when in time, else the budget the decision overran."""
    clock = Clock(TimeControl.parse("10+2", move=4.0))
    assert clock.charge(3.0) is None and clock.remaining == 9.0  # in time: 10 - 3 + 2
    assert clock.charge(4.0) is None and clock.remaining == 7.0  # exactly the move time
    assert clock.charge(4.5) == 4.0 and clock.remaining == 2.5  # over the move time: charged, not credited
    assert clock.charge(2.5) is None and clock.remaining == 2.0  # exactly what was left
    assert clock.charge(2.001) == 2.0 and clock.remaining == pytest.approx(-0.001)  # over the clock
    moves = Clock(TimeControl(move=1.0))
    assert moves.charge(1.0) is None and moves.charge(1.5) == 1.0 and moves.remaining is None


def test_the_deadline_is_the_earlier_of_the_clock_and_the_move_time() -> None:
    clock = Clock(TimeControl.parse("10", move=4.0))
    assert clock.start(0.0) == 4.0
    assert clock.stop(4.0) == (4.0, True)  # exactly the budget is in time
    assert clock.remaining == 6.0
    assert clock.start(10.0) == 14.0
    clock.stop(13.0)
    assert clock.start(20.0) == 23.0  # 3 s left on the clock, less than the move time
    assert clock.stop(23.001)[1] is False


def test_time_never_runs_backwards() -> None:
    clock = Clock(TimeControl.parse("5"))
    clock.start(10.0)
    assert clock.stop(9.0) == (0.0, True) and clock.remaining == 5.0


def test_the_wire_clock_is_in_whole_milliseconds_floored_and_never_negative() -> None:
    clock = Clock(TimeControl.parse("1.2345+0.0109", move=2.0009))
    assert clock.wire() == {"remaining_ms": 1234, "increment_ms": 10, "move_ms": 2000}
    clock.start(0.0)
    clock.stop(5.0)  # out of time: negative remaining time
    assert clock.wire()["remaining_ms"] == 0


def test_increment_ms_is_sent_only_with_a_game_clock() -> None:
    assert Clock(TimeControl.parse(None, move=3.0)).wire() == {
        "remaining_ms": None, "increment_ms": None, "move_ms": 3000}
    assert Clock(TimeControl.parse("30")).wire() == {"remaining_ms": 30000, "increment_ms": 0,
                                                     "move_ms": None}


def test_describe_and_as_dict_state_the_time_control() -> None:
    t = TimeControl.parse("60+0.5", move=2.0, startup=3.0)
    assert t.describe() == "60+0.5, 2 s/decision"
    assert t.as_dict() == {"base_s": 60.0, "increment_s": 0.5, "move_s": 2.0, "startup_s": 3.0,
                           "clock": "wall", "backstop_x": None}
    assert TimeControl.parse().describe() == f"{DEFAULT_MOVE_TIME:g} s/decision"
    cpu = TimeControl.parse(None, move=2.0, clock="cpu", backstop=4)
    assert cpu.describe() == "2 s/decision, cpu clock (wall backstop 4x)"
    assert cpu.as_dict()["clock"] == "cpu" and cpu.as_dict()["backstop_x"] == 4


def test_stopping_a_clock_that_was_not_started_is_a_referee_bug_caught_at_once() -> None:
    clock = Clock(TimeControl.parse("5"))
    with pytest.raises(AssertionError, match=r"^stop\(\) without start\(\)$"):
        clock.stop(1.0)
    clock.start(1.0)
    clock.stop(2.0)
    with pytest.raises(AssertionError, match=r"^stop\(\) without start\(\)$"):
        clock.stop(3.0)  # each start is stopped once
