"""What is wrong in a YAML file, and how a value or a key path is shown in a message.

A `ProblemReport` collects the problems and the warnings of one file (each a `Problem`, naming
the file, the line and the key path; `YamlError` refuses a file with them: both in
tui.core.errors). `describe` renders a bad value short and quoted, so no message quotes a whole
document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tui.core.errors import Problem


@dataclass
class ProblemReport:
    """Problems (refusals) and warnings collected while reading one file."""

    file: Path
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def problem(self, line: int | None, key: str, message: str, code: str | None = None) -> None:
        self.problems.append(Problem(self.file, line, key, message, code))

    def warn(self, line: int | None, key: str, message: str, code: str | None = None) -> None:
        self.warnings.append(Problem(self.file, line, key, message, code))


def char_name(char: str) -> str:
    names = {"\x00": "NUL", "\x1b": "ESC", "\x7f": "DEL"}
    point = ord(char)
    kind = ("a lone surrogate" if 0xD800 <= point <= 0xDFFF
            else "a noncharacter" if point in (0xFFFE, 0xFFFF) else "a control character")
    name = f" {names[char]}" if char in names else ""
    return f"{kind}{name} (U+{point:04X})"


def node_line(node: yaml.Node | None) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


def join_path(parts: list[str]) -> str:
    """`a.b[0].c`; a very long path keeps its start and its end."""
    text = ""
    for part in parts:
        text += part if part.startswith("[") or not text else f".{part}"
    return text if len(text) <= 120 else f"{text[:80]}...{text[-36:]}"


def show_key(key: Any) -> str:
    """A key as it appears in a key path: itself when short, cut to 60 characters otherwise."""
    text = key if isinstance(key, str) else describe(key)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(value: Any) -> str:
    """A short, quoted rendering of a bad value for an error message."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, (set, frozenset)):
        return "a set (!!set)"
    if isinstance(value, bytes):
        return "binary data (!!binary)"
    if isinstance(value, int) and value.bit_length() > 200:
        return f"an integer of {len(hex(abs(value))) - 2} hex digits"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."

