"""Every conversation record under `$MURMUR_HOME/conversations/`: listing, previews, search,
export. No cap on how many: the list comes from directory entries and one `stat` each, sorted
by last activity; the preview (the first user message) and the message count are read only
for the records someone looks at.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tui.core.backward import Located, parse_line, read_forward
from tui.core.chat import compact_json
from tui.core.printable import printable
from tui.core.record import RECORD_FILE, conversations_root

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


def search_file(conversation: Conversation, query: str) -> Iterator[Hit]:
    """Messages of one record whose text contains `query` (case-insensitive), oldest first."""
    needle = query.lower()
    raw_needle = needle.encode("utf-8")
    position = 0
    with conversation.path.open("rb") as handle:
        for raw in handle:
            line = raw.rstrip(b"\n")
            start = position
            position += len(raw)
            if raw_needle not in line.lower() and not _escaped_match(line, needle):
                continue
            message = parse_line(line)
            if message is None:
                continue
            text = text_of(message)
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


def search_all(conversations: list[Conversation], query: str) -> Iterator[Hit]:
    """Every record, newest activity first; each record's hits newest first."""
    for conversation in conversations:
        hits = list(search_file(conversation, query))
        yield from reversed(hits)


def export_jsonl(path: Path, out: TextIO) -> int:
    """The record's messages as JSON lines (lines that are not messages left out). UTF-8 text
    is kept as it is; the characters JSON leaves raw that a terminal acts on (DEL, C1) or that
    some readers take for a line end (U+0085, U+2028, U+2029) are written as `\\u` escapes,
    so the file is safe to print and splits into lines only at its newlines."""
    count = 0
    offset = 0
    while True:
        found, offset_after = read_forward(path, offset, 1000)
        for located in found:
            text = json.dumps(located.message, ensure_ascii=False)
            out.write(_JSON_RAW.sub(_json_escape, text) + "\n")
            count += 1
        if not found or offset_after == offset:
            return count
        offset = offset_after


_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029]")  # only ever inside a JSON string


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def export_markdown(conversation: Conversation, out: TextIO) -> int:
    """The record as a readable Markdown document, oldest message first. Every message is
    written whole; control characters are shown as symbols (`printable`), so the document
    is safe to print on a terminal (the JSON lines export keeps them, escaped)."""
    out.write(f"# {printable(conversation.record, False)} / "
              f"{printable(conversation.context_id, False)}\n\n")
    names: dict[str, str] = {}
    count = 0
    offset = 0
    while True:
        found, offset_after = read_forward(conversation.path, offset, 1000)
        for located in found:
            out.write(markdown_message(located.message, names) + "\n")
            count += 1
        if not found or offset_after == offset:
            return count
        offset = offset_after


def markdown_message(message: dict[str, Any], names: dict[str, str]) -> str:
    """One message as Markdown; `names` maps tool call ids to tool names as they are seen.
    Any field may have any type (a record is only required to give `role` as a string)."""
    role = message["role"] if isinstance(message.get("role"), str) else "?"
    lines = [f"## {_inline(role)}  `{_inline(as_text(message.get('id', '')))}`", ""]
    content = message.get("content")
    if role == "tool":
        call = as_text(message.get("tool_call_id", ""))
        failed = " (error)" if message.get("is_error") is True else ""
        lines[0] = f"## result of {_inline(names.get(call, 'tool'))} `{_inline(call)}`{failed}"
    if isinstance(content, list):
        blocks = content
    elif isinstance(content, str):
        blocks = [{"type": "text", "text": content}]
    else:
        blocks = [] if content is None else [content]
    for block in blocks:
        lines.append(_markdown_block(block, names))
        lines.append("")
    return "\n".join(lines)


def _markdown_block(block: Any, names: dict[str, str]) -> str:
    if not isinstance(block, dict):
        return _fenced(compact_json(block), "json")
    kind = block.get("type")
    if kind == "text":
        return printable(as_text(block.get("text", "")))
    if kind == "thinking":
        return "> " + printable(as_text(block.get("text", ""))).replace("\n", "\n> ")
    if kind == "tool_call":
        name, ident = as_text(block.get("name")), as_text(block.get("id"))
        names[ident] = name
        body = json.dumps(block.get("input", {}), ensure_ascii=False, indent=2)
        return f"**call {_inline(name)}** `{_inline(ident)}`\n\n{_fenced(body, 'json')}"
    if kind == "image":
        source = block.get("source")
        if not isinstance(source, dict):
            return f"*image {_inline(as_text(source))}*"
        media = as_text(source.get("media_type", ""))
        digest = as_text(source.get("sha256", ""))[:12]
        return f"*image {_inline(media)} {_inline(digest)}*"
    return _fenced(compact_json(block), "json")


def _inline(text: str) -> str:
    """On one line, printable, without the backticks that would end a code span."""
    return printable(text, keep_newlines=False).replace("`", "'")


def _fenced(body: str, language: str) -> str:
    """A fenced code block a line of the body cannot close (the fence outgrows any run of
    backticks in it)."""
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}{language}\n{printable(body)}\n{fence}"
