"""What `ps` and the fleet read of a session's `trace.jsonl` at a glance: its model, the open
task and whether the session has ended. The trace sits in a folder the session's own shell can
write, so it is opened as tui/core/fs/safe_read.py opens any session file, and only its head
and tail are read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tui.core.errors import FileRefused, NotJson
from tui.core.fs.safe_read import open_regular
from tui.core.text.strict_json import loads_line

MAX_TRACE_LINE = 1024 * 1024  # task and session lines are small; a longer line is not one
MAX_TRACE_HEAD = MAX_TRACE_LINE  # the first line: `session_start`
MAX_TRACE_TAIL = 16 * 1024 * 1024  # the open task is near the end
_INTERESTING = (b'"session_start"', b'"task_start"', b'"task_end"', b'"session_end"')


@dataclass
class TraceFacts:
    """What a local trace says: the model, the open task (id and source), whether the session
    has ended."""

    model: str | None = None
    task_id: str | None = None
    task_source: str | None = None
    ended: bool = False
    problem: str | None = None  # why the trace was not read (a FIFO, a link, …)


def trace_facts(path: Path) -> TraceFacts | None:
    """The model and the open task from a trace; None when there is no trace file here, facts
    with `problem` when what is there is not read (a FIFO, a link, a device, a folder). Lines
    that are not JSON are skipped: this reads for a glance, not an audit. Only the first
    MAX_TRACE_HEAD bytes (the first `session_start`) and the last MAX_TRACE_TAIL bytes are
    read, so a trace that never ends (a sparse file, one still being written) costs the same."""
    try:
        fd = open_regular(path)
    except FileRefused as exc:
        return None if str(exc) == "no such file" else TraceFacts(problem=str(exc))
    try:
        size = os.fstat(fd).st_size
        if size <= MAX_TRACE_HEAD + MAX_TRACE_TAIL:
            chunks = [_pread(fd, size, 0)]
        else:  # the head's first line, then the tail from its first whole line
            head = _pread(fd, MAX_TRACE_HEAD, 0)
            tail = _pread(fd, MAX_TRACE_TAIL, size - MAX_TRACE_TAIL)
            chunks = [head[:head.find(b"\n") + 1], tail[tail.find(b"\n") + 1:]]
    except OSError as exc:
        return TraceFacts(problem=f"cannot be read ({exc.strerror or exc})")
    finally:
        os.close(fd)
    facts = TraceFacts()
    for chunk in chunks:
        for raw in chunk.split(b"\n"):
            if len(raw) <= MAX_TRACE_LINE and any(name in raw for name in _INTERESTING):
                _take(facts, raw)
    return facts


def _pread(fd: int, count: int, offset: int) -> bytes:
    pieces: list[bytes] = []
    while count > 0:
        piece = os.pread(fd, min(count, 1 << 20), offset)
        if not piece:
            break
        pieces.append(piece)
        count -= len(piece)
        offset += len(piece)
    return b"".join(pieces)


def _take(facts: TraceFacts, raw: bytes) -> None:
    """One trace line's part in the facts."""
    try:
        line = loads_line(raw)
    except NotJson:
        return
    if not isinstance(line, dict):
        return
    kind = line.get("event_type")
    if kind == "session_start":
        model = line.get("model")
        facts.model = model if isinstance(model, str) else facts.model
        facts.ended = False
    elif kind == "task_start" and isinstance(line.get("task_id"), str):
        facts.task_id = line["task_id"]
        source = line.get("source")
        facts.task_source = source if isinstance(source, str) else None
    elif kind == "task_end" and line.get("task_id") == facts.task_id:
        facts.task_id = facts.task_source = None
    elif kind == "session_end":
        facts.ended = True
