"""protocol/SPEC.md says what the referee does: each statement about its behaviour is
checked here against the real referee (real bot processes, a real TCP gate, the engine).

The bot ``bots/told_bot.py`` writes down every message it receives, so these tests read
exactly what a bot author's program would have seen.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio

from protocol.messages import parse_bot_message
from referee.rules import EXCHANGE, Game, make_rules, parse_action
from referee.rules.actions import action_str
from referee.seats.players import parse_bot_spec
from referee.seats.tcp import TcpLimits
from referee.table.clock import Clock, TimeControl
from referee.table.match import GameRecord, MatchConfig, illegal_message
from referee.table.runner import SeatOptions, run_match_async
from support import cli
from tests.protocol.test_spec_frames import FRAMES, SPEC

TOLD = Path(__file__).resolve().parent / "bots" / "told_bot.py"
SPEC_TEXT = SPEC.read_text(encoding="utf-8")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tcp"))
from tcp_security_kit import BotRecord, Client, legit_bot, wait_until  # noqa: E402


def frame(name: str) -> dict:
    return next(m for n, _, _, m in FRAMES if n == name)


def told(tmp_path: Path, mode: str, *options: str) -> list[dict]:
    """Play one game of the told bot (seat 0) against greedy; what the bot received."""
    out = tmp_path / f"{mode}.jsonl"
    result = cli("match", f"{sys.executable} {TOLD} {mode} {out}", "builtin:greedy", "--games", "1",
                 "--seed", "spec", "--sandbox", "none", "--log-dir", tmp_path, *options, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def errors(messages: list[dict]) -> list[dict]:
    return [m for m in messages if m["type"] == "error"]


# --------------------------------------------------------------------------- section 11


@pytest.mark.process
def test_a_protocol_mistake_is_told_with_a_fatal_error_then_the_pipe_closes(tmp_path: Path) -> None:
    got = told(tmp_path, "wrong_shape")
    (error,) = errors(got)
    assert error["code"] == "protocol" and error["fatal"] is True
    assert "action" in error["message"]
    assert got[-1] is error  # no game_end, no bye: stdin is closed after it


@pytest.mark.process
def test_an_unknown_action_type_gets_the_message_section_7_quotes(tmp_path: Path) -> None:
    got = told(tmp_path, "fold")
    (error,) = errors(got)
    assert error["code"] == "protocol" and error["fatal"] is True
    assert error["message"].startswith("action.type: unknown action type 'fold'; expected one of: "
                                       "attack, cover, throw_in, transfer, show_trump, take, pass, "
                                       "exchange")
    assert "`action.type: unknown action type 'fold'; expected one of: attack, cover, throw_in,\n" \
           "   transfer, show_trump, take, pass, exchange`" in SPEC_TEXT


@pytest.mark.process
def test_a_timeout_is_told_with_a_fatal_error_then_the_pipe_closes(tmp_path: Path) -> None:
    got = told(tmp_path, "mute", "--move-time", "0.3")
    (error,) = errors(got)
    assert (error["code"], error["fatal"]) == ("timeout", True)
    assert error["message"] == "no answer to request 1 within 0.300 s"
    assert got[-1] is error


@pytest.mark.process
def test_an_illegal_forfeit_is_told_with_a_fatal_error_then_game_end(tmp_path: Path) -> None:
    got = told(tmp_path, "illegal")
    (error,) = errors(got)
    assert (error["code"], error["fatal"]) == ("illegal", True)
    assert error["message"].startswith("illegal action ")
    after = got[got.index(error) + 1:]
    assert [m["type"] for m in after] == ["game_end", "bye"]
    assert after[0]["termination"] == "illegal" and after[0]["durak"] == 0


@pytest.mark.process
def test_after_a_stale_notice_no_request_is_repeated(tmp_path: Path) -> None:
    """Section 5/11: a stale answer is ignored (fatal false) and the open request keeps
    waiting; the bot's right answer to it is taken, and no new request comes for it."""
    got = told(tmp_path, "stale")
    stale = errors(got)
    assert stale and all((e["code"], e["fatal"]) == ("stale", False) for e in stale)
    ids = [m["id"] for m in got if m["type"] == "request"]
    assert ids == list(range(1, len(ids) + 1))
    assert len(stale) == len(ids)
    assert [m for m in got if m["type"] == "game_end"][0]["termination"] in ("normal", "draw")


def test_illegal_and_auth_examples_quote_the_real_wording() -> None:
    # Section 5's example: seat 0 holds 7H 9C JD QS AS, 6S/9S on the table, trump TH.
    g = Game.from_position(make_rules("classic"), ["7H 9C JD QS AS", "6C 6D 7S 8S 9D"],
                           trump="TH", table="6S/9S", attacker=0)
    assert frame("error")["message"] == illegal_message(g, parse_action("throw_in QS"), 2)
    assert frame("error-auth")["message"] == "authentication failed for 'greedy' (wrong token or unknown name)"


