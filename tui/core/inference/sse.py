"""Server-sent events, parsed from a stream of lines (the WHATWG framing: `event:`, `data:`
lines, a blank line ends an event; `:` starts a comment)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ServerEvent:
    event: str  # "message" when the server named none
    data: str


def events(lines: Iterable[str]) -> Iterator[ServerEvent]:
    """Each complete event in `lines` (with or without their line endings)."""
    name = ""
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield ServerEvent(name or "message", "\n".join(data))
            name, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if data:  # a stream that ended without the final blank line
        yield ServerEvent(name or "message", "\n".join(data))
