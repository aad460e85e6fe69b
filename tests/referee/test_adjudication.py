"""Adjudication: a two-seat endgame ends once the solver proves its outcome, scored as
perfect play ends it, logged with the solver's line, and re-proved by ``replay --verify``.

Explicit positions pin the outcome and the line; whole matches (in process, and through
the real CLI) check that every adjudicated game is what the solver proves afresh, that
the search never runs on a bot's clock, and that a tampered log fails verification
saying what is wrong.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import trio

from referee.bots.solver import Solver, solvable, terminal_value
from referee.replay.replay import Divergence, dealt_game, replayed_decisions, verify_adjudication
from referee.rules import Game, action_str, make_rules
from referee.rules.actions import parse_action
from referee.seats.players import BuiltinPlayer, parse_bot_spec
from referee.table import adjudicator
from referee.table.adjudicator import (
    ADJUDICATED,
    AdjudicateError,
    Adjudicator,
    Budget,
    parse_budget,
)
from referee.table.clock import TimeControl
from referee.table.match import GameRecord, MatchConfig, play_match
from tests.support import cli

CLASSIC = make_rules("classic")


# ------------------------------------------------------------------ the budget


@pytest.mark.parametrize(("text", "budget"), [
    (None, None), ("off", None), ("on", Budget("100ms", seconds=0.1)),
    ("100ms", Budget("100ms", seconds=0.1)), ("0.5s", Budget("0.5s", seconds=0.5)),
    ("2s", Budget("2s", seconds=2.0)), ("20000nodes", Budget("20000nodes", nodes=20000)),
    (" 250MS ", Budget("250ms", seconds=0.25)),
])
def test_a_budget_is_off_on_a_time_or_a_count_of_positions(text: str | None, budget: Budget | None) -> None:
    assert parse_budget(text) == budget


@pytest.mark.parametrize("text", ["", "yes", "100", "-5ms", "0ms", "1.5nodes", "0nodes", "2h",
                                  "7200s", "ms"])
def test_a_bad_budget_is_refused_naming_the_forms(text: str) -> None:
    with pytest.raises(AdjudicateError, match="expected off, on|whole number|more than 0"):
        parse_budget(text)


# ------------------------------------------------------------------ explicit positions


def adjudicated(game: Game, budget: str = "100000nodes") -> adjudicator.Adjudication:
    judge = Adjudicator(parse_budget(budget), ["alice", "bob"])  # type: ignore[arg-type]
    assert judge.settles(game)
    assert judge.result is not None
    return judge.result


def test_a_lone_attack_that_cannot_be_covered_is_adjudicated_as_the_defenders_loss() -> None:
    # 6H cannot be beaten by 7C (no trump): bob takes it, alice is out (with no card left she
    # is not asked to throw in), bob is the durak.
    game = Game.from_position(CLASSIC, ["6H", "7C"], trump="AS", attacker=0)
    proof = adjudicated(game)
    assert [action_str(a) for a in proof.line] == ["attack 6H", "take"]
    assert (proof.durak, proof.last_out) == (1, ())
    assert proof.reason == "adjudicated: perfect play from here ends with seat 1 (bob) the durak"
    assert not game.is_over  # the game itself is not played on


def test_a_defender_who_can_cover_with_the_last_card_takes_the_draw_not_the_loss() -> None:
    # bob may take (and lose) or cover 6H with 7H: both go out in the same bout, a draw.
    game = Game.from_position(CLASSIC, ["6H", "7H"], trump="AS", attacker=0)
    proof = adjudicated(game)
    assert [action_str(a) for a in proof.line] == ["attack 6H", "cover 0 7H"]
    assert (proof.durak, proof.last_out) == (None, (0, 1))
    assert proof.reason == "adjudicated: perfect play from here ends with a draw (draw)"


def test_the_winner_is_the_one_perfect_play_gives_whoever_seems_ahead() -> None:
    # alice holds two trumps to bob's one card, yet she attacks first with a card bob
    # beats... only if she leads badly: perfect play leads KS, bob takes, AS finishes.
    game = Game.from_position(CLASSIC, ["AS KS", "6H"], trump="7S", attacker=0)
    proof = adjudicated(game)
    assert proof.durak == 1
    end = adjudicator.line_end(game, proof.line)
    assert end.outcome is not None and end.outcome.durak == 1


def test_positions_the_solver_does_not_take_are_never_adjudicated() -> None:
    judge = Adjudicator(Budget("1s", seconds=1.0), ["a", "b", "c"])
    with_talon = Game.new(CLASSIC, 2, seed=1)
    three_in = Game.from_position(CLASSIC, ["6H", "7C", "8D"], trump="AS", attacker=0)
    assert not judge.settles(with_talon) and not judge.settles(three_in)
    assert judge.result is None and judge.spent_nodes == 0


def test_a_spent_budget_stops_searching_for_the_rest_of_the_game() -> None:
    game = endgames(1, seed=3, min_cards=9)[0]  # far more than 1024 positions to prove
    judge = Adjudicator(Budget("1nodes", nodes=1), ["a", "b"])
    assert not judge.settles(game) and judge.done
    spent = judge.spent_nodes
    assert not judge.settles(game) and judge.spent_nodes == spent  # no second search


# ------------------------------------------------------------------ whole matches


def endgames(count: int, seed: int, min_cards: int = 0) -> list[Game]:
    """Seeded two-seat games played at random up to their first solvable position with
    at least ``min_cards`` cards in the hands."""
    rng = random.Random(seed)
    out: list[Game] = []
    while len(out) < count:
        g = Game.new(CLASSIC, 2, seed=rng.randrange(1 << 30))
        while not g.is_over and not solvable(g):
            legal = g.legal_actions()
            g.apply_legal(legal[rng.randrange(len(legal))])
        if solvable(g) and sum(h.bit_count() for h in g.hands) >= min_cards:
            out.append(g)
    return out


async def match(specs: tuple[str, str], budget: str, games: int = 16, seed: int = 11,
                tc: TimeControl = TimeControl()) -> list[GameRecord]:
    players = [BuiltinPlayer(f"p{i}", parse_bot_spec(s), seed=seed) for i, s in enumerate(specs)]
    config = MatchConfig(rules=CLASSIC, games=games, seed=str(seed), tc=tc, adjudicate=parse_budget(budget))
    records: list[GameRecord] = []
    await play_match(players, config, on_game=lambda r, _: records.append(r))
    return records


def position_of(record: dict[str, Any]) -> Game:
    game = dealt_game(CLASSIC, record)
    for _ in replayed_decisions(game, record):
        pass
    return game


@pytest.mark.slow
async def test_every_adjudicated_game_ends_as_a_fresh_solve_of_its_position_says() -> None:
    records = await match(("builtin:greedy", "builtin:random"), "50000nodes", games=30)
    judged = [r for r in records if r.termination == ADJUDICATED]
    assert len(judged) >= 20  # greedy against random: most games reach a small endgame
    for r in judged:
        record = r.as_dict()
        game = position_of(record)
        assert solvable(game) and not game.is_over
        side = min(s for s in (0, 1) if not game.out[s])
        end = adjudicator.line_end(game, [parse_action(a) for a in record["adjudication"]["line"]])
        assert end.outcome is not None and end.outcome.durak == r.durak
        assert Solver().value(game, side) == terminal_value(end, side)
        assert r.score(0) + r.score(1) == 1.0  # scored as a normal end: a durak, or a shared draw
        verify_adjudication(game, record)
    for r in records:
        if r.termination != ADJUDICATED:
            assert "adjudication" not in r.as_dict()


@pytest.mark.slow
async def test_a_budget_in_positions_adjudicates_the_same_games_on_any_machine() -> None:
    first = [r.as_dict() for r in await match(("builtin:greedy", "builtin:greedy"), "3000nodes")]
    again = [r.as_dict() for r in await match(("builtin:greedy", "builtin:greedy"), "3000nodes")]
    strip = ("wall_ms", "decisions", "adjudication")
    assert [{k: v for k, v in r.items() if k not in strip} for r in first] == \
           [{k: v for k, v in r.items() if k not in strip} for r in again]
    assert [r.get("adjudication", {}).get("line") for r in first] == \
           [r.get("adjudication", {}).get("line") for r in again]


async def test_the_search_runs_between_decisions_never_on_a_bots_clock(
        autojump_clock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every slice takes 5 s of the run's (virtual) clock; each decision may take 1 s.
    # Charged to a seat, the first slice would be a timeout.
    real = Adjudicator.settles
    slices = []

    def slow_settles(self: Adjudicator, game: Game) -> bool:
        settled = real(self, game)
        if solvable(game):
            slices.append(1)
            autojump_clock.jump(5.0)
        return settled

    monkeypatch.setattr(Adjudicator, "settles", slow_settles)
    records = await match(("builtin:greedy", "builtin:random"), "1nodes", games=4,
                          tc=TimeControl(move=1.0))
    assert slices and all(r.forfeit is None for r in records)
    assert all(d.seconds < 1.0 for r in records for d in r.decisions)
    assert sum(r.wall_s for r in records) >= 5.0 * len(slices)


async def test_a_seat_is_told_the_game_ended_adjudicated_and_is_asked_nothing_more() -> None:
    from tests.referee.test_match_loop import MemoryBot, far_side

    left, right = trio.testing.memory_stream_pair()
    bot = MemoryBot("scripted", left)
    log: list[dict[str, Any]] = []

    async def first_legal(request: dict[str, Any]) -> dict[str, Any]:
        return request["legal"][0]

    config = MatchConfig(rules=CLASSIC, games=6, seed="5", adjudicate=parse_budget("50000nodes"),
                         max_restarts=0)
    records: list[GameRecord] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(far_side, right, first_legal, log)
        await bot.start(nursery)
        await play_match([bot, BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"))], config,
                         on_game=lambda r, _: records.append(r))
        from protocol import messages as msg
        await bot._try_send(msg.bye_msg())
    ends = [m for m in log if m["type"] == "game_end"]
    assert [e["termination"] for e in ends] == [r.termination for r in records]
    assert ADJUDICATED in [e["termination"] for e in ends]
    for record, end in zip(records, ends, strict=True):
        assert end["durak"] == record.durak
        if record.termination == ADJUDICATED:
            # The scripted bot's requests in that game stop at the recorded decisions.
            asked = [m for m in log if m["type"] == "request" and m["game"] == record.index]
            assert len(asked) == sum(1 for d in record.decisions if d.seat == 0 and not d.forced)


# ------------------------------------------------------------------ the log, verified by the CLI


@pytest.fixture(scope="module")
def adjudicated_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("adjudicated")
    res = cli("match", "builtin:greedy", "builtin:random", "-n", "12", "--seed", "7",
              "--adjudicate", "50000nodes", "--log-dir", where / "logs", "--json", cwd=where)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["terminations"].get(ADJUDICATED, 0) >= 6
    return Path(summary["log"])


def rewrite(log: Path, to: Path, change: Any) -> Path:
    """``log`` copied to ``to`` with ``change`` applied to its first adjudicated game."""
    lines = log.read_text().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("termination") == ADJUDICATED:
            change(record)
            lines[i] = json.dumps(record)
            break
    to.write_text("\n".join(lines) + "\n")
    return to


@pytest.mark.process
def test_an_adjudicated_log_verifies_through_the_cli(adjudicated_log: Path, tmp_path: Path) -> None:
    header = json.loads(adjudicated_log.read_text().splitlines()[0])
    assert header["adjudicate"] == "50000nodes"
    res = cli("replay", adjudicated_log, "--verify", cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "12 of 12 games verified" in res.stdout
    game = next(json.loads(x) for x in adjudicated_log.read_text().splitlines()
                if json.loads(x).get("termination") == ADJUDICATED)
    shown = cli("replay", adjudicated_log, "--game", str(game["game"]), cwd=tmp_path)
    assert "adjudicated; the solver's line: " + ", ".join(game["adjudication"]["line"]) in shown.stdout


def other_durak(record: dict[str, Any]) -> None:
    record["durak"] = 1 - record["durak"] if record["durak"] is not None else 0
    record["last_out"] = []


def losing_line(record: dict[str, Any]) -> None:
    """A legal line from the adjudicated position to a worse end for the seat perfect play
    saves, recorded with the outcome it reaches: only the re-solve can tell."""
    game = position_of(record)
    rng = random.Random(1)
    for _ in range(2000):
        g = game.copy()
        line = []
        while not g.is_over:
            legal = g.legal_actions()
            action = legal[rng.randrange(len(legal))]
            g.apply_legal(action)
            line.append(action_str(action))
        assert g.outcome is not None
        if g.outcome.durak != record["durak"]:
            record["adjudication"]["line"] = line
            record["durak"], record["last_out"] = g.outcome.durak, list(g.outcome.last_out)
            return
    raise AssertionError("no playout changes the result")


@pytest.mark.process
@pytest.mark.parametrize(("change", "message"), [
    (other_durak, "its adjudication line ends with durak"),
    (lambda r: r["adjudication"]["line"].pop(), "the adjudication line ends before the game does"),
    (lambda r: r["adjudication"]["line"].insert(0, "attack 6S"), "adjudication line step 0: attack 6S is illegal"),
    (lambda r: r["adjudication"]["line"].__setitem__(0, "fly"), "adjudication line step 0: 'fly' is not an action"),
    (lambda r: r.pop("adjudication"), "the record has no adjudication line"),
    (lambda r: r["decisions"].pop(), "not an endgame the solver decides"),
    (losing_line, "but perfect play from that position gives seat"),
])
def test_a_tampered_adjudicated_log_fails_verification_saying_what_is_wrong(
        adjudicated_log: Path, tmp_path: Path, change: Any, message: str) -> None:
    tampered = rewrite(adjudicated_log, tmp_path / "tampered.jsonl", change)
    res = cli("replay", tampered, "--verify", cwd=tmp_path)
    assert res.returncode != 0
    assert message in res.stdout + res.stderr


@pytest.mark.slow
def test_a_position_too_big_to_re_prove_is_reported_unchecked_not_passed() -> None:
    game = endgames(1, seed=3, min_cards=7)[0]
    line = Solver().line(game)
    end = adjudicator.line_end(game, line)
    assert end.outcome is not None
    record = {"game": 0, "durak": end.outcome.durak, "last_out": list(end.outcome.last_out),
              "adjudication": {"line": [action_str(a) for a in line]}}
    with pytest.raises(Divergence, match="could not be re-proved within 10 positions"):
        verify_adjudication(game, record, max_nodes=10)
    verify_adjudication(game, record)


@pytest.mark.process
@pytest.mark.parametrize("command", [
    ("match", "builtin:greedy", "builtin:random", "--no-log"),
    ("tournament", "--bot", "a=builtin:greedy", "--bot", "b=builtin:random", "--db", "t.sqlite"),
    ("sprt", "builtin:greedy", "builtin:random", "--db", "s.sqlite"),
])
def test_a_bad_budget_on_the_command_line_is_the_users_error_naming_the_forms(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    res = cli(*command, "--adjudicate", "soon", cwd=tmp_path)
    assert res.returncode == 2
    assert "--adjudicate 'soon': expected off, on (100ms)" in " ".join(res.stderr.split())


@pytest.mark.process
def test_bench_solver_reports_its_figures_as_json(tmp_path: Path) -> None:
    res = cli("bench", "solver", "-n", "3", "--budget-ms", "50", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    figures = json.loads(res.stdout)
    assert figures["benchmark"] == "solver" and figures["endgames"] == 3
    assert figures["decided_at_talon_empty"] in range(4) and figures["adjudicated"] in range(4)
    assert figures["positions_per_s"] > 0
    bad = cli("bench", "solver", "--play", "perfect", cwd=tmp_path)
    assert bad.returncode == 2 and "--play 'perfect': one of greedy, random" in bad.stderr
