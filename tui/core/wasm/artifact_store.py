"""A session's artifacts as `murmur:artifact-manager/manage@0.1.0` shows them to a script
capsule: what is installed, each one's own manifest, and `pull` from the local stores.

`pull(name, version)` finds the artifact in `<capsule>/.murmur/artifacts/<name>/<version>/`, then
`$MURMUR_HOME/artifacts/<name>/<version>/`, in Murmur's layout (`<name>-<version>.mur.zip` with
its `.sha256`) or the bare one (`<name>.wasm` with `<name>.wasm.sha256`); the store's hash is
required and checked, and so is the artifact's `murmur.lock` pin if it has one, before anything
is written; installs `murmur.yaml` and the component under the workdir's `tools/<name>/`, loads
it, pins it in `murmur.lock` as Murmur's pull does (`origin: runtime`, `session`: this session;
an entry already pinned is left as it is), and adds it to the session's tool table, so
`tool-registry.invoke` reaches it at once. A version-1 lock is never rewritten: a pull it does
not already pin is refused. Every refusal is the call's `err`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tui.core.artifacts import archive, store
from tui.core.artifacts.pins import (
    LOCK_FILE,
    LOCK_VERSION,
    V1_FROZEN,
    Lock,
    Pin,
    lock_path,
    platform_tag,
    read_lock,
    sha256_hex,
)
from tui.core.artifacts.resolve import ResolvedArtifact, artifact_manifest, pinnable, store_places
from tui.core.errors import ComponentLoadError, IncompatibleComponent, LockError, MurmurTuiError
from tui.core.fs.private_files import make_private_dirs, write_private
from tui.core.manifest.model import Artifact, Capsule
from tui.core.text.segments import segment_problem
from tui.core.tools.table import ToolHandler, ToolTable
from tui.core.wasm.values import record

NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$")
NOT_IMPLEMENTED = "artifact-manager/search and remove are not implemented"
MAX_COMPONENT_BYTES = 256 << 20

ToolFactory = Callable[[ResolvedArtifact], ToolHandler]


@dataclass(frozen=True)
class Installed:
    name: str
    version: str
    runtime: str  # wasm | native (the WIT enum)
    manifest: dict[str, Any]


class SessionArtifacts:
    def __init__(self, capsule: Capsule, home: Path, session_id: str, tools_dir: Path,
                 tools: ToolTable, make_tool: ToolFactory,
                 log: Callable[[str], None] = lambda _: None) -> None:
        self.capsule = capsule
        self.home = home
        self.session_id = session_id
        self.tools_dir = tools_dir
        self.tools = tools
        self.make_tool = make_tool
        self.log = log
        self.installed: dict[str, Installed] = {}
        try:
            lock = read_lock(lock_path(capsule.root))
        except LockError:
            lock = None  # the launch read it first; a lock broken since shows as unpinned
        for entry in capsule.artifacts:
            if entry.runtime in ("tool", "skill"):  # the model-visible ones, as Murmur lists
                pin = lock.pin(entry.name) if lock and pinnable(entry) else None
                version = pin.version if pin else entry.version or "0.0.0"
                self.installed[entry.name] = Installed(entry.name, version, "wasm",
                                                       self._declared_manifest(entry.name))

    def _declared_manifest(self, name: str) -> dict[str, Any]:
        resolved = getattr(self.tools.wasm.get(name), "resolved", None)
        if isinstance(resolved, ResolvedArtifact):
            return resolved.manifest
        return {}

    # -- list, describe, diagnostics ----------------------------------------------------------
    def list(self) -> list[Any]:
        summaries = [record(name=a.name, version=a.version, runtime=a.runtime)
                     for a in self.installed.values()]
        for binary in self.capsule.capabilities.shell_allow:
            if binary not in self.installed:
                summaries.append(record(name=binary, version="0.0.0", runtime="native"))
        return summaries

    def describe(self, name: str) -> Any:
        found = self.installed.get(name)
        if found is None:
            if name not in self.capsule.capabilities.shell_allow:
                return f"artifact '{name}' is not installed"
            manifest_path = self.tools_dir / name / "murmur.yaml"
            try:
                data = yaml.safe_load(manifest_path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                return f"failed to read {manifest_path}: {exc}"
            found = Installed(name, "0.0.0", "native", data if isinstance(data, dict) else {})
        manifest = found.manifest
        description = manifest.get("description")
        tags = manifest.get("tags")
        return record(
            name=found.name, version=found.version,
            description=description.strip() if isinstance(description, str) else "",
            tags=[t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
            runtime=found.runtime, input_schema=_schema(manifest.get("input_schema")),
            output_schema=_schema(manifest.get("output_schema")))

    def diagnostics(self) -> Any:
        return record(capsule_id=self.session_id, installed=self.list(),
                      capabilities=NOT_IMPLEMENTED)

    # -- pull ---------------------------------------------------------------------------------
    def pull(self, name: str, version: str) -> Any:
        if not NAME.match(name):
            return (f"failed to resolve {name!r}: an artifact name is 1-100 characters of "
                    "a-z, 0-9 and '-', not starting or ending with '-'")
        problem = segment_problem(version)
        if problem:
            return f"failed to resolve {name}@{version!r}: the version {problem}"
        places = store_places(self.capsule, self.home, name, version)
        try:
            payload = next((found for place in places
                            if (found := store.find(place, name, version, "wasm"))), None)
        except OSError as exc:
            return f"failed to resolve {name}@{version}: {exc.strerror or exc}"
        if payload is None:
            looked = ", ".join(str(p) for p in places)
            return (f"failed to resolve {name}@{version}: artifact {name}@{version} not found "
                    f"in registry (looked for {store.looked_for(name, version, 'wasm')} in: "
                    f"{looked})")
        cap = MAX_COMPONENT_BYTES if payload.layout == "bare" else store.MAX_ARCHIVE_BYTES
        try:
            data = store.read_capped(payload.file, cap)
            expected = store.store_hash(payload.sidecar)
        except MurmurTuiError as exc:
            return f"failed to resolve {name}@{version}: {exc}"
        digest = sha256_hex(data)
        if not expected:
            return (f"failed to resolve {name}@{version}: the registry keeps no sha256 for it "
                    f"({payload.sidecar.name} is missing or empty)")
        if expected != digest:
            return (f"artifact integrity check failed for {name}@{version}: registry-reported "
                    f"hash does not match downloaded bytes (registry sha256 {expected}, "
                    f"bytes sha256 {digest})")
        path = lock_path(self.capsule.root)
        try:
            lock = read_lock(path) or Lock(path)
        except LockError as exc:
            return f"failed to read murmur.lock: {exc}"
        pinned = lock.pin(name)
        held = pinned.expected(platform_tag()) if pinned else None
        if pinned is not None and (pinned.version != version or held != digest):
            return (f"murmur.lock conflict for '{name}': pinned {name}@{pinned.version} "
                    f"(sha256 {held or pinned.pinned_platforms()}), but the registry now "
                    f"resolves {name}@{version} (sha256 {digest}) — refusing to override a "
                    "pinned artifact at runtime")
        if pinned is None and lock.version != LOCK_VERSION:
            return f"failed to pin {name}@{version}: {path} {V1_FROZEN}"
        # verified: only now is anything written
        try:
            folder = (archive.unpack(payload, data, digest, self.home, "wasm")
                      if payload.layout == "zip" else payload.file.parent)
            wasm = data if payload.layout == "bare" else (folder / f"{name}.wasm").read_bytes()
            installed = self._install(name, folder, wasm)
            manifest, lines = artifact_manifest(installed, name)
            handler = self.make_tool(ResolvedArtifact(
                Artifact(name=name, version=version, runtime="tool", line=None),
                installed / f"{name}.wasm", manifest, lines, _where(places, payload),
                payload.file if payload.layout == "zip" else None, digest))
        except (OSError, MurmurTuiError, ComponentLoadError, IncompatibleComponent) as exc:
            return f"failed to install {name}@{version}: {exc}"
        if pinned is None:
            tagged = ((payload.platform, digest),) if payload.platform else ()
            pin = Pin(name, version, None if tagged else digest, tagged, "runtime",
                      self.session_id)
            try:
                lock.upsert(pin).write()
            except (OSError, LockError) as exc:
                return f"failed to write {LOCK_FILE}: {exc}"
        self.tools.wasm[name] = handler
        self.installed[name] = Installed(name, version, "wasm", manifest)
        self.log(f"artifact pulled {name}@{version} sha256 {digest} into {installed}")
        return record(name=name, version=version, runtime="wasm")

    def _install(self, name: str, source: Path, data: bytes) -> Path:
        target = self.tools_dir / name
        make_private_dirs(target)
        manifest = source / "murmur.yaml"
        if manifest.is_file():
            _write_bytes(target / "murmur.yaml", manifest.read_bytes())
        else:
            (target / "murmur.yaml").unlink(missing_ok=True)
        _write_bytes(target / f"{name}.wasm", data)
        return target


def _where(places: list[Path], payload: store.Payload) -> str:
    return "project" if payload.file.parent == places[0] else "global"


def _write_bytes(path: Path, data: bytes) -> None:
    write_private(path, data)


def _schema(value: Any) -> str | None:
    """A schema as compact JSON text (a JSON string is parsed first), as Murmur answers."""
    if value is None:
        return None
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def wasm_tool_factory(runtime: Any, capsule: Capsule, workdir: Path, logs: Path,
                      services: Any, attachment_store: Any, extra_env: Any,
                      stream: Any) -> ToolFactory:
    """How a pulled component becomes a tool: as a declared WebAssembly tool is built."""

    def make(resolved: ResolvedArtifact) -> ToolHandler:
        from tui.core.wasm.tool import WasmToolHandler

        return WasmToolHandler(runtime, resolved, capsule, workdir, logs, services,
                               attachment_store, extra_env, stream)

    return make
