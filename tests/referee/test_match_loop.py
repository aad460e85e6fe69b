"""The match loop against scripted bots on in-memory streams, on trio's virtual clock.

The far side is a coroutine in the test that speaks the wire protocol (so the referee's
real StreamPlayer code runs), and time is virtual (``autojump_clock``): a 60-second
time control is tested in milliseconds, and no test depends on timing luck.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio
import trio.testing

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
from referee.rules import make_rules
from referee.seats.players import BotFailure, BotSpec, BuiltinPlayer, parse_bot_spec
from referee.seats.wire import StreamPlayer
from referee.table.clock import DEFAULT_MOVE_TIME, Clock, TimeControl
from referee.table.match import GameRecord, MatchConfig, play_match

Answer = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]


class MemoryBot(StreamPlayer):
    """The referee's side of a bot on an in-memory stream."""

    def __init__(self, name: str, stream: trio.abc.HalfCloseableStream) -> None:
        super().__init__(name, BotSpec("command", name, ("memory",), name, named=True))
        self._attach(stream, stream)

    async def start(self, nursery: Any) -> None:
        await self._handshake(10.0)

    async def _stream_failure(self) -> BotFailure:
        return BotFailure("crash", "the scripted bot ended its stream", {})

    def _write_failure(self) -> BotFailure:
        return BotFailure("crash", "the scripted bot's stream is closed", {})


async def far_side(stream: trio.abc.HalfCloseableStream, answer: Answer, log: list[dict[str, Any]]) -> None:
    """A bot: hello back, then each request is answered by ``answer`` (None: hang up)."""
    decoder = FrameDecoder()
    while True:
        chunk = await stream.receive_some(65536)
        if not chunk:
            return
        decoder.feed(chunk)
        for m in decoder.messages():
            log.append(m)
            if m["type"] == "hello":
                await stream.send_all(encode(msg.bot_hello_msg("scripted")))
            elif m["type"] == "request":
                reply = await answer(m)
                if reply is None:
                    await stream.aclose()
                    return
                await stream.send_all(encode(msg.action_msg(m["id"], reply)))
            elif m["type"] == "bye":
                await stream.aclose()
                return


