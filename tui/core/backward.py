"""Reading a conversation record from its end: the newest page without parsing the file.

The spec reader (`record.RecordReader`) parses the whole file to serve any page. A browser
opening a record of a million messages needs only the newest few, so this reader walks the
file backwards in blocks and parses lines only as it needs them. Its pages are the spec
reader's pages for the same walk — the same messages, newest first, the same lines skipped
(blank lines, anything that is not a JSON object with a string `role`, a partial last line) —
which `tests/unit/test_backward.py` checks on random records.

Each message carries the byte range of its line, so a view can anchor at one (a search hit)
and read newer messages forwards from there; `newer()` picks up what was appended since.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

BLOCK = 64 * 1024


@dataclass(frozen=True)
class Located:
    """A message and where its line is: bytes [start, end) (end excludes the newline)."""

    message: dict[str, Any]
    start: int
    end: int


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """The spec's rule: a line is a message iff it is a JSON object with a string `role`."""
    if not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("role"), str):
        return value
    return None


def lines_backward(handle: BinaryIO, end: int) -> Iterator[tuple[bytes, int, int]]:
    """(line, start, end) for the lines of bytes [0, end), newest first. The bytes after the
    last newline before `end` are a line too (as splitting on newlines makes them)."""
    position = end
    tail = b""
    while position > 0:
        size = min(BLOCK, position)
        position -= size
        handle.seek(position)
        parts = (handle.read(size) + tail).split(b"\n")
        tail = parts[0]
        offset = position + len(tail) + 1
        complete = []
        for part in parts[1:]:
            complete.append((part, offset, offset + len(part)))
            offset += len(part) + 1
        yield from reversed(complete)
    yield tail, 0, len(tail)


def complete_end(path: Path) -> int:
    """The size of the file, less a trailing partial line that is not (yet) a message."""
    size = os.path.getsize(path)
    if size == 0:
        return 0
    with path.open("rb") as handle:
        back = min(size, BLOCK)
        handle.seek(size - back)
        chunk = handle.read(back)
    newline = chunk.rfind(b"\n")
    if newline == len(chunk) - 1:
        return size
    tail_start = size - back + newline + 1 if newline >= 0 else 0
    with path.open("rb") as handle:
        handle.seek(tail_start)
        tail = handle.read(size - tail_start)
    return size if parse_line(tail) is not None else tail_start


class BackwardReader:
    """Pages of one record, newest first, anchored where the file ended when opened (or at a
    given offset, such as the end of a search hit's line)."""

    def __init__(self, path: Path, end: int | None = None) -> None:
        self.path = path
        self.end = complete_end(path) if end is None else end
        self._cursor = self.end  # the next older page ends here
        self.skipped = 0  # lines that were not messages, met on the way back

    @property
    def exhausted(self) -> bool:
        return self._cursor <= 0

    def page(self, limit: int) -> list[Located]:
        """The next `limit` older messages, newest first; fewer (or none) at the start."""
        found: list[Located] = []
        if self._cursor <= 0:
            return found
        cursor = 0
        with self.path.open("rb") as handle:
            for raw, start, end in lines_backward(handle, self._cursor):
                message = parse_line(raw)
                if message is None:
                    if raw.strip():
                        self.skipped += 1
                    continue
                found.append(Located(message, start, end))
                if len(found) == limit:
                    cursor = start - 1 if start > 0 else 0  # before this line's start
                    break
        self._cursor = cursor
        return found

    def walk(self, limit: int) -> Iterator[list[Located]]:
        """Every page, newest first, down to the oldest message."""
        while not self.exhausted:
            page = self.page(limit)
            if page:
                yield page

    def newer(self) -> list[Located]:
        """Messages appended since this reader's end, oldest first; the end moves on. A line
        still being written (no newline yet) waits for the next call."""
        size = os.path.getsize(self.path)
        if size <= self.end:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.end)
            data = handle.read(size - self.end)
        last = data.rfind(b"\n")
        if last < 0:
            return []
        found: list[Located] = []
        start = self.end
        for raw in data[:last].split(b"\n"):
            message = parse_line(raw)
            if message is not None:
                found.append(Located(message, start, start + len(raw)))
            elif raw.strip():
                self.skipped += 1
            start += len(raw) + 1
        self.end += last + 1
        return found


def read_forward(path: Path, start: int, limit: int) -> tuple[list[Located], int]:
    """Up to `limit` messages from byte `start` (a line start) onwards, oldest first, and the
    offset to continue from."""
    found: list[Located] = []
    with path.open("rb") as handle:
        handle.seek(start)
        position = start
        for raw_line in handle:
            line = raw_line.rstrip(b"\n")
            if not raw_line.endswith(b"\n"):
                break  # a line still being written
            message = parse_line(line)
            if message is not None:
                found.append(Located(message, position, position + len(line)))
            position += len(raw_line)
            if len(found) == limit:
                break
    return found, position


def count_messages(path: Path) -> tuple[int, int]:
    """(messages, skipped lines) of the whole file, as the spec reader counts them."""
    messages = skipped = 0
    with path.open("rb") as handle:
        for raw in handle:
            line = raw.rstrip(b"\n")
            if parse_line(line) is not None:
                messages += 1
            elif line.strip():
                skipped += 1
    return messages, skipped
