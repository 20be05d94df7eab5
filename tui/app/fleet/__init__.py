"""`murmur-tui fleet`: every session this supervisor started or found, over Murmur's door."""
