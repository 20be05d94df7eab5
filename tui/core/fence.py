"""The untrusted-content fence around tool output (what the model reads as data, never as
instructions), with any fence marker inside the output neutralised."""

from __future__ import annotations

import re

_FENCE_MARKER = re.compile(r"<(?=/?untrusted-content)", re.IGNORECASE)
NEUTRALISED = "!MURMUR-NEUTRALISED!"


def fence(source: str, content: str) -> str:
    """Wrap tool output in the untrusted-content fence, neutralising markers inside it."""
    name = source.replace(">", "_").replace("\r", " ").replace("\n", " ")
    body = _FENCE_MARKER.sub("<" + NEUTRALISED, content)
    return f"<untrusted-content source={name}>\n{body}\n</untrusted-content>"
