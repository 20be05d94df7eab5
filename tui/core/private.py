"""Private files: every folder murmur-tui creates is 0700 and every log or trace it writes is
0600, whatever the umask, so another local user reads none of it (docs/security.md).

Folders that already exist keep their mode: a folder the user made (`--workdir`, a capsule's
own folder) is theirs to set.
"""

from __future__ import annotations

import os
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600


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
            continue
        os.chmod(directory, FOLDER_MODE)  # mkdir's mode is masked by the umask


def append_private(path: Path, text: str) -> None:
    """Append `text` to a file created 0600 (its folder 0700) if it does not exist yet."""
    make_private_dirs(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        data = text.encode("utf-8", "replace")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Replace `path` atomically with `text`, mode 0600."""
    make_private_dirs(path.parent)
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(text)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, path)


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
