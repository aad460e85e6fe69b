"""Display names at a real ``serve --http`` over HTTP: a person is rated under their
name, so the first browser to sit under a name claims it (by the person token it is
given and keeps); another browser is refused it, also after the server restarts; a name
sits once at a table; a bot's name is never a person's. Nor is a name that looks like any
of these (the same Unicode confusable skeleton, or case): the refusal names the one it
looks like."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from livekit import Running
from referee.records.store import open_store
from support import cli

pytestmark = pytest.mark.process


def post(base: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    answer = httpx.post(base + path, json=body, timeout=30)
    return answer.status_code, answer.json()


def serving(tmp_path: Path, db: Path) -> tuple[Running, str]:
    serve = Running(tmp_path, "serve", "--listen", "127.0.0.1:0", "--db", db, "--http",
                    "127.0.0.1:0")
    return serve, serve.wait_for(r"^lobby: (http://127\.0\.0\.1:\d+)/play$")[1]


def test_a_name_is_the_first_persons_to_sit_under_it_and_a_bots_name_is_nobodys(tmp_path: Path) -> None:
    db = tmp_path / "arena.sqlite"
    assert cli("register", "tina", "--db", db, cwd=tmp_path).returncode == 0
    with open_store(db) as store, store.transaction():  # rated before names were claimed
        store.ensure_bot("Old", "human")
    open_table = {"seats": ["you", "open"]}
    serve, base = serving(tmp_path, db)
    try:
        status, first = post(base, "/api/tables", {**open_table, "name": "Ann"})
        assert status == 200 and len(first["person"]) >= 32, first
        ann = first["person"]
        # Another browser under the same name: at the same table, at a new one.
        status, answer = post(base, f"/api/tables/{first['table']}/join", {"name": "Ann"})
        assert status == 409 and "already sits at this table" in answer["error"], answer
        status, answer = post(base, "/api/tables", {**open_table, "name": "Ann"})
        assert status == 409 and "another person's name" in answer["error"], answer
        status, answer = post(base, "/api/tables", {**open_table, "name": "Ann", "person": "x" * 40})
        assert status == 409, answer  # a made-up person token is another person
        # The browser that took it: at another table too.
        status, answer = post(base, "/api/tables", {**open_table, "name": "Ann", "person": ann})
        assert status == 200 and answer["person"] == ann, answer
        status, old = post(base, "/api/tables", {**open_table, "name": "Old"})
        assert status == 200, old  # an unclaimed rated name goes to the first browser back
        join = f"/api/tables/{first['table']}/join"  # (an address holds at most 3 tables)
        status, answer = post(base, join, {"name": "Old"})
        assert status == 409 and "another person's name" in answer["error"], answer
        for bot in ("greedy", "Greedy", "builtin:random", "tcp:tina", "tina"):
            status, answer = post(base, join, {"name": bot})
            assert status == 409 and "bot" in answer["error"], (bot, answer)
    finally:
        serve.close()
    serve, base = serving(tmp_path, db)  # the claim is kept with the ratings
    try:
        status, answer = post(base, "/api/tables", {**open_table, "name": "Ann"})
        assert status == 409 and "another person's name" in answer["error"], answer
        status, answer = post(base, "/api/tables", {**open_table, "name": "Ann", "person": ann})
        assert status == 200, answer
    finally:
        serve.close()
    with sqlite3.connect(db) as store:  # the store holds the token's hash, never the token
        (command,) = store.execute("SELECT command FROM bots WHERE name = 'Ann'").fetchone()
    assert command == "person:" + hashlib.sha256(ann.encode()).hexdigest()


def test_a_name_that_looks_like_a_taken_one_is_refused_naming_it(tmp_path: Path) -> None:
    # Issue 35's attack: on main these four were seated while the exact names got 409.
    db = tmp_path / "arena.sqlite"
    assert cli("register", "alpha", "--db", db, cwd=tmp_path).returncode == 0
    serve, base = serving(tmp_path, db)
    try:
        status, victim = post(base, "/api/tables", {"seats": ["you", "open"], "name": "victim"})
        assert status == 200, victim
        status, host = post(base, "/api/tables", {"seats": ["you", "open"], "name": "Host"})
        assert status == 200, host
        join = f"/api/tables/{host['table']}/join"
        for spoof, real, whose in [("grееdy", "greedy", "a built-in bot's name"),  # Cyrillic е
                                   ("ехреrt", "expert", "a built-in bot's name"),  # е х р е
                                   ("аlpha", "alpha", "a bot's name here"),        # а
                                   ("vіctim", "victim", "a person's name here"),  # і
                                   ("ALPHA", "alpha", "a bot's name here"),
                                   ("a1pha", "alpha", "a bot's name here"),
                                   ("ｇｒｅｅｄｙ", "greedy", "a built-in bot's name")]:
            status, answer = post(base, join, {"name": spoof})
            assert status == 409, (spoof, answer)
            assert f"{spoof!r} looks like {real!r}, {whose}" in answer["error"], (spoof, answer)
        # The exact names are refused as on 5aa61aa.
        for exact, why in [("greedy", "'greedy' is a built-in bot's name"),
                           ("expert", "'expert' is a built-in bot's name"),
                           ("alpha", "'alpha' is a bot's name here"),
                           ("victim", "'victim' is another person's name here")]:
            status, answer = post(base, join, {"name": exact})
            assert status == 409 and why in answer["error"], (exact, answer)
        status, answer = post(base, join, {"name": "tсp:alpha"})  # Cyrillic с
        assert status == 409 and "how a bot is named" in answer["error"], answer
        # At the table where victim sits, the table says so; the person who is victim is
        # pointed back to their own name.
        status, answer = post(base, f"/api/tables/{victim['table']}/join", {"name": "Vіctim"})
        assert status == 409 and "looks like 'victim', who already sits at this table" in answer["error"]
        status, answer = post(base, join, {"name": "vіctim", "person": victim["person"]})
        assert status == 409 and "your own name here: play under 'victim'" in answer["error"], answer
        # A bot registered while the server runs (another process) is seen at once.
        assert cli("register", "beta", "--db", db, cwd=tmp_path).returncode == 0
        status, answer = post(base, join, {"name": "bеta"})  # Cyrillic е
        assert status == 409 and "looks like 'beta', a bot's name here" in answer["error"], answer
        status, answer = post(base, join, {"name": "Vera"})  # a name of its own is seated
        assert status == 200, answer
    finally:
        serve.close()
