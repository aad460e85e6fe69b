"""Arena games are checked by ``durak-ref verify`` like every other stored game: a real arena on loopback plays into a store and a log; the untouched store
verifies, and a durak flipped in the store is reported against the arena log's line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import trio
from tcp_security_kit import running_arena

from referee.league.verify import Verification


def test_arena_games_verify_against_the_arena_log(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_arena(tmp_path, log_dir=tmp_path / "logs") as run:
            run.start_bot("alice")
            run.start_bot("bob")
            await run.play(4)

    trio.run(main)
    db = tmp_path / "arena.sqlite"
    report = Verification(db).run()
    assert report.ok, [d.message() for d in report.differences]
    assert report.games >= 4 and report.tournaments == ["ladder"]
    (log,) = (tmp_path / "logs").glob("arena-*.jsonl")
    assert report.logs == [str(log)]

    con = sqlite3.connect(db)
    (durak,) = con.execute("SELECT durak FROM games WHERE game_index = 0").fetchone()
    con.execute("UPDATE games SET durak = ? WHERE game_index = 0",
                ("bob" if durak == "alice" else "alice",))
    con.commit()
    con.close()
    report = Verification(db).run()
    assert [(d.game, d.field, d.where) for d in report.differences] == [(0, "durak", f"{log}:2")]
