"""Headless stdin, read a line at a time and never more than an answer needs.

Once a question is asked, stdin is read on a thread so the wait for an answer can time out.
Read into an unbounded queue, `yes | murmur-tui launch …` filled memory (hundreds of MiB in
seconds). So:

- a line holds at most MAX_LINE bytes: a longer one is not taken — it is read and dropped in
  pieces of at most MAX_LINE bytes, and `on_long` says how long it was (an answer or a task
  cut short could mean something else; refusing it is the honest choice);
- at most MAX_WAITING lines are read ahead of their use: then the reader stops reading, and a
  producer writing faster waits on the full pipe;
- bytes that are not UTF-8 are decoded with surrogateescape and made whole (`text_rule`):
  each becomes U+FFFD, so no line can stop a writer.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import IO, Any

from tui.core.text.text_rule import whole

MAX_LINE = 1 << 20  # bytes in one line of stdin (an answer, or a task)
MAX_WAITING = 4  # lines read ahead of the question or task that takes them


def lines_of(stream: IO[Any], on_long: Callable[[int], None]) -> Iterator[str]:
    """Each line of `stream` (its bytes when it has a binary buffer, as sys.stdin does), with
    its line ending, as whole text; a line over MAX_LINE bytes is skipped and reported."""
    source: IO[Any] = getattr(stream, "buffer", stream)
    while True:
        piece = source.readline(MAX_LINE + 1)
        if not piece:
            return
        if len(piece) <= MAX_LINE or _ends_line(piece):
            yield whole(piece.decode("utf-8", "surrogateescape")
                        if isinstance(piece, bytes) else piece)
            continue
        dropped = len(piece)
        while True:  # the rest of the long line, in bounded pieces, kept nowhere
            more = source.readline(MAX_LINE)
            dropped += len(more)
            if not more or _ends_line(more):
                break
        on_long(dropped)


def _ends_line(piece: str | bytes) -> bool:
    return piece[-1:] in (b"\n", "\n")


class Lines:
    """Lines read ahead, at most `limit` of them: `put` waits while it is full. The end of
    input (`close`) and a line given back (`put_back`) never wait."""

    def __init__(self, limit: int = MAX_WAITING) -> None:
        self._lines: deque[str] = deque()
        self._limit = limit
        self._closed = False
        self._changed = threading.Condition()

    def put(self, line: str) -> None:
        with self._changed:
            self._changed.wait_for(lambda: len(self._lines) < self._limit)
            self._lines.append(line)
            self._changed.notify_all()

    def put_back(self, line: str) -> None:
        """A line taken for a question the door answered first: the next one gets it."""
        with self._changed:
            self._lines.appendleft(line)
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def get(self, timeout: float) -> str | None:
        """The next line; None at the end of input; queue.Empty when none came in time."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._lines or self._closed, timeout):
                raise queue.Empty
            if self._lines:
                line = self._lines.popleft()
                self._changed.notify_all()
                return line
            return None
