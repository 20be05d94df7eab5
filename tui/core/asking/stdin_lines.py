"""Headless stdin, read a line at a time and never more than an answer needs.

Once a question is asked, stdin is read on a thread, which hands a waiting question its line.
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

import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import IO, Any

from tui.core.text.text_rule import whole

MAX_LINE = 1 << 20  # bytes in one line of stdin (an answer, or a task)
MAX_WAITING = 4  # lines read ahead of the question or task that takes them

Take = Callable[[str], bool]  # a line for a waiting question; False: it was answered already
Ended = Callable[[], object]


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
    input (`close`) and a line given back (`put_back`) never wait.

    A question waiting for a line is handed them (`hand_to`): the reader gives it the next
    line itself as it arrives, and the end of input as it comes, so the question's one wait
    is woken by the line and nothing looks for lines on an interval."""

    def __init__(self, limit: int = MAX_WAITING) -> None:
        self._lines: deque[str] = deque()
        self._limit = limit
        self._closed = False
        self._changed = threading.Condition()
        self._taker: tuple[Take, Ended] | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    def put(self, line: str) -> None:
        with self._changed:
            self._changed.wait_for(lambda: len(self._lines) < self._limit)
            taker, self._taker = self._taker, None
            if taker is None:
                self._lines.append(line)
                self._changed.notify_all()
                return
        if not taker[0](line):  # answered through the door first: the line is for what follows
            self.put_back(line)

    def put_back(self, line: str) -> None:
        """A line taken for a question the door answered first: the next one gets it."""
        with self._changed:
            self._lines.appendleft(line)
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            taker, self._taker = self._taker, None
            self._changed.notify_all()
        if taker is not None:
            taker[1]()

    def hand_to(self, take: Take, ended: Ended) -> None:
        """The next line goes to `take` (a line waiting now, at once); `ended` is called
        instead when input ends first. `take` returning False leaves the line for the next."""
        with self._changed:
            if not self._lines and not self._closed:
                self._taker = (take, ended)
                return
            line = self._lines.popleft() if self._lines else None
            self._changed.notify_all()
        if line is None:
            ended()
        elif not take(line):
            self.put_back(line)

    def release(self) -> None:
        """The question is settled: the next line is not for it."""
        with self._changed:
            self._taker = None
