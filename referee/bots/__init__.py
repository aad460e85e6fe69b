"""Bots that run inside the referee: the ISMCTS builtin (ismcts), the endgame solver
(solver) and the builtin that plays it (solverbot), and the bench and hostile bot
programs (benchbots). It may import rules, console and scoring (the subpackages
before it in README "Layout"), protocol and the standard library; nothing after it."""
