"""One base for the errors murmur-tui reports to a person: what went wrong (`text`), where
(`where`: file, line and key when known) and a stable `code` (Murmur's `E-…`/`W-…` when one
applies). `str()` is the one way each is written: `where: text [code]`, the code shown when it
was given for this error (a family's default code is kept in `code` but not repeated in text).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar


@dataclass(frozen=True)
class Where:
    """A place in the input: a file, a line in it, a key path."""

    file: Path | str | None = None
    line: int | None = None
    key: str | None = None

    def __str__(self) -> str:
        place = str(self.file) if self.file is not None else ""
        if self.line and place:
            place = f"{place}:{self.line}"
        if self.key:
            place = f"{place}: {self.key}" if place else self.key
        return place


class MurmurTuiError(Exception):
    """An error with a code, a place and a text. Subclasses name a family's default code."""

    default_code: ClassVar[str] = "E-TUI"
    text_names_place: ClassVar[bool] = False  # the text already says where: no prefix

    def __init__(self, text: str, *, code: str | None = None, where: Where | None = None
                 ) -> None:
        self.text = text
        self.where = where
        self.code = code or self.default_code
        self._show_code = code is not None
        super().__init__(self.render())

    def render(self) -> str:
        place = str(self.where) if self.where is not None and not self.text_names_place else ""
        text = f"{place}: {self.text}" if place else self.text
        return f"{text} [{self.code}]" if self._show_code else text

    def __str__(self) -> str:
        return self.render()


class LaunchError(MurmurTuiError):
    """Bad input: a capsule, option or file that cannot start a session (the command exits 2).
    The message names it."""

    default_code = "E-LAUNCH"
