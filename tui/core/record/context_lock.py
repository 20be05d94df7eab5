"""One writer per conversation context: two sessions appending to the same record would
interleave their tool calls and results.

A session that will write a context's record holds an exclusive lock on
`$MURMUR_HOME/tui/locks/<record>/<context-id>.lock` (`flock`, released by the kernel when the
process ends, however it ends) from launch to its last line. A second session asking for the same
context is refused before anything runs, with a message naming the session that holds it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import threading
import time
from pathlib import Path

from tui.core.errors import ContextInUse, LaunchError
from tui.core.fs.private_files import FILE_MODE, make_private_dirs
from tui.core.text.segments import MAX_NAME_BYTES


def lock_path(home: Path, record: str, context_id: str) -> Path:
    """`<context-id>.lock`; for an id so long that the suffix would take the name past what a
    file name holds, the id's SHA-256 instead (the same id always gets the same lock)."""
    name = f"{context_id}.lock"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        name = f"{hashlib.sha256(context_id.encode('utf-8', 'surrogatepass')).hexdigest()}.lock"
    return home / "tui" / "locks" / record / name


class ContextLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._guard = threading.Lock()

    def acquire(self, session_id: str, context_id: str) -> None:
        """Hold the lock, or raise ContextInUse naming who holds it."""
        try:  # a link planted at its name is not followed, a FIFO not taken for the file
            make_private_dirs(self.path.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                         | os.O_NONBLOCK, FILE_MODE)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise OSError(errno.EINVAL, "not a regular file")
        except OSError as exc:
            raise LaunchError(f"{self.path}: the conversation's lock cannot be taken: "
                              f"{exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(fd)
            os.close(fd)
            raise ContextInUse(
                f"--context {context_id}: the conversation is being written by {holder}; wait "
                "for that session to end, or give another --context") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"session_id": session_id, "pid": os.getpid(),
                                 "since": time.strftime("%Y-%m-%dT%H:%M:%S")}).encode())
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (once, whichever thread asks first)."""
        with self._guard:
            fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the descriptor drops the lock


def _holder(fd: int) -> str:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict) or not data.get("session_id"):
        return "another session"
    return (f"session {data.get('session_id')} (pid {data.get('pid')}, since "
            f"{data.get('since')})")
