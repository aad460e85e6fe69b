"""The text the commands print: rich tables of match, tournament, rating and statistics
results (report); their JSON forms come from the results themselves. It may import the
subpackages before it in README "Layout" (up to conformance), protocol and the standard
library."""
