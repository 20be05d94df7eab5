"""Which `trace.jsonl` a `murmur-tui trace [WORKDIR|FILE]` argument names.

A file is itself. A folder holding `trace.jsonl` is a session workdir (whatever is at that name:
a FIFO or a link there is found, and the reader refuses it naming what it is, rather than an
older session being shown in its place). A folder holding session
folders (`ses_…/trace.jsonl`, as `<capsule>/workdir/` does, or `.murmur/ses_…/` as a
`--workdir` folder does) names its newest session: session ids are time-ordered (UUIDv7), so
the newest is the greatest. Without an argument, the newest session under `./workdir/`.
"""

from __future__ import annotations

import re
from pathlib import Path

from tui.core.errors import TraceNotFound, Where

TRACE_FILE = "trace.jsonl"
_SESSION = re.compile(r"ses_[0-9a-f]{32}")


def anything_at(path: Path) -> bool:
    """Whether anything is at `path` (a link or a FIFO too; nothing is opened)."""
    try:
        path.lstat()
    except OSError:
        return False
    return True


def newest_session(folder: Path) -> Path | None:
    """The trace of the newest session folder directly under `folder`, if any."""
    try:
        names = [entry.name for entry in folder.iterdir()
                 if _SESSION.fullmatch(entry.name) and anything_at(entry / TRACE_FILE)]
    except OSError:
        return None
    return folder / max(names) / TRACE_FILE if names else None


def locate(argument: Path | None, cwd: Path) -> Path:
    """The trace file `argument` names (see the module's text); TraceNotFound if none."""
    if argument is None:
        default = cwd / "workdir"
        found = newest_session(default)
        if found is None:
            raise TraceNotFound("no session here: give a session workdir or a trace.jsonl "
                                "(or run from a capsule folder whose workdir/ holds sessions)",
                                where=Where(default))
        return found
    if anything_at(argument) and not argument.is_dir():
        return argument
    if argument.is_dir():
        if anything_at(argument / TRACE_FILE):
            return argument / TRACE_FILE
        found = newest_session(argument) or newest_session(argument / ".murmur")
        if found is not None:
            return found
        raise TraceNotFound(f"no {TRACE_FILE} in this folder, nor a session folder holding "
                            "one", where=Where(argument))
    raise TraceNotFound("no such file or folder", where=Where(argument))