async def test_a_wrong_token_gets_the_auth_message_section_13_quotes(tmp_path: Path) -> None:
    events: list[str] = []
    options = SeatOptions(listen=("127.0.0.1", 0), tokens=(("greedy", "k3y"),), connect_wait=20)
    config = MatchConfig(rules=make_rules("classic"), games=1, seed=3)
    refused: list[dict] = []

    async def intruder_then_bot(port_of) -> None:
        await wait_until(lambda: port_of() is not None, 10, "the gate to listen")
        client = await Client.connect(port_of())
        await client.hello("greedy", "wrong")
        refused.extend(await client.until_closed(5))
        await client.aclose()
        await legit_bot(port_of(), "greedy", "k3y")

    def port() -> int | None:
        for e in events:
            if e.startswith("listening on "):
                return int(e.split(":")[1].split()[0])
        return None

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(intruder_then_bot, port)
            await run_match_async([parse_bot_spec("tcp:greedy"), parse_bot_spec("builtin:random")],
                                  config, log_dir=tmp_path, options=options, on_tcp=events.append)
    assert [(m["code"], m["message"], m["fatal"]) for m in refused] == [
        ("auth", frame("error-auth")["message"], True)]


# --------------------------------------------------------------------------- pings


async def test_a_tcp_bot_is_pinged_while_the_other_seat_connects(tmp_path: Path) -> None:
    """Section 5 (ping), 13: in `match`, a TCP bot that connected first is pinged while it
    waits for the other seats; bob connects only after alice has seen a ping."""
    events: list[str] = []
    options = SeatOptions(listen=("127.0.0.1", 0), tokens=(("alice", "a"), ("bob", "b")),
                          connect_wait=30, ping_interval=0.05, ping_timeout=5)
    config = MatchConfig(rules=make_rules("classic"), games=2, seed=4)
    alice, bob = BotRecord("alice"), BotRecord("bob")
    games: list[GameRecord] = []

    def port() -> int | None:
        for e in events:
            if e.startswith("listening on "):
                return int(e.split(":")[1].split()[0])
        return None

    async def seats() -> None:
        await wait_until(lambda: port() is not None, 10, "the gate to listen")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(legit_bot, port(), "alice", "a", alice)
            await wait_until(lambda: alice.pings >= 2, 20, "alice to be pinged")
            nursery.start_soon(legit_bot, port(), "bob", "b", bob)

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(seats)
            await run_match_async([parse_bot_spec("tcp:alice"), parse_bot_spec("tcp:bob")], config,
                                  log_dir=tmp_path, options=options, on_tcp=events.append,
                                  on_game=lambda r, _: games.append(r))
    assert alice.pings >= 2 and alice.connections == 1
    assert len(games) == 2 and all(g.forfeit is None for g in games)
    assert alice.games == [0, 1] and bob.games == [0, 1]


def test_the_documented_times_are_the_referees() -> None:
    limits = TcpLimits()
    assert (limits.ping_interval, limits.ping_timeout, limits.handshake_s) == (15.0, 5.0, 5.0)
    assert (SeatOptions().ping_interval, SeatOptions().ping_timeout) == (15.0, 5.0)
    flowed = " ".join(SPEC_TEXT.split())  # the same words however the lines are wrapped
    assert "every **15 s**" in flowed and "within **5 s**" in flowed
    assert SeatOptions().grace == 1.0 and "waits a grace period of 1 s" in SPEC_TEXT
    assert "`--handshake-time` (5 s by default)" in SPEC_TEXT
    assert "`--startup-time` of `match`" in SPEC_TEXT


# --------------------------------------------------------------------------- section 8, 10, 14


def test_attack_limit_is_fixed_when_the_bout_begins() -> None:
    rules = make_rules("classic")
    g = Game.from_position(rules, ["6S 6H 6D 7C", "7S 8H QC"], trump="AC", talon="9D AC",
                           attacker=0)
    g.apply(parse_action("attack 6S"))
    assert g.observe(0)["attack_limit"] == 3  # min(6, the defender's 3 cards)
    g.apply(parse_action("cover 0 7S"))  # the defender now holds 2 cards
    assert g.observe(1)["attack_limit"] == 3
    capped = make_rules("classic", ["max_attacks=2"])
    assert Game.from_position(capped, ["6S", "7S 8H QC"], trump="AC", talon="9D AC",
                              attacker=0).observe(0)["attack_limit"] == 2


def test_transfer_sets_the_attack_limit_from_the_new_defender() -> None:
    rules = make_rules("perevodnoy")
    g = Game.from_position(rules, ["6S 9C", "6H 7D 8D 9D TD", "JC QC KC"], trump="AC",
                           talon="9H AC", attacker=0)
    g.apply(parse_action("attack 6S"))
    assert g.observe(1)["attack_limit"] == 5
    g.apply(parse_action("transfer 6H"))
    assert g.observe(2)["attack_limit"] == 3  # seat 2's hand when the bout reached it


