"""`murmur-tui browse`: the conversation browser as an app of its own."""

from __future__ import annotations

import gc
from pathlib import Path

from textual.binding import Binding

from tui.app.browser.host import AppBase
from tui.app.browser.requests import OpenConversation, ResumeConversation
from tui.core.record.catalog import scan


class BrowserApp(AppBase[ResumeConversation | None]):
    """Its result: the conversation to continue (`r` / `R`), None when the user just quit."""

    TITLE = "murmur-tui browse"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit")]

    def __init__(self, home: Path, record: str | None = None, context: str | None = None,
                 theme: str | None = None) -> None:
        super().__init__(home, theme)
        self.record = record
        self.context = context
        # what is built so far (modules, Textual's tables) lives as long as the app: keep it
        # out of the collector's full passes, which otherwise pause the first paint
        gc.freeze()
        # before the first screen mounts: a theme set later restyles every widget again
        self.themes.register(tell=False)

    def on_mount(self) -> None:
        self.open_browser(self.record)
        if self.context is not None:
            match = [c for c in scan(self.home, self.record) if c.context_id == self.context]
            if match:
                self.on_open_conversation(OpenConversation(match[0]))
            else:
                self.notify(f"No conversation {self.context!r} under "
                            f"{self.home / 'conversations'}.", severity="warning")

    def on_resume_conversation(self, request: ResumeConversation) -> None:
        """The command line starts the supervisor on it once the browser has closed."""
        self.exit(request)
