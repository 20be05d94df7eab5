"""Tool attachments (seed 000): images a tool wrote into its work folder.

Each is checked — media type one of four, path inside the workdir and not a link, leading bytes
matching the type, size within `context.images.max_bytes` — and stored once by sha256 in an
`attachments/` folder beside the conversation record. A refused attachment becomes a note in
the call's result; it never changes the call's status.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAGIC: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}


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
class Refused:
    path: str
    reason: str

    def note(self) -> str:
        return f"[attachment {self.path} refused: {self.reason}]"


def check(workdir: Path, media_type: str, path: str, max_bytes: int) -> bytes | Refused:
    """The attachment's bytes, or why it is refused."""
    if media_type not in MAGIC:
        return Refused(path, f"media type {media_type!r} is not one of "
                             f"{', '.join(MAGIC)}")
    root = workdir.resolve()
    target = root / path
    if Path(path).is_absolute() or not _inside(root, target):
        return Refused(path, "the path is outside the work folder")
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return Refused(path, "no such file")
    except OSError as exc:
        return Refused(path, f"cannot be read ({exc.strerror})")
    if stat.S_ISLNK(info.st_mode) or _has_link(root, target):
        return Refused(path, "it is a link")
    if not stat.S_ISREG(info.st_mode):
        return Refused(path, "not a regular file")
    if info.st_size > max_bytes:
        return Refused(path, f"{info.st_size} bytes is over context.images.max_bytes "
                             f"({max_bytes})")
    try:
        data = target.read_bytes()
    except OSError as exc:
        return Refused(path, f"cannot be read ({exc.strerror})")
    if not any(data.startswith(magic) for magic in MAGIC[media_type]) or (
            media_type == "image/webp" and data[8:12] != b"WEBP"):
        return Refused(path, f"its bytes are not {media_type}")
    return data


def _inside(root: Path, target: Path) -> bool:
    normal = Path(os.path.normpath(target))
    return normal == root or root in normal.parents


def _has_link(root: Path, target: Path) -> bool:
    current = Path(os.path.normpath(target)).parent
    while current != root and root in current.parents:
        if current.is_symlink():
            return True
        current = current.parent
    return False


class AttachmentStore:
    """`<folder>/<sha256>`: each image stored once, folder mode 0700."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.folder / digest
        if not target.exists():
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary = self.folder / f".{digest}.tmp"
            temporary.write_bytes(data)
            os.chmod(temporary, 0o600)
            os.replace(temporary, target)
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
