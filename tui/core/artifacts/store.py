"""What a store folder `<store>/<name>/<version>/` holds for one artifact, in either layout
(spec murmur-newest §2.2):

- **Murmur's** (`mur install`, every release from v0.2.0 to v0.11.0): `<name>-<version>.mur.zip`,
  `<name>-<version>.sha256` (the lowercase hex sha256 of the zip's bytes) and
  `<name>-<version>.meta.json` (`{"meta": ArtifactMeta}`), or the same trio tagged for a
  platform, `<name>-<version>-<os>-<arch>.…`, looked for first;
- **murmur-tui's bare layout**: `<name>.wasm` (or a skill's `skill.md`), an optional
  `murmur.yaml`, and an optional `<name>.wasm.sha256` (`sha256sum` output works).

The sidecar of an archive is required and must match the zip's bytes; a bare file's sidecar, when
there is one, must match the file. What a lock pins is the same file: the archive (as Murmur
pins it), or the bare file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tui.core.artifacts.pins import INTEGRITY_CODE, platform_tag, sha256_hex
from tui.core.errors import LaunchError, LockError

# Murmur's cap on what an archive may unpack to (`MURMUR_MAX_ARTIFACT_DECOMPRESSED_BYTES`
# overrides it); the archive itself may be no larger
MAX_ARCHIVE_BYTES = 500 * 1024 * 1024
MAX_META_BYTES = 1 << 20
Layout = Literal["zip", "bare"]
Kind = Literal["wasm", "skill"]


@dataclass(frozen=True)
class Payload:
    """One artifact's file in one store folder: what is hashed, pinned and unpacked."""

    name: str
    version: str
    file: Path  # the .mur.zip, or the bare .wasm / skill.md
    layout: Layout
    platform: str | None = None  # the tag of a platform-tagged archive

    @property
    def stem(self) -> str:
        """`<name>-<version>[-<os>-<arch>]`: the archive's name without `.mur.zip`."""
        return self.file.name.removesuffix(".mur.zip")

    @property
    def sidecar(self) -> Path:
        if self.layout == "zip":
            return self.file.with_name(f"{self.stem}.sha256")
        return self.file.with_name(self.file.name + ".sha256")

    @property
    def meta_path(self) -> Path:
        return self.file.with_name(f"{self.stem}.meta.json")


def archive_names(name: str, version: str) -> list[tuple[str, str | None]]:
    """The archive file names to look for, this platform's first."""
    tag = platform_tag()
    return [(f"{name}-{version}-{tag}.mur.zip", tag), (f"{name}-{version}.mur.zip", None)]


def looked_for(name: str, version: str | None, kind: Kind) -> str:
    bare = f"{name}.wasm" if kind == "wasm" else "skill.md"
    if not version:
        return bare
    return f"{name}-{version}.mur.zip or {bare}"


def find(folder: Path, name: str, version: str, kind: Kind) -> Payload | None:
    """The payload `folder` holds for `name@version`: an archive first (this platform's, then
    the untagged one), then the bare file; None when there is neither. OSError passes up."""
    if not folder.is_dir():
        return None
    for file_name, tag in archive_names(name, version):
        archive = folder / file_name
        if archive.is_file():
            return Payload(name, version, archive, "zip", tag)
    bare = folder / (f"{name}.wasm" if kind == "wasm" else "skill.md")
    if bare.is_file():
        return Payload(name, version, bare, "bare")
    return None


def read_capped(path: Path, cap: int = MAX_ARCHIVE_BYTES) -> bytes:
    try:
        with path.open("rb") as handle:
            data = handle.read(cap + 1)
    except OSError as exc:
        raise LaunchError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > cap:
        raise LaunchError(f"{path}: is larger than {cap} bytes")
    return data


def store_hash(sidecar: Path) -> str | None:
    """The hash a sidecar holds (its first word, lower case), "" when it is empty, None when
    there is no sidecar."""
    try:
        text = sidecar.read_text(encoding="utf-8", errors="replace")[:4096]
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LaunchError(f"{sidecar}: cannot be read ({exc.strerror or exc})") from None
    words = text.split()
    return words[0].lower() if words else ""


def verify(payload: Payload, *, sidecar_required: bool = False) -> tuple[bytes, str]:
    """The payload's bytes and their sha256, checked against the store's sidecar in Murmur's
    words (spec §2.2, §2.4): an archive's sidecar is required and may not be empty."""
    data = read_capped(payload.file)
    digest = sha256_hex(data)
    expected = store_hash(payload.sidecar)
    label = f"{payload.name}@{payload.version}"
    if expected is None:
        if payload.layout == "zip" or sidecar_required:
            raise LockError(f"artifact {label} has no sha256 sidecar ({payload.sidecar} is "
                            "missing; re-install it with `mur install`)", code=INTEGRITY_CODE)
        return data, digest
    if not expected:
        raise LockError(f"artifact {label} has an empty sha256 sidecar ({payload.sidecar})",
                        code=INTEGRITY_CODE)
    if expected != digest:
        raise LockError(f"artifact integrity mismatch for {label}: expected {expected}, got "
                        f"{digest} ({payload.file} against {payload.sidecar.name})",
                        code=INTEGRITY_CODE)
    return data, digest


def read_meta(payload: Payload) -> dict[str, Any] | None:
    """The store's `ArtifactMeta` for an archive (`{"meta": {...}}`), None when there is none
    or it cannot be read: Murmur then derives it from the zip's own `murmur.yaml`, and so does
    murmur-tui (the component's own interfaces are read from its bytes, never from here)."""
    if payload.layout != "zip":
        return None
    try:
        with payload.meta_path.open("rb") as handle:
            raw = handle.read(MAX_META_BYTES + 1)
        data = json.loads(raw) if len(raw) <= MAX_META_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None
    meta = data.get("meta") if isinstance(data, dict) else None
    return meta if isinstance(meta, dict) else None
