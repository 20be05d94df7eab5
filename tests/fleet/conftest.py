"""The fleet's tests run real served sessions: the door tests' `served` fixture."""

from tests.door.test_serve import served

__all__ = ["served"]
