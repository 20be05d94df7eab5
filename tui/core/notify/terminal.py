"""The terminal's own notifications: which sequence a terminal takes, and the sequences.

| terminal (first match)                          | sequence |
|-------------------------------------------------|----------|
| inside tmux / screen (`TMUX`, `TERM=screen*`)    | none (bell and title only) |
| `TERM_PROGRAM=iTerm.app`                         | OSC 9    |
| `TERM_PROGRAM=WezTerm` or `ghostty`              | OSC 777  |
| `KITTY_WINDOW_ID` set, or `TERM=xterm-kitty`     | OSC 99   |
| `TERM=xterm-ghostty`, `foot*`, `rxvt-unicode*`   | OSC 777  |
| anything else                                    | none (bell and title only) |

Every piece of text is redacted and made printable on one line, and `;` is kept out of the
fields a sequence separates by it: nothing from a question can end the sequence or start one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from tui.core.text.printable import printable
from tui.core.text.secrets import redact

Flavour = Literal["osc9", "osc777", "osc99"]
BELL = "\a"
_BY_PROGRAM: dict[str, Flavour] = {"iTerm.app": "osc9", "WezTerm": "osc777",
                                   "ghostty": "osc777"}
_BY_TERM: tuple[tuple[str, Flavour], ...] = (("xterm-kitty", "osc99"), ("xterm-ghostty", "osc777"),
                                             ("foot", "osc777"), ("rxvt-unicode", "osc777"))


def osc_flavour(env: Mapping[str, str]) -> Flavour | None:
    """The notification sequence this terminal is known to support, or None (unknown, or
    behind tmux / screen, which drop sequences they do not know)."""
    term = env.get("TERM", "")
    if env.get("TMUX") or term.startswith(("screen", "tmux")):
        return None
    program = _BY_PROGRAM.get(env.get("TERM_PROGRAM", ""))
    if program is not None:
        return program
    if env.get("KITTY_WINDOW_ID"):
        return "osc99"
    return next((flavour for prefix, flavour in _BY_TERM if term.startswith(prefix)), None)


def clean(text: str, limit: int) -> str:
    """Text safe inside an escape sequence: no key, no control character, one line, at most
    `limit` characters."""
    shown = printable(redact(text), keep_newlines=False)
    shown = "".join(ch for ch in shown if ch.isprintable())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def notification(flavour: Flavour, title: str, body: str) -> str:
    """The sequence that shows `title` and `body` as a desktop notification (both clean)."""
    if flavour == "osc777":
        return f"\x1b]777;notify;{title.replace(';', ',')};{body}\x07"
    if flavour == "osc99":  # kitty: the title, then the body of the same notification
        return (f"\x1b]99;i=murmur:d=0:p=title;{title}\x1b\\"
                f"\x1b]99;i=murmur:d=1:p=body;{body}\x1b\\")
    return f"\x1b]9;{title}: {body}\x07" if body else f"\x1b]9;{title}\x07"


def window_title(text: str) -> str:
    return f"\x1b]2;{text}\x07"
