"""Playing games between seats: the match loop (match, and its compiled frame lane), the
request frames (requests), clocks, seeds, fail-fast forfeits, running one match from the
command line (runner) and the public spectator view (spectator). It may import rules,
console, scoring, bots, records and seats (the subpackages before it in README
"Layout"), protocol and the standard library; nothing after it."""
