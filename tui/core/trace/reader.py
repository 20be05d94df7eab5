"""Reading `trace.jsonl` back: every line as a dict, as Murmur's `mur trace` reads it (spec
§2). A line that is not a JSON object is a `TraceFormatError` naming file and line; only a line
cut short by a writer that died (`cut.cut_short`) is skipped and counted — at the end, or
anywhere when a later writer (a resume reporting lost background work) closed it off with a
newline and went on. More than `MAX_CUT_LINES` of them is not a trace murmur-tui wrote.

The session's shell can write where its trace lives, so what is at the name is not trusted: it
is opened as `safe_read` opens a session file (no link followed, never blocking, a regular file
or a refusal naming what is there), at most `MAX_TRACE_BYTES` of it are read (the size it had
when opened: lines written meanwhile wait for the next read), and a line longer than
`MAX_LINE_BYTES` is refused before it is held in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.errors import FileRefused, NotJson, TraceFormatError, Where
from tui.core.fs.safe_read import open_regular
from tui.core.text.strict_json import loads_line
from tui.core.trace.cut import cut_short

MAX_LINE_BYTES = 16 * 1024 * 1024  # no line murmur-tui writes comes near this
MAX_TRACE_BYTES = 256 * 1024 * 1024  # a session of thousands of turns; every line is kept
MAX_CUT_LINES = 16  # one per killed session a resume went on from, at most
_CHUNK = 1 << 16


@dataclass
class TraceLines:
    """A trace's lines as dicts (iterating gives them), the file's line number of each
    (`numbers`: blank lines are not events), and the numbers of the lines that were cut
    short (a writer that died mid-line) and so skipped: `cut_lines` all of them, `cut_line`
    the last line of the file when it is one."""

    events: list[dict[str, Any]]
    cut_lines: list[int] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    cut_line: int | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    @property
    def skipped(self) -> int:
        return len(self.cut_lines)


def _mib(count: int) -> str:
    return f"{count / (1024 * 1024):.0f} MiB"


def _open(path: Path) -> int:
    try:
        return open_regular(path)
    except FileRefused as exc:
        raise TraceFormatError(f"not read: {exc}", where=Where(path)) from None


def read_trace(path: Path) -> TraceLines:
    """Every line of a trace as a dict. A line that is not a JSON object (as Murmur reads
    JSON: `strict_json`) raises TraceFormatError naming file and line — except a line cut
    short by a writer that died (an object begun and never ended), skipped and counted.
    (Murmur's `mur trace` refuses that line too; the trace of a killed session is still worth
    reading.) What is not a regular file, or one over `MAX_TRACE_BYTES`, is a
    TraceFormatError naming the file."""
    lines = TraceLines([])
    with os.fdopen(_open(path), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_TRACE_BYTES:
            raise TraceFormatError(f"the trace is {_mib(size)}, over the "
                                   f"{_mib(MAX_TRACE_BYTES)} murmur-tui reads", where=Where(path))
        left = size
        number = 0
        while left > 0:
            raw = handle.readline(min(MAX_LINE_BYTES + 1, left))
            if not raw:
                break  # the file shrank while it was read
            left -= len(raw)
            number += 1
            terminated = raw.endswith(b"\n")
            if len(raw) > MAX_LINE_BYTES and not terminated:  # more follows on this line
                raise TraceFormatError(f"a line longer than {_mib(MAX_LINE_BYTES)}: not a "
                                       "trace line", where=Where(path, number))
            line = raw[:-1] if terminated else raw
            if not line.strip():
                continue
            try:
                value = loads_line(line)
            except NotJson as exc:
                last = left <= 0 or not terminated
                if not _cut(line, terminated):
                    raise TraceFormatError(f"not JSON ({exc})", where=Where(path, number)
                                           ) from None
                lines.cut_lines.append(number)
                if len(lines.cut_lines) > MAX_CUT_LINES:
                    raise TraceFormatError(f"more than {MAX_CUT_LINES} lines cut short: not a "
                                           "trace murmur-tui wrote", where=Where(path, number)
                                           ) from None
                if last:
                    lines.cut_line = number
                continue
            if not isinstance(value, dict):
                raise TraceFormatError("not a JSON object", where=Where(path, number))
            lines.events.append(value)
            lines.numbers.append(number)
    return lines


def _cut(line: bytes, terminated: bool) -> bool:
    """Whether a line that is not JSON was cut short by a writer that died. The file's last
    line, when no newline ends it, only has to begin an object (whatever was being written
    when the writer died); any other must be a beginning of one (`cut_short`)."""
    if not terminated and line.lstrip().startswith(b"{"):
        return True
    return cut_short(line)


def first_event(path: Path) -> dict[str, Any]:
    """The trace's first line as a dict, reading no further than it (at most
    `MAX_LINE_BYTES`); TraceFormatError naming file and line when it is not one."""
    fd = _open(path)
    try:
        raw = bytearray()
        while len(raw) <= MAX_LINE_BYTES and b"\n" not in raw:
            piece = os.read(fd, _CHUNK)
            if not piece:
                break
            raw += piece
    except OSError as exc:
        raise TraceFormatError(f"cannot be read ({exc.strerror or exc})", where=Where(path)
                               ) from None
    finally:
        os.close(fd)
    end = raw.find(b"\n")
    if end < 0 and len(raw) > MAX_LINE_BYTES:
        raise TraceFormatError(f"a line longer than {_mib(MAX_LINE_BYTES)}: not a trace line",
                               where=Where(path, 1))
    try:
        value = loads_line(bytes(raw[:end] if end >= 0 else raw))
    except NotJson as exc:
        raise TraceFormatError(f"not JSON ({exc})", where=Where(path, 1)) from None
    if not isinstance(value, dict):
        raise TraceFormatError("not a JSON object", where=Where(path, 1))
    return value
