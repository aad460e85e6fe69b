"""Results that cannot be forged: ``replay --verify`` refuses a forfeit that could not
have happened where a record ends, and every log line is signed by the referee's key,
so a record edited after the referee wrote it is named even when it still replays.

Each forgery starts from a real log the referee wrote. A forgery meant to test the
forfeit check is written as an unsigned old-format log (signatures stripped, format
``durak-ref-log/1``): so only the forfeit check can catch it, as for a log from before
signing. A forgery meant to test the signatures keeps them.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from referee.records.signing import SigningKey, public_text
from referee.rules import Game
from referee.rules.actions import parse_action
from referee.rules.cards import parse_card
from referee.rules.options import rules_from_dict
from replay_logs import resign_log
from support import cli

pytestmark = pytest.mark.process

Record = dict[str, Any]


@pytest.fixture(scope="module")
def real_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real 3-game log of greedy against random, signed with the tests' key."""
    d = tmp_path_factory.mktemp("forge")
    proc = cli("match", "builtin:greedy", "builtin:random", "-n", "3", "--seed", "forge",
               "--log-dir", d / "logs", cwd=d)
    assert proc.returncode == 0, proc.stderr
    (log,) = (d / "logs").glob("*.jsonl")
    return log


def records(log: Path) -> list[Record]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def write_unsigned(recs: list[Record], out: Path) -> Path:
    """``recs`` as an unsigned durak-ref-log/1 log (a log from before signing)."""
    lines = []
    for r in recs:
        r = {k: v for k, v in r.items() if k not in ("sig", "signing_key")}
        if r["type"] == "header":
            r["format"] = "durak-ref-log/1"
        lines.append(json.dumps(r, separators=(",", ":")) + "\n")
    out.write_text("".join(lines))
    return out


def write_as_is(recs: list[Record], out: Path) -> Path:
    """``recs`` as the referee encodes a line, keeping each ``sig`` where it was (last)."""
    out.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
    return out


def position(header: Record, record: Record, cut: int) -> Game:
    """The game of ``record`` after its first ``cut`` decisions."""
    game = Game.new(rules_from_dict(header["rules"], header["preset"]), len(record["players"]),
                    deck=[parse_card(c) for c in record["deck"]], dealer=record["dealer"])
    for _seat, action, *_ in record["decisions"][:cut]:
        game.apply_legal(parse_action(action))
    return game


def forfeit_at(header: Record, record: Record, to_move: int, forfeiter: int, kind: str) -> int:
    """End ``record`` (in place) as a ``kind`` forfeit of seat ``forfeiter`` at the first
    decision after the first where seat ``to_move`` is to move; returns that cut."""
    cut = next(i for i in range(1, len(record["decisions"]))
               if position(header, record, i).current_seat == to_move)
    name = record["players"][forfeiter]
    record.update(decisions=record["decisions"][:cut], termination=kind, durak=forfeiter,
                  last_out=[], reason=f"{name} forfeited ({kind}): no answer within 10.000 s",
                  forfeit={"seat": forfeiter, "bot": name, "kind": kind, "decision": cut,
                           "reason": "no answer within 10.000 s",
                           "evidence": {"waited_s": 10.0, "budget_s": 10.0}})
    return cut


