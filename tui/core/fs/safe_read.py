"""Read a file the session folder holds, never trusting what is at that name.

A session's folder (its workdir, `logs/`, the running records) can be written by the session's
own shell commands and components, so whatever sits at a name may be a link, a FIFO, a device
or a file that never ends. Every reader of a session file opens it here: without following a
link at the last segment (`O_NOFOLLOW`), without blocking (`O_NONBLOCK`, so a FIFO cannot hang
the reader), checks with `fstat` that what was opened is a regular file, and reads at most
`limit` bytes. Anything else is `FileRefused`, with words for a message ("it is a FIFO (named
pipe)"), never a hang and never an exception of another kind.

`beneath` does the same for a name a component gives, relative to its work folder, segment by
segment; this module takes a path the supervisor itself built.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from tui.core.errors import FileRefused
from tui.core.fs.beneath import Read, kind_of

_CHUNK = 1 << 16
_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
          | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))


def open_regular(path: Path) -> int:
    """A read-only descriptor for the regular file at `path` (a link there is refused)."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FileRefused("no such file") from None
        if exc.errno == errno.ELOOP:
            raise FileRefused("it is a link") from None
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = 0
        if mode and not stat.S_ISREG(mode):
            raise FileRefused(f"it is {kind_of(mode)}") from None
        raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileRefused(f"it is {kind_of(mode)}")
    return fd


def read_bounded(path: Path, limit: int, tail: bool = False) -> Read:
    """At most `limit` bytes of the regular file at `path`: its first bytes, or with `tail`
    its last. `Read.size` is the file's size when it was opened (`truncated` says whether
    bytes were left out)."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        skipped = max(0, size - limit) if tail else 0
        if skipped:
            os.lseek(fd, skipped, os.SEEK_SET)
        pieces: list[bytes] = []
        got = 0
        while got < limit:
            try:
                piece = os.read(fd, min(_CHUNK, limit - got))
            except BlockingIOError:
                break
            except OSError as exc:
                raise FileRefused(f"cannot be read ({exc.strerror or exc})") from None
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
        return Read(b"".join(pieces), max(size - skipped, got), path)
    finally:
        os.close(fd)
