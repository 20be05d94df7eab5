"""What text a session accepts: Unicode characters, never a lone surrogate.

A Python string can hold a lone surrogate (`"\\ud800"` in JSON, an argument or a line of stdin
that was not UTF-8), and no UTF-8 writer can write one: `task.md`, the record, the trace and
the journal would fail mid-write. So the rule is decided once, at each edge where text comes in:

- **From the network** (the A2A door), a value holding one is refused, naming the field
  (`where_lone_surrogate` finds it): the sender learns, nothing is written.
- **From this machine** (`--task`, `--task-file`, headless stdin, an answer typed on the
  screen), each lone surrogate is replaced with U+FFFD (`whole`): the user's text goes on,
  visibly marked where it was not text.

Writers encode with `errors="replace"` as well, so a text that slips past an edge still cannot
end a session.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_LONE = re.compile("[\ud800-\udfff]")


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in `text`, or None."""
    match = _LONE.search(text)
    return match.start() if match else None


def whole(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD."""
    return _LONE.sub(REPLACEMENT, text)


def where_lone_surrogate(value: Any, path: str = "") -> str | None:
    """The field (`message.parts[0].text`, a key's owner for a bad key) of the first string in
    the JSON value `value` that holds a lone surrogate, or None. Iterative: a deep value
    cannot exhaust the stack."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _LONE.search(item):
                return where or "the value"
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                if isinstance(key, str) and _LONE.search(key):
                    return f"a key of {where}" if where else "a key"
                stack.append((child, f"{where}.{key}" if where else str(key)))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]")
                         for index, child in reversed(list(enumerate(item))))
    return None
