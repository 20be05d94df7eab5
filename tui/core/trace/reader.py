"""Reading `trace.jsonl` back: every line as a dict, as Murmur's `mur trace` reads it (spec
§2). A line that is not a JSON object is a `TraceFormatError` naming file and line; only a last
line cut short by a writer that died is skipped (and counted). A line longer than
`MAX_LINE_BYTES` is refused before it is held in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.errors import MurmurTuiError, Where
from tui.core.strict_json import NotJson, loads_line

MAX_LINE_BYTES = 16 * 1024 * 1024  # no line murmur-tui writes comes near this


class TraceFormatError(MurmurTuiError):
    """A trace line is not a JSON object (Murmur's E-TRC-001); `where` is its file and line."""

    default_code = "E-TRC-001"


@dataclass
class TraceLines:
    """A trace's lines as dicts (iterating gives them), the file's line number of each
    (`numbers`: blank lines are not events), and the number of its last line when that was
    cut short (a writer that died mid-line) and so skipped."""

    events: list[dict[str, Any]]
    cut_line: int | None = None
    numbers: list[int] = field(default_factory=list)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    @property
    def skipped(self) -> int:
        return 0 if self.cut_line is None else 1


def read_trace(path: Path) -> TraceLines:
    """Every line of a trace as a dict. A line that is not a JSON object (as Murmur reads
    JSON: `strict_json`) raises TraceFormatError naming file and line — except a last line
    that no newline ends and that begins an object it does not finish: a line cut short by a
    writer that died, skipped and counted (`cut_line`). (Murmur's `mur trace` refuses that
    line too; the trace of a killed session is still worth reading.)"""
    events: list[dict[str, Any]] = []
    numbers: list[int] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""),
                                     start=1):
            terminated = raw.endswith(b"\n")
            if len(raw) > MAX_LINE_BYTES and not terminated:  # more follows on this line
                raise TraceFormatError(f"a line longer than {MAX_LINE_BYTES // (1024 * 1024)} "
                                       "MiB: not a trace line", where=Where(path, number))
            line = raw[:-1] if terminated else raw
            if not line.strip():
                continue
            try:
                value = loads_line(line)
            except NotJson as exc:
                if not terminated and line.lstrip().startswith(b"{"):
                    return TraceLines(events, number, numbers)  # an object begun, never ended
                raise TraceFormatError(f"not JSON ({exc})", where=Where(path, number)
                                       ) from None
            if not isinstance(value, dict):
                raise TraceFormatError("not a JSON object", where=Where(path, number))
            events.append(value)
            numbers.append(number)
    return TraceLines(events, None, numbers)
