"""One conversation: its messages newest first, paged from the end of the record, live while a
session appends, searchable (`/`), exportable (`e`). Tool output is shown without the
untrusted-content fence around it (the record keeps it)."""

from __future__ import annotations

import os

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from tui.app.browser.message_view import MessageView
from tui.app.browser.requests import ContinueConversation, OpenExport, OpenSearch
from tui.app.widgets.fitted_footer import FittedFooter
from tui.core.record.backward import Located, count_messages
from tui.core.record.catalog import Conversation
from tui.core.session_index import ResumeMode
from tui.core.text.printable import printable

POLL_SECONDS = 0.5


class ConversationScreen(Screen[None]):
    CSS_PATH = "conversation.tcss"
    BINDINGS = [
        Binding("escape,q", "back", "Back"),
        Binding("slash", "search", "Search"),
        Binding("e", "export", "Export"),
        Binding("n", "newer", "Newer (from a search hit)"),
        Binding("r", "resume('full')", "Resume"),
        Binding("R", "resume('compact')", "Resume compacted"),
        Binding("home", "top", "Newest", show=False),
    ]

    def __init__(self, conversation: Conversation, anchor: Located | None = None) -> None:
        super().__init__()
        self.conversation = conversation
        self.view = MessageView(conversation, anchor)
        self.header = Static("", id="conversation-header", markup=False)
        self.marker = Static("", id="new-marker", markup=False)
        self.total: tuple[int, int] | None = None
        self._file_size = conversation.path.stat().st_size if conversation.path.exists() else 0

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.marker
        yield self.view
        yield FittedFooter()

    def on_mount(self) -> None:
        self.view.load_older()
        self.view.focus()
        self._update_header()
        self._count()
        self.set_interval(POLL_SECONDS, self._poll)

    @work(thread=True, exclusive=True, group="count")
    def _count(self) -> None:
        """The total and the skipped lines: the whole file, off the screen's thread."""
        counted = count_messages(self.conversation.path)
        self.app.call_from_thread(self._counted, counted)

    def _counted(self, counted: tuple[int, int]) -> None:
        self.total = counted
        self._update_header()

    def _update_header(self) -> None:
        c = self.conversation
        parts = [printable(f"{c.record} / {c.context_id}", keep_newlines=False)]
        if self.total is not None:
            messages, skipped = self.total
            parts.append(f"{messages} messages")
            if skipped:
                parts.append(f"{skipped} line{'s' if skipped > 1 else ''} skipped "
                             "(not messages)")
        else:
            parts.append("counting…")
        parts.append(f"showing {len(self.view.entries)}")
        if self.view.anchored:
            parts.append("from a search hit — n loads newer")
        self.header.update("  ·  ".join(parts))

    def _poll(self) -> None:
        """New lines in the record (this app's session or another process): newest on top;
        older pages as the reader nears the bottom."""
        view = self.view
        try:
            size = os.path.getsize(self.conversation.path)
        except OSError:
            size = self._file_size
        if size != self._file_size:
            self._file_size = size
            if view.take_appended():
                self._count()
        if view.unseen_new and view.scroll_y <= 0:
            view.unseen_new = 0
        self.marker.display = view.unseen_new > 0
        if view.unseen_new:
            self.marker.update(f"▲ {view.unseen_new} new — Home shows them")
        if view.near_bottom and not view.complete:
            view.load_older()
        self._update_header()

    def action_top(self) -> None:
        self.view.scroll_home(animate=False)
        self.view.unseen_new = 0
        self.marker.display = False

    def action_newer(self) -> None:
        if self.view.anchored:
            self.view.load_newer_anchored()
            self._update_header()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_search(self) -> None:
        self.post_message(OpenSearch([self.conversation]))

    def action_resume(self, mode: ResumeMode) -> None:
        """`r`: continue this conversation in a follow-up session; `R`: compacted."""
        self.post_message(ContinueConversation(self.conversation, mode))

    def action_export(self) -> None:
        self.post_message(OpenExport(self.conversation))
