"""Finding an artifact's files (ARCHITECTURE §7) and reading its own manifest.

An entry resolves, in order, to: its `source:` (a `.wasm`, or a folder holding `murmur.yaml`
and `<name>.wasm`, relative to the capsule), the project store
`<capsule>/.murmur/artifacts/<name>/<version>/`, the global store
`$MURMUR_HOME/artifacts/<name>/<version>/` — project then global, as Murmur looks (spec
murmur-newest §2.1). A store folder holds Murmur's `.mur.zip` layout or murmur-tui's bare one
(`tui.core.artifacts.store`); an archive is verified, then unpacked (`archive`). A miss is
`E-RUN-008`, listing every place looked at.

With a `murmur.lock` beside the manifest (`tui.core.artifacts.pins`), an entry resolved from a
store (not `source:`, not `builtin:`) must be pinned at the version the manifest asks (an entry
without `version:` takes the pinned one), and what Murmur hashes (the archive, or the bare
file) must match the pin; an entry missing from the lock is refused.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tui.core.artifacts import archive, store
from tui.core.artifacts.archive import PACKED_MANIFEST as PACKED
from tui.core.artifacts.pins import Lock, Pin, check_pin, lock_path, read_lock
from tui.core.artifacts.store import Kind, Payload
from tui.core.errors import LaunchError, LockError, YamlError
from tui.core.fs.private_files import write_private
from tui.core.manifest.located_yaml import read
from tui.core.manifest.model import Artifact, Capsule
from tui.core.manifest.yaml_section import json_problem

DEFAULT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
NOT_INSTALLED = "E-RUN-008"  # Murmur's code for a declared artifact no store holds


@dataclass(frozen=True)
class ResolvedArtifact:
    entry: Artifact
    wasm: Path
    manifest: dict[str, Any] = field(default_factory=dict)  # the artifact's own murmur.yaml
    manifest_lines: Mapping[str, int] = field(default_factory=dict)  # its top keys' lines
    where: str = "source"  # source | project | global: where it resolved
    archive: Path | None = None  # the store's .mur.zip it was unpacked from
    sha256: str | None = None  # of what a lock pins (the archive, else the file)

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def manifest_path(self) -> Path:
        return self.wasm.parent / "murmur.yaml"

    def locate(self, key: str) -> str:
        """`file:line: key` of a key of the artifact's own manifest, for a message."""
        line = self.manifest_lines.get(key)
        shown = f"{self.archive}!murmur.yaml" if self.archive else str(self.manifest_path)
        return f"{shown}{f':{line}' if line else ''}: {key}"

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


def pinnable(entry: Artifact) -> bool:
    """Whether the lock covers `entry`: one resolved from a store by name and version."""
    return not entry.source and entry.builtin is None


def store_places(capsule: Capsule, home: Path, name: str, version: str) -> list[Path]:
    """The capsule's own store, then the global one under `$MURMUR_HOME`."""
    return [place for _, place in named_stores(capsule, home, name, version)]


def named_stores(capsule: Capsule, home: Path, name: str, version: str
                 ) -> list[tuple[str, Path]]:
    return stores_of(capsule.root, home, name, version)


def stores_of(project: Path, home: Path, name: str, version: str) -> list[tuple[str, Path]]:
    """The folders `name@version` is looked for in, in order: the project store beside the
    project's file (`murmur.yaml`, or a `roster.yaml`), then the global one."""
    return [("project", project / ".murmur" / "artifacts" / name / version),
            ("global", home / "artifacts" / name / version)]


def pin_of(capsule: Capsule, entry: Artifact) -> tuple[Lock | None, Pin | None]:
    """The capsule's lock and `entry`'s pin in it; LockError when a lock exists and does not
    name a store-resolved entry."""
    lock = read_lock(lock_path(capsule.root))
    if lock is None or not pinnable(entry):
        return lock, None
    pin = lock.pin(entry.name)
    if pin is None:
        raise LockError(f"{lock.path}: murmur.lock missing artifact entry for "
                        f"'{entry.name}' (delete {lock.path.name} to pin every artifact "
                        "again on the next run)")
    if entry.version and entry.version != pin.version:  # `mur run`'s lock check (§2.4)
        where = f"{capsule.manifest_path}:{entry.line}" if entry.line else capsule.manifest_path
        raise LockError(f"{lock.path}: murmur.lock version mismatch for '{entry.name}': "
                        f"manifest requested {entry.version}, lock pinned {pin.version} "
                        f"({where}; run `mur install` to pin the version asked for, or ask "
                        f"for {pin.version})")
    return lock, pin


