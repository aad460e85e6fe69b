"""A pong answers a ping, once, with its id (SPEC section 6): a bot that streams pongs
nobody asked for is failed at the first one, so what it sends costs the bot its game,
not the referee its time.

Before this rule pongs were accepted anywhere, and a pipe bot streaming valid pongs made
the referee decode up to 1 MB of them before every request (10 games: 29.5 s of referee
CPU instead of 0.4 s). No test here measures time: the proxy for the referee's work is
the number of the bot's frames it decodes, which is now one past its answers.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from test_early_frames import REQUEST, pipe_pair, socket_pair

from protocol import messages as msg
from protocol.codec import FrameDecoder, encode
from referee.seats.players import BotFailure
from support import ask, cli

BOT = Path(__file__).resolve().parent / "bots" / "hostile_bot.py"
UNSOLICITED_0 = ("sent an unsolicited pong (id 0) {when}: no ping was open; a pong only "
                 "answers a ping, once, with its id")


@pytest.mark.process
def test_a_bot_streaming_pongs_through_the_real_cli_forfeits_each_game_at_its_first_pong(
        tmp_path: Path) -> None:
    """The hostile bot (hostile_bot.py pong_flood: plays, while a thread writes pongs
    0, 1, 2, ... as fast as the pipe takes them) under `durak-ref match` with default
    options (sandbox and all). Every game it plays is its protocol forfeit, and the
    pong judged is always pong 0, the first it wrote in that process: the referee never
    decoded a second one (a restarted bot starts again at 0)."""
    games = 3
    flooder = shlex.join([sys.executable, str(BOT), "pong_flood", "-"])
    result = cli("match", "-n", str(games), "--seed", "floods", "--log-dir", tmp_path / "logs",
                 "--json", f"flood={flooder}", "builtin:greedy", cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    [log] = (tmp_path / "logs").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    forfeits = [r["forfeit"] for r in records if r.get("type") == "game"]
    assert len(forfeits) == games
    for forfeit in forfeits:
        assert forfeit is not None and (forfeit["bot"], forfeit["kind"]) == ("flood", "protocol")
        assert forfeit["evidence"]["received"] == {"type": "pong", "id": 0}
        when = forfeit["reason"].split("(id 0) ", 1)[1].split(":", 1)[0]
        assert when.startswith(("before request ", "while request ")), forfeit["reason"]
        assert forfeit["reason"].startswith(UNSOLICITED_0.format(when=when)), forfeit["reason"]
    # The same bot without its pong thread plays its games out.
    player = shlex.join([sys.executable, str(BOT), "play", "-"])
    calm = cli("match", "-n", "1", "--seed", "floods", "--log-dir", tmp_path / "calm", "--json",
               f"flood={player}", "builtin:greedy", cwd=tmp_path, timeout=120)
    assert calm.returncode == 0, calm.stderr
    [calm_log] = (tmp_path / "calm").glob("*.jsonl")
    assert [json.loads(line)["forfeit"] for line in calm_log.read_text().splitlines()
            if json.loads(line).get("type") == "game"] == [None]


async def test_a_pipe_full_of_pongs_costs_the_referee_one_decoded_frame(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """3,000 pongs (57 KB, within a pipe's buffer) are waiting when the request is due:
    the referee parses the first and fails the bot (it parsed all 3,000 before every
    request, and took them as harmless)."""
    parsed: list[Any] = []
    real = msg.parse_bot_message

    def counting(message: Any) -> Any:
        parsed.append(message)
        return real(message)

    monkeypatch.setattr(msg, "parse_bot_message", counting)
    async with pipe_pair() as (player, fd):
        os.write(fd, b"".join(encode(msg.pong_msg(i)) for i in range(3000)))
        with pytest.raises(BotFailure) as info:
            await ask(player, REQUEST, 5.0)
    assert info.value.kind == "protocol"
    assert str(info.value) == UNSOLICITED_0.format(when="before request 1 was sent")
    assert parsed == [msg.pong_msg(0)]
    assert player.decoder.buffered > 0  # the other 2,999 were never looked at


async def test_pongs_while_a_request_is_open_fail_the_bot_at_the_first() -> None:
    """The bot reads its request, then sends 100 pongs before its answer: the first pong
    read fails it (they used to be skipped, every one, until the answer came)."""
    async with socket_pair() as (player, far), trio.open_nursery() as nursery:
        async def far_side() -> None:
            decoder = FrameDecoder()
            while not any(m["type"] == "request" for m in decoder.messages()):
                decoder.feed(await far.receive_some(65536))
            await far.send_all(encode(msg.pong_msg(5)) * 100 + encode(msg.action_msg(1, {"type": "pass"})))

        nursery.start_soon(far_side)
        with pytest.raises(BotFailure) as info:
            await ask(player, REQUEST, 5.0)
    assert info.value.kind == "protocol"
    assert str(info.value) == ("sent an unsolicited pong (id 5) while request 1 was open: no ping "
                               "was open; a pong only answers a ping, once, with its id")
