"""A match's bookkeeping as specifications, on game records written out by hand: the log
form of a game and back, who shares a draw and each seat's score, the counts a match
result keeps per bot and for the table (decisions without forced moves, draws per bot,
forfeits with the first 100 kept in detail), its JSON summary with every figure written
out, the head-to-head Elo of a two-bot match, the referee's cost per decision, and the
``--on-illegal`` values on both sides of what is accepted."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rules import make_rules
from referee.rules.actions import parse_action
from referee.rules.cards import parse_card
from referee.table.match import (
    FORFEIT_DETAILS_KEPT,
    BotStats,
    Decision,
    GameRecord,
    MatchConfig,
    MatchResult,
    OnIllegalError,
    forfeit_reason,
    head_to_head,
    parse_on_illegal,
    record_from_dict,
    referee_cost,
)

TAKE = parse_action("take")
ATTACK = parse_action("attack 6H")


def record(index: int, *, durak: int | None, decisions: list[Decision], wall_s: float, bouts: int = 1,
           termination: str = "normal", last_out: tuple[int, ...] = (), players: tuple[str, ...] = ("a", "b"),
           forfeit: dict | None = None, inprocess_cpu_s: float = 0.0) -> GameRecord:
    return GameRecord(index, f"match:{index}", 1, [parse_card("6H"), parse_card("AS")], list(players),
                      decisions, termination, durak, last_out, "why it ended", bouts, wall_s, forfeit,
                      [], inprocess_cpu_s)


def forfeit_of(seat: int, name: str, kind: str = "timeout") -> dict:
    return {"seat": seat, "bot": name, "kind": kind, "reason": "late", "decision": 1, "evidence": {}}


def test_a_game_record_in_its_log_form_and_back() -> None:
    game = GameRecord(3, "match:3", 1, [parse_card("6H"), parse_card("AS")], ["a", "b"],
                      [Decision(0, ATTACK, False, 0.0105), Decision(1, TAKE, True, 0.0)],
                      "normal", 1, (), "b is the durak", 2, 0.25, None, [{"seat": 0}])
    logged = game.as_dict()
    assert logged == {
        "type": "game", "game": 3, "seed": "match:3", "dealer": 1, "players": ["a", "b"],
        "deck": ["6H", "AS"], "decisions": [[0, "attack 6H", False, 10.5], [1, "take", True, 0.0]],
        "termination": "normal", "durak": 1, "last_out": [], "reason": "b is the durak", "bouts": 2,
        "wall_ms": 250.0, "forfeit": None, "retries": [{"seat": 0}],
    }
    assert record_from_dict(logged) == game


def test_who_shares_a_draw_and_what_each_seat_scores() -> None:
    names = ("a", "b", "c")
    lost = record(0, durak=1, decisions=[], wall_s=0.0, players=names)
    assert lost.drawn_seats == () and [lost.score(s) for s in range(3)] == [1.0, 0.0, 1.0]
    last_two = record(0, durak=None, decisions=[], wall_s=0.0, players=names, last_out=(0, 2))
    assert last_two.drawn_seats == (0, 2) and [last_two.score(s) for s in range(3)] == [0.5, 1.0, 0.5]
    stalemate = record(0, durak=None, decisions=[], wall_s=0.0, players=names)
    assert stalemate.drawn_seats == (0, 1, 2) and [stalemate.score(s) for s in range(3)] == [0.5] * 3


def test_overhead_is_wall_time_not_charged_to_a_bot_and_never_negative() -> None:
    game = record(0, durak=1, decisions=[Decision(0, TAKE, False, 0.25), Decision(1, TAKE, False, 0.5)],
                  wall_s=1.0)
    assert game.overhead_s == 0.25
    assert record(0, durak=1, decisions=[Decision(0, TAKE, False, 2.0)], wall_s=1.0).overhead_s == 0.0


def three_games() -> list[GameRecord]:
    return [
        record(0, durak=1, bouts=3, wall_s=0.125, inprocess_cpu_s=0.001, decisions=[
            Decision(0, TAKE, False, 0.0625), Decision(1, TAKE, True, 0.0), Decision(0, TAKE, False, 0.03125)]),
        record(1, durak=None, bouts=2, wall_s=0.0625, termination="draw", last_out=(0, 1),
               decisions=[Decision(1, TAKE, False, 0.015625)]),
        record(2, durak=0, bouts=1, wall_s=0.25, termination="timeout", forfeit=forfeit_of(0, "a"),
               decisions=[Decision(0, TAKE, False, 0.5)]),
    ]


def played(games: list[GameRecord], *, cpu_s: float = 0.0) -> MatchResult:
    result = MatchResult(MatchConfig(rules=make_rules("classic", ()), games=len(games), seed=4),
                         [BotStats("a"), BotStats("b")])
    for game in games:
        result.add(game)
    result.cpu_s = cpu_s
    return result


def test_a_match_result_counts_each_bots_decisions_draws_duraks_and_forfeits() -> None:
    result = played(three_games())
    a, b = result.bots
    assert (a.decisions, a.seconds, a.max_seconds) == (3, 0.59375, 0.5)  # forced moves are not decisions
    assert (b.decisions, b.seconds, b.max_seconds) == (1, 0.015625, 0.015625)
    assert (a.draws, b.draws, result.draws) == (1, 1, 1)
    assert (a.durak, b.durak) == (1, 1)
    assert (a.forfeits, b.forfeits) == ({"timeout": 1}, {})
    assert (result.played, result.asked, result.actions, result.bouts) == (3, 4, 5, 6)
    assert result.terminations == {"normal": 1, "draw": 1, "timeout": 1}
    assert result.overhead_s == 0.03125 + 0.046875 + 0.0  # game 2's bot time exceeds its wall time
    assert result.inprocess_cpu_s == 0.001
    assert result.forfeits_total == 1 and result.forfeit_details == [dict(forfeit_of(0, "a"), game=2)]
    assert result.leader() == "a (durak 1 of 3)"


def test_the_summary_of_a_match_in_figures() -> None:
    summary = played(three_games(), cpu_s=0.005).summary()
    assert summary["games"] == 3 and summary["draws"] == 1 and summary["preset"] == "classic"
    assert summary["seed"] == "4" and summary["time_control"]["move_s"] == 10.0
    assert summary["bots"] == [
        {"name": "a", "games": 3, "durak": 1, "draws": 1, "forfeits": {"timeout": 1}, "decisions": 3,
         "mean_decision_ms": 197.917, "max_decision_ms": 500.0, "stderr_log": None, "forfeited_all": False},
        {"name": "b", "games": 3, "durak": 1, "draws": 1, "forfeits": {}, "decisions": 1,
         "mean_decision_ms": 15.625, "max_decision_ms": 15.625, "stderr_log": None, "forfeited_all": False},
    ]
    assert summary["warnings"] == []
    assert summary["terminations"] == {"normal": 1, "draw": 1, "timeout": 1}
    assert (summary["bouts_mean"], summary["decisions"], summary["actions"]) == (2.0, 4, 5)
    assert summary["overhead_us_per_decision"] == 19531.2  # (0.03125 + 0.046875) s / 4
    assert summary["referee_cpu_us_per_decision"] == 1000.0  # (0.005 - 0.001 in-process) s / 4
    assert summary["referee_wall_us_per_decision"] == 19531.2
    assert summary["forfeit_details"] == [dict(forfeit_of(0, "a"), game=2)] and summary["forfeits_total"] == 1
    assert summary["elo"] == {"a": "a", "b": "b", "wins": 1, "losses": 1, "draws": 1, "elo": 0.0,
                              "error95": 561.2, "los": 0.5}
    assert (summary["interrupted"], summary["log"], summary["sandbox"], summary["duplicates"]) == (
        False, None, None, None)


def test_a_bot_that_forfeited_every_game_is_flagged_in_the_summary() -> None:
    games = [record(i, durak=0, wall_s=0.0, termination="crash", forfeit=forfeit_of(0, "a", "crash"),
                    decisions=[]) for i in range(2)]
    summary = played(games).summary()
    assert [b["forfeited_all"] for b in summary["bots"]] == [True, False]
    assert len(summary["warnings"]) == 1 and summary["warnings"][0].startswith(
        "WARNING: a forfeited every one of its 2 games (crash 2)")
    assert summary["bots"][0]["mean_decision_ms"] is None and summary["bots"][0]["max_decision_ms"] is None
    assert summary["overhead_us_per_decision"] is None and summary["referee_cpu_us_per_decision"] is None


def test_only_the_first_100_forfeits_are_kept_in_detail_but_all_are_counted() -> None:
    assert FORFEIT_DETAILS_KEPT == 100
    games = [record(i, durak=1, wall_s=0.0, termination="illegal", forfeit=forfeit_of(1, "b", "illegal"),
                    decisions=[]) for i in range(101)]
    result = played(games)
    assert result.forfeits_total == 101 and result.bots[1].forfeits == {"illegal": 101}
    assert result.terminations == {"illegal": 101} and result.bots[1].durak == 101
    assert [d["game"] for d in result.forfeit_details] == list(range(100))


def test_head_to_head_counts_the_first_bots_wins_as_the_second_bots_duraks() -> None:
    a, b = BotStats("a", durak=1), BotStats("b", durak=3)
    h2h = head_to_head([a, b], 5)
    assert h2h is not None
    assert (h2h["a"], h2h["b"], h2h["wins"], h2h["losses"], h2h["draws"]) == ("a", "b", 3, 1, 1)
    assert h2h["elo"] == 147.2 and h2h["los"] == 0.8682  # score 0.7: -400 log10(1/0.7 - 1)
    assert head_to_head([BotStats("a"), BotStats("b", durak=2)], 2)["elo"] == float("inf")  # a never lost
    assert head_to_head([a, b], 0) is None
    assert head_to_head([a, b, BotStats("c")], 5) is None


def test_the_referees_cost_is_per_decision_in_microseconds_and_none_without_decisions() -> None:
    assert referee_cost(0.002, 0.004, 8) == {"referee_cpu_us_per_decision": 250.0,
                                              "referee_wall_us_per_decision": 500.0}
    assert referee_cost(-0.001, 0.004, 8)["referee_cpu_us_per_decision"] == 0.0  # clock noise
    assert referee_cost(0.002, 0.004, 0) == {"referee_cpu_us_per_decision": None,
                                              "referee_wall_us_per_decision": None}


@pytest.mark.parametrize(("text", "retries"), [
    ("forfeit", 0), (" FORFEIT ", 0), ("retry:1", 1), ("Retry:3", 3), ("retry:12", 12)])
def test_on_illegal_accepts_forfeit_and_retry_n_from_1(text: str, retries: int) -> None:
    assert parse_on_illegal(text) == retries


@pytest.mark.parametrize("text", ["retry:0", "retry:", "retry:-1", "retry:x", "retry", "abort", ""])
def test_on_illegal_refuses_anything_else_saying_what_it_expects(text: str) -> None:
    with pytest.raises(OnIllegalError) as refused:
        parse_on_illegal(text)
    assert str(refused.value) == f"--on-illegal {text!r}: expected forfeit or retry:N (N >= 1)"


def test_a_forfeit_reason_names_the_bot_and_the_kind_and_the_detail_only_when_given() -> None:
    assert forfeit_reason("a", "timeout") == "a forfeited (timeout)"
    assert forfeit_reason("a", "illegal", "attack 7S: not in hand") == "a forfeited (illegal): attack 7S: not in hand"


def test_the_summary_of_a_match_stopped_before_its_first_game() -> None:
    summary = played([]).summary()
    assert (summary["games"], summary["draws"], summary["bouts_mean"], summary["decisions"]) == (0, 0, 0.0, 0)
    assert summary["elo"] is None and summary["overhead_us_per_decision"] is None
    assert [b["forfeited_all"] for b in summary["bots"]] == [False, False] and summary["warnings"] == []


def test_every_draw_is_counted_for_the_table_and_for_each_bot_that_shared_it() -> None:
    games = [record(i, durak=None, wall_s=0.0, termination="draw", decisions=[]) for i in range(3)]
    result = played(games)
    assert result.draws == 3 and result.terminations == {"draw": 3}
    assert [(b.draws, b.durak) for b in result.bots] == [(3, 0), (3, 0)]


def test_the_log_form_keeps_milliseconds_to_three_decimals() -> None:
    game = GameRecord(0, "match:0", 1, [], ["a", "b"], [Decision(0, TAKE, False, 0.0123456789)],
                      "normal", 1, (), "b is the durak", 1, 1.23456789)
    logged = game.as_dict()
    assert logged["decisions"] == [[0, "take", False, 12.346]]
    assert logged["wall_ms"] == 1234.568


def test_a_forfeit_and_its_retries_come_back_from_the_log_and_an_old_log_without_retries_reads() -> None:
    forfeit = {"seat": 0, "bot": "a", "kind": "illegal", "reason": "cover 5 AS", "decision": 0,
               "evidence": {"received": {"type": "cover", "slot": 5, "card": "AS"}}}
    game = GameRecord(1, "match:1", 0, [], ["a", "b"], [], "illegal", 0, (), "a forfeited (illegal)",
                      1, 0.5, forfeit, [{"seat": 0, "request": 1, "reason": "no"}])
    assert record_from_dict(game.as_dict()) == game
    old = game.as_dict()
    del old["retries"]  # logs written before retries were recorded
    assert record_from_dict(old).retries == []


def test_every_figure_of_the_summary_is_rounded_as_documented() -> None:
    games = [record(i, durak=1, bouts=b, wall_s=0.0, decisions=[Decision(0, TAKE, False, 0.0123456789)])
             for i, b in enumerate((3, 3, 4))]
    result = played(games)
    result.wall_s = 2.71828
    result.stderr_logs = {"b": "logs/b.stderr"}
    summary = result.summary()
    assert summary["bouts_mean"] == 3.333 and summary["wall_s"] == 2.718
    assert summary["bots"][0]["max_decision_ms"] == 12.346 and summary["bots"][0]["mean_decision_ms"] == 12.346
    assert [b["stderr_log"] for b in summary["bots"]] == [None, "logs/b.stderr"]
    rules = make_rules("classic", ())
    assert summary["rules"] == rules.as_dict() and summary["rules_text"] == rules.describe()


def test_head_to_head_rounds_elo_and_its_error_to_one_decimal() -> None:
    h2h = head_to_head([BotStats("a", durak=2), BotStats("b", durak=5)], 9)
    assert h2h is not None
    # score 6/9: -400 log10(1/(2/3) - 1) = 120.412; elo_from_wdl's error is 264.533
    assert (h2h["elo"], h2h["error95"], h2h["los"]) == (120.4, 264.5, 0.8897)


def test_the_leader_of_a_match_without_bots_is_empty() -> None:
    result = MatchResult(MatchConfig(rules=make_rules("classic", ()), games=1, seed=4), [])
    assert result.leader() == ""


@given(st.lists(st.tuples(st.integers(0, 2), st.booleans(),
                          st.floats(0.0, 10.0, allow_nan=False, allow_infinity=False)),
                max_size=80),
       st.floats(0.0, 100.0, allow_nan=False, allow_infinity=False))
def test_a_match_result_sums_exactly_what_the_decisions_say_in_their_order(
        moves: list[tuple[int, bool, float]], wall_s: float) -> None:
    """The counts per bot are those of the plain definition (each seat's unforced
    decisions, their seconds summed with ``sum`` in the order they were made, the largest),
    float for float, and so is the overhead: how they are gathered is no one's business."""
    decisions = [Decision(seat, TAKE, forced, seconds) for seat, forced, seconds in moves]
    game = record(0, durak=0, decisions=decisions, wall_s=wall_s, players=("a", "b", "c"))
    result = MatchResult(MatchConfig(rules=make_rules("classic", ()), games=1, seed=4),
                         [BotStats("a"), BotStats("b"), BotStats("c")])
    result.add(game)
    for seat, bot in enumerate(result.bots):
        times = [s for t, forced, s in moves if t == seat and not forced]
        assert bot.decisions == len(times)
        assert bot.seconds == (sum(times) if times else 0.0)
        assert bot.max_seconds == max([0.0, *times])
    assert result.asked == sum(1 for _, forced, _ in moves if not forced)
    assert game.overhead_s == max(0.0, wall_s - sum([s for _, _, s in moves]))


def test_decisions_of_a_seat_the_table_does_not_have_count_for_no_bot() -> None:
    """A record read back from a damaged log may name a seat past the table's: as before,
    no bot is charged for it (and nothing fails)."""
    game = record(0, durak=0, wall_s=1.0, decisions=[Decision(0, TAKE, False, 0.25),
                                                     Decision(5, TAKE, False, 0.5)])
    result = played([game])
    assert [(b.decisions, b.seconds) for b in result.bots] == [(1, 0.25), (0, 0.0)]
    assert result.asked == 1 and result.actions == 2
