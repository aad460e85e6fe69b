"""Self-contained HTML pages: the replay viewer, and what other pages share with it.

Every page durak-ref writes or serves is one document with its CSS, JavaScript and
drawings inline: it works from a file, offline, and asks no server for anything. The
card and table drawing lives once, in package data (``assets/``), and every page
inlines it with ``asset``; data reaches a page's script as JSON inside the page
(``json_script``), never as markup.

Pure: no trio, no sockets. Modules: ``replay_html`` (``durak-ref replay --html``),
``spectator`` (what a spectator of a game in play may see; ``referee/table/match.py`` uses it,
so this package stays cheap to import) and ``live`` (the live page of ``serve --http``
and ``tournament --http``: the one module here that runs a server, on trio).
"""

from __future__ import annotations

import html
from importlib import resources
from typing import Any

from ..console import jsonout

#: The shared drawing kit: cards (faces as CSS + inline SVG suit marks, backs), the
#: table felt, seats and hands. ``cards.js`` defines ``window.DurakCards``.
CARD_KIT = ("cards.css", "cards.js")


def asset(name: str) -> str:
    """The text of ``referee/web/assets/NAME`` (package data). Raises FileNotFoundError."""
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def escape(text: object) -> str:
    """``text`` as HTML text or attribute content: ``<``, ``>``, ``&`` and quotes escaped."""
    return html.escape(str(text), quote=True)


def json_script(element_id: str, data: Any) -> str:
    """A ``<script type="application/json">`` element holding ``data`` as strict JSON.

    Safe for any strings inside ``data`` (a bot named ``</script><script>...``): every
    ``<``, ``>`` and ``&`` is written as a JSON ``\\u`` escape, so the element cannot be
    closed or commented out from inside, and ``JSON.parse`` gives the strings back."""
    text = (jsonout.dumps(data, separators=(",", ":"), ensure_ascii=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return f'<script type="application/json" id="{escape(element_id)}">{text}</script>'


#: The Content-Security-Policy of a self-contained page: inline styles and scripts, data:
#: images, and no fetch of anything from anywhere.
OFFLINE_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
               "img-src data:; base-uri 'none'; form-action 'none'")


def page(title: str, body: str, *, css: tuple[str, ...] = (), js: tuple[str, ...] = (),
         extra_head: str = "", csp: str = OFFLINE_CSP) -> str:
    """A complete HTML document: ``body`` (markup the caller has escaped) with the named
    assets inlined, CSS in the head and scripts at the end of the body. The
    Content-Security-Policy (default ``OFFLINE_CSP``) forbids every network fetch, so a
    page cannot leak or load anything even if a bug let markup in; a served page that
    talks to its server widens it (e.g. ``connect-src 'self'``)."""
    styles = "\n".join(asset(n) for n in css)
    scripts = "\n".join(f"<script>\n{asset(n)}\n</script>" for n in js)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{escape(title)}</title>\n<style>\n{styles}\n</style>\n{extra_head}</head>\n"
        f"<body>\n{body}\n{scripts}\n</body>\n</html>\n")
