"""Playing games between seats: the match loop (match), clocks, seeds, fail-fast forfeits,
running one match from the command line (runner), a human seat (human, humanview), the
public spectator view (spectator), replaying a log through the engine (replay), checking
a bot (checkbot) and the text tables the commands print (report). It may import rules,
console, scoring, bots, records and seats (the subpackages before it in README
"Layout"), protocol and the standard library; nothing after it."""
