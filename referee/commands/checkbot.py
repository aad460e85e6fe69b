"""`check-bot`: the conformance check for bot authors."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..printing.jsonresult import checkbot_body, emit_result
from ..seats.players import parse_bot_spec
from ..table.runner import CONNECT_WAIT_S
from .common import (
    bot_limits,
    check_range,
    err,
    fail,
    out,
    sandbox_options,
)
from .options import (
    WEEK_S,
    BindOption,
    BotUidsOption,
    CpusOption,
    MaxMemoryOption,
    MaxProcsOption,
    SandboxOption,
)


def check_bot(
    command: Annotated[str, typer.Argument(
        help="The bot's command line, quoted: \"python3 mybot.py --fast\".", show_default=False)],
    games: Annotated[int, typer.Option(
        "--games", "-n", min=1, help="Most games per rule set; each stops as soon as the "
        "decision types it is there for have been reached.")] = 40,
    move_time: Annotated[float, typer.Option(help="Limit for every single decision, in seconds.")] = 5.0,
    startup_time: Annotated[float, typer.Option(
        help="Seconds the bot may take to start and answer the handshake.")] = 10.0,
    seed: Annotated[int, typer.Option(help="Seed of the deals.")] = 1,
    sandbox: SandboxOption = "auto",
    bind: BindOption = None,
    max_memory: MaxMemoryOption = None,
    max_procs: MaxProcsOption = 64,
    bot_uids: BotUidsOption = None,
    cpus: CpusOption = 1.0,
    listen: Annotated[str, typer.Option(
        help="For a tcp:NAME bot: where to listen, HOST:PORT (the bot connects, as in "
        "`match --listen`). Loopback unless you say otherwise.")] = "127.0.0.1:7724",
    token: Annotated[str | None, typer.Option(
        help="For a tcp:NAME bot: the token it must send (default: a new one, printed).",
        show_default=False)] = None,
    connect_wait: Annotated[float, typer.Option(
        "--connect-wait", help="For a tcp:NAME bot: seconds to wait for its first connection "
        "(a reconnection after a failure gets --startup-time); the check fails saying so "
        "if none comes.")] = CONNECT_WAIT_S,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object.")] = False,
) -> None:
    """Check a bot before a tournament: handshake, every decision type under every rule
    variant (transfer, reflection, show-trump, same-rank leads, throw-in any time, the
    24-, 36- and 52-card decks, every table size) against the built-in bots, decision
    latency, clean exit after bye; and that it
    never answers a request twice or before it is asked, and leaves no process behind
    (a forked child or a setsid daemon still running after it exited is named, then
    killed).

    Every failure is shown with what was sent, what came back and what the protocol
    requires. Exit code 0 when every check passes (warnings allowed), 1 when a check
    fails, 2 for unusable input (e.g. a command that cannot be started).
    """
    from contextlib import nullcontext

    from rich.text import Text

    from ..conformance.checkbot import check_bot_sync, render
    from ..seats.sandbox import Sandbox

    mode, binds = sandbox_options(sandbox, bind)
    check_range(connect_wait, "--connect-wait", 0, WEEK_S, low_open=True)

    spec = parse_bot_spec(command)
    tcp = _tcp_check(spec, listen, token, connect_wait) if spec.kind == "tcp" else None
    if spec.kind not in ("tcp", "command"):
        fail(f"{command}: check-bot checks a bot program (its command line) or a bot over TCP "
             "(tcp:NAME)")
    spinning = err.is_terminal and not as_json
    live = err.status("check-bot: starting the bot") if spinning else nullcontext()
    with live as status:
        report = check_bot_sync(
            list(spec.argv) or [command], games_per_config=games, move_time=move_time,
            startup_time=startup_time, seed=seed,
            sandbox=Sandbox(mode, binds, limits=bot_limits(max_memory, max_procs, cpus, False)),
            tcp=tcp,
            on_progress=None if status is None else lambda text: status.update(Text(f"check-bot: {text}")),
            # Not on a terminal (a CI log, a pipe): a line per phase instead of a spinner.
            on_phase=None if spinning else lambda text: err.print(
                f"check-bot: {text}", markup=False, highlight=False, soft_wrap=True))
    if as_json:
        emit_result("check-bot", checkbot_body(report.as_dict()))
    else:
        render(report, out)
    raise typer.Exit(0 if report.ok else 1)


def _tcp_check(spec: Any, listen: str, token: str | None, connect_wait: float) -> Any:
    """How check-bot meets bot ``spec`` (tcp:NAME) over TCP: where it listens, the token
    (a new one printed when none is given) and how long it waits for the first connection."""
    from ..conformance.checkbot import TcpCheck
    from ..seats.tcp import new_token, parse_listen

    listen_at = parse_listen(listen)
    if token is None:
        token = new_token()
        err.print(f"token for tcp:{spec.name}: {token}", markup=False, highlight=False)
    return TcpCheck(spec.name, token, listen_at, connect_wait, on_tcp=lambda text: err.print(
        f"tcp: {text}", markup=False, highlight=False, soft_wrap=True))
