"""One conversation's messages, newest first, drawn with the line API: pages are read from the
end of the record as the reader scrolls down, messages appended while it is open arrive at the
top, and the view can start at any message (a search hit).

A widget a screen places: its padding stays in `DEFAULT_CSS`, which the screen can override;
screens keep their styles in `.tcss` files beside them."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size

from tui.app.browser.message_render import DIM, render_message
from tui.app.widgets.lines_view import LinesView
from tui.core.record.backward import BackwardReader, Located, read_forward
from tui.core.record.catalog import Conversation, as_text

PAGE = 50


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
        self.commands: dict[str, str] = {}  # shell call id -> the command it ran
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
                    call = as_text(block.get("id"))
                    self.names[call] = as_text(block.get("name"))
                    data = block.get("input")
                    command = data.get("command") if isinstance(data, dict) else None
                    if isinstance(command, str):
                        self.commands[call] = command

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
        return render_message(entry.message, self.names, self.app.console, self._width,
                              size=entry.end - entry.start, commands=self.commands)

    @property
    def near_bottom(self) -> bool:
        return self.scroll_y >= self.max_scroll_y - self.scrollable_content_region.height
