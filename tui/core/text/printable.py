"""Text from a record, a component or a file, made safe to draw on a terminal or write to a
readable document.

A terminal acts on control characters: ESC starts an escape sequence (cursor moves, clearing
the screen, setting the window title, OSC 52 writing the clipboard), and U+009B is a one-byte
CSI to many terminals. Neither Rich nor Textual removes them (they strip only BEL, BS, VT, FF
and CR), so hostile text would reach the terminal raw. `printable` shows every C0 control
(except tab and newline) as its Unicode control picture (ESC as `␛`, NUL as `␀`), DEL as
`␡`, a C1 control as `<U+009B>`, a lone carriage return as `␍` (CRLF becomes a newline), and
a lone surrogate (from a file name that is not UTF-8) as U+FFFD, which any encoder can write.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if code <= 0x9F:
        return f"<U+{code:04X}>"
    return "\ufffd"


def printable(text: str, keep_newlines: bool = True) -> str:
    """`text` with nothing a terminal would act on; without `keep_newlines`, on one line (a
    newline shown as `␤`, a tab as a space)."""
    if text.isprintable():
        return text
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if not keep_newlines:
        text = text.replace("\n", "\u2424").replace("\t", " ")
    return _UNSAFE.sub(_shown, text)
