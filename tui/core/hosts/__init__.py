"""Hosts of the fleet: the machines whose sessions one `murmur-tui fleet` shows (docs/fleet.md,
"Many machines"). No Textual here."""
