"""The text the commands print: rich tables of match, tournament, rating and statistics
results (report), and the one shape every --json result has (jsonresult, docs/JSON.md). It may import the
subpackages before it in README "Layout" (up to conformance), protocol and the standard
library."""
