"""`task.md`: the task a session runs, in its accessible workdir (docs/files.md).

Written for every task as it begins (`--task`, a task sent through the door, a queued one), so
a script capsule and the model's own shell can read it: through the one redaction (a key or a
door token in a task's text is `[redacted]` on disk), lone surrogates replaced (text_rule),
mode 0600, replacing whatever was at the name without writing through it.

Read at launch (the workdir's `task.md` or `input.txt`, the capsule's own `task.md`): the
session's shell may have put anything at those names, so each is read as `safe_read` reads a
session file — no link followed, never blocking on a FIFO, a regular file of at most
`MAX_TASK_BYTES` — and anything else stops the launch naming the file and what is there.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from tui.core.errors import FileRefused, LaunchError
from tui.core.fs.private_files import write_private
from tui.core.fs.safe_read import read_bounded
from tui.core.text.secrets import redact
from tui.core.text.text_rule import whole

TASK_FILE = "task.md"
MAX_TASK_BYTES = 4 * 1024 * 1024  # four times what the door takes in one message


def write_task(accessible: Path, text: str) -> None:
    """`task.md` in `accessible`, holding `text` as every file murmur-tui writes holds text."""
    write_private(accessible / TASK_FILE, redact(whole(text)))


def forget_task(accessible: Path) -> None:
    """Remove `task.md` (whatever is at the name; a link is removed, not what it names)."""
    with contextlib.suppress(OSError):
        (accessible / TASK_FILE).unlink()


def read_task_at(path: Path) -> str | None:
    """The text of the task file at `path`; None when there is none. LaunchError naming the
    file when what is there is not a regular file of UTF-8 text within `MAX_TASK_BYTES`."""
    try:
        read = read_bounded(path, MAX_TASK_BYTES + 1)
    except FileRefused as exc:
        if str(exc) == "no such file":
            return None
        raise LaunchError(f"{path}: not read as the task: {exc}") from None
    if read.truncated or len(read.data) > MAX_TASK_BYTES:
        raise LaunchError(f"{path}: not read as the task: it is over "
                          f"{MAX_TASK_BYTES // (1024 * 1024)} MiB ({read.size} bytes)")
    try:
        return read.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LaunchError(f"{path}: cannot be read (not UTF-8 at byte {exc.start + 1})"
                          ) from None
