"""murmur-tui: a terminal supervisor for Murmur agent sessions."""

__version__ = "0.1.0"
