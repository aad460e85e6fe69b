"""The user's errors: ``UserError``, the one base of every error that is the user's fault
(an unusable option, bot spec, file, store, port), not a bot's (a bot's failure is a game
result) and not ours (a bug). The bottom layer: it imports nothing, so every subpackage,
the pure rules engine too, can raise one; the command line catches them in one place
(``referee/cli.py``), prints one line and exits with the class's code."""

from __future__ import annotations

from typing import ClassVar


class UserError(Exception):
    """The user's input or set-up cannot be used; the message names what and where.

    ``exit_code`` is the process's exit code for it (2: unusable input). ``hint`` says,
    for every error of the class, what the user can do about it (docs/CLI.md lists each
    class's hint; a test keeps the list in step). ``then`` is what to do about this one,
    when the code that raises or catches it knows more than the message (the command
    that resumes an interrupted run): it is printed after the message, on its line.
    """

    exit_code: ClassVar[int] = 2
    hint: ClassVar[str] = "correct the input the message names and run the command again"
    then: str | None = None

    def __init__(self, *args: object, then: str | None = None) -> None:
        super().__init__(*args)
        if then is not None:
            self.then = then

    def line(self) -> str:
        """The one line the command line prints: the message, then what to do here."""
        return f"{self}; {self.then}" if self.then else str(self)


def user_errors() -> list[type[UserError]]:
    """Every subclass of UserError defined so far (imported), in a stable order."""
    found: list[type[UserError]] = []
    todo = [UserError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                todo.append(sub)
    return sorted(found, key=lambda c: (c.__module__, c.__qualname__))


class Interrupted(KeyboardInterrupt):
    """The user stopped a job (Ctrl-C, or SIGTERM: referee/console/interrupt.py) and it
    ended cleanly; the message says what was kept and how to go on (exit 130). A plain
    KeyboardInterrupt means the same with nothing to add."""

    exit_code: ClassVar[int] = 130
