"""`murmur-tui browse`: every conversation record, newest activity first, filterable as you
type (the filter has the focus; the arrows move the list), live as sessions write. Enter opens
one; `/` searches every record; on the list (Tab) `r` / `R` continue one.
What the session index knows of each (outcome, tasks, duration, capsule) fills in after the
first screenful has painted."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from functools import partial
from pathlib import Path

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Static

from tui.app.browser.naming import conversation_names, named_context
from tui.app.browser.requests import ContinueConversation, OpenConversation, OpenSearch
from tui.app.widgets.fitted_footer import FittedFooter
from tui.app.widgets.row_list import Row, RowList
from tui.core.fs.private_files import make_private_dirs
from tui.core.record.backward import count_messages
from tui.core.record.catalog import Conversation, read_preview, scan
from tui.core.record.indexed import Sessions, by_conversation, human_duration
from tui.core.record.writer import conversations_root
from tui.core.session_index import ResumeMode

MAX_ROWS = 1_000_000  # no cap a user would meet; rows are plain tuples
FIRST_SCREENFUL = 60  # rows whose previews are read before the list first paints
# keys that, typed in the filter, move the list's highlight instead
_LIST_KEYS = {"up": -1, "down": 1, "pageup": -10, "pagedown": 10}


class ConversationsScreen(Screen[None]):
    CSS_PATH = "conversations.tcss"
    BINDINGS = [
        Binding("slash", "search", "Search all"),
        Binding("ctrl+f", "search", "Search all", show=False),  # from the filter too
        Binding("escape", "leave", "Back", show=False),
        Binding("q", "back_or_quit", "Back / quit", show=False),
        Binding("enter", "open", "Open", show=False),
        Binding("r", "resume('full')", "Resume"),
        Binding("R", "resume('compact')", "Resume compacted"),
    ]
    COLUMNS = (("last activity", 17), ("record", 18), ("context", 38), ("messages", 9),
               ("outcome", 9), ("tasks", 5), ("duration", 11), ("capsule", 12),
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
        self.sessions: dict[str, Sessions] | None = None  # None until the index is read
        self.names: dict[str, str] = {}  # a conversation's name: its newest session's
        self.painted_at: float | None = None  # when the first screenful showed
        self._stop_watching = threading.Event()
        self._first_paint = threading.Event()
        # the listing starts now, while Textual builds the screen, not once it is mounted
        self.started = time.perf_counter()
        self._first: Future[list[Conversation]] = Future()
        threading.Thread(target=self._first_screenful, name="browse-scan", daemon=True).start()

    def compose(self) -> ComposeResult:
        yield self.filter_input
        yield self.status
        yield Static(self.rows.header(), classes="list-header", markup=False)
        yield self.rows
        yield FittedFooter()

    def on_mount(self) -> None:
        self.rows.follow = False
        self.filter_input.focus()  # type to filter at once; Tab goes to the list
        self._load()

    # -- reading ------------------------------------------------------------------------------
    def _first_screenful(self) -> None:
        try:
            found = scan(self.home, self.record)
            for conversation in found[:FIRST_SCREENFUL]:
                conversation.preview = _safe_preview(conversation)
            self._first.set_result(found)
        except BaseException as exc:
            self._first.set_exception(exc)

    @work(thread=True, exclusive=True, group="scan", exit_on_error=False)
    def _load(self) -> None:
        if not self._first.done() or self.painted_at is None:
            found = self._first.result()
        else:  # a rescan: something changed under the folder
            found = scan(self.home, self.record)
            for conversation in found[:FIRST_SCREENFUL]:
                conversation.preview = _safe_preview(conversation)
        self.app.call_from_thread(self._show, found)
        # the rest waits for the first paint: reading it now would take the interpreter from
        # the screen while it draws
        self._first_paint.wait(timeout=2.0)
        sessions = by_conversation(self.home)
        self.names = conversation_names(self.home, sessions)
        self.app.call_from_thread(self._indexed, sessions)
        for conversation in found[FIRST_SCREENFUL:]:
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
            self.call_after_refresh(self._painted)
            self._watch()  # after the first screenful: its set-up competes with the scan

    def _indexed(self, sessions: dict[str, Sessions]) -> None:
        self.sessions = sessions
        self._refill()

    def _painted(self) -> None:
        self.painted_at = time.perf_counter() - self.started
        self._first_paint.set()

    def _refill(self) -> None:
        needle = self.filter_input.value.strip().lower()
        sessions = self.sessions
        named = self.names
        rows = [Row(c.key, [], lazy=partial(_cells, c, sessions, named.get(c.key, "")))
                for c in self.conversations
                if not needle or needle in c.label() or needle in named.get(c.key, "").lower()]
        self.rows.replace(rows, keep=self.rows.highlighted)
        total = len(self.conversations)
        note = f"{len(rows)} of {total}" if needle else str(total)
        self.status.update(f"{note} conversation{'s' if total != 1 else ''} under "
                           f"{conversations_root(self.home)} — newest first")

    @work(thread=True, group="watch", exit_on_error=False)
    def _watch(self) -> None:
        """Sessions writing records (here or elsewhere): rescan, within a second. The watch
        runs in a thread: setting up inotify over thousands of folders takes a while, and what
        was written meanwhile has no event, so the first pass once it watches rescans too."""
        from watchfiles import watch

        root = conversations_root(self.home)
        make_private_dirs(root)
        first = True
        for changes in watch(root, debounce=300, step=100, stop_event=self._stop_watching,
                             raise_interrupt=False, yield_on_timeout=True, rust_timeout=500):
            if changes or (first and self._changed_since_shown()):
                self.app.call_from_thread(self._load)
            first = False

    def _changed_since_shown(self) -> bool:
        """Whether the record files differ from those listed (a listing and a stat each: the
        previews and counts are read again only when they do)."""
        shown = {(c.key, c.size, c.mtime) for c in self.conversations}
        return {(c.key, c.size, c.mtime) for c in scan(self.home, self.record)} != shown

    def on_unmount(self) -> None:
        self._stop_watching.set()

    # -- interaction --------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        if event.value == "/":  # `/` typed first: search every record, as from the list
            self.filter_input.value = ""
            self.action_search()
            return
        self._refill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter opens the highlighted conversation (the first match); the
        filter keeps the focus for when the reader comes back."""
        if self.rows.highlighted is not None:
            self.action_open()

    def action_leave(self) -> None:
        """Esc: clear the filter; with none, go back over the supervisor, or quit when the
        browser runs on its own."""
        if self.filter_input.value:
            self.filter_input.value = ""
        else:
            self.action_back_or_quit()

    def action_back_or_quit(self) -> None:
        """`q` (outside the filter): back to the supervisor, or quit the standalone browser."""
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter" and self.rows.has_focus:
            event.stop()  # opened here: the screen's own enter binding must not open it again
            event.prevent_default()
            self.action_open()
        elif self.filter_input.has_focus and event.key in _LIST_KEYS:
            # the filter keeps the keys it types; the arrows move the list's highlight
            event.stop()
            event.prevent_default()
            self.rows.action_move(_LIST_KEYS[event.key])

    def action_open(self) -> None:
        key = self.rows.highlighted
        conversation = self.by_key.get(key) if key else None
        if conversation is None:
            return
        self.post_message(OpenConversation(conversation))

    def action_search(self) -> None:
        self.post_message(OpenSearch())

    def action_resume(self, mode: ResumeMode) -> None:
        """`r`: continue the highlighted conversation; `R`: the same, compacted."""
        key = self.rows.highlighted
        conversation = self.by_key.get(key) if key else None
        if conversation is not None:
            self.post_message(ContinueConversation(conversation, mode))


def _safe_preview(conversation: Conversation) -> str:
    try:
        return read_preview(conversation)
    except OSError:
        return ""


def _cells(conversation: Conversation, index: dict[str, Sessions] | None, name: str = ""
           ) -> list[str]:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(conversation.mtime))
    count = "…" if conversation.count is None else str(conversation.count)
    return [when, conversation.record, named_context(name, conversation.context_id), count,
            *_session_cells(index, conversation.key),
            conversation.preview if conversation.preview is not None else "…"]


def _session_cells(index: dict[str, Sessions] | None, key: str) -> list[str]:
    """Outcome, tasks, duration, capsule: `…` until the index is read, blank when no session
    in it wrote the conversation."""
    if index is None:
        return ["…"] * 4
    sessions = index.get(key)
    if sessions is None:
        return [""] * 4
    duration = sessions.duration_ms
    return [sessions.outcome, str(sessions.tasks),
            "" if duration is None else human_duration(duration),
            sessions.latest.capsule_name]
