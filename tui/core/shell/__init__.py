"""The shell tool family: `tool` (an allowlisted binary run for one call, its result and the
tool's description), `process` (each command's process group, the watchdog, the kill at exit)
and `output` (each stream read as it arrives, capped, and logged when cut).
"""
