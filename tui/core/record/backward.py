"""Reading a conversation record from its end: the newest page without parsing the file.

The spec reader (`reader.RecordReader`) parses the whole file to serve any page. A browser
opening a record of a million messages needs only the newest few, so this reader walks the
file backwards in blocks and parses lines only as it needs them. Its pages are the spec
reader's pages for the same walk — the same messages, newest first, the same lines skipped
(blank lines, anything that is not a JSON object with a string `role`, a partial last line) —
which `tests/unit/test_backward.py` checks on random records.

Each message carries the byte range of its line, so a view can anchor at one (a search hit)
and read newer messages forwards from there; `newer()` picks up what was appended since.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from tui.core.record.reader import parse_message_line

BLOCK = 64 * 1024


@dataclass(frozen=True)
class Located:
    """A message and where its line is: bytes [start, end) (end excludes the newline)."""

    message: dict[str, Any]
    start: int
    end: int


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """The spec reader's rule for one line (`record.parse_message_line`)."""
    return parse_message_line(raw)


def lines_backward(handle: BinaryIO, end: int) -> Iterator[tuple[bytes, int, int]]:
    """(line, start, end) for the lines of bytes [0, end), newest first. The bytes after the
    last newline before `end` are a line too (as splitting on newlines makes them). A line
    longer than a block is gathered in pieces and joined once."""
    position = end
    pieces: list[bytes] = []  # the line being gathered, newest piece first
    line_end = end
    while position > 0:
        size = min(BLOCK, position)
        position -= size
        handle.seek(position)
        chunk = handle.read(size)
        cut = chunk.rfind(b"\n")
        if cut < 0:
            pieces.append(chunk)
            continue
        pieces.append(chunk[cut + 1:])
        line = b"".join(reversed(pieces))
        yield line, line_end - len(line), line_end
        parts = chunk[:cut].split(b"\n")
        newline = position + cut  # the newline that ends the last of `parts`
        for part in reversed(parts[1:]):
            yield part, newline - len(part), newline
            newline -= len(part) + 1
        pieces = [parts[0]]
        line_end = newline
    line = b"".join(reversed(pieces))
    yield line, 0, len(line)


def _line_start(handle: BinaryIO, end: int) -> int:
    """Where the line that ends at `end` starts: just after the newline before it, or 0."""
    position = end
    while position > 0:
        size = min(BLOCK, position)
        position -= size
        handle.seek(position)
        cut = handle.read(size).rfind(b"\n")
        if cut >= 0:
            return position + cut + 1
    return 0


def complete_end(path: Path) -> int:
    """The size of the file, less a final line (no newline after it) that is not a message:
    one still being written, or cut by a crash. A final line that is one counts."""
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        tail_start = _line_start(handle, size)
        if tail_start == size:
            return size
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
        """Messages appended since this reader's end, oldest first; the end moves on. A final
        line without a newline is taken when it is a message; otherwise (still being
        written) it waits for the next call."""
        size = os.path.getsize(self.path)
        if size <= self.end:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.end)
            data = handle.read(size - self.end)
        last = data.rfind(b"\n")
        complete = data[:last].split(b"\n") if last >= 0 else []
        found: list[Located] = []
        start = self.end
        for raw in complete:
            message = parse_line(raw)
            if message is not None:
                found.append(Located(message, start, start + len(raw)))
            elif raw.strip():
                self.skipped += 1
            start += len(raw) + 1
        consumed = last + 1
        tail = data[consumed:]
        if tail and (message := parse_line(tail)) is not None:
            found.append(Located(message, start, start + len(tail)))
            consumed = len(data)
        self.end += consumed
        return found


def read_forward(path: Path, start: int, limit: int) -> tuple[list[Located], int]:
    """Up to `limit` messages from byte `start` (a line start) onwards, oldest first, and the
    offset to continue from. A final line without a newline is read when it is a message
    (else it is still being written, and reading stops before it)."""
    found: list[Located] = []
    with path.open("rb") as handle:
        handle.seek(start)
        position = start
        for raw_line in handle:
            terminated = raw_line.endswith(b"\n")
            line = raw_line[:-1] if terminated else raw_line
            message = parse_line(line)
            if message is not None:
                found.append(Located(message, position, position + len(line)))
            elif not terminated:
                break
            position += len(raw_line)
            if len(found) == limit:
                break
    return found, position


def count_messages(path: Path) -> tuple[int, int]:
    """(messages, skipped lines) of the whole file, as the spec reader counts them."""
    messages = skipped = 0
    with path.open("rb") as handle:
        for raw in handle:
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if parse_line(line) is not None:
                messages += 1
            elif line.strip():
                skipped += 1
    return messages, skipped
