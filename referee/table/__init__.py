"""Playing games between seats: the match loop (match, and its compiled frame lane), the
frames of each message (requests), the one observer of what each view kind sees (observer),
clocks, seeds, fail-fast forfeits, adjudication of solved endgames (adjudicator), running
one match from the command line (runner) and the public spectator stream (spectator). It may import rules,
console, scoring, bots, records and seats (the subpackages before it in README
"Layout"), protocol and the standard library; nothing after it."""