@dataclass(frozen=True)
class ResolvedFile:
    """Where an entry resolved: the file to use and the folder its manifest is in."""

    file: Path  # the .wasm or skill.md to load (unpacked, for an archive)
    where: str  # source | project | global
    payload: Payload | None = None  # the store's file, for a store entry
    digest: str | None = None  # the sha256 of the payload's file (what a lock pins)

    @property
    def archive(self) -> Path | None:
        return self.payload.file if self.payload and self.payload.layout == "zip" else None


def locate(capsule: Capsule, entry: Artifact, home: Path, kind: Kind) -> ResolvedFile:
    """Resolve `entry` to its file: verified against the store's sidecar and its pin, an
    archive unpacked. LaunchError (LockError for integrity and the lock) when it cannot."""
    lock, pin = pin_of(capsule, entry)
    version = pin.version if pin else entry.version
    looked: list[Path] = []
    if entry.source:
        place = _source(capsule, entry)
        looked.append(place)
        found = _in_source(capsule, entry, place, kind)
        if found is not None:
            return ResolvedFile(found, "source")
    for where, place in (named_stores(capsule, home, entry.name, version) if version else []):
        looked.append(place)
        try:
            payload = store.find(place, entry.name, version or "", kind)
        except OSError as exc:
            raise _unreadable(capsule, entry, place, exc) from None
        if payload is None:
            continue
        data, digest = store.verify(payload)
        if pin is not None and lock is not None:
            check_pin(pin, lock.path, payload.version, digest, payload.file)
        if payload.layout == "zip":
            folder = archive.unpack(payload, data, digest, home, kind)
            file = folder / (f"{entry.name}.wasm" if kind == "wasm" else "skill.md")
        else:
            file = payload.file
        return ResolvedFile(file, where, payload, digest)
    what = "component" if kind == "wasm" else "skill.md"
    label = f"artifact {entry.name!r} ({entry.runtime})" if kind == "wasm" else \
        f"skill {entry.name!r}"
    raise LaunchError(f"{label}: no {what} found (looked in: {_looked(looked)}; for "
                      f"{store.looked_for(entry.name, version, kind)}); install it with "
                      "`mur install`", code=NOT_INSTALLED)


def _source(capsule: Capsule, entry: Artifact) -> Path:
    try:
        return (capsule.root / (entry.source or "")).resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise _unreadable(capsule, entry, capsule.root / (entry.source or ""), exc) from None


def _in_source(capsule: Capsule, entry: Artifact, place: Path, kind: Kind) -> Path | None:
    """A `source:` entry's file: the file named, or the one in the folder named."""
    inner = f"{entry.name}.wasm" if kind == "wasm" else "skill.md"
    try:
        if place.is_file():
            return place if kind == "skill" or place.suffix == ".wasm" else None
        return place / inner if place.is_dir() and (place / inner).is_file() else None
    except OSError as exc:
        raise _unreadable(capsule, entry, place, exc) from None


def pin_first_run(capsule: Capsule, home: Path) -> Path | None:
    """Write `murmur.lock` (version 2) when the capsule has none: every store-resolved
    artifact at the version and hash it resolves to now, `origin: operator`. Returns the lock
    written, or None."""
    path = lock_path(capsule.root)
    if read_lock(path) is not None:
        return None
    lock = Lock(path)
    for entry in capsule.artifacts:
        if not pinnable(entry) or not entry.version:
            continue
        found = locate(capsule, entry, home, "skill" if entry.runtime == "skill" else "wasm")
        if found.payload is None or found.digest is None:
            continue
        if found.payload.platform:
            pin = Pin(entry.name, found.payload.version,
                      platforms=((found.payload.platform, found.digest),))
        else:
            pin = Pin(entry.name, found.payload.version, found.digest)
        lock = lock.upsert(pin)
    if not lock.pins:
        return None
    lock.write()
    return path


