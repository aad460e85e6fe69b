"""Many games: tournaments and their worker processes (tournament, worker, workerclient),
A/B tests (abtest), the ladder and the TCP arena (ladder, arena), batched result writing
(results), runs spread over machines (distributed), and what is read back from stored
runs (tourreport, verify, stats). It may import rules, console, scoring, bots, records,
seats, table and web (the subpackages before it in README "Layout"), protocol and the
standard library; nothing after it."""
