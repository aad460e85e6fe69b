"""Checking a bot before it enters a tournament: ``durak-ref check-bot`` (checkbot). It
may import the subpackages before it in README "Layout" (up to human), protocol and the
standard library."""
