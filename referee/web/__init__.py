"""What people look at: the live page of a running arena or tournament (``live.py``,
``spectator.py``). Importing this package imports nothing else: ``referee/match.py``
uses ``spectator`` on every game."""
