"""What a seat is told, what the record keeps and what a spectator sees when a game ends:
word for word, for every way ``play_game`` can end a game.

The bots here are ``Player`` objects that keep the ``Player`` contract but choose what
it lets a player report: the answer ``decide`` returns (a map the protocol layer let
through, which the referee still parses) and its ``timing`` (when the request was
written and when the answer's frame was complete). That reaches the two verdicts a
stream bot on the real wire code cannot reach in a test, because ``StreamPlayer``
enforces the read deadline and validates the action first: an answer that arrives but
whose timing says it came after its budget, and a well-formed action message whose
action map is not an action. Each seat records every message it is given (``hear``,
the requests it is asked, ``tell``) in order. Time is trio's virtual clock (``autojump_clock``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import trio

from protocol.codec import decode, pack
from referee.rules import Rules, make_rules
from referee.seats.players import Ask, BotFailure, BotSpec, ObservationOnDemand, Player
from referee.table.clock import TimeControl
from referee.table.match import GameRecord, MatchConfig, play_game, play_match
from referee.table.spectator import start_message

#: (request, budget) -> (the action map returned, seconds from the request written to
#: the answer complete, as the player's ``timing`` reports them).
Script = Callable[[dict[str, Any], float | None], tuple[Any, float]]


class ScriptedPlayer(Player):
    """A player whose answers and timings come from ``script``; it records everything
    the referee hands it, as ``(how, message)`` with ``how`` in hear / send (a request) /
    tell. It answers in ``finish`` (from ``decide``, the script's step); ``lazy``: its
    requests hold the observation computed on first use."""

    lazy = False

    def __init__(self, name: str, script: Script) -> None:
        super().__init__(name, BotSpec("command", name, ("scripted",), name, named=True))
        self.script = script
        self.got: list[tuple[str, dict[str, Any]]] = []
        self.budgets: list[float | None] = []
        self.timing: tuple[float, float] | None = None

    def hear(self, frame: bytes) -> None:
        self.got.append(("hear", decode(frame)))

    async def tell(self, message: dict[str, Any]) -> None:
        self.got.append(("tell", message))

    async def finish(self, ask: Ask) -> Any:
        request = ask.message(ObservationOnDemand(ask.game, ask.seat)) if self.lazy else ask.message()
        answer = await self.decide(request, ask.budget)
        ask.timing = self.timing
        return answer

    async def decide(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        self.got.append(("send", request))
        self.budgets.append(timeout)
        answer, seconds = self.script(request, timeout)
        written = trio.current_time()
        self.timing = (written, written + seconds)
        return answer

    def requests(self) -> list[dict[str, Any]]:
        return [m for how, m in self.got if m["type"] == "request"]

    def told(self) -> list[dict[str, Any]]:
        return [m for how, m in self.got if how == "tell"]

    def ends(self) -> list[dict[str, Any]]:
        return [m for how, m in self.got if m["type"] == "game_end"]


def first_legal(request: dict[str, Any], budget: float | None) -> tuple[Any, float]:
    return request["legal"][0], 0.001


def on_request(n: int, answer: Callable[[dict[str, Any]], Any], seconds: float = 0.001) -> Script:
    """The first legal action, and on the seat's request ``n`` (1, 2, ...) ``answer(request)``
    taking ``seconds``."""
    def script(request: dict[str, Any], budget: float | None) -> tuple[Any, float]:
        if request["id"] == n:
            return answer(request), seconds
        return request["legal"][0], 0.001
    return script


CLASSIC = make_rules("classic", ())


async def one_game(players: list[ScriptedPlayer], *, tc: TimeControl = TimeControl(),
                   retries: int = 0, index: int = 3,
                   watch: list[dict[str, Any]] | None = None, rules: Rules = CLASSIC) -> GameRecord:
    config = MatchConfig(rules=rules, games=1, seed=4, tc=tc, illegal_retries=retries)

    async def hook(message: dict[str, Any]) -> None:
        assert watch is not None
        watch.append(message)

    return await play_game(players, config, index=index, seed="match:0", dealer=1,
                           watch=hook if watch is not None else None)


def pair(script: Script) -> tuple[ScriptedPlayer, ScriptedPlayer]:
    """Seat 0 ``alice`` runs ``script``; seat 1 ``bob`` plays the first legal action."""
    return ScriptedPlayer("alice", script), ScriptedPlayer("bob", first_legal)


# -- an answer that arrives after its budget ---------------------------------------------

async def test_an_answer_whose_timing_is_over_the_budget_forfeits_the_seat_on_time(
        autojump_clock: Any) -> None:
    alice, bob = pair(on_request(3, lambda r: r["legal"][0], seconds=10.1234567))
    record = await one_game([alice, bob])
    late = "answered request 3 after 10.123 s, over its budget of 10.000 s"
    assert (record.termination, record.durak, record.last_out) == ("timeout", 0, ())
    assert record.reason == f"alice forfeited (timeout): {late}"
    assert record.forfeit == {
        "seat": 0, "bot": "alice", "kind": "timeout", "reason": late,
        "decision": len(record.decisions),
        "evidence": {"used_s": 10.1235, "budget_s": 10.0, "received": alice.requests()[2]["legal"][0]},
    }
    # The late answer is not applied: the record ends with the decision before it.
    assert [d.seat for d in record.decisions if not d.forced].count(0) == 2
    assert alice.told() == [{"type": "error", "code": "timeout", "message": late, "fatal": True}]
    assert bob.told() == []


async def test_the_late_seat_alone_hears_why_the_others_hear_only_that_it_forfeited(
        autojump_clock: Any) -> None:
    alice, bob = pair(on_request(1, lambda r: r["legal"][0], seconds=12.0))
    record = await one_game([alice, bob], index=5)
    late = "answered request 1 after 12.000 s, over its budget of 10.000 s"
    assert alice.ends() == [{"type": "game_end", "game": 5, "durak": 0, "termination": "timeout",
                             "reason": f"alice forfeited (timeout): {late}"}]
    assert bob.ends() == [{"type": "game_end", "game": 5, "durak": 0, "termination": "timeout",
                           "reason": "alice forfeited (timeout)"}]
    # The fatal error comes before the end of the game.
    kinds = [m["type"] for how, m in alice.got]
    assert kinds.index("error") < kinds.index("game_end") == len(kinds) - 1
    assert record.forfeit is not None and record.forfeit["decision"] == len(record.decisions)


async def test_an_answer_exactly_at_its_budget_is_in_time_and_charged_in_full(
        autojump_clock: Any) -> None:
    alice, bob = pair(on_request(1, lambda r: r["legal"][0], seconds=10.0))
    record = await one_game([alice, bob])
    assert record.forfeit is None and alice.told() == []
    first = next(d for d in record.decisions if d.seat == 0 and not d.forced)
    assert first.seconds == 10.0


async def test_the_game_clock_is_charged_what_the_timing_reports_and_sent_to_the_bot(
        autojump_clock: Any) -> None:
    # 30 s for the game: 7.5 s used on the first request leaves 22.5 s (no increment).
    alice, bob = pair(on_request(1, lambda r: r["legal"][0], seconds=7.5))
    await one_game([alice, bob], tc=TimeControl(base=30.0, move=None))
    clocks = [r["clock"] for r in alice.requests()[:3]]
    assert clocks[0] == {"remaining_ms": 30000, "increment_ms": 0, "move_ms": None}
    assert [c["remaining_ms"] for c in clocks] == [30000, 22500, 22499]  # 1 ms for request 2
    assert alice.budgets[:3] == [30.0, 22.5, pytest.approx(22.499)]


async def test_a_late_answer_on_the_game_clock_names_what_was_left(autojump_clock: Any) -> None:
    alice, bob = pair(on_request(2, lambda r: r["legal"][0], seconds=25.0))
    record = await one_game([alice, bob], tc=TimeControl(base=20.0, move=None))
    late = "answered request 2 after 25.000 s, over its budget of 19.999 s"
    assert record.forfeit is not None
    assert record.forfeit["reason"] == late
    assert record.forfeit["evidence"]["used_s"] == 25.0
    assert record.forfeit["evidence"]["budget_s"] == pytest.approx(19.999)
    assert alice.told() == [{"type": "error", "code": "timeout", "message": late, "fatal": True}]


# -- an action message whose action map is not an action ----------------------------------

@pytest.mark.parametrize("answer, detail", [
    ({"type": "fly"}, "action.type: expected one of attack, cover, throw_in, transfer, "
                      "show_trump, take, pass, exchange, got 'fly'"),
    ({"type": "attack", "card": "ZZ"}, "action.card: expected a card like '6S', got 'ZZ'"),
    ({"type": "cover", "card": "6S", "slot": -1},
     "action.slot: expected a table slot number 0..63, got -1"),
    (["attack", "6S"], "action: expected a map, got list"),
])
async def test_an_answer_that_is_not_an_action_forfeits_with_a_protocol_error_word_for_word(
        autojump_clock: Any, answer: Any, detail: str) -> None:
    alice, bob = pair(on_request(2, lambda r: answer))
    record = await one_game([alice, bob], retries=3)  # retries are for legal-form actions only
    malformed = f"malformed action for request 2: {detail}"
    assert (record.termination, record.durak) == ("protocol", 0)
    assert record.reason == f"alice forfeited (protocol): {malformed}"
    assert record.forfeit == {"seat": 0, "bot": "alice", "kind": "protocol", "reason": malformed,
                              "decision": len(record.decisions), "evidence": {"received": answer}}
    assert record.retries == []
    assert alice.told() == [{"type": "error", "code": "protocol", "message": malformed, "fatal": True}]
    assert len(alice.requests()) == 2
    assert alice.ends()[0]["reason"] == record.reason
    assert bob.ends()[0]["reason"] == "alice forfeited (protocol)"


async def test_an_answer_not_copied_from_the_legal_list_is_parsed_and_played(autojump_clock: Any) -> None:
    # Not equal to any map of the legal list (a key the action does not have), but the
    # same action once parsed: it is played, as the copied map would be.
    def annotated(request: dict[str, Any]) -> Any:
        return dict(request["legal"][-1], note="mine")
    alice, bob = pair(on_request(1, annotated))
    copied_alice, copied_bob = pair(on_request(1, lambda r: r["legal"][-1]))
    record = await one_game([alice, bob])
    copied = await one_game([copied_alice, copied_bob])
    assert record.forfeit is None and alice.told() == []
    assert [(d.seat, d.action, d.forced) for d in record.decisions] == [
        (d.seat, d.action, d.forced) for d in copied.decisions]


# -- an illegal action -------------------------------------------------------------------

def an_illegal_cover(request: dict[str, Any]) -> Any:
    return {"type": "cover", "slot": 5, "card": "AS"}


async def test_an_illegal_action_under_the_forfeit_policy_word_for_word(autojump_clock: Any) -> None:
    alice, bob = pair(on_request(1, an_illegal_cover))
    record = await one_game([alice, bob])
    reason = ("illegal action cover 5 AS for request 1: "
              "cover is not an option in phase attack (seat 0 may: attack)")
    assert record.reason == f"alice forfeited (illegal): {reason}"
    assert record.forfeit is not None
    assert record.forfeit["reason"] == reason
    assert record.forfeit["evidence"] == {
        "received": {"type": "cover", "slot": 5, "card": "AS"},
        "legal": [_action_text(a) for a in alice.requests()[0]["legal"]]}
    assert alice.told() == [{"type": "error", "code": "illegal", "message": reason, "fatal": True}]
    assert bob.ends()[0]["reason"] == "alice forfeited (illegal)"


def _action_text(wire: dict[str, Any]) -> str:
    from referee.rules.actions import action_from_wire, action_str
    return action_str(action_from_wire(wire))


async def test_under_retry_an_illegal_action_is_answered_with_a_non_fatal_error_and_asked_again(
        autojump_clock: Any) -> None:
    alice, bob = pair(on_request(2, an_illegal_cover))
    record = await one_game([alice, bob], retries=1)
    assert record.forfeit is None
    [retry] = record.retries
    assert retry["seat"] == 0 and retry["request"] == 2
    assert retry["reason"] == ("illegal action cover 5 AS for request 2: cover is not an option "
                               "in phase throw_in (seat 0 may: throw_in, pass)")
    error = {"type": "error", "code": "illegal", "message": retry["reason"], "fatal": False}
    assert ("hear", error) in alice.got and alice.told() == []
    # Asked again with a new id, after the error.
    ids = [m["id"] for m in alice.requests()]
    assert ids == list(range(1, len(ids) + 1))
    where = alice.got.index(("hear", error))
    assert alice.got[where + 1][1]["type"] in ("request", "event")


# -- what a spectator sees ---------------------------------------------------------------

async def test_a_spectator_sees_the_start_every_public_event_and_the_end_of_a_normal_game(
        autojump_clock: Any) -> None:
    alice, bob = ScriptedPlayer("alice", first_legal), ScriptedPlayer("bob", first_legal)
    watched: list[dict[str, Any]] = []
    record = await one_game([alice, bob], index=7, watch=watched)
    assert record.termination == "normal"
    assert watched[0]["type"] == "start" and watched[0]["game"] == 7
    assert watched[0]["names"] == ["alice", "bob"]
    assert all(m["type"] == "event" and m["game"] == 7 for m in watched[1:-1])
    assert watched[-1] == {"type": "end", "game": 7, "durak": record.durak,
                           "termination": "normal", "reason": record.reason}
    # One event per public event a seat was sent: the same events, in the same order,
    # each without a card hidden from the table (a draw is its count only).
    seen_by_bob = [m["event"] for how, m in bob.got if m["type"] == "event"]
    assert len(watched) - 2 == len([e for e in seen_by_bob if e["type"] != "decline_trump"])
    assert [e["type"] for e in (m["event"] for m in watched[1:-1])] == [
        e["type"] for e in seen_by_bob if e["type"] != "decline_trump"]
    assert all("cards" not in m["event"] for m in watched[1:-1] if m["event"]["type"] == "draw")


async def test_the_spectators_start_is_the_public_deal(autojump_clock: Any, dealt_games: list[Any]) -> None:
    from referee.rules import Game
    watched: list[dict[str, Any]] = []
    alice, bob = ScriptedPlayer("alice", first_legal), ScriptedPlayer("bob", first_legal)
    await one_game([alice, bob], index=2, watch=watched)
    fresh = Game.new(CLASSIC, 2, deck=dealt_games[0].deck, dealer=1)
    assert watched[0] == start_message(fresh, 2, ["alice", "bob"])


async def test_a_spectator_of_a_forfeit_hears_who_forfeited_and_how_but_never_the_detail(
        autojump_clock: Any) -> None:
    alice, bob = pair(on_request(1, an_illegal_cover))
    watched: list[dict[str, Any]] = []
    record = await one_game([alice, bob], index=4, watch=watched)
    assert record.termination == "illegal" and "AS" in record.reason
    assert watched[-1] == {"type": "end", "game": 4, "durak": 0, "termination": "illegal",
                           "reason": "alice forfeited (illegal)"}
    assert sum(m["type"] == "end" for m in watched) == 1


async def test_a_spectator_of_a_late_answer_hears_the_timeout_without_the_figures(
        autojump_clock: Any) -> None:
    alice, bob = pair(on_request(1, lambda r: r["legal"][0], seconds=11.0))
    watched: list[dict[str, Any]] = []
    await one_game([alice, bob], index=0, watch=watched)
    assert watched[-1] == {"type": "end", "game": 0, "durak": 0, "termination": "timeout",
                           "reason": "alice forfeited (timeout)"}


async def test_without_a_spectator_and_without_listeners_no_event_is_recorded(
        autojump_clock: Any, monkeypatch: Any) -> None:
    from referee.rules import Game
    flags: list[bool] = []
    real_new = Game.new

    def new(*args: Any, **kwargs: Any) -> Game:
        flags.append(kwargs.get("record_events", False))
        return real_new(*args, **kwargs)

    monkeypatch.setattr(Game, "new", new)
    quiet = [ScriptedPlayer(name, first_legal) for name in ("alice", "bob")]
    for p in quiet:
        p.wants_events = False
    await one_game(quiet)
    await one_game(quiet, watch=[])
    await one_game([ScriptedPlayer("alice", first_legal), ScriptedPlayer("bob", first_legal)])
    assert flags == [False, True, True]


# -- a seat that does not take events ------------------------------------------------------

async def test_a_seat_that_does_not_want_events_is_sent_no_start_no_event_and_no_end(
        autojump_clock: Any) -> None:
    alice, bob = pair(first_legal)
    bob.wants_events = False
    record = await one_game([alice, bob])
    assert {m["type"] for how, m in bob.got} == {"request"}
    assert [m["type"] for how, m in alice.got][0] == "game_start"
    assert alice.ends() == [{"type": "game_end", "game": 3, "durak": record.durak,
                             "termination": record.termination, "reason": record.reason}]


async def test_play_match_marks_players_busy_only_while_a_game_is_played(autojump_clock: Any) -> None:
    busy_when_asked: list[bool] = []

    def script(request: dict[str, Any], budget: float | None) -> tuple[Any, float]:
        busy_when_asked.append(alice.busy)
        return request["legal"][0], 0.001

    alice, bob = ScriptedPlayer("alice", script), ScriptedPlayer("bob", first_legal)
    config = MatchConfig(rules=CLASSIC, games=2, seed=4)
    await play_match([alice, bob], config)
    assert busy_when_asked and all(busy_when_asked)
    assert (alice.busy, bob.busy) == (False, False)


# -- a bot that fails while it is told something ------------------------------------------

class FailingPlayer(ScriptedPlayer):
    """A scripted player whose ``hear`` / ``decide`` raise the given BotFailure when
    ``fails(how, message)`` says so (how: hear, decide)."""

    def __init__(self, name: str, script: Script, fails: Callable[[str, dict[str, Any]], bool],
                 failure: BotFailure) -> None:
        super().__init__(name, script)
        self.fails, self.failure = fails, failure

    def hear(self, frame: bytes) -> None:
        if self.fails("hear", decode(frame)):
            raise self.failure
        super().hear(frame)

    async def decide(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        if self.fails("decide", request):
            raise self.failure
        return await super().decide(request, timeout)


GONE = BotFailure("disconnect", "the connection was lost", {"bytes": "00ff"})


@pytest.mark.parametrize("how, kind", [("hear", "game_start"), ("hear", "event")])
async def test_a_bot_that_fails_while_it_is_sent_a_message_forfeits_with_its_own_failure(
        autojump_clock: Any, how: str, kind: str) -> None:
    alice = FailingPlayer("alice", first_legal, lambda h, m: h == how and m["type"] == kind, GONE)
    bob = ScriptedPlayer("bob", first_legal)
    record = await one_game([alice, bob])
    assert (record.termination, record.durak) == ("disconnect", 0)
    assert record.forfeit == {"seat": 0, "bot": "alice", "kind": "disconnect",
                              "reason": "the connection was lost", "decision": len(record.decisions),
                              "evidence": {"bytes": "00ff"}}
    assert record.reason == "alice forfeited (disconnect): the connection was lost"
    assert bob.ends() == [{"type": "game_end", "game": 3, "durak": 0, "termination": "disconnect",
                           "reason": "alice forfeited (disconnect)"}]
    if kind == "game_start":  # before any decision: the game is lost at its start
        assert record.decisions == [] and bob.requests() == []


async def test_a_bot_that_fails_while_it_decides_forfeits_naming_the_request(autojump_clock: Any) -> None:
    alice = FailingPlayer("alice", first_legal, lambda h, m: h == "decide" and m["id"] == 2,
                          BotFailure("crash", "the bot exited with status 3", {"exit": 3}))
    bob = ScriptedPlayer("bob", first_legal)
    record = await one_game([alice, bob])
    assert record.forfeit == {"seat": 0, "bot": "alice", "kind": "crash",
                              "reason": "the bot exited with status 3 (request 2)",
                              "decision": len(record.decisions), "evidence": {"exit": 3}}
    assert record.reason == "alice forfeited (crash): the bot exited with status 3 (request 2)"


async def test_a_bot_gone_when_the_game_ends_changes_nothing_the_others_still_hear_the_end(
        autojump_clock: Any) -> None:
    alice = FailingPlayer("alice", first_legal, lambda h, m: m["type"] == "game_end", GONE)
    bob = ScriptedPlayer("bob", first_legal)
    record = await one_game([alice, bob])
    assert record.termination == "normal" and record.forfeit is None
    assert bob.ends() == [{"type": "game_end", "game": 3, "durak": record.durak,
                           "termination": "normal", "reason": record.reason}]
    assert alice.busy is False


async def test_a_seat_busy_before_the_game_is_busy_after_it(autojump_clock: Any) -> None:
    alice, bob = pair(first_legal)
    alice.busy = True
    await one_game([alice, bob])
    assert (alice.busy, bob.busy) == (True, False)


# -- players timed by the referee (no timing of their own) --------------------------------

class UntimedPlayer(ScriptedPlayer):
    """A player that reports no ``timing`` (as an in-process bot): the referee times the
    whole ``decide``, which here takes ``seconds`` of virtual time."""

    async def decide(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        self.got.append(("send", request))
        answer, seconds = self.script(request, timeout)
        await trio.sleep(seconds)
        self.timing = None
        return answer


async def test_a_player_without_timing_is_charged_the_whole_decide_call(autojump_clock: Any) -> None:
    alice = UntimedPlayer("alice", on_request(1, lambda r: r["legal"][0], seconds=4.25))
    bob = ScriptedPlayer("bob", first_legal)
    record = await one_game([alice, bob])
    first = next(d for d in record.decisions if d.seat == 0 and not d.forced)
    assert first.seconds == 4.25


async def test_a_player_without_timing_that_overruns_its_budget_forfeits_on_time(autojump_clock: Any) -> None:
    alice = UntimedPlayer("alice", on_request(2, lambda r: r["legal"][0], seconds=10.5))
    bob = ScriptedPlayer("bob", first_legal)
    record = await one_game([alice, bob])
    late = "answered request 2 after 10.500 s, over its budget of 10.000 s"
    assert record.forfeit is not None and record.forfeit["reason"] == late
    assert record.forfeit["evidence"] == {"used_s": 10.5, "budget_s": 10.0,
                                          "received": alice.requests()[1]["legal"][0]}


# -- in-process players: their CPU is theirs ----------------------------------------------

def spin_cpu(seconds: float) -> None:
    """Use at least ``seconds`` of this process's CPU."""
    import time
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def busy_first_legal(request: dict[str, Any], budget: float | None) -> tuple[Any, float]:
    spin_cpu(0.002)
    return request["legal"][0], 0.001


async def test_the_cpu_an_in_process_bot_spends_deciding_is_counted_as_its_own(autojump_clock: Any) -> None:
    alice, bob = ScriptedPlayer("alice", busy_first_legal), ScriptedPlayer("bob", busy_first_legal)
    alice.in_process = True
    record = await one_game([alice, bob])
    asked = len(alice.requests())
    assert asked >= 3
    # At least what alice's decisions spun (every one of them); bob is a separate process.
    assert record.inprocess_cpu_s >= 0.002 * asked


async def test_an_in_process_bots_cpu_is_only_what_the_process_spent_during_its_decisions(
        autojump_clock: Any) -> None:
    import time
    spin_cpu(0.05)  # the process has spent CPU before the game: none of it is the bot's
    alice, bob = ScriptedPlayer("alice", busy_first_legal), ScriptedPlayer("bob", first_legal)
    alice.in_process = True
    before = time.process_time()
    record = await one_game([alice, bob])
    during = time.process_time() - before
    assert 0.002 * len(alice.requests()) <= record.inprocess_cpu_s <= during


async def test_a_bot_in_another_process_adds_nothing_to_the_in_process_cpu(autojump_clock: Any) -> None:
    alice, bob = ScriptedPlayer("alice", busy_first_legal), ScriptedPlayer("bob", busy_first_legal)
    record = await one_game([alice, bob])
    assert record.inprocess_cpu_s == 0.0


# -- a lazy view: the observation computed on first use -----------------------------------

async def test_a_lazy_player_reads_the_same_observation_as_a_map(autojump_clock: Any) -> None:
    seen: list[tuple[dict[str, Any], Any, int, list[str]]] = []

    def script(request: dict[str, Any], budget: float | None) -> tuple[Any, float]:
        obs = request["observation"]
        seen.append((dict(obs), obs.get("no such key", "default"), len(obs), list(obs)))
        return request["legal"][0], 0.001

    lazy, eager = ScriptedPlayer("alice", script), ScriptedPlayer("bob", first_legal)
    lazy.lazy = True
    reference = ScriptedPlayer("alice", first_legal)
    await one_game([lazy, eager])
    await one_game([reference, ScriptedPlayer("bob", first_legal)])
    expected = [r["observation"] for r in reference.requests()]
    assert [s[0] for s in seen] == expected
    assert all(s[1] == "default" for s in seen)
    assert [s[2] for s in seen] == [len(o) for o in expected]
    assert [s[3] for s in seen] == [list(o) for o in expected]
    assert seen[0][0]["hand"] and expected[0]["hand"] == seen[0][0]["hand"]


# -- a player that decides at once on the engine (attempt) ---------------------------------

class NowPlayer(ScriptedPlayer):
    """An in-process player that decides at once (``attempt``, on the engine): it picks the
    first legal action, and on its decision ``slow_at`` (1, 2, ...) the virtual clock
    jumps ``seconds`` meanwhile."""

    def __init__(self, name: str, clock: Any, slow_at: int = 0, seconds: float = 0.0) -> None:
        super().__init__(name, first_legal)
        self.in_process = True
        self.clock, self.slow_at, self.seconds, self.decided = clock, slow_at, seconds, 0
        self.asked_as: list[tuple[int, int]] = []  #: (seat, game_index) of each decision

    def attempt(self, ask: Ask) -> Any:
        return self.decide_now(ask.game, ask.seat, ask.legal, ask.index)

    def decide_now(self, game: Any, seat: int, legal: list[int], game_index: int) -> int:
        self.decided += 1
        self.asked_as.append((seat, game_index))
        if self.decided == self.slow_at:
            self.clock.jump(self.seconds)
        return legal[0]


async def test_a_synchronous_decision_over_its_budget_forfeits_untold_with_the_action_as_evidence(
        autojump_clock: Any) -> None:
    from referee.rules.actions import action_to_wire
    alice = NowPlayer("alice", autojump_clock, slow_at=2, seconds=10.75)
    bob = ScriptedPlayer("bob", first_legal)
    record = await one_game([alice, bob])
    late = "answered request 2 after 10.750 s, over its budget of 10.000 s"
    assert record.forfeit is not None
    assert {k: record.forfeit[k] for k in ("seat", "bot", "kind", "reason", "decision")} == {
        "seat": 0, "bot": "alice", "kind": "timeout", "reason": late, "decision": len(record.decisions)}
    evidence = record.forfeit["evidence"]
    assert (evidence["used_s"], evidence["budget_s"]) == (10.75, 10.0)
    assert evidence["received"] == action_to_wire(first_legal_after(record))
    assert alice.told() == []  # in-process bots need no telling
    assert alice.requests() == []  # and are sent no request


def first_legal_after(record: GameRecord) -> int:
    """The first legal action of the position after the record's decisions."""
    from referee.rules import Game
    game = Game.new(CLASSIC, 2, deck=list(record.deck), dealer=record.dealer)
    for d in record.decisions:
        game.apply(d.action)
    assert game.seat_to_move() == 0
    return game.legal_actions()[0]


async def test_a_synchronous_decision_is_charged_its_time_and_numbered_like_a_request(
        autojump_clock: Any) -> None:
    alice = NowPlayer("alice", autojump_clock, slow_at=1, seconds=3.5)
    bob = ScriptedPlayer("bob", first_legal)
    record = await one_game([alice, bob])
    assert record.forfeit is None
    mine = [d for d in record.decisions if d.seat == 0 and not d.forced]
    assert mine[0].seconds == 3.5 and all(d.seconds == 0.0 for d in mine[1:])
    assert alice.decided == len(mine)
    # Its clock kept running: with a 5 s game clock the second slow decision forfeits.
    alice2 = NowPlayer("alice", autojump_clock, slow_at=1, seconds=3.5)
    bob2 = ScriptedPlayer("bob", first_legal)
    tight = await one_game([alice2, bob2], tc=TimeControl(base=3.0, move=None))
    assert tight.forfeit is not None and tight.forfeit["reason"] == (
        "answered request 1 after 3.500 s, over its budget of 3.000 s")


# -- the match around the games ------------------------------------------------------------

class PreparedPlayer(ScriptedPlayer):
    """Records each ``prepare_game`` call; leaves the table after ``leave_after`` games."""

    def __init__(self, name: str, leave_after: int | None = None) -> None:
        super().__init__(name, first_legal)
        self.prepared: list[int] = []
        self.leave_after = leave_after

    async def prepare_game(self, max_restarts: int, fresh: bool = False,
                           deal: str | None = None) -> None:
        self.prepared.append(max_restarts)
        if self.leave_after is not None and len(self.prepared) > self.leave_after:
            self.left = True


async def test_each_game_is_its_own_deal_and_every_player_is_prepared_for_it(autojump_clock: Any) -> None:
    alice, bob = PreparedPlayer("alice"), PreparedPlayer("bob")
    games: list[GameRecord] = []
    config = MatchConfig(rules=CLASSIC, games=3, seed=4, max_restarts=2)
    result = await play_match([alice, bob], config, on_game=lambda r, _: games.append(r))
    assert [g.seed for g in games] == ["match:0", "match:1", "match:2"]
    assert [g.index for g in games] == [0, 1, 2]
    assert alice.prepared == bob.prepared == [2, 2, 2]
    assert result.played == 3 and not result.interrupted


async def test_duplicate_deals_are_numbered_per_deal_not_per_game(autojump_clock: Any) -> None:
    games: list[GameRecord] = []
    config = MatchConfig(rules=CLASSIC, games=4, seed=4, duplicate=True)
    await play_match([PreparedPlayer("alice"), PreparedPlayer("bob")], config,
                     on_game=lambda r, _: games.append(r))
    assert [g.seed for g in games] == ["match:0", "match:0", "match:1", "match:1"]
    assert [g.players for g in games] == [["alice", "bob"], ["bob", "alice"]] * 2


async def test_a_player_who_left_ends_the_match_after_the_game_in_progress(autojump_clock: Any) -> None:
    alice, bob = PreparedPlayer("alice"), PreparedPlayer("bob", leave_after=1)
    games: list[GameRecord] = []
    config = MatchConfig(rules=CLASSIC, games=5, seed=4)
    result = await play_match([alice, bob], config, on_game=lambda r, _: games.append(r))
    # bob left while being prepared for game 2: that game is still played, no third.
    assert len(games) == result.played == 2


async def test_a_result_passed_in_keeps_counting(autojump_clock: Any) -> None:
    config = MatchConfig(rules=CLASSIC, games=2, seed=4)
    players = [PreparedPlayer("alice"), PreparedPlayer("bob")]
    first = await play_match(players, config)
    again = await play_match(players, config, result=first)
    assert again is first and again.played == 4
    assert again.cpu_s >= 0.0 and again.wall_s >= 0.0


class Sleeper(ScriptedPlayer):
    """A scripted player that takes one (virtual) second over every decision."""

    async def decide(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        await trio.sleep(1.0)
        return await super().decide(request, timeout)


async def test_the_match_wall_time_is_the_sum_of_its_games_on_the_virtual_clock(autojump_clock: Any) -> None:
    def slow(request: dict[str, Any], budget: float | None) -> tuple[Any, float]:
        return request["legal"][0], 0.0

    alice, bob = Sleeper("alice", slow), Sleeper("bob", slow)
    walls: list[float] = []
    config = MatchConfig(rules=CLASSIC, games=2, seed=4)
    result = await play_match([alice, bob], config,
                              on_game=lambda r, res: walls.append(res.wall_s))
    asked = len(alice.requests()) + len(bob.requests())
    assert result.wall_s == float(asked)  # one virtual second per decision, nothing else
    assert walls[-1] == result.wall_s and 0 < walls[0] < walls[1]


class ThinkingNowPlayer(NowPlayer):
    """A NowPlayer each of whose decisions takes ``THINK_S`` on the run's
    (virtual) clock."""
    THINK_S = 0.25

    def decide_now(self, game: Any, seat: int, legal: list[int], game_index: int) -> int:
        self.clock.jump(self.THINK_S)
        return super().decide_now(game, seat, legal, game_index)


async def test_the_time_a_synchronous_bot_takes_is_counted_as_its_own_cpu(autojump_clock: Any) -> None:
    # A synchronous decision is timed on the run's clock (one read each side of it: it is
    # shorter than reading the process CPU clock), and that time stands for its CPU.
    alice = ThinkingNowPlayer("alice", autojump_clock)
    bob = ScriptedPlayer("bob", first_legal)
    record = await one_game([alice, bob])
    assert alice.decided >= 3
    # Every decision's time is in it, and nothing else: bob's answers take no time.
    assert record.inprocess_cpu_s == ThinkingNowPlayer.THINK_S * alice.decided
    assert record.inprocess_cpu_s <= record.wall_s


async def test_a_match_counts_its_own_wall_time_and_cpu_not_what_came_before(autojump_clock: Any) -> None:
    import time

    await trio.sleep(500.0)  # the match starts at virtual time 500, not 0
    alice, bob = Sleeper("alice", first_legal), Sleeper("bob", first_legal)
    before = time.process_time()
    result = await play_match([alice, bob], MatchConfig(rules=CLASSIC, games=1, seed=4))
    cpu = time.process_time() - before
    asked = len(alice.requests()) + len(bob.requests())
    assert result.wall_s == float(asked)
    assert 0.0 <= result.cpu_s <= cpu


# -- a game where every seat decides at once and nothing listens ---------------------------

def quiet_now_players(clock: Any) -> list[NowPlayer]:
    """Two seats that decide at once and want no events, each of whose decisions takes
    ThinkingNowPlayer.THINK_S: the referee plays such a game in one synchronous loop."""
    players = [ThinkingNowPlayer("alice", clock), ThinkingNowPlayer("bob", clock)]
    for p in players:
        p.wants_events = False
    return players


async def test_a_game_of_synchronous_seats_charges_each_decision_its_time_and_forced_ones_none(
        autojump_clock: Any) -> None:
    alice, bob = quiet_now_players(autojump_clock)
    record = await one_game([alice, bob], rules=make_rules("classic", ["ask_forced=off"]))
    assert record.forfeit is None and record.termination == "normal"
    asked = [d for d in record.decisions if not d.forced]
    forced = [d for d in record.decisions if d.forced]
    assert len(asked) == alice.decided + bob.decided and alice.decided >= 3
    assert forced, "the deal of this game has forced steps (a lone take or pass)"
    assert {d.seconds for d in asked} == {ThinkingNowPlayer.THINK_S}
    assert {d.seconds for d in forced} == {0.0}
    # Their time is their CPU (as for a synchronous seat among others): all of it.
    assert record.inprocess_cpu_s == ThinkingNowPlayer.THINK_S * len(asked)


@pytest.mark.parametrize("others", ["decide_now", "requests"], ids=["whole_game_now", "asked_now"])
async def test_a_synchronous_seat_is_asked_as_its_own_seat_of_this_game(
        autojump_clock: Any, others: str) -> None:
    alice = NowPlayer("alice", autojump_clock)
    bob: ScriptedPlayer = NowPlayer("bob", autojump_clock) if others == "decide_now" else ScriptedPlayer(
        "bob", first_legal)
    for p in (alice, bob):
        p.wants_events = False
    record = await one_game([alice, bob], index=6)
    assert alice.decided >= 3
    assert alice.asked_as == [(0, 6)] * alice.decided
    if isinstance(bob, NowPlayer):
        assert bob.asked_as == [(1, 6)] * bob.decided
    assert record.forfeit is None


# -- a seat that takes its requests as frames (program bots over pipes) --------------------

class FramePlayer(ScriptedPlayer):
    """A player that reads its requests as frames (as StreamPlayer): first in ``attempt``,
    which here answers at once with the action ``ask.answers`` maps the script's answer
    to when it is a known action's canonical bytes and ``quick(id)`` holds, else leaves
    the request open for ``finish``. Messages come to ``hear`` and fail with ``failure``
    when ``fails(event)`` says so. ``lanes`` records, per call, (lane: now or awaited,
    the frame's id, the ask's id and budget)."""

    def __init__(self, name: str, script: Script, quick: Callable[[int], bool] = lambda i: True,
                 fails: Callable[[dict[str, Any]], bool] = lambda e: False,
                 failure: BotFailure | None = None) -> None:
        super().__init__(name, script)
        self.quick, self.fails, self.failure = quick, fails, failure
        self.lanes: list[tuple[str, int, int, float | None]] = []
        self._open: Any = None  #: the answer attempt read and left open

    def hear(self, frame: bytes) -> None:
        message = decode(frame)
        if self.fails(message):
            assert self.failure is not None
            raise self.failure
        self.got.append(("hear", message))

    def _answer(self, lane: str, ask: Ask) -> Any:
        request = decode(ask.frame())
        self.got.append(("send", request))
        self.lanes.append((lane, request["id"], ask.id, ask.budget))
        answer, seconds = self.script(request, ask.budget)
        written = trio.current_time()
        ask.timing = (written, written + seconds)
        return answer

    def attempt(self, ask: Ask) -> Any:
        self._open = None
        if not self.quick(decode(ask.frame())["id"]):
            return None  # nothing written: finish does it all
        answer = self._answer("now", ask)
        known = ask.answers.get(pack(answer))
        if known is None:
            self._open = answer
        return known

    async def finish(self, ask: Ask) -> Any:
        opened, self._open = self._open, None
        if opened is not None:
            return opened  # the answer read for the open request (timing as it was set)
        answer = self._answer("awaited", ask)
        return ask.answers.get(pack(answer), answer)


def quarter_seconds(n: int, seconds: float) -> Script:
    """The first legal action in 0.25 s, and on request ``n`` in ``seconds``."""
    def script(request: dict[str, Any], budget: float | None) -> tuple[Any, float]:
        return request["legal"][0], seconds if request["id"] == n else 0.25
    return script


async def test_a_quick_frame_answer_is_charged_what_its_timing_reports(autojump_clock: Any) -> None:
    # The game starts at virtual time 3, not 0: the time charged is the answer's time
    # less the request's, whenever the game is played.
    await trio.sleep(3.0)
    alice = FramePlayer("alice", quarter_seconds(1, 7.5))
    bob = FramePlayer("bob", quarter_seconds(0, 0.0))
    record = await one_game([alice, bob], tc=TimeControl(base=30.0, move=None))
    assert record.forfeit is None
    mine = [d.seconds for d in record.decisions if d.seat == 0 and not d.forced]
    assert len(mine) >= 3 and {lane for lane, *_ in alice.lanes} == {"now"}
    assert mine == [7.5] + [0.25] * (len(mine) - 1)
    assert [r["clock"]["remaining_ms"] for r in alice.requests()[:4]] == [30000, 22500, 22250, 22000]


async def test_a_frame_answer_over_its_budget_forfeits_the_seat_on_time(autojump_clock: Any) -> None:
    alice = FramePlayer("alice", quarter_seconds(2, 10.5))
    bob = FramePlayer("bob", quarter_seconds(0, 0.0))
    record = await one_game([alice, bob])
    late = "answered request 2 after 10.500 s, over its budget of 10.000 s"
    assert (record.termination, record.durak) == ("timeout", 0)
    assert record.forfeit == {
        "seat": 0, "bot": "alice", "kind": "timeout", "reason": late,
        "decision": len(record.decisions),
        "evidence": {"used_s": 10.5, "budget_s": 10.0, "received": alice.requests()[1]["legal"][0]},
    }
    assert [d.seat for d in record.decisions if not d.forced].count(0) == 1  # not applied
    assert alice.told() == [{"type": "error", "code": "timeout", "message": late, "fatal": True}]


async def test_a_frame_taking_seat_is_given_each_requests_id_and_its_budget_in_either_lane(
        autojump_clock: Any) -> None:
    # Every third request goes to the awaited lane; the game clock makes every budget
    # different (what is left of 30 s, 0.25 s a decision).
    alice = FramePlayer("alice", quarter_seconds(0, 0.0), quick=lambda i: i % 3 != 0)
    bob = FramePlayer("bob", quarter_seconds(0, 0.0))
    record = await one_game([alice, bob], tc=TimeControl(base=30.0, move=None))
    assert record.forfeit is None
    assert {lane for lane, *_ in alice.lanes} == {"now", "awaited"}
    ids = [frame_id for _, frame_id, _, _ in alice.lanes]
    assert ids == list(range(1, len(ids) + 1))
    assert [(request_id, budget) for _, _, request_id, budget in alice.lanes] == [
        (i, 30.0 - 0.25 * (i - 1)) for i in ids]


async def test_a_frame_taking_seat_that_fails_while_its_events_are_queued_forfeits_with_its_own_failure(
        autojump_clock: Any) -> None:
    # Every listener takes frames and nobody watches: the events are queued, unawaited.
    def first_attack(message: dict[str, Any]) -> bool:
        return message["type"] == "event" and message["event"]["type"] == "attack"

    alice = FramePlayer("alice", quarter_seconds(0, 0.0))
    bob = FramePlayer("bob", quarter_seconds(0, 0.0), fails=first_attack, failure=GONE)
    record = await one_game([alice, bob])
    assert (record.termination, record.durak, record.last_out) == ("disconnect", 1, ())
    assert record.forfeit == {"seat": 1, "bot": "bob", "kind": "disconnect",
                              "reason": "the connection was lost", "decision": 1,
                              "evidence": {"bytes": "00ff"}}
    assert record.reason == "bob forfeited (disconnect): the connection was lost"
    assert alice.ends() == [{"type": "game_end", "game": 3, "durak": 1, "termination": "disconnect",
                             "reason": "bob forfeited (disconnect)"}]


async def test_a_spectator_sees_every_public_event_of_a_game_between_seats_that_take_frames(
        autojump_clock: Any) -> None:
    alice = FramePlayer("alice", quarter_seconds(0, 0.0))
    bob = FramePlayer("bob", quarter_seconds(0, 0.0))
    watched: list[dict[str, Any]] = []
    record = await one_game([alice, bob], index=7, watch=watched)
    assert record.termination == "normal"
    assert [m["type"] for m in (watched[0], watched[-1])] == ["start", "end"]
    seen_by_bob = [m["event"] for how, m in bob.got if m["type"] == "event"]
    public = [e for e in seen_by_bob if e["type"] != "decline_trump"]
    assert len(public) > 10
    assert [m["event"]["type"] for m in watched[1:-1]] == [e["type"] for e in public]


async def test_each_seat_is_told_at_the_start_its_seat_its_own_hand_the_trump_and_the_first_attacker(
        autojump_clock: Any) -> None:
    alice, bob = pair(first_legal)
    await one_game([alice, bob])  # deal "match:0" of seed 4, dealt by seat 1
    common = {"type": "game_start", "game": 3, "players": 2, "names": ["alice", "bob"],
              "rules": CLASSIC.as_dict(), "dealer": 1, "trump": "9D", "trump_suit": "D",
              "attacker": 0}  # alice holds the lowest trump (7D)
    assert [m for how, m in alice.got if m["type"] == "game_start"] == [
        dict(common, seat=0, hand=["7D", "7H", "8C", "9C", "TC", "AS"])]
    assert [m for how, m in bob.got if m["type"] == "game_start"] == [
        dict(common, seat=1, hand=["6H", "7S", "TD", "JD", "QH", "KH"])]


async def test_a_game_record_holds_the_games_own_wall_time_not_what_came_before(
        autojump_clock: Any) -> None:
    await trio.sleep(500.0)  # the game starts at virtual time 500, not 0
    alice, bob = Sleeper("alice", first_legal), Sleeper("bob", first_legal)
    record = await one_game([alice, bob])
    assert record.wall_s == float(len(alice.requests()) + len(bob.requests()))
