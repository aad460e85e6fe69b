"""``python -m referee``: the ``durak-ref`` command (for child processes that must run the
same interpreter and code as their parent, wherever ``durak-ref`` is or is not on PATH)."""

from .cli import main

main()
