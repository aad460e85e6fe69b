"""The env tests reuse the engine tests' helpers (tests/rules: random table rules, the
permutation of the cards hidden from a seat)."""

import os
import sys

_RULES_TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules")
if _RULES_TESTS not in sys.path:
    sys.path.insert(0, _RULES_TESTS)
