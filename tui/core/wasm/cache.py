"""Compiled-component cache: `$MURMUR_HOME/cache/compiled/<key>.cwasm`.

The key is the sha256 of the `.wasm`, the wasmtime version and the engine flags, so a cache
written by another wasmtime or engine configuration is never used. Beside each `.cwasm` a
`.json` records its size and CRC-32; a file that does not match (truncated, corrupt, foreign)
or that wasmtime refuses is compiled again and replaced — never loaded, never a crash. Files are
written to a temporary name and renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import wasmtime
from wasmtime.component import Component

from tui.core.errors import ComponentLoadError
from tui.core.fs.private_files import make_private_dirs

WASMTIME_VERSION = importlib.metadata.version("wasmtime")
LARGE_COMPONENT_BYTES = 1_000_000  # compiling more than this can take seconds: say so


@dataclass(frozen=True)
class LoadedComponent:
    path: Path
    sha256: str
    component: Component
    imports: frozenset[str]
    exports: frozenset[str]
    source: str  # "memory" | "cache" | "compiled"


class CompileCache:
    def __init__(self, engine: wasmtime.Engine, folder: Path, flags: str,
                 progress: Callable[[str], None] | None = None) -> None:
        self.engine = engine
        self.folder = folder
        self.flags = flags
        self.progress = progress
        self._memory: dict[str, LoadedComponent] = {}
        self._lock = threading.Lock()

    def key(self, wasm_sha256: str) -> str:
        material = f"{wasm_sha256}|wasmtime={WASMTIME_VERSION}|{self.flags}".encode()
        return hashlib.sha256(material).hexdigest()

    def load(self, path: Path) -> LoadedComponent:
        try:
            wasm = path.read_bytes()
        except OSError as exc:
            raise ComponentLoadError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        digest = hashlib.sha256(wasm).hexdigest()
        with self._lock:
            known = self._memory.get(digest)
            if known is not None:
                return LoadedComponent(path, digest, known.component, known.imports,
                                       known.exports, "memory")
            component, source = self._from_disk_or_compile(path, wasm, digest)
            component_type = component.type
            loaded = LoadedComponent(
                path, digest, component,
                frozenset(component_type.imports(self.engine)),
                frozenset(component_type.exports(self.engine)), source,
            )
            self._memory[digest] = loaded
            return loaded

    def _from_disk_or_compile(self, path: Path, wasm: bytes, digest: str
                              ) -> tuple[Component, str]:
        key = self.key(digest)
        compiled = self.folder / f"{key}.cwasm"
        stamp = self.folder / f"{key}.json"
        if _intact(compiled, stamp):
            try:
                return Component.deserialize_file(self.engine, str(compiled)), "cache"
            except wasmtime.WasmtimeError:
                pass  # foreign or damaged: compile again below
        if len(wasm) >= LARGE_COMPONENT_BYTES and self.progress is not None:
            self.progress(f"compiling {path.name} ({len(wasm) / 1e6:.1f} MB) for the first "
                          "time; this can take several seconds")
        try:
            component = Component(self.engine, wasm)
        except wasmtime.WasmtimeError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
            raise ComponentLoadError(f"{path}: not a WebAssembly component wasmtime can "
                                     f"compile ({first})") from None
        self._store(compiled, stamp, bytes(component.serialize()))
        return component, "compiled"

    def _store(self, compiled: Path, stamp: Path, blob: bytes) -> None:
        """Write the compiled code and its stamp atomically; a failure only costs speed."""
        try:
            make_private_dirs(self.folder)
            _atomic_write(compiled, blob)
            _atomic_write(stamp, json.dumps({"size": len(blob), "crc32": zlib.crc32(blob),
                                             "wasmtime": WASMTIME_VERSION,
                                             "flags": self.flags}).encode())
        except OSError:
            pass


def _intact(compiled: Path, stamp: Path) -> bool:
    try:
        meta = json.loads(stamp.read_text(encoding="utf-8"))
        blob = compiled.read_bytes()
    except (OSError, ValueError):
        return False
    return (isinstance(meta, dict) and meta.get("size") == len(blob)
            and meta.get("crc32") == zlib.crc32(blob)
            and meta.get("wasmtime") == WASMTIME_VERSION)


def _atomic_write(target: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
