"""Search: in the open conversation, or in every record. The search runs as the query is
typed (once typing pauses for LIVE_DELAY; a newer query stops the one before); Enter runs it at
once and moves to the hits. Hits stream in as files are read; Enter on a hit opens the
conversation there. A hit in fenced tool output is shown without the fence markers, as the
conversation view shows it."""

from __future__ import annotations

from pathlib import Path

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from tui.app.browser.requests import OpenConversation
from tui.app.widgets.fitted_footer import FittedFooter
from tui.app.widgets.row_list import RowList
from tui.core.record.catalog import Conversation, Hit, scan, search_all
from tui.core.text.printable import printable

MAX_HITS = 5000
LIVE_DELAY = 0.25  # seconds of no typing before the query typed so far is searched


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
        self._typing: Timer | None = None  # the search of what is typed, waiting for a pause
        self._listed: list[Conversation] | None = None  # every record, as last scanned

    def _placeholder(self) -> str:
        if self.within is None:
            return "search every conversation (Tab: this one only)"
        return printable(f"search {self.within[0].key} (Tab: every conversation)", False)

    def compose(self) -> ComposeResult:
        yield self.query_input
        yield self.status
        yield Static(self.hits.header(), classes="list-header", markup=False)
        yield self.hits
        yield FittedFooter()

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

    def on_input_changed(self, event: Input.Changed) -> None:
        """Search what is typed once typing pauses; an emptied field clears the hits."""
        if self._typing is not None:
            self._typing.stop()
            self._typing = None
        if not event.value.strip():
            self.workers.cancel_group(self, "search")
            self._query = ""
            self._clear()
            self.status.update("")
            return
        if event.value.strip() != self._query:
            self._typing = self.set_timer(LIVE_DELAY, self._search_typed)

    def _search_typed(self) -> None:
        self._typing = None
        query = self.query_input.value.strip()
        if query and query != self._query:
            self._start(query, rescan=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self._typing is not None:
            self._typing.stop()
            self._typing = None
        if event.value.strip():
            self._start(event.value)
            self.hits.focus()

    def _clear(self) -> None:
        self.found.clear()
        self.hits.replace([])

    def _start(self, query: str, rescan: bool = True) -> None:
        """Search for `query` (what searched before stops). `rescan`: list the records again
        (Enter does; a query typed reuses the list its first search made)."""
        if rescan:
            self._listed = None
        self._query = query.strip()
        self._clear()
        self.hits.follow = False
        self.status.update(f"searching for {query.strip()!r}…")
        self._search(query.strip())

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str) -> None:
        worker = get_current_worker()
        conversations = self.within
        if conversations is None:
            conversations = self._listed
            if conversations is None:
                conversations = self._listed = scan(self.home)
        batch: list[Hit] = []
        count = 0
        for hit in search_all(conversations, query, lambda: worker.is_cancelled):
            if worker.is_cancelled:
                return
            batch.append(hit)
            count += 1
            if len(batch) >= 20:
                self.app.call_from_thread(self._add, batch, query)
                batch = []
            if count >= MAX_HITS:
                break
        if worker.is_cancelled:
            return
        self.app.call_from_thread(self._add, batch, query)
        self.app.call_from_thread(self._done, query, count, len(conversations))

    def _add(self, hits: list[Hit], query: str) -> None:
        if query != self._query:  # a search a newer query replaced, ending
            return
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
        if query != self._query:
            return
        cap = f" (the first {MAX_HITS})" if count >= MAX_HITS else ""
        self.status.update(f"{count} match{'es' if count != 1 else ''} for {query!r} in {files} "
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
