"""Finding an artifact's files (ARCHITECTURE §7) and reading its own manifest.

An entry resolves, in order, to: its `source:` (a `.wasm`, or a folder holding `murmur.yaml`
and `<name>.wasm`, relative to the capsule), `<capsule>/.murmur/artifacts/<name>/<version>/`,
`$MURMUR_HOME/artifacts/<name>/<version>/`. A miss lists every place looked at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tui.core.errors import LaunchError
from tui.core.manifest.located_yaml import read
from tui.core.manifest.model import Artifact, Capsule
from tui.core.manifest.problems import YamlError
from tui.core.manifest.yaml_section import json_problem

DEFAULT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ResolvedArtifact:
    entry: Artifact
    wasm: Path
    manifest: dict[str, Any] = field(default_factory=dict)  # the artifact's own murmur.yaml
    manifest_lines: Mapping[str, int] = field(default_factory=dict)  # its top keys' lines

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def manifest_path(self) -> Path:
        return self.wasm.parent / "murmur.yaml"

    def locate(self, key: str) -> str:
        """`file:line: key` of a key of the artifact's own manifest, for a message."""
        line = self.manifest_lines.get(key)
        return f"{self.manifest_path}{f':{line}' if line else ''}: {key}"

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
            except (ValueError, RecursionError):
                return dict(DEFAULT_SCHEMA)
            if isinstance(parsed, dict):
                return parsed
        return dict(DEFAULT_SCHEMA)


def candidates(capsule: Capsule, entry: Artifact, home: Path) -> list[Path]:
    places: list[Path] = []
    if entry.source:
        try:
            places.append((capsule.root / entry.source).resolve())
        except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: a symlink loop
            raise _unreadable(capsule, entry, capsule.root / entry.source, exc) from None
    if entry.version:
        places.append(capsule.root / ".murmur" / "artifacts" / entry.name / entry.version)
        places.append(home / "artifacts" / entry.name / entry.version)
    return places


def _unreadable(capsule: Capsule, entry: Artifact, place: Path, exc: Exception) -> LaunchError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    where = f"{capsule.manifest_path}:{entry.line}" if entry.line else str(capsule.manifest_path)
    return LaunchError(f"{where}: artifacts[{entry.name}]: {place} cannot be read ({reason})")


def _looked(places: list[Path]) -> str:
    return ", ".join(str(place) for place in places) or "nowhere (no source: or version:)"


def resolve_wasm(capsule: Capsule, entry: Artifact, home: Path) -> ResolvedArtifact:
    """The component file of a tool, driver or hook entry, and its own manifest."""
    places = candidates(capsule, entry, home)
    for place in places:
        try:
            if place.is_file() and place.suffix == ".wasm":
                return ResolvedArtifact(entry, place)  # a bare component carries no manifest
            wasm = place / f"{entry.name}.wasm"
            found = place.is_dir() and wasm.is_file()
        except OSError as exc:
            raise _unreadable(capsule, entry, place, exc) from None
        if found:
            data, lines = _artifact_manifest(place, entry.name)
            return ResolvedArtifact(entry, wasm, data, lines)
    raise LaunchError(f"artifact {entry.name!r} ({entry.runtime}): no component found "
                      f"(looked for {entry.name}.wasm in: {_looked(places)})")


def resolve_skill(capsule: Capsule, entry: Artifact, home: Path) -> Path:
    places = candidates(capsule, entry, home)
    for place in places:
        try:
            candidate = place / "skill.md" if place.is_dir() else place
            if candidate.is_file():
                return candidate
        except OSError as exc:
            raise _unreadable(capsule, entry, place, exc) from None
    raise LaunchError(f"skill {entry.name!r}: no skill.md found (looked in: {_looked(places)})")


def _artifact_manifest(folder: Path, name: str) -> tuple[dict[str, Any], dict[str, int]]:
    """The artifact's own `murmur.yaml` (its description, input_schema, hook contract) and the
    line of each of its top keys, or nothing when the component stands alone."""
    path = folder / "murmur.yaml"
    try:
        data, node = read(path)
    except FileNotFoundError:
        return {}, {}
    except YamlError as exc:
        raise LaunchError(f"the manifest of artifact {name!r} was refused:\n{exc}") from None
    if data is None:
        return {}, {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise LaunchError(f"{path}:1: the manifest of artifact {name!r} is not a mapping")
    lines: dict[str, int] = {}
    nodes: dict[str, yaml.Node] = {}
    for key_node, value_node in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            lines.setdefault(str(key_node.value), key_node.start_mark.line + 1)
            nodes.setdefault(str(key_node.value), value_node)
    schema = data.get("input_schema")
    if schema is not None:
        found = json_problem(schema, nodes.get("input_schema"), "input_schema",
                             lines.get("input_schema"))
        if found is not None:
            line, key, message = found
            raise LaunchError(f"{path}:{line}: {key}: {message}")
    return data, lines
