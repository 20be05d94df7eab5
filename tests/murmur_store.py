"""A store written as `mur install` writes it (spec murmur-newest §2.2): under
`<store>/<name>/<version>/`, the archive `<name>-<version>[-<os>-<arch>].mur.zip` (its packed
`murmur.yaml` and the root `<name>.wasm` it `requires_files`), `<stem>.sha256` (the lowercase
hex sha256 of the zip's bytes) and `<stem>.meta.json`, pretty JSON `{"meta": ArtifactMeta}` with
`wit_contracts` read from the component's own bytes (sorted, deduplicated)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import wasmtime
from wasmtime.component import Component

ECHO_SCHEMA = '{"type":"object","properties":{"data":{"type":"string"}}}'


def wit_contracts(component: Path) -> dict[str, list[str]]:
    engine = wasmtime.Engine()
    kind = Component.from_file(engine, str(component)).type
    return {"exports": sorted(set(kind.exports(engine))),
            "imports": sorted(set(kind.imports(engine)))}


def packed_manifest(name: str, version: str, runtime: str, description: str,
                    more: str = "") -> str:
    """The artifact's own `murmur.yaml`; `more` adds lines (a hook's commit policy)."""
    return (f"name: {name}\nversion: '{version}'\nruntime: {runtime}\nimplementation: wasm\n"
            f"description: {description}\ntags: [echo, test]\n"
            f"input_schema: '{ECHO_SCHEMA}'\nrequires_files:\n  - {name}.wasm\n" + more)


def archive_bytes(name: str, version: str, component: Path, runtime: str = "tool",
                  description: str = "Echoes what it is given.",
                  extra: dict[str, bytes] | None = None, more: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("murmur.yaml", packed_manifest(name, version, runtime, description,
                                                        more))
        archive.writestr(f"{name}.wasm", component.read_bytes())
        for entry, data in (extra or {}).items():
            archive.writestr(entry, data)
    return buffer.getvalue()


def mur_install(store: Path, name: str, version: str, component: Path, *,
                runtime: str = "tool", platform: str | None = None,
                description: str = "Echoes what it is given.",
                data: bytes | None = None, more: str = "") -> Path:
    """Write the trio into `store` (a project's `.murmur/artifacts` or `$MURMUR_HOME/artifacts`)
    and return the archive. `data` replaces the archive's bytes (the sidecar is over them)."""
    folder = store / name / version
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{name}-{version}-{platform}" if platform else f"{name}-{version}"
    zipped = data if data is not None else archive_bytes(name, version, component, runtime,
                                                         description, more=more)
    archive = folder / f"{stem}.mur.zip"
    archive.write_bytes(zipped)
    (folder / f"{stem}.sha256").write_text(hashlib.sha256(zipped).hexdigest())
    meta = {"name": name, "version": version, "runtime": "wasm", "artifact_runtime": runtime,
            "platforms": [platform.split("-", 1)] if platform else [],
            "description": description, "tags": ["echo", "test"],
            "wit_contracts": wit_contracts(component)}
    (folder / f"{stem}.meta.json").write_text(json.dumps({"meta": meta}, indent=2))
    return archive


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
