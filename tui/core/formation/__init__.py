"""Formations: a roster of capsules run as one team (spec murmur-newest §7)."""
