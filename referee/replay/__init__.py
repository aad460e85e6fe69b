"""Replaying a match log through the engine: verifying every recorded step (replay) and
the printable replay, omniscient or as one seat saw it. It may import the subpackages
before it in README "Layout" (up to table), protocol and the standard library."""
