"""Where results are written down: writing and reading JSON Lines match logs (matchlog),
the checks of each record (logcheck), and the result store: its schema and queries
(store), its SQLite and PostgreSQL back ends (storedb) and the per-run locks
(storelock). It may import rules, console, scoring and bots (the subpackages before it
in README "Layout"), protocol and the standard library; nothing after it."""
