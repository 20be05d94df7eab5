"""One record message as the lines the browser draws.

A record line is a message when it is a JSON object with a string `role`; every other field can
hold anything, and so can the blocks of its content. Whatever they hold, a message is drawn:
fields of the wrong type as their JSON, control characters as symbols (`printable`), and a
message bigger than the view shows at once (`MAX_CHARS` characters, `MAX_LINES` lines,
`MAX_BLOCKS` blocks) drawn up to there with a note saying it was cut — the export writes it
whole.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from typing import Any

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.style import Style
from rich.text import Text

from tui.core.chat import compact_json
from tui.core.events.wording import mark
from tui.core.ids import mint_time_ms
from tui.core.record.catalog import as_text
from tui.core.text.fence import unfenced_message
from tui.core.text.printable import printable

MAX_CHARS = 20_000  # characters of one message drawn
MAX_LINES = 400  # lines of one block drawn (before wrapping)
MAX_BLOCKS = 100  # content blocks of one message drawn
MAX_FIELD = 80  # characters of a role, id or tool name in a heading

DIM = Style(dim=True)
ROLE_STYLES = {"user": Style(bold=True, color="cyan"), "assistant": Style(bold=True),
               "tool": Style(bold=True, color="magenta")}
_MINTED_ID = re.compile(r"[a-z]+_[0-9a-f]{32}")


def render_message(message: dict[str, Any], names: dict[str, str], console: Console,
                   width: int, size: int | None = None,
                   commands: dict[str, str] | None = None) -> list[Text]:
    """`message` as lines of `width` cells: a heading, each content block, a blank line.
    `names` maps tool call ids to tool names, `commands` shell call ids to their commands (a
    shell result's heading then says its exit code, as the supervisor does); `size` is the
    bytes of its record line, for the note on a message that is cut."""
    message = unfenced_message(message)  # read as a person reads it; the record keeps it
    budget = _Budget()
    out = [_title(message, names, commands or {})]
    content = message.get("content")
    if isinstance(content, list):
        blocks: list[Any] = content
    elif isinstance(content, str):
        blocks = [{"type": "text", "text": content}]
    else:
        blocks = [] if content is None else [content]
    plain = message.get("role") == "tool"
    for block in blocks[:MAX_BLOCKS]:
        if budget.spent:
            break
        out += _block(block, plain, budget, console, width)
    if budget.spent or len(blocks) > MAX_BLOCKS:
        whole = f"its record line is {size:,} bytes, " if size is not None else ""
        out += _lines(Text(f"… cut here: {whole}more than the view draws of one message "
                           f"({MAX_CHARS:,} characters, {MAX_LINES:,} lines a block, "
                           f"{MAX_BLOCKS:,} blocks) — e exports it whole",
                           style=Style(color="yellow")), console, width)
    out.append(Text(""))
    return out


class _Budget:
    """What is left of the characters one message may draw."""

    def __init__(self) -> None:
        self.left = MAX_CHARS
        self.spent = False

    def take(self, text: str) -> str:
        """`text`, cut to what is left (characters, then lines); the cut spends the rest."""
        if len(text) > self.left:
            text = text[:self.left]
            self.spent = True
        if text.count("\n") >= MAX_LINES:
            text = "\n".join(text.split("\n", MAX_LINES)[:MAX_LINES])
            self.spent = True
        self.left -= len(text)
        if self.left <= 0:
            self.spent = True
        return text


def _field(value: Any) -> str:
    """A heading field: one printable line of at most MAX_FIELD characters."""
    text = as_text(value)
    if len(text) > MAX_FIELD:
        text = text[:MAX_FIELD - 1] + "…"
    return printable(text, keep_newlines=False)


def _exit_code(message: dict[str, Any], command: str | None) -> int | None:
    """A shell result's exit code: its text starts `$ <the call's command>` then `Exit code: N`
    (tui/core/shell/tool.py) — read after the command the call gave, so output or a command
    cannot forge it."""
    if command is None:
        return None
    content = message.get("content")
    block = content[0] if isinstance(content, list) and content else content
    text = block.get("text") if isinstance(block, dict) else block
    prefix = f"$ {command}\nExit code: "
    if not isinstance(text, str) or not text.startswith(prefix):
        return None
    digits = text[len(prefix):len(prefix) + 12].split("\n", 1)[0]
    try:
        return int(digits)
    except ValueError:
        return None


def _minted(ident: Any) -> str:
    """The mint time of an id in Murmur's format, else ""."""
    if not isinstance(ident, str) or _MINTED_ID.fullmatch(ident) is None:
        return ""
    with contextlib.suppress(ValueError, OverflowError, OSError):
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(mint_time_ms(ident) / 1000))
    return ""


def _title(message: dict[str, Any], names: dict[str, str], commands: dict[str, str]) -> Text:
    role = as_text(message.get("role"))
    ident = message.get("id", "")
    when = _minted(ident)
    if role == "tool":
        call = as_text(message.get("tool_call_id", ""))
        failed = message.get("is_error") is True
        code = _exit_code(message, commands.get(call))
        status: tuple[str, Style | str] = ("  ✗ error", Style(color="red")) if failed else \
            ("", "")
        if not failed and code is not None:
            status = (f"  {mark(code == 0)} exit {code}",
                      Style(color="green") if code == 0 else Style(color="red"))
        return Text.assemble(
            (f"result of {_field(names.get(call, 'tool'))}", ROLE_STYLES["tool"]),
            (f"  {_field(call)}", DIM), status, (f"  {when}", DIM))
    return Text.assemble((_field(role), ROLE_STYLES.get(role, Style(bold=True))),
                         (f"  {when}  {_field(ident)}", DIM))


def _block(block: Any, plain: bool, budget: _Budget, console: Console,
           width: int) -> list[Text]:
    """One content block. Tool output (its fence already taken off) is shown as it is, never
    interpreted as Markdown."""
    if not isinstance(block, dict):
        return _lines(Text(printable(budget.take(compact_json(block))), style=DIM),
                      console, width)
    kind = block.get("type")
    if kind == "text":
        text = printable(budget.take(as_text(block.get("text", ""))))
        return _lines(Text(text) if plain else Markdown(text), console, width)
    if kind == "thinking":
        text = printable(budget.take(as_text(block.get("text", ""))))
        return _lines(Text(text, style=Style(dim=True, italic=True)), console, width)
    if kind == "tool_call":
        call = Text(f"→ call {_field(block.get('name'))}  {_field(block.get('id'))}",
                    style=Style(color="yellow"))
        arguments = block.get("input", {})
        body = compact_json(arguments)
        if len(body) <= budget.left:
            body = json.dumps(arguments, ensure_ascii=False, indent=2)
        return [call, *_lines(Text(printable(budget.take(body)), style=DIM), console, width)]
    if kind == "image":
        source = block.get("source")
        if not isinstance(source, dict):
            return [Text(f"[image {_field(source)}]", style=DIM)]
        parts = [_field(source.get("media_type", "?")),
                 _field(as_text(source.get("sha256", ""))[:12])]
        if source.get("bytes"):
            parts.append(_field(source["bytes"]))
        return [Text(f"[image {' '.join(parts)}]", style=DIM)]
    return _lines(Text(printable(budget.take(compact_json(block))), style=DIM), console,
                  width)


def _lines(renderable: RenderableType, console: Console, width: int) -> list[Text]:
    """`renderable` as lines of `width` cells. Markdown is a parser fed whatever the record
    holds: should it fail on some input, the text is drawn as it is instead."""
    options = console.options.update_width(width)
    try:
        rendered = console.render_lines(renderable, options, pad=False)
    except Exception:  # a third-party parser on hostile text: draw the text as it is
        if not isinstance(renderable, Markdown):
            raise
        rendered = console.render_lines(Text(renderable.markup), options, pad=False)
    return [Text.assemble(*((seg.text, seg.style or Style()) for seg in line
                            if not seg.control))
            for line in rendered]
