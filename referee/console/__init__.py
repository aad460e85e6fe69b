"""What every command shares with the user: strict JSON output (jsonout), the user's
errors lifted out of trio's exception groups (usererror), Ctrl-C handling (interrupt),
progress lines (progress), and every use of trio's internals (trio_internals). It may import errors and rules (the subpackages before it in
README "Layout"), protocol and the standard library; nothing after it."""
