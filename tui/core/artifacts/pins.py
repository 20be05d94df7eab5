"""`murmur.lock` beside `murmur.yaml` (spec §1): every registry-resolved artifact pinned to a
version and the sha256 of its bytes.

    lock_version: 1
    artifacts:
    - name: echo-tool
      resolved_version: 1.0.0
      sha256:
        wasm: 5f0c…

A lock is read whole or refused with a message naming the file and the key; it is written
atomically (a temporary file renamed over it), mode 0600.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tui.core.errors import LockError
from tui.core.fs.private_files import write_private

LOCK_FILE = "murmur.lock"
LOCK_VERSION = 1
MAX_LOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    sha256: str


@dataclass(frozen=True)
class Lock:
    path: Path
    pins: tuple[Pin, ...] = ()

    def pin(self, name: str) -> Pin | None:
        return next((pin for pin in self.pins if pin.name == name), None)

    def upsert(self, pin: Pin) -> Lock:
        """This lock with `pin` replacing the entry of the same name (or appended)."""
        if self.pin(pin.name) is None:
            return Lock(self.path, (*self.pins, pin))
        return Lock(self.path, tuple(pin if p.name == pin.name else p for p in self.pins))

    def text(self) -> str:
        data = {"lock_version": LOCK_VERSION, "artifacts": [
            {"name": p.name, "resolved_version": p.version, "sha256": {"wasm": p.sha256}}
            for p in self.pins]}
        return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)

    def write(self) -> None:
        write_private(self.path, self.text())


def lock_path(capsule_root: Path) -> Path:
    return capsule_root / LOCK_FILE


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_lock(path: Path) -> Lock | None:
    """The lock at `path`, None when there is none; LockError when it cannot be used."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_LOCK_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LockError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_LOCK_BYTES:
        raise LockError(f"{path}: is larger than {MAX_LOCK_BYTES} bytes")
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise LockError(f"{path}: is not valid YAML ({_first_line(exc)})") from None
    return _parse(path, data)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _parse(path: Path, data: Any) -> Lock:
    if not isinstance(data, dict):
        raise LockError(f"{path}: is not a mapping with lock_version and artifacts")
    version = data.get("lock_version")
    if version != LOCK_VERSION or isinstance(version, bool):
        raise LockError(f"{path}: lock_version: unsupported lock_version {version!r} "
                        f"(expected {LOCK_VERSION})")
    entries = data.get("artifacts", [])
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        raise LockError(f"{path}: artifacts: must be a list")
    pins: list[Pin] = []
    for index, entry in enumerate(entries):
        where = f"{path}: artifacts[{index}]"
        if not isinstance(entry, dict):
            raise LockError(f"{where}: must be a mapping (name, resolved_version, sha256)")
        name = _text(entry.get("name"), f"{where}.name")
        resolved = _text(entry.get("resolved_version"), f"{where}.resolved_version")
        hashes = entry.get("sha256")
        if not isinstance(hashes, dict):
            raise LockError(f"{where}.sha256: must be a mapping with a wasm: hash")
        digest = _text(hashes.get("wasm"), f"{where}.sha256.wasm").lower()
        pins.append(Pin(name, resolved, digest))
    return Lock(path, tuple(pins))


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        hint = " (quote it)" if isinstance(value, (int, float)) else ""
        raise LockError(f"{where}: must be a string{hint}")
    if not value.strip():
        raise LockError(f"{where}: is empty")
    return value.strip()


def mismatch(name: str, version: str, pinned: str, found: str, file: Path,
             lock: Path) -> LockError:
    """The refusal of a component whose bytes are not the ones its pin names."""
    return LockError(
        f"artifact {name}@{version}: {file} does not match {lock}: pinned sha256 {pinned}, "
        f"found sha256 {found} (re-publish the artifact, or delete {LOCK_FILE} to pin what "
        "is there now)", code="E-REG-002")
