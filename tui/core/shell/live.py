"""A running command's output as lines, for whoever watches the call (docs/shell.md).

`OutputCapture` hands over each stream's bytes once redacted; here they become text lines
(invalid UTF-8 shows as U+FFFD, a character split across two reads is joined first). Complete
lines go out as they arrive; a line still without its end is shown once it has waited
`PARTIAL_SECONDS` (what follows it then starts a new line). A line longer than `LINE_CHARS` is
cut there. The rate at which the lines become events is the watcher's business (the
dispatcher batches them); this only never holds a line back longer than `PARTIAL_SECONDS`.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable
from typing import Literal

PARTIAL_SECONDS = 0.1
LINE_CHARS = 4096
OutputStream = Literal["stdout", "stderr"]  # as `tools.OutputStream` (no import: shell is below)
_NAMES: tuple[OutputStream, OutputStream] = ("stdout", "stderr")

Lines = Callable[[OutputStream, list[str]], None]


class _Part:
    def __init__(self) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.partial = ""
        self.since: float | None = None  # when the partial line began waiting


class LiveLines:
    """stdout (0) and stderr (1) of one command, split into lines for `sink`."""

    def __init__(self, sink: Lines, clock: Callable[[], float] = time.monotonic) -> None:
        self._sink = sink
        self._clock = clock
        self._parts = (_Part(), _Part())

    def feed(self, index: int, data: bytes, final: bool = False) -> None:
        part = self._parts[index]
        text = part.partial + part.decoder.decode(data, final=final)
        lines = text.split("\n")
        part.partial = lines.pop()
        if part.partial and part.since is None:
            part.since = self._clock()
        elif not part.partial:
            part.since = None
        if lines:
            if part.partial:
                part.since = self._clock()  # the unfinished line waits from now
            self._send(index, lines)
        if final:
            self._flush(index)

    def due_in(self) -> float | None:
        """Seconds until a waiting partial line must be shown; None when none waits."""
        waits = [part.since for part in self._parts if part.since is not None]
        if not waits:
            return None
        return max(0.0, min(waits) + PARTIAL_SECONDS - self._clock())

    def tick(self) -> None:
        """Show every partial line that has waited long enough."""
        now = self._clock()
        for index, part in enumerate(self._parts):
            if part.since is not None and now - part.since >= PARTIAL_SECONDS:
                self._flush(index)

    def close(self) -> None:
        """The command ended: what is left of each stream goes out."""
        for index in (0, 1):
            self.feed(index, b"", final=True)

    def _flush(self, index: int) -> None:
        part = self._parts[index]
        if part.partial:
            line, part.partial, part.since = part.partial, "", None
            self._send(index, [line])

    def _send(self, index: int, lines: list[str]) -> None:
        cut = [line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"
               for line in (raw.removesuffix("\r") for raw in lines)]
        self._sink(_NAMES[index], cut)
