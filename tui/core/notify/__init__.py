"""Notifications that reach the user when a session needs them (no Textual here)."""
