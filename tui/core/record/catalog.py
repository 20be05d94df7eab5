"""Every conversation record under `$MURMUR_HOME/conversations/`: listing, previews, search
(the browser's catalog; `export` writes one out). No cap on how many: the list comes from
directory entries and one `stat` each, sorted by last activity; the preview (the first user
message) and the message count are read only for the records someone looks at.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core.chat import compact_json
from tui.core.record.backward import Located, parse_line
from tui.core.record.writer import RECORD_FILE, conversations_root
from tui.core.text.fence import unfenced_message
from tui.core.text.printable import printable

PREVIEW_BYTES = 256 * 1024
PREVIEW_CHARS = 200
SNIPPET = 100


@dataclass(slots=True)
class Conversation:
    record: str
    context_id: str
    location: str  # the record file (a str: a listing of many thousands makes no Paths)
    size: int
    mtime: float
    preview: str | None = None  # the first user message; None until read
    count: int | None = None  # messages; None until counted
    skipped: int | None = None

    @property
    def path(self) -> Path:
        return Path(self.location)

    @property
    def key(self) -> str:
        return f"{self.record}/{self.context_id}"

    def label(self) -> str:
        return f"{self.record} {self.context_id} {self.preview or ''}".lower()


def scan(home: Path, record: str | None = None) -> list[Conversation]:
    """Every record file, newest activity first."""
    root = conversations_root(home)
    found: list[Conversation] = []
    try:
        stores = list(os.scandir(root))
    except FileNotFoundError:
        return found
    stat = os.stat
    join = os.path.join
    for store in stores:
        if not store.is_dir() or (record is not None and store.name != record):
            continue
        try:
            contexts = list(os.scandir(store.path))
        except OSError:
            continue
        name = store.name
        for context in contexts:
            path = join(context.path, RECORD_FILE)
            try:
                info = stat(path)
            except OSError:
                continue
            found.append(Conversation(name, context.name, path, info.st_size, info.st_mtime))
    found.sort(key=lambda c: c.mtime, reverse=True)
    return found


def text_of(message: dict[str, Any]) -> str:
    """A message's readable text: text and thinking blocks, tool call names and inputs (any
    content that is not a list of blocks as its JSON)."""
    parts: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else compact_json(content)
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "thinking"):
            parts.append(as_text(block.get("text", "")))
        elif kind == "tool_call":
            parts.append(f"{as_text(block.get('name', ''))} "
                         f"{json.dumps(block.get('input', {}), ensure_ascii=False)}")
    return "\n".join(part for part in parts if part)


def as_text(value: Any) -> str:
    """A field that should be a string: itself, else its JSON (`null` for None)."""
    return value if isinstance(value, str) else compact_json(value)


def read_preview(conversation: Conversation) -> str:
    """The first user message's text (its first line, trimmed, printable), read from the
    file's start."""
    with open(conversation.location, "rb") as handle:
        data = handle.read(PREVIEW_BYTES)
    for raw in data.split(b"\n"):
        message = parse_line(raw)
        if message is not None and message.get("role") == "user":
            text = " ".join(text_of(message)[:PREVIEW_CHARS * 4].split())
            return printable(text[:PREVIEW_CHARS], keep_newlines=False)
    return ""


@dataclass(frozen=True)
class Hit:
    conversation: Conversation
    located: Located
    snippet: str


STOP_EVERY = 512  # lines between two looks at a search's `stop`


def search_file(conversation: Conversation, query: str,
                stop: Callable[[], bool] | None = None) -> Iterator[Hit]:
    """Messages of one record whose text contains `query` (case-insensitive), oldest first.
    Fenced tool output is searched without its fence: a query for the markers' words does not
    hit every tool result. `stop`: asked every STOP_EVERY lines; True ends the search (a
    newer query replaced it)."""
    needle = query.lower()
    raw_needle = needle.encode("utf-8")
    position = 0
    with conversation.path.open("rb") as handle:
        for count, raw in enumerate(handle):
            if stop is not None and not count % STOP_EVERY and stop():
                return
            line = raw.rstrip(b"\n")
            start = position
            position += len(raw)
            if raw_needle not in line.lower() and not _escaped_match(line, needle):
                continue
            message = parse_line(line)
            if message is None:
                continue
            text = text_of(unfenced_message(message))  # as the reader sees it: no markers
            index = text.lower().find(needle)
            if index < 0:
                continue
            yield Hit(conversation, Located(message, start, start + len(line)),
                      _snippet(text, index, len(needle)))


def _escaped_match(line: bytes, needle: str) -> bool:
    """A needle with characters JSON escapes (quotes, non-ASCII written as \\u) might not
    appear verbatim in the line: let those lines through to the parsed check."""
    return not needle.isascii() or any(ch in needle for ch in '"\\\n\t')


def _snippet(text: str, index: int, length: int) -> str:
    start = max(0, index - SNIPPET // 2)
    piece = " ".join(text[start:index + length + SNIPPET // 2].split())
    return printable(("…" if start else "") + piece, keep_newlines=False)


def search_all(conversations: list[Conversation], query: str,
               stop: Callable[[], bool] | None = None) -> Iterator[Hit]:
    """Every record, newest activity first; each record's hits newest first. `stop`: as for
    `search_file`."""
    for conversation in conversations:
        hits = list(search_file(conversation, query, stop))
        if stop is not None and stop():
            return
        yield from reversed(hits)
