"""The command line's commands, one module per command group: each command parses its
options, calls the subpackage that does the work, and prints the result (text, or one
JSON object with --json). The last layer before ``referee/cli.py``, which puts them under
one name: it may import every subpackage before it in README "Layout"."""
