"""Text rules: the one redaction (secrets), what text is accepted (text_rule), what may name one
file or folder (segments), text made printable, fenced for the model, parsed as strict JSON and
counted in tokens."""