async def play(answer: Answer, *, games: int = 2, tc: TimeControl = TimeControl(),
               retries: int = 0, until_durak: int | None = None, rules: tuple[str, ...] = (),
               ) -> tuple[Any, list[GameRecord], list[dict[str, Any]]]:
    left, right = trio.testing.memory_stream_pair()
    bot = MemoryBot("scripted", left)
    opponent = BuiltinPlayer("greedy", parse_bot_spec("builtin:greedy"))
    log: list[dict[str, Any]] = []
    config = MatchConfig(rules=make_rules("classic", rules), games=games, seed=4, tc=tc,
                         illegal_retries=retries, until_durak=until_durak, max_restarts=0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(far_side, right, answer, log)
        await bot.start(nursery)
        # The result keeps counts only; the records are kept here, as a caller does.
        games: list[GameRecord] = []
        result = await play_match([bot, opponent], config, on_game=lambda r, _: games.append(r))
        await bot._try_send(msg.bye_msg())
    return result, games, log


async def first_legal(request: dict[str, Any]) -> dict[str, Any]:
    return request["legal"][0]


def slow(seconds: float) -> Answer:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        await trio.sleep(seconds)
        return request["legal"][0]
    return answer


async def test_a_well_behaved_scripted_bot_plays_whole_games(autojump_clock: Any) -> None:
    result, games, log = await play(first_legal, games=3)
    assert [g.termination for g in games] == ["normal"] * 3
    starts = [m for m in log if m["type"] == "game_start"]
    assert [m["game"] for m in starts] == [0, 1, 2]
    ends = [m for m in log if m["type"] == "game_end"]
    assert len(ends) == 3


async def test_the_durak_deals_the_next_game_and_a_draw_keeps_the_dealer(autojump_clock: Any) -> None:
    result, games, _ = await play(first_legal, games=6)
    assert games[0].dealer == 1  # game 1: the last seat deals, so seat 0 is dealt to first
    for before, after in itertools.pairwise(games):
        expected = before.dealer if before.durak is None else before.durak
        assert after.dealer == expected


async def test_until_durak_stops_the_match_early(autojump_clock: Any) -> None:
    result, games, _ = await play(first_legal, games=50, until_durak=2)
    assert max(b.durak for b in result.bots) == 2
    assert len(games) < 50


async def test_forced_moves_are_applied_without_asking_under_ask_forced_off(autojump_clock: Any) -> None:
    result, games, log = await play(first_legal, games=2, rules=("ask_forced=off",))
    requests = [m for m in log if m["type"] == "request"]
    for r in requests:  # the bot is never asked when its only option is pass or take
        assert not (len(r["legal"]) == 1 and r["legal"][0]["type"] in ("pass", "take"))
    forced = [d for g in games for d in g.decisions if d.forced]
    assert forced
    forced_events = [m for m in log if m["type"] == "event" and m["event"].get("forced")]
    assert forced_events


async def test_every_decision_is_asked_by_default(autojump_clock: Any) -> None:
    result, games, log = await play(first_legal, games=2)
    lone = [r for r in log if r["type"] == "request" and len(r["legal"]) == 1
            and r["legal"][0]["type"] in ("pass", "take")]
    assert lone  # asked even when pass or take is the only option
    assert not any(d.forced for g in games for d in g.decisions)


async def test_a_move_time_timeout_on_the_virtual_clock(autojump_clock: Any) -> None:
    start = trio.current_time()
    result, games, _ = await play(slow(5.0), games=2, tc=TimeControl.parse(None, 2.0))
    assert [g.termination for g in games] == ["timeout", "timeout"]
    f = games[0].forfeit
    assert f["seat"] == 0 and f["kind"] == "timeout"
    assert f["evidence"]["budget_s"] == pytest.approx(2.0)
    assert trio.current_time() - start < 60  # virtual seconds, milliseconds of real time


async def test_answers_within_the_limit_are_never_timeouts(autojump_clock: Any) -> None:
    result, games, _ = await play(slow(1.9), games=1, tc=TimeControl.parse(None, 2.0))
    assert games[0].termination == "normal"


async def test_the_game_clock_runs_out_with_fischer_increment(autojump_clock: Any) -> None:
    # 10 s + 1 s per move at 3 s per move: the clock shows 10, 8, 6, 4, 2 s left; with
    # 2 s left a 3 s answer is too late.
    result, games, log = await play(slow(3.0), games=1, tc=TimeControl.parse("10+1"))
    game = games[0]
    assert game.termination == "timeout" and game.durak == 0
    asked = [m for m in log if m["type"] == "request"]
    assert [m["clock"]["remaining_ms"] for m in asked] == [10000, 8000, 6000, 4000, 2000]
    assert all(m["clock"]["increment_ms"] == 1000 for m in asked)


async def test_an_illegal_action_forfeits_with_evidence(autojump_clock: Any) -> None:
    async def illegal(request: dict[str, Any]) -> dict[str, Any]:
        return {"type": "cover", "slot": 9, "card": "AS"}  # there is never a slot 9 here

    result, games, _ = await play(illegal, games=1)
    g = games[0]
    assert g.termination == "illegal" and g.durak == 0
    assert "illegal action" in g.forfeit["reason"]
    assert g.forfeit["evidence"]["received"]


async def test_retry_policy_tells_the_bot_why_and_asks_again(autojump_clock: Any) -> None:
    tries: dict[int, int] = {}

    async def wrong_then_right(request: dict[str, Any]) -> dict[str, Any]:
        key = request["observation"]["bout"] * 1000 + len(request["observation"]["table"])
        tries[key] = tries.get(key, 0) + 1
        if tries[key] == 1 and request["observation"]["phase"] == "attack":
            return {"type": "take"}  # not an option when leading
        return request["legal"][0]

    result, games, log = await play(wrong_then_right, games=1, retries=1)
    g = games[0]
    assert g.termination == "normal"
    assert g.retries
    errors = [m for m in log if m["type"] == "error"]
    assert errors and errors[0]["code"] == "illegal" and errors[0]["fatal"] is False


async def test_a_malformed_action_is_a_protocol_forfeit(autojump_clock: Any) -> None:
    async def garbage(request: dict[str, Any]) -> dict[str, Any]:
        return {"type": "cover", "slot": "zero", "card": "X9"}

    result, games, _ = await play(garbage, games=1)
    g = games[0]
    assert g.termination == "protocol"
    assert "action.slot" in g.forfeit["reason"] or "action.card" in g.forfeit["reason"]


async def test_a_bot_that_hangs_up_is_a_crash_and_later_games_forfeit(autojump_clock: Any) -> None:
    async def hang_up(request: dict[str, Any]) -> None:
        return None

    result, games, _ = await play(hang_up, games=2)
    assert [g.termination for g in games] == ["crash", "crash"]
    assert all(g.durak == 0 for g in games)


def test_clock_arithmetic_is_pure() -> None:
    clock = Clock(TimeControl.parse("10+0.5", 3.0))
    assert clock.budget() == 3.0  # the per-decision limit is the sooner
    assert clock.start(100.0) == 103.0
    used, ok = clock.stop(101.5)
    assert (used, ok) == (1.5, True)
    assert clock.remaining == pytest.approx(9.0)  # 10 - 1.5 + 0.5
    clock.start(200.0)
    used, ok = clock.stop(204.0)
    assert not ok and clock.remaining == pytest.approx(5.0)  # no increment when late
    # No clock and no move time: the default per-decision limit, never "unlimited".
    assert Clock(TimeControl()).budget() == DEFAULT_MOVE_TIME
    assert Clock(TimeControl.parse("60")).budget() == 60.0  # a game clock bounds it already


async def test_duplicate_mode_plays_each_deal_once_per_seat_rotation(autojump_clock: Any) -> None:
    players = [BuiltinPlayer(name, parse_bot_spec(f"builtin:{kind}"), 1)
               for name, kind in (("g", "greedy"), ("r1", "random"), ("r2", "random"))]
    config = MatchConfig(rules=make_rules(), games=6, seed=9, duplicate=True)
    games: list[GameRecord] = []
    result = await play_match(players, config, on_game=lambda r, _: games.append(r))
    assert [g.players for g in games[:3]] == [["g", "r1", "r2"], ["r1", "r2", "g"], ["r2", "g", "r1"]]
    assert games[0].deck == games[1].deck == games[2].deck != games[3].deck
    assert games[3].deck == games[4].deck == games[5].deck
    assert {g.dealer for g in games} == {2}  # identical deals: the dealer never moves
    # Stats follow the bots, not the seats.
    stats = {b.name: b for b in result.bots}
    for name in ("g", "r1", "r2"):
        expected = sum(1 for g in games if g.durak is not None and g.players[g.durak] == name)
        assert stats[name].durak == expected


def test_who_shares_a_draw_is_one_rule_for_every_score() -> None:
    from referee.table.match import GameRecord

    def record(durak: int | None, last_out: tuple[int, ...]) -> GameRecord:
        return GameRecord(0, "s", 2, [], ["a", "b", "c"], [], "x", durak, last_out, "", 1, 0.0)

    assert record(1, ()).drawn_seats == ()
    assert [record(1, ()).score(s) for s in range(3)] == [1.0, 0.0, 1.0]
    assert record(None, (0, 2)).drawn_seats == (0, 2)  # last_two_out: the last two share it
    assert [record(None, (0, 2)).score(s) for s in range(3)] == [0.5, 1.0, 0.5]
    assert record(None, ()).drawn_seats == (0, 1, 2)  # stalemate / action cap: everyone


def test_a_table_reads_who_listens_and_who_is_in_process_from_its_players_as_the_game_starts() -> None:
    """``framelane.Table``: which seats are sent the game's messages (``wants_events``) and
    which decide in the referee's process (``in_process``), read from the players
    themselves for each game (a bot restarted for the next game may say otherwise)."""
    from referee.seats.process import ProcessPlayer
    from referee.seats.sandbox import Sandbox
    from referee.table.clock import Clock, TimeControl
    from referee.table.framelane import Table

    def table(players: list[Any]) -> Table:
        return Table(players, [Clock(TimeControl()) for _ in players], 0, 0, lambda: 0.0, None, False)

    greedy = BuiltinPlayer("g", parse_bot_spec("builtin:greedy"))
    ismcts = BuiltinPlayer("i", parse_bot_spec("builtin:ismcts"))
    program = ProcessPlayer("p", parse_bot_spec("examples/c/bot"), sandbox=Sandbox("none"))
    kinds = table([greedy, program, ismcts])
    assert kinds.listeners == [1] and kinds.in_process == [True, False, True]
    program.wants_events = False
    assert table([program, greedy]).listeners == []
