"""Match logs for the replay-viewer tests, made by the real referee, and the oracle the
tests compare the viewer with: the rules engine re-dealing a logged game.

- ``play_match``: a real ``durak-ref match`` writes a log (any bots, any rules);
- ``hostile_names_log``: a match whose bots' hello names are HTML that would run;
- ``resign_log``: records signed again by a forger's key (or any key given);
- ``with_illegal_forfeit``: a copy of a log whose game 0 ends early with an illegal
  action (a card the forfeiting seat holds) as the forfeit's evidence, so a seat view
  can be checked not to show it;
- ``states``: every state of a logged game, one per decision, with what each seat could
  not see at that moment.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.records.matchlog import read_log
from referee.rules import Game
from referee.rules.actions import parse_action
from referee.rules.cards import card_str, iter_bits, mask_str, parse_card
from referee.rules.options import rules_from_dict
from support import cli

MARKUP_BOT = Path(__file__).parent / "badinput" / "bots" / "markup_bot.py"
#: Hello names (at most 64 characters, the protocol's limit) that would run script if
#: the page let them in as markup. Each, if it ran, changes the document's title.
SCRIPT_NAME = "</script><script>document.title='pwned'</script>"
IMG_NAME = "<img src=x onerror=\"document.title='img'\">&amp;"

CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][CDHS](?![A-Za-z0-9])")


def play_match(tmp: Path, *bots: str, games: int = 2, seed: str = "viewer", extra: tuple[str, ...] = ()) -> Path:
    """Run a real match and return its log."""
    log_dir = tmp / "logs"
    tmp.mkdir(parents=True, exist_ok=True)
    res = cli("match", *bots, "--games", str(games), "--seed", seed, "--log-dir", log_dir,
              "--sandbox", "none", *extra, cwd=tmp, timeout=120)
    assert res.returncode == 0, res.stderr
    (log,) = sorted(log_dir.glob("match-*.jsonl"))
    return log


def hostile_names_log(tmp: Path) -> Path:
    """A 3-seat match: two program bots named SCRIPT_NAME and IMG_NAME, and random."""
    bot = f"{sys.executable} {MARKUP_BOT}"
    return play_match(tmp, f"{bot} {shlex.quote(SCRIPT_NAME)}", f"{bot} {shlex.quote(IMG_NAME)}", "builtin:random")


def with_illegal_forfeit(log: Path, out: Path, at: int = 6) -> tuple[Path, str]:
    """Copy ``log`` to ``out`` with game 0 cut after ``at`` decisions and ended there by
    an illegal action of the seat to move: a card it holds that it may not play.
    Returns (the new log, that card). The copy passes ``replay --verify``."""
    contents = read_log(log)
    rules = rules_from_dict(contents.header["rules"], contents.header.get("preset", "classic"))
    lines = log.read_text().splitlines()
    record = json.loads(lines[1])
    assert record["type"] == "game" and record["game"] == 0
    for cut in range(at, len(record["decisions"])):
        game = Game.new(rules, len(record["players"]), deck=[parse_card(c) for c in record["deck"]],
                        dealer=record["dealer"])
        decisions = record["decisions"][:cut]
        for _seat, action, _forced, *_ in decisions:
            game.apply_legal(parse_action(action))
        seat = game.current_seat
        assert seat is not None
        illegal = [c for c in iter_bits(game.hands[seat])
                   if game.illegal_reason(parse_action(f"attack {card_str(c)}")) is not None]
        if illegal:
            card = illegal[0]
            text = f"attack {card_str(card)}"
            break
    else:
        raise AssertionError("no decision where the seat to move holds a card it may not attack with")
    record.update(decisions=decisions, termination="illegal", durak=seat, last_out=[],
                  reason=f"{record['players'][seat]} forfeited (illegal): it played {text}",
                  forfeit={"seat": seat, "kind": "illegal", "reason": f"it played {text}",
                           "evidence": {"received": {"type": "attack", "card": card_str(card)},
                                        "stderr_tail": f"my hand: {' '.join(mask_str(game.hands[seat]))}"}})
    lines[1] = json.dumps(record)
    out.write_text("\n".join(lines) + "\n")
    return out, card_str(card)


def resign_log(records: list[dict[str, Any]], out: Path, key: Any = None) -> Path:
    """What a forger does after editing a log's ``records``: sign every line again
    (records/signing.py) with ``key`` (a ``SigningKey``; default a new one, the
    forger's) and write its public half into the header. Returns ``out``."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from referee.records.matchlog import encode_line
    from referee.records.signing import NO_PREVIOUS, SigningKey, public_text

    if key is None:
        private = Ed25519PrivateKey.generate()
        key = SigningKey(private, public_text(private.public_key()))
    previous, lines = NO_PREVIOUS, []
    for r in records:
        r = {k: v for k, v in r.items() if k != "sig"}
        if r["type"] == "header":
            r["signing_key"] = key.public
        line, previous = key.sign_line(previous, encode_line(r)[:-1])
        lines.append(line)
    out.write_bytes(b"".join(lines))
    return out


def with_odd_fields(log: Path, out: Path) -> Path:
    """Copy ``log`` to ``out`` with every field the schema checks leave open given a
    type nobody expects (names that are numbers, counts that are text, maps that are
    lists). The games still replay."""
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    header, footer = lines[0], lines[-1]
    header["bots"] = [{"name": 5, "spec": {"a": 1}}, {"name": None}, {}]
    header["time_control"] = "fast"
    header["started"] = 1234
    footer["summary"] = {"bots": [{"name": ["x"], "games": "many", "durak": True, "forfeits": [1]}, 7,
                                  {"name": "b", "forfeits": {"timeout": "x", "crash": 2}}],
                         "warnings": "not a list"}
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return out


@dataclass
class State:
    """A game after ``decisions`` decisions (0: the deal)."""

    decisions: int
    hands: list[list[str]]
    table: list[list[str | None]]
    talon: int
    discard: int
    hidden: list[set[str]]  #: per seat, the cards it could not see at that moment


def states(log: Path, game_no: int) -> tuple[dict[str, Any], list[State]]:
    """The game record and every state of game ``game_no``, dealt again by the engine."""
    contents = read_log(log)
    rules = rules_from_dict(contents.header["rules"], contents.header.get("preset", "classic"))
    (record,) = [g for g in contents.games if g["game"] == game_no]
    game = Game.new(rules, len(record["players"]), deck=[parse_card(c) for c in record["deck"]],
                    dealer=record["dealer"])

    def snap(i: int) -> State:
        obs = game.observe(0)
        return State(i, [mask_str(h) for h in game.hands], obs["table"], obs["talon"],
                     len(obs["discard"]), [set(mask_str(game.hidden_from(s))) for s in range(game.players)])

    out = [snap(0)]
    for i, (_seat, text, _forced, *_) in enumerate(record["decisions"], 1):
        game.apply_legal(parse_action(text))
        out.append(snap(i))
    return record, out


def never_seen_by(all_states: list[State], seat: int) -> set[str]:
    """The cards ``seat`` could not see at any moment of the game."""
    cards = set.intersection(*(s.hidden[seat] for s in all_states))
    return cards
