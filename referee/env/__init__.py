"""Learning environments over the rules engine: PettingZoo, Gymnasium, OpenSpiel (docs/ENV.md).

Needs the ``env`` extra (numpy, pettingzoo, gymnasium, open_spiel); nothing in the core
imports this package. It may import the subpackages before it in README "Layout"
(``rules``, ``bots``, ``seats``, ``table``) and ``protocol``.
"""
