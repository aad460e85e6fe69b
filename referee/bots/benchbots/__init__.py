"""Bots shipped for ``durak-ref bench soak`` (tests/ is not installed): see ``hostile``."""
