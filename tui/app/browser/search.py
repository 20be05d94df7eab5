"""Search: in the open conversation, or in every record. Hits stream in as files are read;
Enter opens the conversation at the hit. A hit in fenced tool output is shown without the
fence markers, as the conversation view shows it."""

from __future__ import annotations

from pathlib import Path

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input, Static
from textual.worker import get_current_worker

from tui.app.browser.requests import OpenConversation
from tui.app.widgets.row_list import RowList
from tui.core.record.catalog import Conversation, Hit, scan, search_all
from tui.core.text.printable import printable

MAX_HITS = 5000


class SearchScreen(Screen[None]):
    CSS_PATH = "search.tcss"
    BINDINGS = [Binding("escape", "back", "Back"), Binding("tab", "scope", "Scope")]
    COLUMNS = (("record", 18), ("context", 38), ("role", 10), ("match", 120))

    def __init__(self, home: Path, within: list[Conversation] | None = None) -> None:
        super().__init__()
        self.home = home
        self.within = within  # None: every record
        self._previous_within: list[Conversation] | None = None  # what Tab switches back to
        self.query_input = Input(placeholder=self._placeholder(), id="search-query")
        self.status = Static("", id="search-status", markup=False)
        self.hits = RowList(self.COLUMNS, MAX_HITS, id="hits")
        self.found: dict[str, Hit] = {}
        self._query = ""

    def _placeholder(self) -> str:
        if self.within is None:
            return "search every conversation (Tab: this one only)"
        return printable(f"search {self.within[0].key} (Tab: every conversation)", False)

    def compose(self) -> ComposeResult:
        yield self.query_input
        yield self.status
        yield Static(self.hits.header(), classes="list-header", markup=False)
        yield self.hits
        yield Footer()

    def on_mount(self) -> None:
        self.hits.follow = False  # hits come newest first: the cursor stays on the newest
        self.query_input.focus()

    def action_scope(self) -> None:
        if self.within is None:
            if self._previous_within:
                self.within = self._previous_within
        else:
            self._previous_within = self.within
            self.within = None
        self.query_input.placeholder = self._placeholder()
        if self.query_input.value.strip():
            self._start(self.query_input.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self._start(event.value)
            self.hits.focus()

    def _start(self, query: str) -> None:
        self._query = query.strip()
        self.found.clear()
        self.hits.rows.clear()
        self.hits.index.clear()
        self.hits.follow = False
        self.hits.refresh()
        self.status.update(f"searching for {query!r}…")
        self._search(query.strip())

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str) -> None:
        worker = get_current_worker()
        conversations = self.within if self.within is not None else scan(self.home)
        batch: list[Hit] = []
        count = 0
        for hit in search_all(conversations, query):
            if worker.is_cancelled:
                return
            batch.append(hit)
            count += 1
            if len(batch) >= 20:
                self.app.call_from_thread(self._add, batch)
                batch = []
            if count >= MAX_HITS:
                break
        self.app.call_from_thread(self._add, batch)
        self.app.call_from_thread(self._done, query, count, len(conversations))

    def _add(self, hits: list[Hit]) -> None:
        for hit in hits:
            key = f"{hit.conversation.key}@{hit.located.start}"
            self.found[key] = hit
            self.hits.add(key, [hit.conversation.record, hit.conversation.context_id,
                                str(hit.located.message.get("role")),
                                hit.snippet])
        if hits and self.hits.cursor is None:
            self.hits.cursor = 0  # the newest hit, highlighted as the first arrives
        self.status.update(f"{len(self.found)} matches so far…")

    def _done(self, query: str, count: int, files: int) -> None:
        cap = f" (the first {MAX_HITS})" if count >= MAX_HITS else ""
        self.status.update(f"{count} matches for {query!r} in {files} "
                           f"conversation{'s' if files != 1 else ''}{cap} — Enter opens one")

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter" and self.hits.has_focus:
            self.open_highlighted()

    def open_highlighted(self) -> None:
        key = self.hits.highlighted
        hit = self.found.get(key) if key else None
        if hit is None:
            return
        self.post_message(OpenConversation(hit.conversation, anchor=hit.located))

    def action_back(self) -> None:
        self.app.pop_screen()
