"""Running records (`$MURMUR_HOME/running/`): reading and writing them, and
checking that a record's door is the session it claims (probe, address, listening)."""
