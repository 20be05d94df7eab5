"""JSON as Murmur's readers (serde_json) accept it, for one line of a record or trace.

Python's `json` is more lenient than serde_json, and a lenient parse lets through values that
break whatever handles them next. A line is refused (`NotJson`) when it is not UTF-8, nests
arrays and objects 128 deep or more (serde_json's limit; Python's own recursion limit would
otherwise raise `RecursionError`), holds an escaped lone surrogate (`"\\ud800"`, which no
UTF-8 writer can write back), or a number that is not finite (`NaN`, `Infinity`, `1e999`, an
integer past a double's range: JSON has no such value, and serde_json reads large integers as
doubles). Other decoding errors keep their message.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from typing import Any

from tui.core.errors import BadJsonSyntax, NotJson

MAX_DEPTH = 127  # arrays and objects inside one another; serde_json refuses the 128th
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _refuse_constant(name: str) -> Any:
    raise NotJson(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotJson(f"number {text[:20]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > 300 and (len(text) > 4000 or abs(int(text)) > _FLOAT_MAX):
        raise NotJson(f"number {text[:20]}… is out of range")  # serde_json reads it as f64
    return int(text)


_FLOAT_MAX = int(sys.float_info.max)
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float,
                            parse_int=_bounded_int)


def loads_line(raw: bytes) -> Any:
    """The JSON value of one line (bytes, without its newline); `NotJson` if there is none."""
    value = loads(raw)
    if _SURROGATE_ESCAPE.search(raw) is not None and has_lone_surrogate(value):
        raise NotJson("a lone surrogate escape (not a character)")
    return value


def loads(raw: bytes) -> Any:
    """The JSON value of `raw` as serde_json reads it, except that a lone surrogate escape is
    kept (for a caller that names the field holding it, as the door does); `NotJson` if
    there is none."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotJson(f"not UTF-8 (byte {exc.start + 1})") from None
    try:
        try:
            value = _DECODER.decode(text)
        except RecursionError:
            value = _decode_on_a_fresh_stack(text)
    except NotJson:
        raise
    except json.JSONDecodeError as exc:
        raise BadJsonSyntax(f"{exc.msg} (column {exc.colno})") from None
    except ValueError as exc:  # none is known; a reader must still not raise anything else
        raise NotJson(str(exc)) from None
    if (raw.count(b"[") + raw.count(b"{") > MAX_DEPTH) and too_deep(value):
        raise NotJson(f"nested deeper than {MAX_DEPTH}")
    return value


def _decode_on_a_fresh_stack(text: str) -> Any:
    """Decode in a thread of its own. Python's decoder recurses, so a line it can read (127
    levels) raises RecursionError when the caller's stack is already deep: a line must mean the
    same wherever it is read. On a fresh stack only a line nested far too deep still fails."""
    outcome: list[Any] = []

    def decode() -> None:
        try:
            outcome.append(_DECODER.decode(text))
        except RecursionError:
            outcome.append(NotJson(f"nested deeper than {MAX_DEPTH}"))
        except ValueError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=decode, name="json-fresh-stack")
    worker.start()
    worker.join()
    if isinstance(outcome[0], ValueError):
        raise outcome[0]
    return outcome[0]


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest more than `limit` deep (iteratively: no recursion)."""
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[dict[str, Any] | list[Any], int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))
    return False


def has_lone_surrogate(value: Any) -> bool:
    """Whether any string (key or value) holds a surrogate code point on its own."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
