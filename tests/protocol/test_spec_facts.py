"""The facts protocol/SPEC.md states about limits are the engine's and the referee's own:
the deck/player pairs the rules accept, the ping schedule, the restart limit, and that
`match --listen` is guarded like the arena."""

from __future__ import annotations

from pathlib import Path

import pytest

import protocol
from referee.rules.options import RulesError, make_rules
from referee.seats.tcp import TcpLimits
from referee.table.match import MatchConfig

SPEC = " ".join(Path(protocol.__file__).with_name("SPEC.md").read_text(encoding="utf-8").split())


def accepted(deck: int) -> list[int]:
    rules, players = make_rules(overrides={"deck": str(deck)}), []
    for n in range(1, 9):
        try:
            rules.check_table(n)
        except RulesError:
            continue
        players.append(n)
    return players


@pytest.mark.parametrize("deck", [24, 36, 52])
def test_the_spec_states_the_deck_and_player_pairs_the_engine_accepts(deck: int) -> None:
    players = accepted(deck)
    assert f"a {deck}-card deck with {players[0]} to {players[-1]}" in SPEC


def test_the_spec_states_the_ping_schedule_and_the_restart_limit() -> None:
    limits = TcpLimits()
    assert f"a ping round every **{limits.ping_interval:g} s**" in SPEC
    assert f"does not answer within **{limits.ping_timeout:g} s** is disconnected" in SPEC
    assert f"`--max-restarts N`, {MatchConfig(rules=make_rules()).max_restarts} by default" in SPEC
    assert "no new process is started" in SPEC


def test_the_spec_says_match_listen_is_throttled_like_the_arena_and_caps_memory() -> None:
    assert "The same gate guards `durak-ref match --listen`" in SPEC
    assert "the bot's memory, tmpfs included, is capped at `--max-memory`" in SPEC
    assert "give it `-Xmx` well below the limit" in SPEC
    assert "**With game_start.**" in SPEC


def test_the_spec_quotes_the_version_mismatch_message_word_for_word() -> None:
    """A bot author reads in section 4 exactly what a version mismatch says (it was
    recorded as a bare protocol error in words of its own)."""
    from protocol import messages as m
    from protocol.errors import UnsupportedVersionError

    with pytest.raises(UnsupportedVersionError) as refused:
        m.check_version(m.BotHello(2, "x"))
    assert f"the message says `{refused.value}`" in SPEC
    assert "its reason the same `version mismatch: ...` words" in SPEC


def test_the_spec_states_how_long_check_bot_waits_for_a_tcp_bot() -> None:
    from referee.table.runner import CONNECT_WAIT_S

    assert f"The check waits **{CONNECT_WAIT_S:g} s** for that first connection" in SPEC
    assert f"within {CONNECT_WAIT_S:g} s` if none comes" in SPEC
