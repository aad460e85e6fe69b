"""Make tests/support.py importable from every test folder, whatever pytest's import mode."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# The real PostgreSQL server fixtures (pg_server, pg_url) for every test folder.
from pgserver import pg_server, pg_url  # noqa: E402,F401
