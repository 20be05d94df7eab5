"""Errors that refuse a launch before anything runs (the command exits 2)."""

from __future__ import annotations


class LaunchError(Exception):
    """Bad input: a capsule, option or file that cannot start a session. The message names it."""
