"""Finding an artifact's files (ARCHITECTURE §7) and reading its own manifest.

An entry resolves, in order, to: its `source:` (a `.wasm`, or a folder holding `murmur.yaml`
and `<name>.wasm`, relative to the capsule), `<capsule>/.murmur/artifacts/<name>/<version>/`,
`$MURMUR_HOME/artifacts/<name>/<version>/`. A miss lists every place looked at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tui.core.errors import LaunchError
from tui.core.manifest import Artifact, Capsule

DEFAULT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ResolvedArtifact:
    entry: Artifact
    wasm: Path
    manifest: dict[str, Any] = field(default_factory=dict)  # the artifact's own murmur.yaml

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def description(self) -> str:
        value = self.manifest.get("description")
        return value.strip() if isinstance(value, str) else ""

    @property
    def input_schema(self) -> dict[str, Any]:
        value = self.manifest.get("input_schema")
        if isinstance(value, dict):
            return value
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                return dict(DEFAULT_SCHEMA)
            if isinstance(parsed, dict):
                return parsed
        return dict(DEFAULT_SCHEMA)


def candidates(capsule: Capsule, entry: Artifact, home: Path) -> list[Path]:
    places: list[Path] = []
    if entry.source:
        places.append((capsule.root / entry.source).resolve())
    if entry.version:
        places.append(capsule.root / ".murmur" / "artifacts" / entry.name / entry.version)
        places.append(home / "artifacts" / entry.name / entry.version)
    return places


def _looked(places: list[Path]) -> str:
    return ", ".join(str(place) for place in places) or "nowhere (no source: or version:)"


def resolve_wasm(capsule: Capsule, entry: Artifact, home: Path) -> ResolvedArtifact:
    """The component file of a tool, driver or hook entry, and its own manifest."""
    places = candidates(capsule, entry, home)
    for place in places:
        if place.is_file() and place.suffix == ".wasm":
            return ResolvedArtifact(entry, place)  # a bare component carries no manifest
        wasm = place / f"{entry.name}.wasm"
        if place.is_dir() and wasm.is_file():
            return ResolvedArtifact(entry, wasm, _artifact_manifest(place, entry.name))
    raise LaunchError(f"artifact {entry.name!r} ({entry.runtime}): no component found "
                      f"(looked for {entry.name}.wasm in: {_looked(places)})")


def resolve_skill(capsule: Capsule, entry: Artifact, home: Path) -> Path:
    places = candidates(capsule, entry, home)
    for place in places:
        candidate = place / "skill.md" if place.is_dir() else place
        if candidate.is_file():
            return candidate
    raise LaunchError(f"skill {entry.name!r}: no skill.md found (looked in: {_looked(places)})")


def _artifact_manifest(folder: Path, name: str) -> dict[str, Any]:
    """The artifact's own `murmur.yaml` (its description, input_schema, hook contract), or
    nothing when the component stands alone."""
    path = folder / "murmur.yaml"
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise LaunchError(f"{path}: the manifest of artifact {name!r} cannot be read: "
                          f"{exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LaunchError(f"{path}: the manifest of artifact {name!r} is not a mapping")
    return data
