"""The durable conversation record: the writer and Murmur's newest-first reader (spec §3).

`$MURMUR_HOME/conversations/<record>/<context-id>/conversation.jsonl` holds one message per
line, append-only. The writer creates the directory chain (mode 0700) on its first append only
and never writes an id twice; every line passes through the one redaction (`secrets.py`). Each
line goes out in a single `write` to an `O_APPEND` file, so a crash mid-append leaves at most
one partial last line — which every reader skips, and which the next writer closes off with a
newline before appending.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui.core.chat import Message, compact_json, wit_content
from tui.core.private import make_private_dirs
from tui.core.secrets import redact
from tui.core.segments import segment_problem
from tui.core.strict_json import NotJson, loads_line

RECORD_FILE = "conversation.jsonl"
CURSOR_PREFIX = "mc_"
MAX_LIMIT = 100
U32_MAX = 2**32 - 1


def conversations_root(home: Path) -> Path:
    return home / "conversations"


def record_path(home: Path, record: str, context_id: str) -> Path | None:
    """The record file, or None when either name is not a single path segment."""
    if segment_problem(record) or segment_problem(context_id):
        return None
    return conversations_root(home) / record / context_id / RECORD_FILE


# -- writer -----------------------------------------------------------------------------------
class RecordWriter:
    """Appends messages to one record file; the runtime is the only writer.

    A failed write is reported once through `on_error` and the session goes on; the message
    stays pending and is written (in order) by the next successful append, so no hole is left.
    """

    def __init__(self, home: Path, path: Path, on_error: Callable[[str], None]) -> None:
        self.home = home
        self.path = path
        self._on_error = on_error
        self._fd: int | None = None
        self._recorded: set[str] = set()
        self._pending: list[Message] = []
        self._reported = False
        self._lock = threading.Lock()
        self._closed = False

    def mark_recorded(self, message_ids: list[str]) -> None:
        """Ids already on disk (a threaded reload): never written again."""
        self._recorded.update(message_ids)

    def is_recorded(self, message_id: str) -> bool:
        return message_id in self._recorded

    def append(self, message: Message) -> bool:
        """Write `message` (and any earlier pending ones); True when all are on disk."""
        message_id = str(message["id"])
        if message_id in self._recorded or any(m["id"] == message_id for m in self._pending):
            return not self._pending
        self._pending.append(message)
        try:
            with self._lock:
                if self._closed:
                    return False
                fd = self._open()
                while self._pending:
                    head = self._pending[0]
                    _write_all(fd, (redact(compact_json(head)) + "\n").encode("utf-8"))
                    self._recorded.add(str(head["id"]))
                    self._pending.pop(0)
        except OSError as exc:
            if not self._reported:
                self._reported = True
                self._on_error(f"conversation record {self.path}: write failed ({exc}); "
                               "the task continues unrecorded until a write succeeds")
            return False
        return True

    def close(self, seal: bool = False) -> None:
        """Close the file (the next append opens it again) — or, with `seal`, write nothing
        more. Safe from any thread: waits for a line being written."""
        with self._lock:
            self._closed = self._closed or seal
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        make_private_dirs(self.path.parent, self.home)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and _last_byte(self.path, size) != b"\n":
                _write_all(fd, b"\n")  # close off a partial line left by a crash
        except OSError:
            os.close(fd)
            raise
        self._fd = fd
        return fd


def _last_byte(path: Path, size: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


# -- reader -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class WitMessage:
    """A message as `murmur:conversation/read` hands it to a hook."""

    role: str
    content: str
    id: str | None
    source_id: str | None


@dataclass(frozen=True)
class MessagePage:
    messages: list[WitMessage]
    next_cursor: str | None
    total: int


EMPTY_PAGE = MessagePage([], None, 0)


class ConversationReadError(Exception):
    """`invalid-cursor` or `unavailable: <reason>`: the error string a hook receives."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class ParsedRecord:
    messages: list[Message]
    skipped_lines: list[int]  # 1-based numbers of lines that are not messages
    size: int


def parse_message_line(raw: bytes) -> Message | None:
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


def parse_record_bytes(data: bytes) -> tuple[list[Message], list[int]]:
    """Every message of a record file, and the 1-based numbers of the other non-blank lines.
    The bytes after the last newline are a line too: a final line without a newline is a
    message when it parses as one (a cut one does not)."""
    messages: list[Message] = []
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
            raise ConversationReadError(f"unavailable: {exc.strerror or exc}") from None
        cached = self._cache.get(path)
        if cached is not None and cached.size == size:
            return cached
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConversationReadError(f"unavailable: {exc.strerror or exc}") from None
        self.reads += 1
        messages, skipped = parse_record_bytes(data)
        parsed = ParsedRecord(messages, skipped, len(data))
        if self._use_cache:
            self._cache[path] = parsed
        if skipped and path not in self._reported and self._on_skipped is not None:
            self._reported.add(path)
            self._on_skipped(f"{path}: line {skipped[0]} is not a message and was skipped")
        return parsed

    def messages(self, path: Path | None) -> list[Message]:
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


def to_wit(message: Message) -> WitMessage:
    source_id = message.get("source_id")
    message_id = message.get("id")
    return WitMessage(
        role=str(message["role"]),
        content=wit_content(message),
        id=message_id if isinstance(message_id, str) else None,
        source_id=source_id if isinstance(source_id, str) else None,
    )
