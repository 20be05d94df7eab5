"""The base every murmur-tui exception derives from, and the place an error points at.

`MurmurTuiError` carries what went wrong (`text`), where (`where`: file, line and key when known)
and a stable `code` (Murmur's `E-…`/`W-…` when one applies) — a field, never part of the text
the raiser writes. `str()` is the one way each is written: `where: text [code]`, the code shown
when it was given for this error (a family's default code is kept in `code` but not repeated).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

# What scrubs the text of an error that quotes a remote party (a door's answer may echo a
# token): the secrets' redaction, registered by tui.core.text.secrets when it loads. The text
# package imports this one (a line that is not JSON is an error), so this one cannot import it.
_SCRUBS: list[Callable[[str], str]] = []


def scrub_with(scrub: Callable[[str], str]) -> None:
    """Have every error that quotes a remote party pass its text through `scrub`."""
    _SCRUBS.append(scrub)


def scrubbed(text: str) -> str:
    for scrub in _SCRUBS:
        text = scrub(text)
    return text


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


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or worth a warning) in a YAML file: file, line, key path, message."""

    file: Path
    line: int | None
    key: str
    message: str
    code: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else str(self.file)
        key = f" {self.key}:" if self.key else ""
        code = f" [{self.code}]" if self.code else ""
        return f"{where}:{key} {self.message}{code}"

    @property
    def where(self) -> Where:
        return Where(self.file, self.line, self.key or None)


class MurmurTuiError(Exception):
    """An error with a code, a place and a text. Subclasses name a family's default code."""

    default_code: ClassVar[str] = "E-TUI"
    text_names_place: ClassVar[bool] = False  # the text already says where: no prefix

    def __init__(self, text: str = "", *, code: str | None = None, where: Where | None = None
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
