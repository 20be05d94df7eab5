"""The pieces every event's words are made of (tui.core.events.wording): the two forms, what
a transcript line is, the ✓/✗ marks, a value shortened to one line, a count, a duration and a
size as people read them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum


class Form(Enum):
    SCREEN = "screen"  # a transcript line: inputs shortened, outcomes as a mark
    LOG = "log"  # a headless line: inputs in full


class LineKind(Enum):
    """What a transcript line is, which decides how it is drawn."""

    NOTE = "note"  # a compaction, an answer, a retry: drawn dim
    RUNNING = "running"  # a call being written or running
    SUCCESS = "success"  # a call or command that ended well: its ✓ in the success colour
    FAILURE = "failure"  # a failed call, command or model call
    QUESTION = "question"  # a tool waits for an answer


@dataclass(frozen=True)
class Said:
    kind: LineKind
    text: str


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


ANSWER_LINES = 12


def short(value: object, limit: int = 100) -> str:
    """`value` on one line, at most `limit` characters (… marks a cut)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def count(amount: int, noun: str) -> str:
    return f"{amount} {noun}" if amount == 1 else f"{amount} {noun}s"


def duration(ms: int) -> str:
    """A duration as people read it: `480 ms`, `2.1 s`, `2 min 8 s`, `1 h 3 min`."""
    if ms < 1000:
        return f"{ms} ms"
    tenths = round(ms / 100)
    if tenths < 600:
        return f"{tenths / 10:.1f} s"
    seconds = round(ms / 1000)
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def size(amount: int) -> str:
    if amount < 1024:
        return f"{amount} B"
    if amount < 1024 * 1024:
        return f"{amount / 1024:.1f} KiB"
    return f"{amount / (1024 * 1024):.1f} MiB"
