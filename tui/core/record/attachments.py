"""Tool attachments (seed 000): images a tool wrote into its work folder.

Each is checked — media type one of four, the path a regular file beneath the workdir reached
without following a link (`beneath.py`), leading bytes matching the type, size within
`context.images.max_bytes` — and stored once by sha256 in an `attachments/` folder beside the
conversation record. A call may attach at most `PER_CALL` images, `TOTAL_FACTOR` ×
`context.images.max_bytes` together; past either, the rest are refused. A refused attachment
becomes a note in the call's result; it never changes the call's status.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core.errors import FileRefused
from tui.core.fs import beneath
from tui.core.fs.private_files import write_private

MAGIC: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
PER_CALL = 16      # images one call may attach
TOTAL_FACTOR = 4   # their bytes together: at most this many times context.images.max_bytes


@dataclass(frozen=True)
class Accepted:
    media_type: str
    path: str
    sha256: str
    size: int

    def record_block(self) -> dict[str, Any]:
        """The image block as the record keeps it: a reference to the stored bytes."""
        return {"type": "image", "source": {"type": "sha256", "media_type": self.media_type,
                                            "sha256": self.sha256}}


@dataclass(frozen=True)
class RefusedAttachment:
    path: str
    reason: str

    def note(self) -> str:
        return f"[attachment {self.path} refused: {self.reason}]"


@dataclass(frozen=True)
class Checked:
    """One call's attachments: the images accepted and stored (in order) and the notes."""

    images: tuple[Accepted, ...]
    notes: tuple[str, ...]


def check(workdir: Path, media_type: str, path: str, max_bytes: int) -> bytes | RefusedAttachment:
    """The attachment's bytes, or why it is refused."""
    if media_type not in MAGIC:
        return RefusedAttachment(path, f"media type {media_type!r} is not one of "
                                 f"{', '.join(MAGIC)}")
    try:
        read = beneath.read_beneath(workdir, path, max_bytes)
    except FileRefused as refused:
        return RefusedAttachment(path, str(refused))
    if read.truncated:
        return RefusedAttachment(path, f"{read.size} bytes is over context.images.max_bytes "
                                 f"({max_bytes})")
    data = read.data
    if not any(data.startswith(magic) for magic in MAGIC[media_type]) or (
            media_type == "image/webp" and data[8:12] != b"WEBP"):
        return RefusedAttachment(path, f"its bytes are not {media_type}")
    return data


def check_all(workdir: Path, named: Sequence[tuple[str, str]], named_count: int,
              max_bytes: int, store: AttachmentStore) -> Checked:
    """Check a call's attachments (`named`: media type and path, the first of
    `named_count`) within the per-call count and total, storing each accepted one as it is
    checked: one image's bytes are in memory at a time, and none after."""
    total = TOTAL_FACTOR * max_bytes
    images: list[Accepted] = []
    notes: list[str] = []
    used = 0
    for media_type, path in named[:PER_CALL]:
        checked = check(workdir, media_type, path, max_bytes)
        if not isinstance(checked, RefusedAttachment) and used + len(checked) > total:
            checked = RefusedAttachment(path, f"the call's images would pass {total} bytes "
                                        f"together ({TOTAL_FACTOR} × "
                                        "context.images.max_bytes)")
        if isinstance(checked, RefusedAttachment):
            notes.append(checked.note())
            continue
        used += len(checked)
        images.append(Accepted(media_type, path, store.put(checked), len(checked)))
    if named_count > PER_CALL:
        notes.append(f"[attachments: {named_count} named; only the first {PER_CALL} were "
                     f"checked (at most {PER_CALL} per call)]")
    return Checked(tuple(images), tuple(notes))


class AttachmentStore:
    """`<folder>/<sha256>`: each image stored once, folder mode 0700."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.folder / digest
        if not target.exists():
            write_private(target, data)  # 0600 in a 0700 folder, never through a link
        return digest

    def payload_block(self, block: dict[str, Any]) -> dict[str, Any]:
        """A stored image block as a driver receives it: the bytes, base64."""
        source = block.get("source", {})
        digest = str(source.get("sha256", ""))
        try:
            data = (self.folder / digest).read_bytes()
        except OSError:
            return {"type": "text", "text": f"[image {digest[:12]} is no longer stored]"}
        return {"type": "image", "source": {"type": "base64",
                                            "media_type": source.get("media_type"),
                                            "data": base64.b64encode(data).decode("ascii")}}
