"""Who sits at the table: bot specs and the in-process players (players), bot programs as
sandboxed subprocesses (process, spawn, sandbox, leftovers), the framed wire protocol
(wire) and bots over TCP (tcp). It may import rules, console, scoring, bots and records
(the subpackages before it in README "Layout"), protocol and the standard library;
nothing after it."""
