"""The session's tools: the table the model sees, their contracts, approvals and
the shell prefixes an approval remembers."""
