"""Artifacts: finding an artifact's files and manifest (resolve) and the `murmur.lock` pins beside
a capsule's `murmur.yaml` (pins)."""
