"""`murmur.lock` beside `murmur.yaml`: every store-resolved artifact pinned to a version and the
sha256 of what Murmur hashes (spec murmur-newest §3; Murmur v0.4.0 and later, read and written
as v0.11.0 does).

    lock_version: 2
    artifacts:
    - name: echo-tool
      resolved_version: 1.0.0
      sha256:
        any: 5f0c…            # or platforms: {linux-x86_64: …, darwin-aarch64: …}
      origin: operator        # or runtime, with session: ses_…

A version-1 lock (Murmur v0.2.0 and murmur-tui before it: `sha256: {wasm: …}`) is still read,
its pins checked the same way, and never written: a v1 project that needs a new pin is refused
with the way to regenerate it (`V1_FROZEN`). A lock is read whole or refused (`E-RUN-003`) with
a message naming the file and the entry; it is written atomically (a temporary file renamed
over it), mode 0600.
"""

from __future__ import annotations

import hashlib
import platform
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from tui.core.errors import LockError
from tui.core.fs.private_files import write_private

LOCK_FILE = "murmur.lock"
LOCK_VERSION = 2  # what murmur-tui writes
READ_VERSIONS = (1, 2)
MAX_LOCK_BYTES = 1 << 20
# Murmur's code for bytes that do not match their pin or their store hash was not found in its
# sources (spec §2.4 gives only the wording); murmur-tui's own, in this one place.
INTEGRITY_CODE = "E-REG-002"
REGENERATE = f"delete {LOCK_FILE} and run `mur install` to regenerate it"
Origin = Literal["operator", "runtime"]


def platform_tag() -> str:
    """This machine as Murmur tags a platform payload: `<os>-<arch>` (`linux-x86_64`,
    `darwin-aarch64`)."""
    system = platform.system().lower() or "unknown"
    machine = platform.machine().lower() or "unknown"
    machine = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return f"{system}-{machine}"


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    sha256: str | None = None  # `sha256.any` (v2) or `sha256.wasm` (v1)
    platforms: tuple[tuple[str, str], ...] = ()  # `sha256.platforms`, in the file's order
    origin: Origin = "operator"
    session: str | None = None  # the session whose pull wrote a runtime pin

    def expected(self, tag: str) -> str | None:
        """The hash this pin holds for a payload on platform `tag`: `any` answers for every
        platform, a `platforms` map only for its own keys (never a fallback)."""
        if self.sha256 is not None:
            return self.sha256
        return dict(self.platforms).get(tag)

    def pinned_platforms(self) -> str:
        return ", ".join(tag for tag, _ in self.platforms) or "no platform"


@dataclass(frozen=True)
class Lock:
    path: Path
    pins: tuple[Pin, ...] = ()
    version: int = LOCK_VERSION

    def pin(self, name: str) -> Pin | None:
        return next((pin for pin in self.pins if pin.name == name), None)

    def upsert(self, pin: Pin) -> Lock:
        """This lock with `pin` merged in as Murmur merges one: a new version or a change of
        shape (any ↔ platforms) replaces the hashes, another platform's hash joins the map;
        an operator pin is never demoted by a runtime one, and an earlier pull keeps its
        session."""
        old = self.pin(pin.name)
        if old is None:
            return replace(self, pins=(*self.pins, pin))
        merged = pin
        if old.version == pin.version and pin.platforms and old.platforms:
            joined = dict(old.platforms)
            joined.update(pin.platforms)
            merged = replace(merged, platforms=tuple(joined.items()))
        if old.origin == "operator" or (old.origin == "runtime" and pin.origin == "runtime"):
            merged = replace(merged, origin=old.origin, session=old.session)
        return replace(self, pins=tuple(merged if p.name == pin.name else p for p in self.pins))

    def text(self) -> str:
        entries: list[dict[str, Any]] = []
        for pin in self.pins:
            hashes: dict[str, Any] = ({"any": pin.sha256} if pin.sha256 is not None
                                      else {"platforms": dict(pin.platforms)})
            entry: dict[str, Any] = {"name": pin.name, "resolved_version": pin.version,
                                     "sha256": hashes, "origin": pin.origin}
            if pin.origin == "runtime":
                entry["session"] = pin.session
            entries.append(entry)
        data = {"lock_version": LOCK_VERSION, "artifacts": entries}
        return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)

    def write(self) -> None:
        """Write this lock as version 2; a version-1 lock is never rewritten (LockError)."""
        if self.version != LOCK_VERSION:
            raise LockError(f"{self.path}: {V1_FROZEN}")
        write_private(self.path, self.text())


