"""The one server-sent events parser (the WHATWG framing), for Murmur's door
(tui/core/remote/watch.py) and the inference providers' streams (tui/core/inference/) alike.

Bytes go in as they arrive, in pieces of any size; whole frames come out. Lines end with LF,
CRLF or a lone CR (a CRLF split across two pieces is one line end). `id:`, `event:` and
`data:` lines build a frame (several `data:` lines join with a newline); a blank line ends it;
a line starting with `:` is a comment (Murmur's `:heartbeat`), counted and dropped. A frame
with no `data:` line is no frame.

A hostile door cannot grow memory without bound: a frame whose lines add up to more than
`max_frame_bytes` is dropped whole (its bytes are skipped as they arrive, never held) and
counted in `dropped`. A frame cut off by the end of the stream is delivered only when asked
(`finish`): a provider's last event may lack its blank line, a door's frame cut off is lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MAX_FRAME_BYTES = 8 * 1024 * 1024  # a tool result travels whole in one frame: be generous
_LINE_END = re.compile(rb"[\r\n]")


@dataclass(frozen=True, slots=True)
class ServerEvent:
    event: str  # "message" when the frame named none
    data: str
    id: str | None = None  # this frame's own `id:` line (None: it had none)


class SseParser:
    """Feed it bytes (`feed`), get the frames they complete."""

    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.comments = 0  # comment lines seen (heartbeats)
        self.dropped = 0  # frames dropped for their size
        self._buffer = bytearray()
        self._skipping = False  # inside a line too long to keep: discard to its end
        self._size = 0  # bytes of the current frame's lines so far
        self._over = False  # the current frame is over the cap: drop it at its end
        self._event = ""
        self._id: str | None = None
        self._data: list[str] = []
        self._has_data = False
        self._scanned = 0  # the buffer holds no line end before this offset

    def feed(self, data: bytes) -> list[ServerEvent]:
        frames: list[ServerEvent] = []
        buffer = self._buffer
        buffer += data
        start = 0
        while True:
            match = _LINE_END.search(buffer, max(start, self._scanned))
            if match is None:
                break
            at = match.start()
            if buffer[at] == 0x0D:
                if at + 1 == len(buffer):
                    break  # a CR at the end: the LF of a CRLF may follow in the next piece
                end = at + 2 if buffer[at + 1] == 0x0A else at + 1
            else:
                end = at + 1
            if self._skipping:
                self._skipping = False
            else:
                self._line(bytes(buffer[start:at]), frames)
            start = end
        del buffer[:start]
        self._scanned = len(buffer) - (1 if buffer.endswith(b"\r") else 0)
        pending = len(buffer) - (1 if buffer.endswith(b"\r") else 0)
        if not self._skipping and self._size + pending > self.max_frame_bytes:
            # the line in progress already makes the frame too large: drop it as it comes
            self._skipping, self._over = True, True
            self._reset_fields()
            keep_cr = buffer.endswith(b"\r")
            buffer.clear()
            if keep_cr:
                buffer += b"\r"
            self._scanned = 0
        elif self._skipping:
            keep_cr = buffer.endswith(b"\r")
            buffer.clear()
            if keep_cr:
                buffer += b"\r"
            self._scanned = 0
        return frames

    def finish(self) -> ServerEvent | None:
        """The event a stream left without its closing blank line, if it had data (then the
        parser starts afresh)."""
        frames: list[ServerEvent] = []
        if self._buffer and not self._skipping:
            self._line(bytes(self._buffer.rstrip(b"\r")), frames)
        self._buffer.clear()
        self._scanned = 0
        self._skipping = False
        self._line(b"", frames)
        return frames[-1] if frames else None

    def _reset_fields(self) -> None:
        self._event, self._id, self._data, self._has_data = "", None, [], False

    def _line(self, raw: bytes, frames: list[ServerEvent]) -> None:
        if not raw:
            if self._over:
                self.dropped += 1
            elif self._has_data:
                frames.append(ServerEvent(self._event or "message", "\n".join(self._data),
                                          self._id))
            self._reset_fields()
            self._size, self._over = 0, False
            return
        self._size += len(raw)
        if self._size > self.max_frame_bytes:
            self._over = True
            self._reset_fields()
        if self._over:
            return
        if raw[0] == 0x3A:  # ":" a comment
            self.comments += 1
            return
        line = raw.decode("utf-8", errors="replace")
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        # `retry:` and unknown fields are ignored, as the WHATWG rules say


def events(lines: Iterable[str]) -> Iterator[ServerEvent]:
    """Each complete event in `lines` (with or without their line endings), the last one too
    when the stream ended without its blank line. Without `id`: a provider's stream is never
    resumed, so its ids mean nothing here."""
    parser = SseParser()
    for line in lines:
        for event in parser.feed(line.rstrip("\r\n").encode("utf-8", "replace") + b"\n"):
            yield ServerEvent(event.event, event.data)
    last = parser.finish()
    if last is not None:
        yield ServerEvent(last.event, last.data)
