"""One trace line and where it is, with typed reads that name file, line and key.

A field read here must hold what the writer puts there: a string where a count belongs, a
number for a task id, is a `TraceFormatError` naming file, line and key — never a wrong sum.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.core.errors import TraceFormatError, Where


class TraceLine:
    def __init__(self, path: Path, number: int, value: dict[str, Any]) -> None:
        self.path = path
        self.number = number
        self.value = value

    @property
    def event_type(self) -> str | None:
        kind = self.value.get("event_type")
        return kind if isinstance(kind, str) else None

    def fail(self, key: str, text: str) -> TraceFormatError:
        return TraceFormatError(text, where=Where(self.path, self.number, key))

    def text(self, key: str) -> str:
        value = self.value.get(key)
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, found {kind_of(value)}")
        return value

    def maybe_text(self, key: str, default: str | None = None) -> str | None:
        """A string, or `default` when the key is absent or null."""
        return default if self.value.get(key) is None else self.text(key)

    def count(self, key: str, default: int | None = None) -> int:
        """A non-negative integer; `default` when the key is absent (or null) and one is given."""
        value = self.value.get(key)
        if value is None and default is not None:
            return default
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(key, f"expected a non-negative integer, found {kind_of(value)}")
        return value

    def maybe_count(self, key: str) -> int | None:
        return None if self.value.get(key) is None else self.count(key)

    def integer(self, key: str) -> int:
        """Any integer (an exit code may be negative on a trace another host wrote)."""
        value = self.value.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(key, f"expected an integer, found {kind_of(value)}")
        return value

    def texts(self, key: str) -> list[str]:
        """A list of strings; empty when the key is absent or null."""
        value = self.value.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(key, f"expected a list of strings, found {kind_of(value)}")
        return list(value)


def kind_of(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a negative integer" if value < 0 else "an integer"
    return {str: "a string", float: "a number with a fraction", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)
