"""Murmur's newest-first reader of a conversation record (spec §3.3): the whole file parsed
(cached per path and length), pages served by `mc_<n>` cursors, messages handed to a hook as
`murmur:conversation/read` gives them. A line that is not a message (not a JSON object with a
string `role`, or a partial last line a crash left) is skipped and reported once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core.chat import RecordLine, wit_content
from tui.core.errors import ConversationReadError, NotJson, Where
from tui.core.text.strict_json import loads_line

CURSOR_PREFIX = "mc_"
MAX_LIMIT = 100
U32_MAX = 2**32 - 1
INSERTIONS = ("replace-context", "seed-context")  # hook@0.9.0's enum context-insertion


@dataclass(frozen=True)
class WitMessage:
    """A message as `murmur:conversation/read` hands it to a hook."""

    role: str
    content: str
    id: str | None
    source_id: str | None
    # which hook context insertion put it in the context (hook@0.9.0's `inserted-by`)
    inserted_by: str | None = None


@dataclass(frozen=True)
class MessagePage:
    messages: list[WitMessage]
    next_cursor: str | None
    total: int


EMPTY_PAGE = MessagePage([], None, 0)


@dataclass
class ParsedRecord:
    messages: list[RecordLine]
    skipped_lines: list[int]  # 1-based numbers of lines that are not messages
    size: int


def parse_message_line(raw: bytes) -> RecordLine | None:
    """Murmur's rule for one line: a message iff it is a JSON object with a string `role`.
    A line that is not JSON as Murmur reads it (`strict_json`) is not a message."""
    if not raw.strip():
        return None
    try:
        value = loads_line(raw)
    except NotJson:
        return None
    if isinstance(value, dict) and isinstance(value.get("role"), str):
        return value
    return None


def parse_record_bytes(data: bytes) -> tuple[list[RecordLine], list[int]]:
    """Every message of a record file, and the 1-based numbers of the other non-blank lines.
    The bytes after the last newline are a line too: a final line without a newline is a
    message when it parses as one (a cut one does not)."""
    messages: list[RecordLine] = []
    skipped: list[int] = []
    parse = parse_message_line
    for number, raw in enumerate(data.split(b"\n"), start=1):
        message = parse(raw)
        if message is not None:
            messages.append(message)
        elif raw.strip():
            skipped.append(number)
    return messages, skipped


def decode_cursor(cursor: str, length: int) -> int:
    """`mc_<n>` -> n, parsed as Murmur parses a usize (ASCII digits, an optional leading `+`);
    anything else, or n past the end, is `invalid-cursor`. The digits are never handed to
    `int()` whole: Python refuses strings of more than 4,300 digits."""
    if not cursor.startswith(CURSOR_PREFIX):
        raise ConversationReadError("invalid-cursor")
    digits = cursor[len(CURSOR_PREFIX):]
    if digits.startswith("+"):
        digits = digits[1:]
    if not digits or not digits.isascii() or not digits.isdigit():
        raise ConversationReadError("invalid-cursor")
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(length)):  # more digits than the record has messages
        raise ConversationReadError("invalid-cursor")
    end = int(significant)
    if end > length:
        raise ConversationReadError("invalid-cursor")
    return end


def clamp_limit(limit: int) -> int:
    return max(1, min(MAX_LIMIT, limit))


class RecordReader:
    """Murmur's reader: whole-file parse, cached per (path, file length).

    The first line that is not a message is reported once per reader and path through
    `on_skipped`. `reads` counts whole-file reads (a walk of an unchanged record costs one).
    """

    def __init__(self, on_skipped: Callable[[str], None] | None = None,
                 cache: bool = True) -> None:
        self._on_skipped = on_skipped
        self._use_cache = cache
        self._cache: dict[Path, ParsedRecord] = {}
        self._reported: set[Path] = set()
        self.reads = 0

    def parse(self, path: Path) -> ParsedRecord | None:
        """The parsed record, or None when the file does not exist."""
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConversationReadError(f"unavailable: {exc.strerror or exc}",
                                        where=Where(path)) from None
        cached = self._cache.get(path)
        if cached is not None and cached.size == size:
            return cached
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConversationReadError(f"unavailable: {exc.strerror or exc}",
                                        where=Where(path)) from None
        self.reads += 1
        messages, skipped = parse_record_bytes(data)
        parsed = ParsedRecord(messages, skipped, len(data))
        if self._use_cache:
            self._cache[path] = parsed
        if skipped:
            self.report_skipped(path, skipped[0])
        return parsed

    def report_skipped(self, path: Path, line: int) -> None:
        """Say once per path that its line `line` (1-based) is not a message (a reader of the
        same record elsewhere, as a threaded context's window, reports through here)."""
        if path not in self._reported and self._on_skipped is not None:
            self._reported.add(path)
            self._on_skipped(f"{path}: line {line} is not a message and was skipped")

    def messages(self, path: Path | None) -> list[RecordLine]:
        """Every message of the record in order (the `threaded` reload)."""
        if path is None:
            return []
        parsed = self.parse(path)
        return list(parsed.messages) if parsed else []

    def read_page(self, path: Path | None, cursor: str | None, limit: int) -> MessagePage:
        """One page newest-first, exactly as `read-messages(cursor, limit)` (spec §3.3)."""
        if path is None:
            return EMPTY_PAGE
        parsed = self.parse(path)
        if parsed is None:
            return EMPTY_PAGE
        all_messages = parsed.messages
        end = len(all_messages) if cursor is None else decode_cursor(cursor, len(all_messages))
        start = max(0, end - clamp_limit(limit))
        page = [to_wit(message) for message in reversed(all_messages[start:end])]
        next_cursor = f"{CURSOR_PREFIX}{start}" if start > 0 else None
        return MessagePage(page, next_cursor, min(len(all_messages), U32_MAX))


def to_wit(message: Mapping[str, Any]) -> WitMessage:
    source_id = message.get("source_id")
    message_id = message.get("id")
    return WitMessage(
        role=str(message["role"]),
        content=wit_content(message),
        id=message_id if isinstance(message_id, str) else None,
        source_id=source_id if isinstance(source_id, str) else None,
        inserted_by=inserted if (inserted := message.get("inserted_by")) in INSERTIONS else None,
    )
