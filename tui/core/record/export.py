"""A conversation record written out whole, oldest message first: as JSON lines (safe to
print, split only at its newlines) or as a readable Markdown document.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TextIO

from tui.core.chat import compact_json
from tui.core.record.backward import read_forward
from tui.core.record.catalog import Conversation, as_text
from tui.core.text.fence import unfenced_message
from tui.core.text.printable import printable


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
    written whole, fenced tool output without its fence markers (`unfenced`); control
    characters are shown as symbols (`printable`), so the document is safe to print on a
    terminal (the JSON lines export keeps both as the record has them)."""
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
    message = unfenced_message(message)
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
