"""Murmur's session trace, `trace.jsonl` (spec §2): `writer` (the event sink that appends its
lines; `lines` holds what each line says), `reader` (every line back as a dict, naming file and
line of one that is not JSON) and `analyse` (one trace summed up: the session, each task, each
tool).
"""
