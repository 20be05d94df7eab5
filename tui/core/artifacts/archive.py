"""Unpacking a verified `.mur.zip` (spec murmur-newest §2.2) into a folder laid out as the bare
store layout is: `<name>.wasm` (or `skill.md`) and the packed `murmur.yaml`.

What is taken from the archive, as Murmur takes it: a root `*.wasm` (`capsule.wasm` wins over
the others, then `<name>.wasm`, then the first by name; none is `E-BLD-003`), a root
`skill.md` / `SKILL.md` for a skill, and the root `murmur.yaml`. Entry names with a leading `/`
or any `..` are never selected; what is unpacked may not pass 500 MiB
(`MURMUR_MAX_ARTIFACT_DECOMPRESSED_BYTES` overrides it). A native payload (`bin/<name>`) is
refused: murmur-tui hosts WebAssembly only.

The folder is `$MURMUR_HOME/cache/artifacts/<sha256 of the zip>/`: the zip was checked against
its sidecar and its pin before this runs, and a file already there is used only when its size
and CRC-32 are the ones the archive's directory records (else it is unpacked again, written
to a temporary name and renamed into place).
"""

from __future__ import annotations

import io
import os
import zipfile
import zlib
from pathlib import Path

from tui.core.artifacts.store import MAX_ARCHIVE_BYTES, Kind, Payload
from tui.core.errors import LaunchError
from tui.core.fs.private_files import make_private_dirs, write_private

PACKED_MANIFEST = "murmur.yaml"
SKILL_NAMES = ("skill.md", "SKILL.md")


def max_unpacked() -> int:
    value = os.environ.get("MURMUR_MAX_ARTIFACT_DECOMPRESSED_BYTES", "")
    return int(value) if value.isdigit() and int(value) > 0 else MAX_ARCHIVE_BYTES


def unpack_folder(home: Path, digest: str) -> Path:
    return home / "cache" / "artifacts" / digest


def _selectable(name: str) -> bool:
    return not name.startswith("/") and ".." not in name.split("/") and "\\" not in name


def _root(infos: list[zipfile.ZipInfo]) -> dict[str, zipfile.ZipInfo]:
    return {info.filename: info for info in infos
            if _selectable(info.filename) and "/" not in info.filename and not info.is_dir()}


def choose(payload: Payload, names: dict[str, zipfile.ZipInfo], kind: Kind,
           every: set[str]) -> zipfile.ZipInfo:
    """The entry that is the artifact's payload, or a LaunchError naming the archive."""
    where = f"{payload.file}: artifact {payload.name}@{payload.version}"
    if kind == "skill":
        found = next((names[n] for n in SKILL_NAMES if n in names), None)
        if found is None:
            raise LaunchError(f"{where}: the archive holds no root skill.md")
        return found
    wasm = sorted(n for n in names if n.endswith(".wasm"))
    for preferred in ("capsule.wasm", f"{payload.name}.wasm"):
        if preferred in wasm:
            return names[preferred]
    if wasm:
        return names[wasm[0]]
    native = f"bin/{payload.name}"
    if native in every:
        raise LaunchError(f"{where}: is a native payload ({native}); murmur-tui hosts "
                          "WebAssembly artifacts only")
    raise LaunchError(f"{where}: the archive holds no root *.wasm", code="E-BLD-003")


def unpack(payload: Payload, data: bytes, digest: str, home: Path, kind: Kind) -> Path:
    """The folder holding the payload unpacked from `data` (the archive's verified bytes)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise LaunchError(f"{payload.file}: not a zip archive ({exc})") from None
    with archive:
        names = _root(archive.infolist())
        main = choose(payload, names, kind, set(archive.namelist()))
        wanted = [(main, f"{payload.name}.wasm" if kind == "wasm" else "skill.md")]
        if PACKED_MANIFEST in names:
            wanted.append((names[PACKED_MANIFEST], PACKED_MANIFEST))
        cap = max_unpacked()
        if sum(info.file_size for info, _ in wanted) > cap:
            raise LaunchError(f"{payload.file}: unpacks to more than {cap} bytes "
                              "(MURMUR_MAX_ARTIFACT_DECOMPRESSED_BYTES)")
        folder = unpack_folder(home, digest)
        for info, target in wanted:
            path = folder / target
            if _intact(path, info):
                continue
            try:
                with archive.open(info) as handle:
                    content = handle.read(cap + 1)
            except (zipfile.BadZipFile, OSError, zlib.error, NotImplementedError) as exc:
                raise LaunchError(f"{payload.file}: {info.filename} cannot be unpacked "
                                  f"({exc})") from None
            if len(content) > cap:
                raise LaunchError(f"{payload.file}: {info.filename} unpacks to more than "
                                  f"{cap} bytes")
            try:
                make_private_dirs(folder)
                write_private(path, content)
            except OSError as exc:
                raise LaunchError(f"{path}: cannot be written ({exc.strerror or exc})") from None
        if PACKED_MANIFEST not in names:
            (folder / PACKED_MANIFEST).unlink(missing_ok=True)
    return folder


def unpack_capsule(payload: Payload, data: bytes, digest: str, home: Path) -> Path:
    """The folder holding a capsule artifact unpacked from `data` (the archive's verified
    bytes): its `murmur.yaml` and every file beside it (what its `requires_files:` packed),
    entries Murmur would not select left out. LaunchError when it cannot be."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise LaunchError(f"{payload.file}: not a zip archive ({exc})") from None
    with archive:
        wanted = [info for info in archive.infolist()
                  if _selectable(info.filename) and not info.is_dir()]
        if not any(info.filename == PACKED_MANIFEST for info in wanted):
            raise LaunchError(f"{payload.file}: the archive holds no root {PACKED_MANIFEST}")
        cap = max_unpacked()
        if sum(info.file_size for info in wanted) > cap:
            raise LaunchError(f"{payload.file}: unpacks to more than {cap} bytes "
                              "(MURMUR_MAX_ARTIFACT_DECOMPRESSED_BYTES)")
        folder = unpack_folder(home, digest)
        for info in wanted:
            path = folder / info.filename
            if _intact(path, info):
                continue
            try:
                with archive.open(info) as handle:
                    content = handle.read(cap + 1)
                if len(content) > cap:
                    raise LaunchError(f"{payload.file}: {info.filename} unpacks to more "
                                      f"than {cap} bytes")
                make_private_dirs(path.parent)
                write_private(path, content)
            except (zipfile.BadZipFile, OSError, zlib.error, NotImplementedError) as exc:
                raise LaunchError(f"{payload.file}: {info.filename} cannot be unpacked "
                                  f"({exc})") from None
    return folder


def _intact(path: Path, info: zipfile.ZipInfo) -> bool:
    try:
        content = path.read_bytes()
    except OSError:
        return False
    return len(content) == info.file_size and zlib.crc32(content) == info.CRC
