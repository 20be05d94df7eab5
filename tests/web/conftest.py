"""Real served sessions (`launch --headless --serve` processes): the `served` fixture."""

from tests.served import served

__all__ = ["served"]
