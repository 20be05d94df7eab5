"""Asking the person: a request for input, the open questions of a session and
headless stdin lines."""
