"""Whether a trace line is one a writer began and never finished (`cut_short`).

A trace line is written with one `write`; a session killed in the middle of it leaves a line
that stops part-way: a proper prefix of a JSON object. A later writer (a resume appending
`shell_lost`) closes it off with a newline before its own line, so such a line may sit
anywhere in a trace, not only at its end. It is told apart from a line that is simply broken by
reading it as JSON up to where it stops: it must begin an object, hold nothing JSON forbids on
the way (a bad token, a bad escape, a control character, nesting past `MAX_DEPTH`) and run out
of text before the object closes. Iterative, so no line can exhaust the stack; a line over
`MAX_CUT_LINE` is not looked at (the check goes token by token: a hostile line of millions of
tokens would take seconds), so a broken line that long is refused as any broken line is.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable
from json.decoder import JSONDecodeError
from typing import cast

from tui.core.text.strict_json import MAX_DEPTH

_WS = " \t\r\n"
_CUT, _BAD = -1, -2
# json's own string scanner (C); typeshed does not list it
_SCAN = cast(Callable[[str, int, bool], tuple[str, int]],
             getattr(json.decoder, "scanstring"))  # noqa: B009 - not in typeshed
MAX_CUT_LINE = 1024 * 1024
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_START = re.compile(r"-?[0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?")
_SCALAR_RUN = re.compile(f"(?:(?:{_NUMBER.pattern}|true|false|null)" r"[ \t\r\n]*,[ \t\r\n]*)+")
_LEADING_ZERO = re.compile(r"-?0[0-9]")
_HEX = frozenset("0123456789abcdefABCDEF")
_LITERALS = ("true", "false", "null")


def _text(raw: bytes) -> str | None:
    """`raw` as text, a character cut at its very end dropped; None when it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":
            return None
        try:
            return raw[:exc.start].decode("utf-8")
        except UnicodeDecodeError:
            return None


def _string(text: str, at: int) -> int:
    """The index after the string starting at `at`, or _CUT / _BAD (read by json's own
    string scanner, in C)."""
    try:
        return _SCAN(text, at + 1, True)[1]
    except JSONDecodeError as exc:
        if exc.msg.startswith("Unterminated string"):
            return _CUT  # (a control character or bad escape before the end is its own error)
        if exc.msg.startswith("Invalid \\uXXXX"):
            digits = text[exc.pos + 2:exc.pos + 6]
            if len(digits) < 4 and all(d in _HEX for d in digits):
                return _CUT  # the text ends inside the escape
        return _BAD


def _scalar(text: str, at: int) -> int:
    """The index after the number or literal starting at `at`, or _CUT / _BAD."""
    char = text[at]
    if char == "-" or char.isdigit():
        whole = _NUMBER.match(text, at)
        start = _NUMBER_START.match(text, at)
        assert start is not None
        if start.end() == len(text):  # the number may go on, unless it began badly
            return _BAD if _LEADING_ZERO.match(text, at) else _CUT
        return whole.end() if whole is not None and whole.end() == start.end() else _BAD
    for literal in _LITERALS:
        piece = text[at:at + len(literal)]
        if piece == literal:
            return at + len(literal)
        if at + len(piece) == len(text) and literal.startswith(piece):
            return _CUT
    return _BAD


def cut_short(raw: bytes) -> bool:
    """Whether `raw` (one line, without its newline) begins a JSON object and stops before
    the object ends, holding nothing that is not JSON on the way (and is at most
    `MAX_CUT_LINE` bytes)."""
    if len(raw) > MAX_CUT_LINE:
        return False
    text = _text(raw)
    if text is None:
        return False
    index = len(text) - len(text.lstrip(_WS))
    if not text.startswith("{", index):
        return False
    stack: list[list[str]] = []  # [kind, what comes next] per open object ("o") or array ("a")
    done = False  # the first value closed: anything after it is not a cut
    while index < len(text):
        char = text[index]
        if char in _WS:
            index += 1
            continue
        if done:
            return False
        kind, state = stack[-1] if stack else ("", "value")
        if state == "colon":
            if char != ":":
                return False
            stack[-1][1] = "value"
            index += 1
        elif state == "comma_or_end":
            if char == ",":
                stack[-1][1] = "key" if kind == "o" else "value"
                index += 1
            elif char == ("}" if kind == "o" else "]"):
                stack.pop()
                done = _closed(stack)
                index += 1
            else:
                return False
        elif state in ("key", "key_or_end"):
            if char == "}" and state == "key_or_end":
                stack.pop()
                done = _closed(stack)
                index += 1
                continue
            if char != '"':
                return False
            index = _string(text, index)
            if index < 0:
                return index == _CUT
            stack[-1][1] = "colon"
        else:  # a value, or the end of an empty array
            if char == "]" and state == "value_or_end":
                stack.pop()
                done = _closed(stack)
                index += 1
                continue
            if kind == "a":  # a run of numbers and literals, each followed by a comma
                run = _SCALAR_RUN.match(text, index)
                if run is not None:
                    stack[-1][1] = "value"
                    index = run.end()
                    continue
            if char in "{[":
                if len(stack) >= MAX_DEPTH:
                    return False  # deeper than any line a reader takes
                stack.append(["o", "key_or_end"] if char == "{" else ["a", "value_or_end"])
                index += 1
                continue
            index = _string(text, index) if char == '"' else _scalar(text, index)
            if index < 0:
                return index == _CUT
            done = _closed(stack)
    return not done and bool(stack)


def _closed(stack: list[list[str]]) -> bool:
    """A value ended: the container it is in waits for a comma or its end; True when it was
    the outermost value."""
    if not stack:
        return True
    stack[-1][1] = "comma_or_end"
    return False
