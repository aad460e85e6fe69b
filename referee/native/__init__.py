"""Which hot modules run compiled: setup.py compiles a few modules with mypyc; ``loader``
decides at start-up, before any of them is imported, whether they run as the compiled
extensions or as their Python sources, and reports which. Imports nothing of referee."""