def _unreadable(capsule: Capsule, entry: Artifact, place: Path, exc: Exception) -> LaunchError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    where = f"{capsule.manifest_path}:{entry.line}" if entry.line else str(capsule.manifest_path)
    return LaunchError(f"{where}: artifacts[{entry.name}]: {place} cannot be read ({reason})")


def _looked(places: list[Path]) -> str:
    return ", ".join(str(place) for place in places) or "nowhere (no source: or version:)"


def resolve_wasm(capsule: Capsule, entry: Artifact, home: Path) -> ResolvedArtifact:
    """The component file of a tool, driver or hook entry, and its own manifest; a pinned
    entry at its pinned version, its bytes checked against the pin."""
    found = locate(capsule, entry, home, "wasm")
    if found.where == "source" and found.file == _source(capsule, entry):
        return ResolvedArtifact(entry, found.file)  # a bare component carries no manifest
    data, lines = (packed_manifest(found.file.parent, entry.name) if found.archive
                   else artifact_manifest(found.file.parent, entry.name))
    return ResolvedArtifact(entry, found.file, data, lines, found.where, found.archive,
                            found.digest)


def packed_manifest(folder: Path, name: str) -> tuple[dict[str, Any], dict[str, int]]:
    """An unpacked archive's `murmur.yaml`, read as `artifact_manifest` reads it, and kept
    beside it as JSON (`.murmur.yaml.json`, with the size and CRC-32 of the text it was read
    from): an archive's manifest never changes, and the YAML reader is the slow part of
    resolving it again. Kept only when the JSON reads back equal to what the YAML gave."""
    source, kept = folder / PACKED, folder / f".{PACKED}.json"
    try:
        text = source.read_bytes()
    except FileNotFoundError:
        return {}, {}
    except OSError:
        return artifact_manifest(folder, name)  # it says why
    stamp = {"size": len(text), "crc32": zlib.crc32(text)}
    try:
        saved = json.loads(kept.read_bytes())
        if isinstance(saved, dict) and saved.get("stamp") == stamp:
            return dict(saved["data"]), dict(saved["lines"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        pass  # none yet, or not ours: read the YAML
    data, lines = artifact_manifest(folder, name)
    try:
        dumped = json.dumps({"stamp": stamp, "data": data, "lines": lines})
        if json.loads(dumped) == {"stamp": stamp, "data": data, "lines": lines}:
            write_private(kept, dumped)
    except (OSError, ValueError, TypeError, RecursionError):
        pass  # a value JSON does not keep as it is (a date, a number as a key): not kept
    return data, lines


def resolve_skill(capsule: Capsule, entry: Artifact, home: Path) -> Path:
    return locate(capsule, entry, home, "skill").file


def artifact_manifest(folder: Path, name: str) -> tuple[dict[str, Any], dict[str, int]]:
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


def declared_upstream_auth(resolved: ResolvedArtifact) -> tuple[str, str] | None:
    """`upstream_auth` (spec §1.3) from a driver artifact's own manifest: the header its
    provider reads the key from and the value around it (`{key}` exactly once); None when the
    artifact declares none. The capsule's `gateway.upstream_auth` overrides it."""
    declared = resolved.manifest.get("upstream_auth")
    if declared is None:
        return None
    where = resolved.locate("upstream_auth")
    if not isinstance(declared, dict):
        raise LaunchError(f"{where}: expected a mapping with header and value")
    header, value = declared.get("header"), declared.get("value", "{key}")
    if not isinstance(header, str) or not header.strip():
        raise LaunchError(f"{where}.header: expected a header name")
    if not isinstance(value, str) or value.count("{key}") != 1:
        raise LaunchError(f"{where}.value: must contain {{key}} exactly once, where the key "
                          "goes")
    return header.strip(), value
