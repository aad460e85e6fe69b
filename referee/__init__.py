"""durak-ref: the referee, protocol server and tournament runner for Durak bots."""

from .native.loader import choose as _choose_compiled

__version__ = "0.1.0"

# Before any hot module is imported: run edited (or all, DURAK_PURE_PYTHON=1) compiled
# modules from their source (referee/native/loader.py).
_choose_compiled()