V1_FROZEN = (f"is a version-1 lock (Murmur v0.2.0); murmur-tui reads it but does not rewrite "
             f"it: {REGENERATE} as version 2")


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
        raise LockError(f"{path}: invalid murmur.lock: YAML parse error: "
                        f"{_first_line(exc)}") from None
    return _parse(path, data)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _parse(path: Path, data: Any) -> Lock:
    if not isinstance(data, dict):
        raise LockError(f"{path}: invalid murmur.lock: not a mapping with lock_version and "
                        "artifacts")
    version = data.get("lock_version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        raise LockError(f"{path}: invalid murmur.lock: unsupported lock_version {version!r} "
                        f"(expected {LOCK_VERSION}; murmur-tui also reads 1) — {REGENERATE}")
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
        if version == 1:
            if not isinstance(hashes, dict):
                raise LockError(f"{where}.sha256: must be a mapping with a wasm: hash")
            pins.append(Pin(name, resolved, _text(hashes.get("wasm"), f"{where}.sha256.wasm")
                            .lower()))
        else:
            pins.append(_pin_v2(entry, name, resolved, hashes, f"{where} ('{name}')"))
    return Lock(path, tuple(pins), version)


def _pin_v2(entry: dict[Any, Any], name: str, resolved: str, hashes: Any, where: str) -> Pin:
    if not isinstance(hashes, dict):
        raise LockError(f"{where}: pins no hash (expected either sha256.any or "
                        "sha256.platforms)")
    has_any, has_platforms = "any" in hashes, "platforms" in hashes
    if has_any and has_platforms:
        raise LockError(f"{where}: pins both sha256.any and sha256.platforms (expected "
                        "exactly one)")
    if not has_any and not has_platforms:
        raise LockError(f"{where}: pins no hash (expected either sha256.any or "
                        "sha256.platforms)")
    digest: str | None = None
    platforms: list[tuple[str, str]] = []
    if has_any:
        digest = _text(hashes["any"], f"{where}.sha256.any").lower()
    else:
        table = hashes["platforms"]
        if not isinstance(table, dict) or not table:
            raise LockError(f"{where}.sha256.platforms: must map each platform tag to a hash")
        for tag, value in table.items():
            key = _text(tag, f"{where}.sha256.platforms key")
            platforms.append((key, _text(value, f"{where}.sha256.platforms.{key}").lower()))
    origin = entry.get("origin", "operator")
    if origin not in ("operator", "runtime"):
        raise LockError(f"{where}.origin: must be operator or runtime, not {origin!r}")
    session = entry.get("session")
    if origin == "runtime":
        session = _text(session, f"{where}.session")
    elif session is not None:
        raise LockError(f"{where}.session: only a runtime pin names the session that pulled "
                        "it (this one is origin: operator)")
    return Pin(name, resolved, digest, tuple(platforms), origin, session)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        hint = " (quote it)" if isinstance(value, (int, float)) else ""
        raise LockError(f"{where}: must be a string{hint}")
    if not value.strip():
        raise LockError(f"{where}: is empty")
    return value.strip()


def check_pin(pin: Pin, lock: Path, version: str, digest: str, file: Path) -> None:
    """Refuse (LockError) bytes that are not the ones `pin` names for this platform, in
    `mur run`'s words (spec §2.4)."""
    tag = platform_tag()
    expected = pin.expected(tag)
    if expected is None:
        raise LockError(f"{lock}: murmur.lock has no sha256 for '{pin.name}' on {tag}: it pins "
                        f"{pin.pinned_platforms()}", code=INTEGRITY_CODE)
    if expected != digest:
        raise LockError(
            f"artifact integrity check failed for {pin.name}@{version}\n"
            f"  expected sha256 (murmur.lock): {expected}\n"
            f"  actual sha256 (on disk): {digest}\n"
            f"  file: {file}; lock: {lock} (re-install the artifact, or {REGENERATE})",
            code=INTEGRITY_CODE)
