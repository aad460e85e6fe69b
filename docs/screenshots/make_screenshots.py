"""Make the README's screenshots: every page in PAGES, at laptop and phone widths, as PNGs
in this directory (``NAME-laptop.png``, ``NAME-phone.png``).

Run from the repository root with the project's venv (Chromium as for the browser tests,
tests/browser/browserkit.py)::

    .venv/bin/python docs/screenshots/make_screenshots.py            # every page
    .venv/bin/python docs/screenshots/make_screenshots.py replay     # only these
    .venv/bin/python docs/screenshots/make_screenshots.py play       # the table page

The pages are made from a fresh match with a fixed seed between the built-in bots, so the
pictures change only when the pages do. ``play`` is the table page of ``serve --http``'s
lobby: a person ("Ann") creates a table against builtin:greedy and plays it to the end by
clicking a card where one is playable, else the first enabled control (as
tests/browser/test_play_page.py plays); its deal is the lobby's own, a fresh one each time. To add a page, add one line to PAGES: its name,
the ``durak-ref`` arguments that write it (``{log}``: the sample match log, ``{out}``:
the HTML file to write, ``{work}``: a scratch directory, ``{tournament}``: the id of a
sample tournament in ``logs/durak.sqlite``) and, optionally, the URL
fragment to open it at.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from browserkit import (CHROMIUM, LAPTOP, PHONE, RecordedPage, create_table, launch,  # noqa: E402
                        play_to_the_end)

DURAK_REF = Path(sys.executable).parent / "durak-ref"


@dataclass(frozen=True)
class Page:
    name: str
    command: tuple[str, ...]
    fragment: str = ""
    whole: bool = False  #: the laptop picture too shows the whole page, not the first screen


PAGES = [
    Page("replay", ("replay", "{log}", "--html", "{out}"), "#game=1&step=33"),
    Page("replay-seat", ("replay", "{log}", "--html", "{out}", "--game", "1", "--seat", "0"), "#game=1&step=33"),
    Page("report", ("report", "--tournament", "{tournament}", "--db", "logs/durak.sqlite", "--html", "{out}"),
         whole=True),
]

SIZES = {"laptop": LAPTOP, "phone": PHONE}
#: The served page made by ``shoot_play`` (not a file a command writes).
PLAY = "play"


def sample_log(work: Path) -> Path:
    """A 3-seat match of the built-in bots, dealt from a fixed seed."""
    subprocess.run([str(DURAK_REF), "match", "alice=builtin:greedy", "bob=builtin:random",
                    "carol=builtin:greedy", "--games", "4", "--seed", "screenshots",
                    "--log-dir", "logs"], check=True, capture_output=True, text=True, cwd=work)
    (log,) = (work / "logs").glob("match-*.jsonl")
    return log.relative_to(work)  # the page shows it: no scratch directory in the picture


def sample_tournament(work: Path) -> str:
    """A two-player round robin of four built-in bots, dealt from a fixed seed; its id."""
    import json
    done = subprocess.run([str(DURAK_REF), "tournament", "--bot", "alice=builtin:greedy",
                           "--bot", "bob=builtin:random", "--bot", "carol=builtin:greedy",
                           "--bot", "dave=builtin:random", "--games", "12", "--seed", "screenshots",
                           "--db", "logs/durak.sqlite", "--log-dir", "logs", "--json"],
                          check=True, capture_output=True, text=True, cwd=work)
    return str(json.loads(done.stdout)["tournament"])


def shoot_play(context: Any, work: Path) -> None:
    """``play-laptop.png`` and ``play-phone.png``: a finished game at a lobby table."""
    serve = subprocess.Popen([str(DURAK_REF), "serve", "--listen", "127.0.0.1:0", "--db", "arena.sqlite",
                              "--log-dir", "logs", "--http", "127.0.0.1:0"], cwd=work, text=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert serve.stderr is not None
        lobby = None
        for line in serve.stderr:
            found = re.match(r"lobby: (http://\S+/play)$", line.strip())
            if found:
                lobby = found[1]
                break
        if lobby is None:
            raise SystemExit(f"make_screenshots: serve --http did not start (exit {serve.wait()})")
        threading.Thread(target=serve.stderr.read, daemon=True).start()  # drained, never full
        rec = RecordedPage.open(context)
        page = rec.page
        page.set_viewport_size(LAPTOP)
        create_table(page, lobby, "Ann", {1: "builtin:greedy"}, clock="300+5")
        play_to_the_end(page, prefer=("#pairs .target", "#hand .playable"))  # cards, not take
        page.wait_for_selector("[data-testid=replay]")
        rec.assert_clean(allowed=(lobby.removesuffix("/play"),))
        for size_name, size in SIZES.items():
            page.set_viewport_size(size)
            png = HERE / f"{PLAY}-{size_name}.png"
            page.screenshot(path=str(png), full_page=size_name == "phone")
            print(f"{png.relative_to(ROOT)} ({png.stat().st_size // 1024} KiB)")
        page.close()
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(timeout=60)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="pages to make (default: all): "
                        + ", ".join([p.name for p in PAGES] + [PLAY]))
    args = parser.parse_args()
    unknown = set(args.names) - {p.name for p in PAGES} - {PLAY}
    if unknown:
        parser.error(f"no such page: {', '.join(sorted(unknown))}")
    if not CHROMIUM.exists():
        print(f"make_screenshots: Chromium not found at {CHROMIUM}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="durak-shots-"))
    try:
        wanted = [p for p in PAGES if not args.names or p.name in args.names]
        log = sample_log(work) if wanted else Path()
        tournament = (sample_tournament(work) if any("{tournament}" in " ".join(p.command) for p in wanted)
                      else "")
        with sync_playwright() as pw:
            context = launch(pw, work / "profile")
            try:
                for page in PAGES:
                    if args.names and page.name not in args.names:
                        continue
                    out = work / f"{page.name}.html"  # absolute: the commands run in work
                    subprocess.run([str(DURAK_REF), *(a.format(log=log, out=out, work=work, tournament=tournament)
                                                     for a in page.command)],
                                   check=True, capture_output=True, text=True, cwd=work)
                    for size_name, size in SIZES.items():
                        rec = RecordedPage.open(context)
                        rec.page.set_viewport_size(size)
                        rec.page.goto(out.resolve().as_uri() + page.fragment)
                        rec.assert_clean()
                        png = HERE / f"{page.name}-{size_name}.png"
                        rec.page.screenshot(path=str(png), full_page=size_name == "phone" or page.whole)
                        rec.page.close()
                        print(f"{png.relative_to(ROOT)} ({png.stat().st_size // 1024} KiB)")
                if not args.names or PLAY in args.names:
                    shoot_play(context, work)
            finally:
                context.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
