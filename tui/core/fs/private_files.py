"""Private files: every folder murmur-tui creates is 0700 and every file it writes is 0600,
whatever the umask, so another local user reads none of it (docs/security.md).

Folders that already exist keep their mode: a folder the user made (`--workdir`, a capsule's
own folder) is theirs to set.

The session's own shell commands and components can write in the folders these files live
in, so whatever sits at a name may be a link, a FIFO or a device. A writer here never follows
a link at the file's name (a link is refused, not written through), never blocks on a FIFO
and writes only into a regular file (`NotAFile` otherwise, an `OSError` whose text says what
is there). An appender starts on a new line when the file does not end with one (a writer
killed mid-line left it), so a line is never glued to a cut one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from tui.core.errors import NotAFile
from tui.core.fs.beneath import kind_of

FOLDER_MODE = 0o700
FILE_MODE = 0o600
# read as well as write: an appender looks at the file's last byte
_APPEND = (os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
           | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
           | getattr(os, "O_NOCTTY", 0))
_FRESH = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))


def make_private_dirs(leaf: Path, root: Path | None = None) -> None:
    """Create `leaf` and every missing ancestor (up to `root`, if given), oldest first, each
    mode 0700."""
    missing: list[Path] = []
    current = leaf
    while not current.exists():
        missing.append(current)
        if current == root or current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            continue  # made meanwhile (or a dangling link: the write into it says so)
        os.chmod(directory, FOLDER_MODE)  # mkdir's mode is masked by the umask


def open_append(path: Path, root: Path | None = None) -> int:
    """A descriptor appending to the regular file at `path`, created 0600 (its missing
    folders 0700, up to `root`) when it does not exist. A link, FIFO, device or folder at
    `path` is `NotAFile`; a file that does not end with a newline gets one first."""
    make_private_dirs(path.parent, root)
    try:
        fd = os.open(path, _APPEND, FILE_MODE)
    except OSError as exc:
        raise _not_a_file(path, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(errno.EINVAL, f"it is {kind_of(info.st_mode)}", str(path))
        if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
            write_all(fd, b"\n")  # close off a line a killed writer left unfinished
    except BaseException:
        os.close(fd)
        raise
    return fd


def _not_a_file(path: Path, exc: OSError) -> OSError:
    """The error of an open that refused what is at `path`, in words."""
    if exc.errno == errno.ELOOP:
        return NotAFile(errno.ELOOP, "it is a link (not followed)", str(path))
    if exc.errno in (errno.ENXIO, errno.EISDIR):
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return exc
        return NotAFile(exc.errno, f"it is {kind_of(mode)}", str(path))
    return exc


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def append_private(path: Path, text: str) -> None:
    """Append `text` to a file created 0600 (its folder 0700) if it does not exist yet
    (`open_append`: never through a link, never into anything but a regular file)."""
    fd = open_append(path)
    try:
        write_all(fd, text.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def write_private(path: Path, data: str | bytes) -> None:
    """Replace `path` atomically with `data` (text is written as UTF-8), mode 0600."""
    with replacing(path) as fd:
        write_all(fd, data.encode("utf-8", "replace") if isinstance(data, str) else data)


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[int]:
    """A descriptor to write `path`'s new content to, mode 0600: a fresh file of an
    unguessable name beside it (created exclusively: nothing planted there is written
    through) that takes the name once the block ends — replacing whatever was there, a link
    itself rather than what it points to. An error leaves `path` as it was."""
    make_private_dirs(path.parent)
    temporary = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
    fd = os.open(temporary, _FRESH, FILE_MODE)
    try:
        try:
            yield fd
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def create_private(path: Path) -> int:
    """A descriptor to a new file at `path` (mode 0600, its folders 0700) for another
    program's output; FileExistsError when anything is at the name."""
    make_private_dirs(path.parent)
    return os.open(path, _FRESH, FILE_MODE)


def private_home(home: Path) -> str | None:
    """Create `$MURMUR_HOME` 0700 if it is missing; a warning when it exists and other users
    can read or enter it (Murmur's W-SEC-028), else None."""
    try:
        make_private_dirs(home)
        mode = home.stat().st_mode & 0o777
    except OSError:
        return None  # the first write into it reports the real problem
    if mode & 0o077:
        return (f"{home} can be read by other users (mode {mode:o}); it holds conversations "
                f"and traces: chmod 700 {home}")
    return None
