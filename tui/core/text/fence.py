"""The untrusted-content fence around tool output (what the model reads as data, never as
instructions), with any fence marker inside the output neutralised; and the output as a person
reads it, with the fence taken off again (the record keeps it exactly as it was written)."""

from __future__ import annotations

import re
from typing import Any

_FENCE_MARKER = re.compile(r"<(?=/?untrusted-content)", re.IGNORECASE)
NEUTRALISED = "!MURMUR-NEUTRALISED!"
_HEADER = re.compile(r"<untrusted-content source=([^>\r\n]*)>\n")
_CLOSING = "\n</untrusted-content>"


def fence(source: str, content: str) -> str:
    """Wrap tool output in the untrusted-content fence, neutralising markers inside it."""
    body = _FENCE_MARKER.sub("<" + NEUTRALISED, content)
    return f"<untrusted-content source={_source_name(source)}>\n{body}{_CLOSING}"


def _source_name(source: str) -> str:
    return source.replace(">", "_").replace("\r", " ").replace("\n", " ")


def unfenced(text: str, source: str | None = None) -> str:
    """`text` without the fence `fence` wrote around it, for display; any other text as it is.

    Only the exact shape `fence` writes is taken off: the opening marker at the very start
    (naming `source`, when given) and the closing marker at the very end, with no live marker
    between them (`fence` neutralises every one inside, so a fake closing marker in the output
    leaves the text untouched). Markers neutralised inside stay as the model read them. An
    opening marker whose closing one is missing (output cut short) is taken off alone."""
    match = _HEADER.match(text)
    if match is None or (source is not None and match.group(1) != _source_name(source)):
        return text
    body = text[match.end():]
    if body.endswith(_CLOSING):
        body = body[:-len(_CLOSING)]
    if _FENCE_MARKER.search(body):
        return text
    return body


def unfenced_message(message: dict[str, Any]) -> dict[str, Any]:
    """A record message as a person reads it: when the record says its text is fenced (the
    `fence` field names the source), its text blocks without the fence; otherwise the message
    itself. Any field may hold anything; what is not a fenced text block is kept as it is."""
    source = message.get("fence")
    if not isinstance(source, str):
        return message
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": unfenced(content, source)}
    if not isinstance(content, list):
        return message
    blocks = [{**block, "text": unfenced(block["text"], source)}
              if isinstance(block, dict) and block.get("type") == "text"
              and isinstance(block.get("text"), str) else block
              for block in content]
    return {**message, "content": blocks}
