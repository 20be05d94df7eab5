"""`capabilities.spawn.allow` as `delegate-task` reads it (spec murmur-newest §9.1; murmur-tui has
no `mur-roost`, docs/formations.md "Delegation"): each entry an installed capsule, by name
(Murmur's), or a capsule folder relative to the capsule, written with a `/` (murmur-tui's). The
folders are read when the session builds its tools; an installed capsule is found when it is
called for, at the version the call names: in the project store beside the capsule, then the
global one, unpacked into `$MURMUR_HOME/cache/artifacts/<sha256>/` as a roster's members are."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core.artifacts import archive, store
from tui.core.artifacts.resolve import stores_of
from tui.core.errors import LaunchError, ManifestError
from tui.core.manifest.model import Capsule
from tui.core.manifest.reader import load_capsule


@dataclass(frozen=True)
class Allowed:
    """One `spawn.allow` entry: an installed capsule by name, or a capsule folder read now."""

    entry: str
    name: str
    folder: Capsule | None = None  # a folder entry's manifest

    @property
    def label(self) -> str:
        return self.entry if self.folder is None else f"{self.name} ({self.entry})"


def targets(capsule: Capsule) -> tuple[Allowed, ...]:
    """The capsules `delegate-task` may start; LaunchError for a folder entry that is not a
    capsule, or two entries under one name."""
    found: dict[str, Allowed] = {}
    for entry in capsule.capabilities.spawn_allow:
        target = Allowed(entry, entry)
        if "/" in entry:
            try:
                child = load_capsule(capsule.root / entry)
            except ManifestError as exc:
                first = str(exc).splitlines()[0] if str(exc) else "cannot be read"
                raise LaunchError(f"{capsule.manifest_path}: capabilities.spawn.allow: "
                                  f"{entry} is not a capsule folder ({first})") from None
            target = Allowed(entry, child.name, child)
        if target.name in found:
            raise LaunchError(f"{capsule.manifest_path}: capabilities.spawn.allow names capsule "
                              f"{target.name!r} twice ({found[target.name].entry}, {entry})")
        found[target.name] = target
    return tuple(found.values())


def input_schema(allowed: tuple[Allowed, ...]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False,
            "required": ["capsule", "version", "task"],
            "properties": {
                "capsule": {"type": "string", "enum": [t.name for t in allowed],
                            "description": "the capsule to start"},
                "version": {"type": "string", "description": "its exact version"},
                "task": {"type": "string", "description": "the child's first user message"}}}


def capsule_folder(capsule: Capsule, home: Path, target: Allowed, version: str) -> Path:
    """The capsule folder to launch: a folder entry's own (at its version), else the
    installed artifact unpacked (project store beside this capsule, then global)."""
    if target.folder is not None:
        if target.folder.version != version:
            raise LaunchError(f"{target.name} ({target.entry}) is version "
                              f"{target.folder.version}, not {version}")
        return target.folder.root
    looked = []
    for _, place in stores_of(capsule.root, home, target.name, version):
        looked.append(str(place))
        try:
            payload = store.find(place, target.name, version, "wasm")
            if payload is None:
                continue
            data, digest = store.verify(payload)
        except OSError as exc:
            raise LaunchError(f"{place} cannot be read ({exc.strerror or exc})") from None
        return archive.unpack_capsule(payload, data, digest, home)
    raise LaunchError(f"capsule {target.name}@{version} is not installed (looked in: "
                      f"{', '.join(looked)})")
