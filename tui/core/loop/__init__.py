"""The agent loop, in layers: `state` (a leaf), `report`, `context`, `hook_points`, `host`,
`compaction`, `dispatch`, `turn`, `task`, and `session`, which wires them together. No module
here imports one above it, and none imports `Session`."""
