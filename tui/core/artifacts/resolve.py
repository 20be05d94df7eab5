"""Finding an artifact's files (ARCHITECTURE §7) and reading its own manifest.

An entry resolves, in order, to: its `source:` (a `.wasm`, or a folder holding `murmur.yaml`
and `<name>.wasm`, relative to the capsule), `<capsule>/.murmur/artifacts/<name>/<version>/`,
`$MURMUR_HOME/artifacts/<name>/<version>/`. A miss lists every place looked at.

With a `murmur.lock` beside the manifest (`tui.core.artifacts.pins`), an entry resolved from a store
(not `source:`, not `builtin:`) takes its pinned version whatever the manifest asks, and its
file must hash to the pin; an entry missing from the lock is refused. A file beside the
component named `<file>.sha256` is the store's own hash of it and must match too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tui.core.artifacts.pins import Lock, Pin, lock_path, mismatch, read_lock, sha256_hex
from tui.core.errors import LaunchError, LockError, YamlError
from tui.core.manifest.located_yaml import read
from tui.core.manifest.model import Artifact, Capsule
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


def pinnable(entry: Artifact) -> bool:
    """Whether the lock covers `entry`: one resolved from a store by name and version."""
    return not entry.source and entry.builtin is None


def store_places(capsule: Capsule, home: Path, name: str, version: str) -> list[Path]:
    """The capsule's own store, then the one under `$MURMUR_HOME`."""
    return [capsule.root / ".murmur" / "artifacts" / name / version,
            home / "artifacts" / name / version]


def candidates(capsule: Capsule, entry: Artifact, home: Path,
               version: str | None = None) -> list[Path]:
    places: list[Path] = []
    if entry.source:
        try:
            places.append((capsule.root / entry.source).resolve())
        except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: a symlink loop
            raise _unreadable(capsule, entry, capsule.root / entry.source, exc) from None
    version = version or entry.version
    if version:
        places.extend(store_places(capsule, home, entry.name, version))
    return places


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
    return lock, pin


def verify_file(name: str, version: str, file: Path, lock: Lock | None,
                pin: Pin | None) -> str:
    """The sha256 of `file`, refused (LockError) when it is not the store's own hash of it
    or not the pinned one."""
    try:
        digest = sha256_hex(file.read_bytes())
    except OSError as exc:
        raise LaunchError(f"artifact {name!r}: {file} cannot be read "
                          f"({exc.strerror or exc})") from None
    check_store_hash(name, version, file, digest)
    if pin is not None and lock is not None and digest != pin.sha256:
        raise mismatch(name, version, pin.sha256, digest, file, lock.path)
    return digest


def store_hash(file: Path) -> str | None:
    """The store's own hash of `file` (`<file>.sha256`: the hex digest, `sha256sum` style),
    None when the store keeps none."""
    sidecar = file.with_name(file.name + ".sha256")
    try:
        text = sidecar.read_text(encoding="utf-8", errors="replace")[:4096]
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LaunchError(f"{sidecar}: cannot be read ({exc.strerror or exc})") from None
    words = text.split()
    return words[0].lower() if words else ""


def check_store_hash(name: str, version: str, file: Path, digest: str) -> None:
    expected = store_hash(file)
    if expected is not None and expected != digest:
        raise LockError(f"artifact integrity check failed for {name}@{version}: "
                        f"{file.name}.sha256 says sha256 {expected or '(empty)'}, the bytes "
                        f"hash to {digest}", code="E-REG-002")


def pin_first_run(capsule: Capsule, home: Path) -> Path | None:
    """Write `murmur.lock` when the capsule has none: every store-resolved artifact at the
    version and hash it resolves to now. Returns the lock written, or None."""
    path = lock_path(capsule.root)
    if read_lock(path) is not None:
        return None
    lock = Lock(path)
    for entry in capsule.artifacts:
        if not pinnable(entry) or not entry.version:
            continue
        file = (resolve_skill(capsule, entry, home) if entry.runtime == "skill"
                else resolve_wasm(capsule, entry, home).wasm)
        lock = lock.upsert(Pin(entry.name, entry.version,
                               verify_file(entry.name, entry.version, file, None, None)))
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
    lock, pin = pin_of(capsule, entry)
    version = pin.version if pin else entry.version
    places = candidates(capsule, entry, home, version)
    for place in places:
        try:
            if place.is_file() and place.suffix == ".wasm":
                return ResolvedArtifact(entry, place)  # a bare component carries no manifest
            wasm = place / f"{entry.name}.wasm"
            found = place.is_dir() and wasm.is_file()
        except OSError as exc:
            raise _unreadable(capsule, entry, place, exc) from None
        if found:
            if pinnable(entry):
                verify_file(entry.name, version or "", wasm, lock, pin)
            data, lines = artifact_manifest(place, entry.name)
            return ResolvedArtifact(entry, wasm, data, lines)
    raise LaunchError(f"artifact {entry.name!r} ({entry.runtime}): no component found "
                      f"(looked for {entry.name}.wasm in: {_looked(places)})")


def resolve_skill(capsule: Capsule, entry: Artifact, home: Path) -> Path:
    lock, pin = pin_of(capsule, entry)
    version = pin.version if pin else entry.version
    places = candidates(capsule, entry, home, version)
    for place in places:
        try:
            candidate = place / "skill.md" if place.is_dir() else place
            found = candidate.is_file()
        except OSError as exc:
            raise _unreadable(capsule, entry, place, exc) from None
        if found:
            if pinnable(entry):
                verify_file(entry.name, version or "", candidate, lock, pin)
            return candidate
    raise LaunchError(f"skill {entry.name!r}: no skill.md found (looked in: {_looked(places)})")


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
