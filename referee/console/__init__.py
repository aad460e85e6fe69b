"""What every command shares with the user: strict JSON output (jsonout), user errors with
exit code 2 (usererror), Ctrl-C handling (interrupt) and progress lines (progress). It
may import rules (the subpackages before it in README "Layout"), protocol and the
standard library; nothing after it."""