def test_trump_and_holder_when_every_card_is_dealt() -> None:
    rules = make_rules("classic", ["deck=24"])
    g = Game.new(rules, 4, seed=1)
    obs = g.observe(0)
    dealer = obs["dealer"]
    assert obs["talon"] == 0 and obs["trump_holder"] == dealer
    assert obs["trump"] in obs["known"][dealer]
    assert obs["trump"] in g.observe(dealer)["hand"]


def test_trump_after_an_exchange_is_the_low_trump_laid_face_up() -> None:
    rules = make_rules("classic", ["trump_exchange=on"])
    for seed in range(200):
        g = Game.new(rules, 2, seed=seed)
        if g.exchange_seat is not None:
            break
    seat, before = g.exchange_seat, g.observe(0)["trump"]
    g.apply(EXCHANGE)
    after = g.observe(0)
    assert after["trump"] != before and after["trump"][1] == before[1]
    assert after["trump"][0] == "6" and after["trump_holder"] is None
    assert before in after["known"][seat]


def test_the_clock_example_is_a_400_ms_move() -> None:
    clock = Clock(TimeControl.parse("60+0.5", 2.0))
    assert clock.wire()["remaining_ms"] == 60000
    clock.start(10.0)
    clock.stop(10.4)
    second = frame("conversation-08")
    assert clock.wire() == second["clock"] == frame("request")["clock"]
    assert "60000 − 400 + 500 = 60100" in SPEC_TEXT


def lone_moves(log: Path) -> list[tuple[int, bool]]:
    """(seat, logged as forced) for every decision of the match log ``log`` whose only
    legal action was a pass or a take, found by replaying the log through the engine."""
    from referee.replay.replay import dealt_game, log_rules

    lines = [json.loads(line) for line in log.read_text().splitlines()]
    rules = log_rules(lines[0])
    found = []
    for record in (r for r in lines if r.get("type") == "game"):
        game = dealt_game(rules, record)
        for seat, text, forced, _ in record["decisions"]:
            legal = game.legal_actions()
            if len(legal) == 1 and action_str(legal[0]).split()[0] in ("pass", "take"):
                found.append((seat, forced))
            game.apply(parse_action(text))
    return found


def match_log(tmp_path: Path) -> Path:
    return next(tmp_path.glob("match-*.jsonl"))


@pytest.mark.process
def test_a_forced_move_takes_the_same_path_as_a_chosen_one(tmp_path: Path) -> None:
    """Section 9 (ask_forced on, the default): a seat whose only legal action is pass or
    take is asked like any other, so the event the other seats get follows that seat's
    answer, as after a chosen move. Checked on a real match: the told bot (seat 0) was
    sent a request for each of its lone moves and no event marked forced; the log records
    every decision of both seats, the built-in's lone moves included, as decided by the
    seat (none forced); and the section 14 conversation shows seat 1's lone take."""
    take = frame("conversation-17")["event"]
    assert take == {"type": "take", "seat": 1}
    got = told(tmp_path, "play", "--games", "4")
    requests = [m for m in got if m["type"] == "request"]
    lone_requests = [r for r in requests if len(r["legal"]) == 1
                     and r["legal"][0]["type"] in ("pass", "take")]
    assert lone_requests, "this deal gives the told bot no lone pass or take"
    assert not [m for m in got if m["type"] == "event" and "forced" in m["event"]]
    lone = lone_moves(match_log(tmp_path))
    assert {seat for seat, _ in lone} == {0, 1}  # both seats had lone moves ...
    assert not any(forced for _, forced in lone)  # ... and each was asked, none applied unasked
    assert len(lone_requests) == sum(1 for seat, _ in lone if seat == 0)


@pytest.mark.process
def test_with_ask_forced_off_the_referee_plays_lone_moves_itself_and_says_so(tmp_path: Path) -> None:
    """The opt-out (section 9): lone moves are not asked; the log marks them forced and
    only the seat whose move it was gets ``forced`` in its event. (What it leaks, how
    soon the event follows, is why it is off by default.)"""
    got = told(tmp_path, "play", "--games", "4", "--set", "ask_forced=off")
    seat = next(m for m in got if m["type"] == "game_start")["seat"]
    assert not [r for r in got if r["type"] == "request" and len(r["legal"]) == 1
                and r["legal"][0]["type"] in ("pass", "take")]
    forced = [m["event"] for m in got if m["type"] == "event" and m["event"].get("forced")]
    assert forced and all(e["seat"] == seat for e in forced)
    lone = lone_moves(match_log(tmp_path))
    assert {seat for seat, _ in lone} == {0, 1} and all(forced for _, forced in lone)


def test_the_spec_has_the_game_in_brief() -> None:
    brief = SPEC_TEXT.split("### The game in brief", 1)[1].split("## 2.", 1)[0]
    for words in ("trump", "durak", "throw in", "take", "draws up to six", "the defender last"):
        assert words in brief


def test_the_told_bot_speaks_the_protocol() -> None:
    parse_bot_message({"type": "hello", "protocol": 1, "name": "told"})
