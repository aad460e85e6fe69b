"""Measuring the referee: benchmarks (bench, bench_tcp) and the soak test (soak). It may
import rules, console, scoring, bots, records, seats, table, web and league (the
subpackages before it in README "Layout"), protocol and the standard library; nothing
after it."""
