"""durak-ref: the referee, protocol server and tournament runner for Durak bots."""

__version__ = "0.1.0"
