"""``durak-ref replay LOG --html OUT``, without a browser: what the file holds and the
errors for bad input. (What the page shows is tested in Chromium: tests/browser.)

A log is input from outside: a damaged one is the user's error (exit 2, the file and line
named, no traceback, no page written). A seat's view must not hold a hidden card or the
seed that deals every deck again; names are data, never markup."""

from __future__ import annotations

import gzip
import json
import stat
from pathlib import Path

import pytest

from referee.records.matchlog import read_log
from referee.rules import Game
from referee.rules.actions import parse_action
from referee.rules.cards import parse_card
from referee.rules.options import rules_from_dict
from referee.web import asset, json_script, replay_html
from referee.web.replay_html import render_replay_html, render_replay_records, replay_data
from replay_logs import CARD_TOKEN, IMG_NAME, SCRIPT_NAME, hostile_names_log, play_match, with_illegal_forfeit
from support import cli

SEED = "s33d-only-in-omniscient-pages"


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("html")
    return play_match(tmp, "builtin:greedy", "builtin:random", games=3, seed=SEED)


def html(log: Path, out: Path, *args: str) -> tuple[int, str, str]:
    res = cli("replay", log, "--html", out, *args, cwd=log.parent)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.process
def test_writes_one_self_contained_file_readable_by_its_owner_only(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, stdout, stderr = html(log, out)
    assert code == 0, stderr
    assert f"{out}: replay viewer of {log}" in stdout
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # the omniscient view holds every card
    source = out.read_text().replace('"http://www.w3.org/2000/svg"', "SVG-namespace")
    assert source.startswith("<!DOCTYPE html>")
    # Nothing to fetch: no external script, style, image or font; a CSP forbidding it anyway.
    for needle in ("src=", "href=", "@import", "url(", "http://", "https://"):
        assert needle not in source, needle
    assert "default-src 'none'" in source
    assert SEED in source  # the omniscient view names the seed


@pytest.mark.process
def test_json_result(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    res = cli("replay", log, "--html", out, "--game", "1", "--seat", "0", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data == {"command": "replay", "version": 1, "log": str(log), "html": str(out), "game": 1,
                    "seat": 0, "bytes": out.stat().st_size}


@pytest.mark.process
def test_a_seat_view_holds_neither_the_seed_nor_another_seats_cards(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "seat.html"
    code, _, stderr = html(log, out, "--seat", "1")
    assert code == 0, stderr
    source = out.read_text()
    assert SEED not in source
    data = replay_data(read_log(log).header, read_log(log).games, seat=1)
    for replay in data["replays"]:
        for frame in replay["frames"]:
            assert frame["hands"][0] is None and frame["hands"][1] is not None
            assert frame["step"] is None or frame["step"]["seat"] == 1 or frame["step"]["ms"] is None


@pytest.mark.process
def test_forfeit_evidence_only_in_the_omniscient_view_and_the_forfeiters(tmp_path: Path) -> None:
    forfeit, card = with_illegal_forfeit(play_match(tmp_path, "builtin:greedy", "builtin:random", games=1),
                                         tmp_path / "f.jsonl")
    record = read_log(forfeit).games[0]
    culprit = record["forfeit"]["seat"]
    tail = record["forfeit"]["evidence"]["stderr_tail"]
    for seat, shown in ((None, True), (culprit, True), (1 - culprit, False)):
        args = () if seat is None else ("--seat", str(seat))
        code, _, stderr = html(forfeit, tmp_path / "f.html", *args)
        assert code == 0, stderr
        source = (tmp_path / "f.html").read_text()
        assert (tail in source) is shown, seat
        if not shown:
            assert card not in CARD_TOKEN.findall(source)
            assert f"it played attack {card}" not in source


@pytest.mark.process
def test_names_are_data_never_markup(tmp_path: Path) -> None:
    log = hostile_names_log(tmp_path)
    out = tmp_path / "h.html"
    code, _, stderr = html(log, out)
    assert code == 0, stderr
    source = out.read_text()
    assert SCRIPT_NAME not in source and IMG_NAME not in source
    assert source.count("<script") == 3 and source.count("</script>") == 3  # ours only
    assert "<img" not in source
    # The names come back whole from the page's JSON.
    start = source.index('id="replay-data">') + len('id="replay-data">')
    data = json.loads(source[start:source.index("</script>", start)])
    assert data["replays"][0]["players"][:2] == [SCRIPT_NAME, IMG_NAME]


def test_json_script_survives_any_string() -> None:
    nasty = "</script><!-- <script>\u2028\u2029 & </SCRIPT >"
    element = json_script("x", {"s": nasty})
    inner = element[element.index(">") + 1:element.rindex("</script>")]
    assert "<" not in inner and ">" not in inner
    assert json.loads(inner) == {"s": nasty}


def test_the_shared_assets_name_no_card(tmp_path: Path) -> None:
    """Seat-view tests look for hidden cards in the whole page source: the inlined assets
    must not contain card-like tokens (write 'a rank, then a suit' in comments)."""
    for name in ("cards.css", "cards.js", "replay.css", "replay.js"):
        assert CARD_TOKEN.findall(asset(name)) == [], name


@pytest.mark.process
def test_records_held_in_memory_render_the_same_page(log: Path) -> None:
    contents = read_log(log)
    assert render_replay_records(contents.header, contents.games, footer=contents.footer,
                                 game=2, seat=0, source=str(log)) == render_replay_html(log, game=2, seat=0)


@pytest.mark.process
def test_a_long_log_lists_every_game_and_shows_the_first_ones(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay_html, "MAX_GAMES", 2)
    contents = read_log(log)
    data = replay_data(contents.header, contents.games)
    assert [g["game"] for g in data["games"]] == [0, 1, 2]
    assert [g["shown"] for g in data["games"]] == [True, True, False]
    assert [r["game"] for r in data["replays"]] == [0, 1] and data["more"] == 1
    assert [r["game"] for r in replay_data(contents.header, contents.games, game=2)["replays"]] == [2]


# ------------------------------------------------------------------ bad input: exit 2

def _damage(log: Path, tmp: Path, how: str) -> Path:
    lines = log.read_text().splitlines(keepends=True)
    bad = tmp / f"{how}.jsonl"
    if how == "truncated":
        bad.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    elif how == "not-json":
        bad.write_text("".join(lines[:2]) + "{not json\n" + "".join(lines[3:]))
    elif how == "bad-card":
        record = json.loads(lines[1])
        record["deck"][0] = "1X"
        bad.write_text(lines[0] + json.dumps(record) + "\n" + "".join(lines[2:]))
    elif how == "illegal-move":
        record = json.loads(lines[1])
        record["decisions"][0][1] = "take"  # the first decision is an attack: take is illegal
        bad.write_text(lines[0] + json.dumps(record) + "\n" + "".join(lines[2:]))
    elif how == "wrong-durak":
        record = json.loads(lines[1])
        record["durak"] = 1 - record["durak"]
        bad.write_text(lines[0] + json.dumps(record) + "\n" + "".join(lines[2:]))
    elif how == "empty":
        bad.write_text("")
    elif how == "garbage":
        bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff" * 40)
    return bad


@pytest.mark.process
@pytest.mark.parametrize("how, message", [
    ("truncated", ":3: truncated line"),
    ("not-json", ":3: not valid JSON"),
    ("bad-card", ":2: damaged game 0 record: deck[0]"),
    ("illegal-move", "does not follow the rules: game 0, decision 0"),
    ("wrong-durak", "does not follow the rules: game 0: the log says normal, durak"),
    ("empty", "the log is empty"),
    ("garbage", "unreadable"),
])
def test_a_damaged_log_is_the_users_error(log: Path, tmp_path: Path, how: str, message: str) -> None:
    bad = _damage(log, tmp_path, how)
    out = tmp_path / "out.html"
    code, stdout, stderr = html(bad, out)
    assert code == 2, stderr
    assert stderr.startswith("durak-ref: error: ") and message in stderr and str(bad) in stderr
    assert "Traceback" not in stderr
    assert not out.exists()


@pytest.mark.process
@pytest.mark.parametrize("args, message", [
    (("--game", "7"), "no complete game 7 (games: 0, 1, 2)"),
    (("--game", "0", "--seat", "2"), "--seat 2: game 0 has seats 0..1"),
    (("--seat", "-1"), "--seat -1: game 0 has seats 0..1"),
    (("--verify",), "give one of them"),
])
def test_bad_options_are_named(log: Path, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    out = tmp_path / "out.html"
    code, _, stderr = html(log, out, *args)
    assert code == 2 and message in stderr, stderr
    assert not out.exists()


@pytest.mark.process
def test_missing_log_and_unwritable_output(log: Path, tmp_path: Path) -> None:
    code, _, stderr = html(tmp_path / "nope.jsonl", tmp_path / "o.html")
    assert code == 2 and "nope.jsonl: cannot open" in stderr
    code, _, stderr = html(log, tmp_path / "no-such-dir" / "o.html")
    assert code == 2 and "--html" in stderr and "cannot write" in stderr
    code, _, stderr = html(log, tmp_path)
    assert code == 2 and "cannot write" in stderr, stderr
    before = log.read_bytes()
    code, _, stderr = html(log, log.parent / ".." / log.parent.name / log.name)
    assert code == 2 and "is the log itself" in stderr, stderr
    assert log.read_bytes() == before


@pytest.mark.process
def test_a_seat_view_has_no_step_for_another_seats_declined_exchange(tmp_path: Path) -> None:
    """At a real table a declined trump exchange is invisible: a seat's view must not
    show it as a step, nor count it among a game's decisions."""
    log = play_match(tmp_path, "builtin:random", "builtin:greedy", "builtin:random", "builtin:greedy",
                     games=6, extra=("--rules", "perevodnoy", "--set", "trump_exchange=on"))
    contents = read_log(log)
    rules = rules_from_dict(contents.header["rules"], contents.header["preset"])
    hidden_somewhere = False
    for record in contents.games:
        game = Game.new(rules, len(record["players"]), deck=[parse_card(c) for c in record["deck"]],
                        dealer=record["dealer"], record_events=True)
        decliners = []
        for _seat, text, *_ in record["decisions"]:
            game.apply_legal(parse_action(text))
            assert game.events is not None
            decliners.append(game.events[0][1] if game.events[0][0] == "decline" else None)
            game.events.clear()
        for seat in range(len(record["players"])):
            data = replay_data(contents.header, contents.games, game=record["game"], seat=seat)
            shown = [f["step"]["n"] for f in data["replays"][0]["frames"][1:]]
            expected = [i for i, d in enumerate(decliners) if d is None or d == seat]
            assert shown == expected
            assert data["games"][record["game"]]["decisions"] == len(expected)
            hidden_somewhere |= len(expected) < len(record["decisions"])
    assert hidden_somewhere, "no game of this log has another seat's decline: choose another seed"


@pytest.mark.process
def test_seat_without_game_or_html_is_named(log: Path, tmp_path: Path) -> None:
    res = cli("replay", log, "--seat", "1", cwd=tmp_path)
    assert res.returncode == 2 and "give --game N too (or --html)" in res.stderr


@pytest.mark.process
def test_a_gzipped_log_renders_the_same_page(log: Path, tmp_path: Path) -> None:
    gz = tmp_path / "m.jsonl.gz"
    gz.write_bytes(gzip.compress(log.read_bytes()))
    assert render_replay_html(gz, game=1).replace(str(gz), "LOG") == render_replay_html(log, game=1).replace(str(log), "LOG")


@pytest.mark.process
def test_the_deal_line_names_the_trump_turned_up_at_the_deal_not_an_exchanged_one(tmp_path: Path) -> None:
    """After a trump exchange the face-up card is the exchanged one, which lay in a hand
    at the deal: the viewer's 'The deal ... trump X' line must name the card turned up."""
    path = play_match(tmp_path, "builtin:greedy", "builtin:random", "builtin:greedy", "builtin:random",
                      games=12, seed="exchanges", extra=("--set", "trump_exchange=on"))
    log = read_log(path)
    exchanged = 0
    for record in log.games:
        data = replay_html.game_frames(log.header, record, seat=1)
        assert data["trump"] == data["frames"][0]["trump"]
        exchanged += data["frames"][-1]["trump"] != data["frames"][0]["trump"]
    assert exchanged  # the seed deals games with an exchange