def verify(log: Path, *extra: str | Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``durak-ref replay LOG --verify``: its exit code and its whole output."""
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        proc = cli("replay", log, "--verify", *extra, cwd=log.parent)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return proc.returncode, proc.stdout + proc.stderr


# -- (a) a forfeit must have been possible where the record ends


def test_a_real_log_verifies_signed_by_the_trusted_key(real_log: Path) -> None:
    code, output = verify(real_log)
    assert code == 0, output
    assert "3 of 3 games verified" in output
    assert "signed by the trusted key ed25519:" in output


def test_a_timeout_forged_on_the_seat_not_to_move_fails_naming_the_game(real_log: Path, tmp_path: Path) -> None:
    """The known attack: a real game cut where seat 1 was to move, seat 0 recorded as
    timing out. Seat 0 was not being waited for: the forfeit is impossible."""
    recs = records(real_log)
    cut = forfeit_at(recs[0], recs[1], to_move=1, forfeiter=0, kind="timeout")
    forged = write_unsigned(recs[:2], tmp_path / "forged.jsonl")
    code, output = verify(forged)
    assert code == 1, output
    assert (f"game 0, after decision {cut}: seat 0 is recorded as forfeiting by timeout, which is "
            f"impossible: it was seat 1's turn") in output
    assert "0 of 1 games verified" in output


def test_the_same_timeout_of_the_seat_to_move_verifies(real_log: Path, tmp_path: Path) -> None:
    """The control: seat 1 timing out where seat 1 was to move is a result the referee
    could have written (a built-in runs on the clock too), so the check is not a ban on
    timeouts."""
    recs = records(real_log)
    forfeit_at(recs[0], recs[1], to_move=1, forfeiter=1, kind="timeout")
    code, output = verify(write_unsigned(recs[:2], tmp_path / "fair.jsonl"))
    assert code == 0, output
    assert "1 of 1 games verified" in output and "unsigned" in output


@pytest.mark.parametrize("kind", ["crash", "disconnect", "protocol", "illegal"])
def test_a_builtin_seat_cannot_forfeit_but_on_time(real_log: Path, tmp_path: Path, kind: str) -> None:
    """A built-in runs inside the referee: it has no process to crash, no connection to
    drop, no wire to garble, and its own wrong answer is the referee's bug."""
    recs = records(real_log)
    forfeit_at(recs[0], recs[1], to_move=1, forfeiter=1, kind=kind)
    recs[1]["forfeit"]["evidence"] = {"received": {"type": "take"}}
    code, output = verify(write_unsigned(recs[:2], tmp_path / f"{kind}.jsonl"))
    assert code == 1, output
    assert f"seat 1 (random) is recorded as forfeiting by {kind}, which is impossible: it is a builtin bot" in output


def test_an_illegal_action_only_from_the_seat_to_move(real_log: Path, tmp_path: Path) -> None:
    recs = records(real_log)
    recs[0]["bots"][0]["kind"] = "command"  # as if seat 0 were a program bot
    cut = forfeit_at(recs[0], recs[1], to_move=1, forfeiter=0, kind="illegal")
    recs[1]["forfeit"]["evidence"] = {"received": {"type": "take"}}
    code, output = verify(write_unsigned(recs[:2], tmp_path / "illegal.jsonl"))
    assert code == 1, output
    assert (f"game 0, after decision {cut}: seat 0 is recorded as forfeiting by illegal, which is "
            f"impossible: it was seat 1's turn") in output


def test_forfeit_fields_must_agree_with_the_record(real_log: Path, tmp_path: Path) -> None:
    recs = records(real_log)
    cut = forfeit_at(recs[0], recs[1], to_move=1, forfeiter=1, kind="timeout")
    recs[1]["forfeit"]["decision"] = cut - 1
    code, output = verify(write_unsigned(recs[:2], tmp_path / "decision.jsonl"))
    assert code == 1 and f"recorded at decision {cut - 1} but the record ends after {cut}" in output


# -- (b) every line is signed


def test_an_edited_record_that_still_replays_is_named(real_log: Path, tmp_path: Path) -> None:
    """Two cards of one seat's opening hand swapped in the deck: the same game replays
    card for card, but it is not what the referee wrote."""
    recs = records(real_log)
    deck = recs[2]["deck"]
    deck[0], deck[2] = deck[2], deck[0]  # (2 seats: deck[0] and deck[2] go to one hand)
    edited = write_as_is(recs, tmp_path / "edited.jsonl")
    code, output = verify(edited)
    assert code == 1, output
    assert ("game 1: signature does not match: the record was changed after the referee wrote it"
            in output)
    assert "2 of 3 games verified" in output


def test_a_changed_result_that_replays_is_named(real_log: Path, tmp_path: Path) -> None:
    """A normal game turned into a timeout of the seat to move: a possible forfeit, so
    only the signature shows that the referee never wrote it."""
    recs = records(real_log)
    forfeit_at(recs[0], recs[3], to_move=1, forfeiter=1, kind="timeout")
    code, output = verify(write_as_is(recs, tmp_path / "result.jsonl"))
    assert code == 1, output
    assert "game 2: signature does not match" in output
    assert "2 of 3 games verified" in output


def test_a_removed_record_breaks_the_chain(real_log: Path, tmp_path: Path) -> None:
    recs = records(real_log)
    del recs[2]  # game 1
    code, output = verify(write_as_is(recs, tmp_path / "removed.jsonl"))
    assert code == 1, output
    assert "game 2: signature does not match" in output


def test_an_unsigned_old_log_is_reported_as_unsigned(real_log: Path, tmp_path: Path) -> None:
    old = write_unsigned(records(real_log), tmp_path / "old.jsonl")
    code, output = verify(old)
    assert code == 0, output
    assert "unsigned (a durak-ref-log/1 log" in output and "3 of 3 games verified" in output
    code, output = verify(old, "--require-signature")
    assert code == 1, output


def test_a_signed_log_with_its_signatures_stripped_fails(real_log: Path, tmp_path: Path) -> None:
    """A durak-ref-log/2 log is always signed: one whose signatures were removed but
    that kept its format is not taken for an old log."""
    recs = [{k: v for k, v in r.items() if k != "sig"} for r in records(real_log)]
    code, output = verify(write_as_is(recs, tmp_path / "stripped.jsonl"))
    assert code == 1, output
    assert "carries no signature" in output


def test_a_log_resigned_by_another_key_is_refused(real_log: Path, tmp_path: Path) -> None:
    """A forger's log is whole under the forger's key: only the trusted key (this
    machine's key file, or --trust) refuses it."""
    private = Ed25519PrivateKey.generate()
    forger = SigningKey(private, public_text(private.public_key()))
    recs = records(real_log)
    forfeit_at(recs[0], recs[1], to_move=1, forfeiter=1, kind="timeout")
    forged = resign_log(recs, tmp_path / "resigned.jsonl", forger)
    code, output = verify(forged)
    assert code == 1, output
    assert f"signed by {forger.public}, not by the trusted key" in output
    trusted = records(real_log)[0]["signing_key"]
    code, output = verify(forged, "--trust", trusted)
    assert code == 1 and "not by the trusted key" in output
    code, output = verify(forged, "--trust", forger.public)  # who trusts the forger accepts
    assert code == 0, output


def test_without_a_trusted_key_a_signature_is_reported_not_trusted(real_log: Path, tmp_path: Path) -> None:
    code, output = verify(real_log, env={"DURAK_REF_KEY": str(tmp_path / "none.key")})
    assert code == 0, output
    assert "no trusted key to check that key against" in output
    assert not (tmp_path / "none.key").exists()  # checking never makes a key
    code, output = verify(real_log, "--require-signature",
                          env={"DURAK_REF_KEY": str(tmp_path / "none.key")})
    assert code == 1, output
    code, output = verify(real_log, "--trust", os.environ["DURAK_REF_KEY"],
                          env={"DURAK_REF_KEY": str(tmp_path / "none.key")})
    assert code == 0 and "signed by the trusted key" in output


def test_the_key_file_is_made_private_on_first_use(tmp_path: Path) -> None:
    key = tmp_path / "keys" / "referee.key"
    saved = os.environ["DURAK_REF_KEY"]
    os.environ["DURAK_REF_KEY"] = str(key)
    try:
        proc = cli("match", "builtin:greedy", "builtin:random", "-n", "1", "--log-dir", tmp_path / "l",
                   cwd=tmp_path)
    finally:
        os.environ["DURAK_REF_KEY"] = saved
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    (log,) = (tmp_path / "l").glob("*.jsonl")
    code, output = verify(log, "--trust", key)
    assert code == 0 and "signed by the trusted key" in output


def test_a_bad_trust_value_is_a_clear_error(real_log: Path) -> None:
    code, output = verify(real_log, "--trust", "ed25519:zz")
    assert code == 2 and "--trust ed25519:zz: neither ed25519:HEX" in output
