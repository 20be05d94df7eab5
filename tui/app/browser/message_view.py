"""One conversation's messages, newest first, drawn with the line API: pages are read from the
end of the record as the reader scrolls down, messages appended while it is open arrive at the
top, and the view can start at any message (a search hit)."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

from rich.markdown import Markdown
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size

from tui.app.widgets.lines_view import LinesView
from tui.core.backward import BackwardReader, Located, read_forward
from tui.core.conversations import Conversation
from tui.core.ids import mint_time_ms

PAGE = 50
DIM = Style(dim=True)
ROLE_STYLES = {"user": Style(bold=True, color="cyan"), "assistant": Style(bold=True),
               "tool": Style(bold=True, color="magenta")}


class MessageView(LinesView):
    DEFAULT_CSS = "MessageView { padding: 0 1; }"
    BINDINGS = [
        Binding("up", "scroll_up", show=False),
        Binding("down", "scroll_down", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
        Binding("home", "scroll_home", show=False),
        Binding("end", "scroll_end", show=False),
    ]

    def __init__(self, conversation: Conversation, anchor: Located | None = None) -> None:
        super().__init__()
        self.conversation = conversation
        self.reader = BackwardReader(conversation.path, end=anchor.end if anchor else None)
        self.entries: list[Located] = []
        self.anchored = anchor is not None
        self.newer_from = anchor.end + 1 if anchor else None  # more newer messages from here
        self.unseen_new = 0  # arrived while the reader was scrolled away from the top
        self.names: dict[str, str] = {}  # tool call id -> tool name
        self._rendered: dict[int, list[Text]] = {}  # entry start offset -> lines

    # -- loading ------------------------------------------------------------------------------
    def load_older(self) -> int:
        page = self.reader.page(PAGE)
        self.entries.extend(page)
        self._learn_names(page)
        self._relayout()
        return len(page)

    @property
    def complete(self) -> bool:
        return self.reader.exhausted

    def load_newer_anchored(self) -> int:
        """In a view that starts at a search hit: the next newer messages."""
        if self.newer_from is None:
            return 0
        found, after = read_forward(self.conversation.path, self.newer_from, PAGE)
        if not found:
            self.newer_from = None
            self.anchored = False
            return 0
        self.newer_from = after
        self._prepend(found)
        return len(found)

    def take_appended(self) -> int:
        """Messages appended to the record since it was opened (a running session)."""
        if self.anchored:
            return 0
        found = self.reader.newer()
        if found:
            self._prepend(found)
            if self.scroll_y > 0:
                self.unseen_new += len(found)
        return len(found)

    def _prepend(self, oldest_first: list[Located]) -> None:
        self._learn_names(oldest_first)
        before = len(self._lines)
        self.entries[0:0] = list(reversed(oldest_first))
        at_top = self.scroll_y <= 0
        self._relayout()
        if not at_top:  # keep the reader's place
            self.scroll_to(y=self.scroll_y + len(self._lines) - before, animate=False,
                           immediate=True, force=True)

    def _learn_names(self, located: list[Located]) -> None:
        for item in located:
            content = item.message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_call":
                    self.names[str(block.get("id"))] = str(block.get("name"))

    # -- drawing ------------------------------------------------------------------------------
    def _relayout(self) -> None:
        width = max(20, self.scrollable_content_region.width or 80)
        if width != self._width:
            self._width = width
            self._rendered.clear()
        lines: list[Text] = []
        for entry in self.entries:
            block = self._rendered.get(entry.start)
            if block is None:
                block = self._rendered[entry.start] = self._render_message(entry)
            lines += block
        if self.complete and not self.anchored:
            lines.append(Text("— the start of the conversation —", style=DIM,
                              justify="center"))
        self._lines = lines
        self.virtual_size = Size(width, len(lines))
        self.refresh()

    def on_resize(self) -> None:
        self._relayout()

    def _render_message(self, entry: Located) -> list[Text]:
        message = entry.message
        role = str(message.get("role"))
        ident = str(message.get("id", ""))
        when = ""
        with contextlib.suppress(ValueError):
            when = time.strftime("%Y-%m-%d %H:%M:%S",
                                 time.localtime(mint_time_ms(ident) / 1000))
        title = Text.assemble((role, ROLE_STYLES.get(role, Style(bold=True))),
                              (f"  {when}  {ident}", DIM))
        if role == "tool":
            call = str(message.get("tool_call_id", ""))
            failed = message.get("is_error") is True
            title = Text.assemble(
                (f"result of {self.names.get(call, 'tool')}", ROLE_STYLES["tool"]),
                (f"  {call}", DIM), ("  ✗ error" if failed else "", Style(color="red")),
                (f"  {when}", DIM))
        out = [title]
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text",
                                                             "text": str(content)}]
        for block in blocks:
            out += self._render_block(block, plain=role == "tool")
        out.append(Text(""))
        return out

    def _render_block(self, block: Any, plain: bool = False) -> list[Text]:
        """A content block; tool output is shown as it is (its fence markers included),
        never interpreted as Markdown."""
        if not isinstance(block, dict):
            return self._to_lines(Text(str(block)))
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text", ""))
            return self._to_lines(Text(text) if plain else Markdown(text))
        if kind == "thinking":
            return self._to_lines(Text(str(block.get("text", "")),
                                       style=Style(dim=True, italic=True)))
        if kind == "tool_call":
            body = json.dumps(block.get("input", {}), ensure_ascii=False, indent=2)
            call = Text(f"→ call {block.get('name')}  {block.get('id')}",
                        style=Style(color="yellow"))
            return [call, *self._to_lines(Text(body, style=DIM))]
        if kind == "image":
            source = block.get("source", {})
            size = source.get("bytes") or ""
            return [Text(f"[image {source.get('media_type', '?')} "
                         f"{str(source.get('sha256', ''))[:12]} {size}]", style=DIM)]
        return self._to_lines(Text(json.dumps(block, ensure_ascii=False), style=DIM))

    @property
    def near_bottom(self) -> bool:
        return self.scroll_y >= self.max_scroll_y - self.scrollable_content_region.height
