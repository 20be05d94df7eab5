"""`murmur-tui browse`: every conversation record, newest activity first, filterable as you
type, live as sessions write. Enter opens one; `/` searches every record."""

from __future__ import annotations

import time
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from tui.app.widgets.row_list import RowList
from tui.core.backward import count_messages
from tui.core.conversations import Conversation, read_preview, scan
from tui.core.record import conversations_root

MAX_ROWS = 1_000_000  # no cap a user would meet; rows are plain tuples


class ConversationsScreen(Screen[None]):
    DEFAULT_CSS = """
    ConversationsScreen #list-status { height: 1; color: $text-muted; padding: 0 1; }
    ConversationsScreen .list-header { height: 1; color: $text-muted; text-style: bold; }
    """
    BINDINGS = [
        Binding("slash", "search", "Search all"),
        Binding("escape", "leave", "Back", show=False),
        Binding("enter", "open", "Open", show=False),
    ]
    COLUMNS = (("last activity", 17), ("record", 18), ("context", 38), ("messages", 9),
               ("first message", 120))

    def __init__(self, home: Path, record: str | None = None) -> None:
        super().__init__()
        self.home = home
        self.record = record
        self.filter_input = Input(placeholder="filter by record, context or first message",
                                  id="filter")
        self.status = Static("reading…", id="list-status", markup=False)
        self.rows = RowList(self.COLUMNS, MAX_ROWS, id="conversations")
        self.conversations: list[Conversation] = []
        self.by_key: dict[str, Conversation] = {}
        self.painted_at: float | None = None  # when the first screenful showed

    def compose(self) -> ComposeResult:
        yield self.filter_input
        yield self.status
        yield Static(self.rows.header(), classes="list-header", markup=False)
        yield self.rows
        yield Footer()

    def on_mount(self) -> None:
        self.started = time.perf_counter()
        self.rows.follow = False
        self.rows.focus()
        self._load()
        self.run_worker(self._watch(), group="watch", exit_on_error=False)

    # -- reading ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="scan")
    def _load(self) -> None:
        found = scan(self.home, self.record)
        first = found[:60]
        for conversation in first:  # the first screenful gets its previews at once
            conversation.preview = _safe_preview(conversation)
        self.app.call_from_thread(self._show, found)
        for conversation in found[60:]:
            conversation.preview = _safe_preview(conversation)
        self.app.call_from_thread(self._refill)
        for conversation in found:
            if conversation.count is None:
                try:
                    conversation.count, conversation.skipped = count_messages(
                        conversation.path)
                except OSError:
                    continue
        self.app.call_from_thread(self._refill)

    def _show(self, found: list[Conversation]) -> None:
        self.conversations = found
        self.by_key = {c.key: c for c in found}
        self._refill()
        if self.painted_at is None:
            self.painted_at = time.perf_counter() - self.started

    def _refill(self) -> None:
        needle = self.filter_input.value.strip().lower()
        keep = self.rows.highlighted
        self.rows.rows.clear()
        self.rows.index.clear()
        shown = 0
        for conversation in self.conversations:
            if needle and needle not in conversation.label():
                continue
            shown += 1
            self.rows.add(conversation.key, _cells(conversation))
        total = len(self.conversations)
        note = f"{shown} of {total}" if needle else str(total)
        self.status.update(f"{note} conversation{'s' if total != 1 else ''} under "
                           f"{conversations_root(self.home)} — newest first")
        if keep is not None and keep in self.rows.index:
            position = self.rows._position(keep)
            if position is not None:
                self.rows.cursor = position
        elif self.rows.row_count:
            self.rows.cursor = 0
        self.rows.refresh()

    async def _watch(self) -> None:
        """Sessions writing records (here or elsewhere): rescan, within a second."""
        from watchfiles import awatch

        root = conversations_root(self.home)
        root.mkdir(parents=True, exist_ok=True)
        async for _ in awatch(root, debounce=300, step=100):
            self._load()

    # -- interaction --------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        self._refill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.rows.focus()

    def action_leave(self) -> None:
        """Esc: clear the filter; with none, go back (when opened over the supervisor)."""
        if self.filter_input.value:
            self.filter_input.value = ""
            self.rows.focus()
        elif len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    def on_key(self, event: object) -> None:
        if getattr(event, "key", "") == "enter" and self.rows.has_focus:
            self.action_open()

    def action_open(self) -> None:
        key = self.rows.highlighted
        conversation = self.by_key.get(key) if key else None
        if conversation is None:
            return
        from tui.app.browser.conversation import ConversationScreen

        self.app.push_screen(ConversationScreen(conversation))

    def action_search(self) -> None:
        from tui.app.browser.search import SearchScreen

        self.app.push_screen(SearchScreen(self.home))


def _safe_preview(conversation: Conversation) -> str:
    try:
        return read_preview(conversation)
    except OSError:
        return ""


def _cells(conversation: Conversation) -> list[str]:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(conversation.mtime))
    count = "…" if conversation.count is None else str(conversation.count)
    return [when, conversation.record, conversation.context_id, count,
            conversation.preview if conversation.preview is not None else "…"]
