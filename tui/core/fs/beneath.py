"""Read a file beneath a folder, never following a link on the way.

A component names files in its work folder (a tool's `data-path`, its attachments) and has
write access there: it can plant a link, a FIFO or a huge file where the host will look. So
the name is taken as a path relative to the folder (an absolute path is refused, `..` may not
climb out of it) and opened one segment at a time, each relative to the folder opened before
it (`dir_fd`), with `O_NOFOLLOW`: a link at any segment is refused, and no check can race with
a link swapped in between (nothing is resolved by name twice). The last segment is opened
`O_NONBLOCK`, so a FIFO cannot hang the host, and must be a regular file — checked before
opening and again with `fstat` on what was opened. At most `limit` bytes are read.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from tui.core.errors import FileRefused

_CHUNK = 1 << 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Read:
    data: bytes      # at most `limit` bytes from the start of the file
    size: int        # the file's size when it was opened
    path: Path       # where the file is (the folder joined with the normalised name)

    @property
    def truncated(self) -> bool:
        return self.size > len(self.data)


def segments(name: str) -> list[str]:
    """The folder-relative segments of `name`, `.` dropped and `..` applied; FileRefused when it
    is absolute, empty or climbs out of the folder."""
    if not name or "\x00" in name:
        raise FileRefused("the path is empty" if not name else "the path holds a NUL byte")
    if name.startswith("/"):
        raise FileRefused("the path is absolute; it must be relative to the work folder")
    parts: list[str] = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise FileRefused("the path is outside the work folder")
            parts.pop()
            continue
        parts.append(part)
    if not parts:
        raise FileRefused("it is the work folder itself, not a file")
    return parts


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words ("a FIFO (named pipe)")."""
    if stat.S_ISLNK(mode):
        return "a link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _why(exc: OSError, where: str | None, parent: int, name: str) -> FileRefused:
    """A refusal, in words, for a failed open of `name` in the folder `parent`; `where` is
    the segments so far for a folder on the way, None for the file itself."""
    subject = where or "it"
    if exc.errno == errno.ENOENT:
        return FileRefused("no such file" if where is None else f"no such folder {where}")
    try:
        mode: int | None = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
    except OSError:
        mode = None
    if (mode is not None and stat.S_ISLNK(mode)) or exc.errno == errno.ELOOP:
        return FileRefused(f"{subject} is a link")
    if mode is not None and where is not None and not stat.S_ISDIR(mode):
        return FileRefused(f"{where} is not a folder")
    return FileRefused(f"cannot be read ({exc.strerror or exc})")


def open_beneath(folder: Path, name: str) -> tuple[int, Path]:
    """An O_RDONLY descriptor for the regular file `name` beneath `folder`, and its path."""
    parts = segments(name)
    if not _NOFOLLOW or os.open not in os.supports_dir_fd:
        raise FileRefused("this platform cannot open a file without following links")
    try:
        current = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise FileRefused(f"the work folder cannot be opened ({exc.strerror or exc})") from None
    try:
        for index, part in enumerate(parts[:-1]):
            where = "/".join(parts[:index + 1])
            try:
                step = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                               dir_fd=current)
            except OSError as exc:
                raise _why(exc, where, current, part) from None
            os.close(current)
            current = step
        last = parts[-1]
        try:
            info = os.stat(last, dir_fd=current, follow_symlinks=False)
        except OSError as exc:
            raise _why(exc, None, current, last) from None
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"it is {kind_of(info.st_mode)}")
        try:
            fd = os.open(last, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC,
                         dir_fd=current)
        except OSError as exc:
            raise _why(exc, None, current, last) from None
    finally:
        os.close(current)
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode):  # swapped after the check above
        os.close(fd)
        raise FileRefused(f"it is {kind_of(opened.st_mode)}")
    return fd, folder.joinpath(*parts)


def read_beneath(folder: Path, name: str, limit: int,
                 deadline: float | None = None) -> Read:
    """The first `limit` bytes of the regular file `name` beneath `folder`. `deadline` is a
    `time.monotonic()` value: reading past it is refused."""
    fd, path = open_beneath(folder, name)
    try:
        size = os.fstat(fd).st_size
        pieces: list[bytes] = []
        got = 0
        while got < limit:
            if deadline is not None and time.monotonic() > deadline:
                raise FileRefused("reading it ran past the call's deadline")
            try:
                piece = os.read(fd, min(_CHUNK, limit - got))
            except OSError as exc:
                raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
        if got >= limit and size <= got:
            try:  # the file grew since it was opened
                if os.read(fd, 1):
                    size = got + 1
            except OSError:
                pass
        return Read(b"".join(pieces), max(size, got), path)
    finally:
        os.close(fd)
